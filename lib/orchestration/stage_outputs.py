"""Stage a finished day's outputs (the marker's ``outputs``), the URL database and a run's
logs to the configured target (layout: :mod:`lib.staging.urldb_and_logs`)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import tempfile
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Callable

from lib.placement.slice_publish import publish_tree
from lib.staging import make_target, stage_tree
from lib.staging.urldb_and_logs import stage_run_logs, stage_urldb
from lib.store import layout

log = logging.getLogger("dailyslice.stage")


def stage_outputs(outputs: dict[str, str], spec: dict[str, Any], day: dt.date) -> dict[str, Any]:
    """Mirror each ``{kind: folder}`` to ``<target>/<kind>/YYYY-MM/DD``; returns a report per kind.

    ``spec["type"]`` is ``filesystem``, ``s3`` or ``irods`` (checksum-verified, copies only
    what changed: :func:`lib.staging.stage_tree`) or ``slices`` (spread over the SWAP
    slices of ``spec["config"]``, a slice config file or a list of slice roots:
    :func:`lib.placement.slice_publish.publish_tree`).
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


def stage_day(marker: dict[str, Any], spec: dict[str, Any], day: dt.date) -> dict[str, Any]:
    """The day's outputs, then the URL database the day was merged into (the marker's
    ``urldb``; a marker of an older release names none)."""
    out = stage_outputs(marker["outputs"], spec, day)
    if marker.get("urldb"):
        out[layout.URLDB] = stage_urldb(marker["urldb"], spec)
        log.info("staged %s -> %s", marker["urldb"], out[layout.URLDB])
    return out


def stage_replicated(
    marker: dict[str, Any],
    cfg: dict[str, Any],
    own: str,
    day: dt.date,
    endpoint: Callable[[dict[str, Any]], AbstractContextManager[Any]] = lambda spec: nullcontext(),
) -> dict[str, Any]:
    """The day's outputs and URL database staged to every data center that holds a copy of their
    kind (``cfg["replication"]``, :mod:`lib.orchestration.replication`): the own target's report as
    :func:`stage_day` gives it, the other holders' under ``replicas`` by data center. A kind whose
    rule leaves the own data center out is not staged to its target. ``endpoint(spec)``: the S3
    settings of a holder's target for the block (the nightly task's ``s3_endpoint``)."""
    kinds = dict(marker["outputs"])
    if marker.get("urldb"):
        kinds[layout.URLDB] = marker["urldb"]
    plan: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for kind, src in kinds.items():
        holders = (cfg.get("replication") or {}).get(kind) or [{"dc": own, "staging": cfg["staging"]}]
        for h in holders:
            spec, part = plan.setdefault(h["dc"], (h["staging"], {"outputs": {}}))
            if kind == layout.URLDB:
                part["urldb"] = src
            else:
                part["outputs"][kind] = src
    out: dict[str, Any] = {}
    for dc, (spec, part) in sorted(plan.items(), key=lambda item: item[0] != own):
        with endpoint(spec):
            report = stage_day(part, spec, day)
        if dc == own:
            out.update(report)
        else:
            out.setdefault("replicas", {})[dc] = report
            log.info("replicated %s to %s: %s", sorted(report), dc, spec)
    return out


def stage_to_holders(
    local: str,
    cfg: dict[str, Any],
    own: str,
    kind: str,
    sub: str,
    endpoint: Callable[[dict[str, Any]], AbstractContextManager[Any]] = lambda spec: nullcontext(),
) -> dict[str, Any]:
    """One finished local folder of an undated ``kind`` (``public/<id>``, ``community/<party>/...``)
    mirrored to ``<target>/<sub>`` of every holder of the kind: ``{"own": report | None,
    "replicas": {dc: report}}`` (``own`` None: the rule leaves this data center's target out)."""
    out: dict[str, Any] = {"own": None, "replicas": {}}
    holders = (cfg.get("replication") or {}).get(kind) or [{"dc": own, "staging": cfg["staging"]}]
    for h in sorted(holders, key=lambda h: h["dc"] != own):
        spec = h["staging"]
        with endpoint(spec):
            if spec["type"] == "slices":
                report = publish_tree(local, spec["config"], sub)
            else:
                target = make_target(spec, sub)
                try:
                    report = stage_tree(local, target).as_dict()
                finally:
                    getattr(target, "close", lambda: None)()
        if h["dc"] == own:
            out["own"] = report
        else:
            out["replicas"][h["dc"]] = report
    return out


def stage_logs(
    marker: dict[str, Any] | None, sub: dict[str, Any], spec: dict[str, Any], day: dt.date
) -> dict[str, Any]:
    """A finished job's logs, whether it succeeded or not: its log folder (``marker`` or, for a
    job that died before writing one, ``sub``'s ``run_logs``), the run log, Slurm's output file
    and the marker itself."""
    marker = marker or {}
    files = {"run.log": marker.get("log") or sub.get("run_log"), "slurm.out": sub.get("slurm_log")}
    with tempfile.TemporaryDirectory(prefix="marker-") as tmp:
        if marker:
            files["marker.json"] = marker_json = os.path.join(tmp, "marker.json")
            with open(marker_json, "w") as f:
                json.dump(marker, f, indent=2, sort_keys=True)
        report = stage_run_logs(
            marker.get("run_logs") or sub.get("run_logs"), files, spec, layout.day_suffix(day), str(sub["job_id"])
        )
    log.info("staged the logs of job %s -> %s", sub["job_id"], report)
    return report
