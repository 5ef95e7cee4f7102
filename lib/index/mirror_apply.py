"""A local copy of published slices, kept equal by applying index updates in order (docs/mirror.md).

``COPY/_mirror.json`` says which update the copy is at (``applied``, ``seq``), the manifest
sha256 of every update applied (``history``) and, while one is being applied, ``applying``.
:func:`apply_update`

1. refuses an update whose ``previous`` is not the copy's ``applied`` (:class:`OutOfOrder`,
   naming the first missing update), and does nothing for one it already applied (same manifest);
2. checks every file of the update against its manifest (size, sha256);
3. builds the target slice in ``COPY/TARGET.mirror-new``: unchanged shards hard-linked, changed
   ones rebuilt as the local shard without the removed record ids plus the update's documents;
4. checks the result's canonical digests against the manifest's, writes ``_SUCCESS`` into it,
   records ``applying`` in the state, swaps the folder in and only then records the update as
   applied.

A copy whose state holds ``applying``, or whose slice lacks ``_SUCCESS``, is not complete
(:func:`problems`); the next apply finishes or undoes the torn one first (:func:`recover`).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shutil
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from lib.index import update_shards
from lib.index.mirror_updates import (
    MANIFEST,
    REMOVED,
    SIDE_FILES,
    OutOfOrder,
    UpdateError,
    complete,
    read_manifest,
    update_id,
    verify_files,
)
from lib.index.shard_digests import diff, shard_digests
from lib.store import atomic, layout, storage

STATE = "_mirror.json"
NEW = ".mirror-new"
OLD = ".mirror-old"


def read_state(copy: str) -> dict[str, Any]:
    """The copy's state (a fresh copy: at no update)."""
    path = os.path.join(copy, STATE)
    if not os.path.exists(path):
        return {"applied": None, "seq": 0, "history": {}, "targets": {}, "applying": None}
    return json.loads(open(path, "rb").read())


def _write_state(copy: str, state: dict[str, Any]) -> None:
    atomic.write_bytes(os.path.join(copy, STATE), json.dumps(state, indent=1, sort_keys=True).encode(), fsync=True)


def _manifest_sha(folder: str) -> str:
    return hashlib.sha256(open(os.path.join(folder, MANIFEST), "rb").read()).hexdigest()


def recover(copy: str, state: dict[str, Any]) -> dict[str, Any]:
    """Finish or undo an apply that stopped half-way (module doc); returns the state after."""
    job = state.get("applying")
    if not job:
        return state
    final = os.path.join(copy, *job["target"].split("/"))
    shutil.rmtree(final + NEW, ignore_errors=True)
    if os.path.exists(os.path.join(final, layout.SUCCESS)) and not diff(shard_digests(final, True), job["digests"]):
        state["applied"], state["seq"] = job["id"], job["seq"]  # swapped in before the stop: done
        state["history"][job["id"]] = job["manifest_sha256"]
        state["targets"][job["target"]] = job["id"]
    elif os.path.isdir(final + OLD):  # stopped inside the swap: the old slice goes back
        shutil.rmtree(final, ignore_errors=True)
        os.replace(final + OLD, final)
    shutil.rmtree(final + OLD, ignore_errors=True)
    state["applying"] = None
    _write_state(copy, state)
    return state


