"""Stage a finished day's outputs (the marker's ``outputs``) to the configured target."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from lib.store import layout
from lib.placement.publish import publish_tree
from lib.staging import make_target, stage_tree

log = logging.getLogger("dailyslice.stage")


def stage_outputs(outputs: dict[str, str], spec: dict[str, Any], day: dt.date) -> dict[str, Any]:
    """Mirror each ``{kind: folder}`` to ``<target>/<kind>/YYYY-MM/DD``; returns a report per kind.

    ``spec["type"]`` is ``filesystem``, ``s3`` or ``irods`` (checksum-verified, copies only
    what changed: :func:`lib.staging.stage_tree`) or ``slices`` (spread over the SWAP
    slices of ``spec["config"]``, a slice config file or a list of slice roots:
    :func:`lib.placement.publish.publish_tree`).
    """
    out: dict[str, Any] = {}
    for kind, src in sorted(outputs.items()):
        sub = f"{kind}/{layout.day_suffix(day)}"
        if spec["type"] == "slices":
            out[kind] = publish_tree(src, spec["config"], sub)
        else:
            target = make_target(spec, sub)
            try:
                out[kind] = stage_tree(src, target).as_dict()
            finally:
                getattr(target, "close", lambda: None)()
        log.info("staged %s -> %s", src, out[kind])
    return out
