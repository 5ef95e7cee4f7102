"""Publish a finished output folder over the slices of a collection.

Every file of ``local_dir`` goes to the slice of its collection path ``PREFIX/RELPATH``, so
``locate`` (or ``Collection.open``) finds it with no catalog. Like ``storage.upload_tree``,
the published day never looks complete half-way: old markers (``_SUCCESS``) are removed
first, data files are written, files of an earlier publish that are no longer part of the
output are deleted, and the markers come last.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable

from lib.placement.config import SliceConfig
from lib.placement.swap import PlacementError, check_path, collection_of
from lib.store import layout, storage

MARKERS = (layout.SUCCESS,)


def is_marker(rel: str) -> bool:
    return rel.rsplit("/", 1)[-1] in MARKERS


local_files = storage.tree_files  # data first, markers last


def publish_tree(local_dir: str, config_path_or_roots: str | SliceConfig | Iterable[str], prefix: str) -> dict:
    """Spread the finished folder ``local_dir`` (it must hold ``_SUCCESS``) over the slices
    under collection path ``prefix``. Re-publishing the same folder is idempotent.

    Returns ``{"prefix", "files", "bytes", "removed", "per_slice": {slice: files}}``.
    """
    if not os.path.isfile(os.path.join(local_dir, layout.SUCCESS)):
        raise PlacementError(f"{local_dir}: no {layout.SUCCESS}, not a finished output folder; refusing to publish")
    prefix = check_path(prefix.strip("/"))
    coll = collection_of(config_path_or_roots)
    files = local_files(local_dir)
    wanted = {f"{prefix}/{r}" for r in files}
    for rel in wanted:
        coll.check_put(rel)  # refuse the whole publish before writing anything
    existing = {rel for rel, _, _ in coll.ls(prefix)}
    for rel in sorted(existing):
        if is_marker(rel):
            coll.delete(rel)
    per_slice: Counter[int] = Counter()
    total = 0

    def put(r: str) -> None:
        nonlocal total
        src = os.path.join(local_dir, *r.split("/"))
        coll.put_file(src, f"{prefix}/{r}")
        per_slice[coll.locate(f"{prefix}/{r}")] += 1
        total += os.path.getsize(src)

    for r in files:
        if not is_marker(r):
            put(r)
    # data is all in place: drop files of an older publish before any marker appears
    stale = sorted(rel for rel in existing - wanted if not is_marker(rel))
    for rel in stale:
        coll.delete(rel)
    for r in files:
        if is_marker(r):
            put(r)
    return {
        "prefix": prefix,
        "files": len(files),
        "bytes": total,
        "removed": len(stale),
        "per_slice": dict(sorted(per_slice.items())),
    }