def _removed_by_shard(folder: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    path = os.path.join(folder, REMOVED)
    if os.path.exists(path):
        for r in pq.read_table(path, columns=["shard", "record_id"]).to_pylist():
            out.setdefault(r["shard"], set()).add(r["record_id"])
    return out


def _build(man: dict[str, Any], folder: str, final: str, new: str) -> None:
    """The target slice after ``man``, in ``new`` (no ``_SUCCESS`` yet)."""
    removed = _removed_by_shard(folder)
    os.makedirs(new)
    for rel, info in sorted(man["shards"].items()):
        parts = rel.split("/")
        local, out, upd = (os.path.join(base, *parts) for base in (final, new, folder))
        meta_rel = posixpath.join(posixpath.dirname(rel), layout.metadata_for(rel) or "")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if not info["added"] and not info["removed"] and os.path.exists(local):
            for src, dst in ((local, out), (update_shards.metadata_path(local), update_shards.metadata_path(out))):
                os.link(src, dst)  # unchanged: shared with the old slice, never written through
            continue
        base = update_shards.read(local) if os.path.exists(local) else None
        if base is not None:
            gone = removed.get(rel, set())
            base = update_shards.subset(base, np.array([d for d, r in enumerate(base.ids) if r not in gone], np.int64))
        if info["added"]:
            if rel not in man["files"] or meta_rel not in man["files"]:
                raise UpdateError(f"update {man['id']}: {rel} adds documents but its files are not in the manifest")
            added = update_shards.read(upd)
            shard = update_shards.concat(base, added, info["description"]) if base is not None else added
        elif base is not None:
            shard = base
        else:
            raise UpdateError(f"update {man['id']}: {rel} changes a shard this copy does not hold")
        if shard.num_docs != info["docs"]:
            raise UpdateError(
                f"update {man['id']}: {rel} has {shard.num_docs} documents after applying, "
                f"the manifest says {info['docs']}"
            )
        update_shards.write(shard, out)
    for name in SIDE_FILES:
        src = os.path.join(folder, name) if name in man["files"] else os.path.join(final, name)
        if os.path.isfile(src):
            shutil.copyfile(src, os.path.join(new, name))
    restate(new)


def restate(folder: str) -> None:
    """The shards' sizes and sha256 in ``folder/_stats.json`` made the copy's own: a rebuilt shard
    equals the published one by canonical digests, not byte for byte, and the service holds each
    shard file against these sums (lib/serve/day_manifest.py) before it serves it."""
    path = os.path.join(folder, layout.STATS)
    if not os.path.isfile(path):
        return
    doc = json.loads(open(path, "rb").read())
    for s in doc.get("shards", []) if isinstance(doc, dict) else []:
        ciff = os.path.join(folder, str(s.get("tld")), str(s.get("lang")), layout.index_name(int(s.get("shard", -1))))
        if not os.path.isfile(ciff):
            continue
        meta = update_shards.metadata_path(ciff)
        s.update(ciff_bytes=os.path.getsize(ciff), ciff_sha256=storage.file_sha256(ciff))
        s.update(metadata_bytes=os.path.getsize(meta), metadata_sha256=storage.file_sha256(meta))
    atomic.write_bytes(path, json.dumps(doc, indent=1, sort_keys=True).encode())


def apply_update(copy: str, folder: str) -> str:
    """Apply the update in ``folder`` to ``copy``: ``applied`` or ``already applied`` (module doc)."""
    man = read_manifest(folder)
    msha = _manifest_sha(folder)
    os.makedirs(copy, exist_ok=True)
    state = recover(copy, read_state(copy))
    if man["seq"] <= state["seq"]:
        if state["history"].get(man["id"]) == msha:
            return "already applied"
        raise UpdateError(
            f"update {man['id']} ({folder}) is not the update {man['id']} this copy applied (its manifest differs)"
        )
    if man["previous"] != state["applied"]:
        missing = update_id(state["seq"] + 1)
        at = f"update {state['applied']}" if state["applied"] else "no update yet"
        raise OutOfOrder(
            f"update {man['id']} ({folder}) follows {man['previous']}, but {copy} is at {at}: "
            f"update {missing} is missing, apply it first"
        )
    verify_files(folder, man)
    final = os.path.join(copy, *man["target"].split("/"))
    new = final + NEW
    shutil.rmtree(new, ignore_errors=True)
    try:
        _build(man, folder, final, new)
        bad = diff(shard_digests(new, canonical=True), man["slice"]["digests"])
        if bad:
            raise UpdateError(
                f"update {man['id']}: {final} after applying differs from the published slice: " + "; ".join(bad[:5])
            )
        atomic.write_bytes(os.path.join(new, layout.SUCCESS), man["id"].encode(), fsync=True)
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    state["applying"] = {
        "id": man["id"],
        "seq": man["seq"],
        "target": man["target"],
        "manifest_sha256": msha,
        "digests": man["slice"]["digests"],
    }
    _write_state(copy, state)
    _swap(new, final)
    state.update(applied=man["id"], seq=man["seq"], applying=None)
    state["history"][man["id"]] = msha
    state["targets"][man["target"]] = man["id"]
    for t in [t for t in state["targets"] if t.startswith(man["target"] + "/")]:
        del state["targets"][t]  # a batch of a closed day: the day's slice replaced it, the swap removed it
    _write_state(copy, state)
    return "applied"


def _swap(new: str, final: str) -> None:
    """``new`` in place of ``final``; between the renames the old slice waits in ``final.mirror-old``
    and ``final`` is absent, so a stop there leaves no target that looks complete."""
    shutil.rmtree(final + OLD, ignore_errors=True)
    if os.path.exists(final):
        os.replace(final, final + OLD)
    os.replace(new, final)
    shutil.rmtree(final + OLD, ignore_errors=True)


def apply_all(copy: str, updates: str) -> list[tuple[str, str]]:
    """Apply every published update under ``updates`` (``ROOT/public/_updates``) that ``copy``
    lacks, in order; returns (id, outcome) per update looked at."""
    state = recover(copy, read_state(copy))
    return [(update_id(seq), apply_update(copy, folder)) for seq, folder in complete(updates) if seq > state["seq"]]


def problems(copy: str) -> list[str]:
    """Why ``copy`` is not a complete copy at its recorded update (empty when it is)."""
    state = read_state(copy)
    out = []
    if state.get("applying"):
        out.append(f"update {state['applying']['id']} was being applied and did not finish")
    for target in sorted(state["targets"]):
        if not os.path.exists(os.path.join(copy, *target.split("/"), layout.SUCCESS)):
            out.append(f"{target}: no {layout.SUCCESS}")
    return out
