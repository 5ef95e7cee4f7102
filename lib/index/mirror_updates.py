"""Index updates in ``ROOT/public/_updates/``: what changed in a published slice, for mirrors (docs/mirror.md).

:func:`publish_update` compares a published slice (a day's ``index/YYYY-MM/DD``, or a batch's
folder under it) with what the last update of that slice left, and publishes the difference as
the next update of the root's one sequence: ``ROOT/public/_updates/NNNNNNNN/`` with

- per changed shard, the added and replaced documents as ``index-N.ciff.gz`` + ``metadata-N.parquet``
  at the shard's own relative path (``com/eng/index-0.ciff.gz``: TLD group, language, shard);
- ``removed.parquet``: the record ids that leave each shard (``shard``, ``record_id``, ``url``,
  ``reason``: ``gone``, ``purged`` or ``replaced``);
- the slice's side files whole (``_stats.json``: a mirror can serve the copy);
- ``_manifest.json``: sequence number, the update it follows, the target slice, per shard its
  description and counts, the sha256 of every file, and the resulting slice's canonical digests;
- ``_state.parquet`` (not in the manifest: the publisher's own record of the slice's documents and
  their fingerprints, which the next update of the slice is computed against) and ``_SUCCESS`` last.

Nothing changed (equal canonical digests) means no update: publishing twice adds nothing. Updates
are built on a local or cluster filesystem (as ``public/`` sub-indices are) under a lease, so two
publishers never take the same number.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import posixpath
import shutil
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib.ciff.reader import CiffReader
from lib.errors import DailysliceError
from lib.index import update_shards
from lib.index.shard_digests import shard_digests
from lib.pages.exclusions import Exclusions
from lib.pages.exclusions import for_job as exclusions_for
from lib.store import layout, storage
from lib.store.lease import Lease
from lib.store.publish import WorkDir

FORMAT = "dailyslice-update/1"
PUBLIC = "public"
UPDATES = "_updates"  # ROOT/public/_updates: an on-demand id never starts with "_" (lib.ondemand.request)
MANIFEST = "_manifest.json"
REMOVED = "removed.parquet"
STATE = "_state.parquet"
SIDE_FILES = (layout.STATS,)
STATE_SCHEMA = pa.schema(
    [("shard", pa.string()), ("record_id", pa.string()), ("url", pa.string()), ("fp", pa.string())]
)
REMOVED_SCHEMA = pa.schema(
    [("shard", pa.string()), ("record_id", pa.string()), ("url", pa.string()), ("reason", pa.string())]
)


class UpdateError(DailysliceError):
    """An update that cannot be published or applied (the message names the file and why)."""


class OutOfOrder(UpdateError):
    """An update whose predecessor the copy has not applied (the message names the missing one)."""


def update_id(seq: int) -> str:
    """The folder name of update ``seq``: 8 digits, so names sort as numbers."""
    return f"{seq:08d}"


def updates_dir(root: str) -> str:
    """``ROOT/public/_updates`` as a local path."""
    return os.path.join(storage.local_path(root), PUBLIC, UPDATES)


def target_of(day: dt.date, batch: int | None = None) -> str:
    """The slice an update changes, relative to ROOT: ``index/YYYY-MM/DD`` or ``.../DD/batch=N``."""
    base = f"{layout.INDEX}/{layout.day_suffix(day)}"
    return base if batch is None else f"{base}/batch={batch}"


def complete(base: str) -> list[tuple[int, str]]:
    """(seq, folder) of every published update under ``base`` (``_SUCCESS`` present), in order."""
    out = []
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        folder = os.path.join(base, name)
        if name.isdigit() and os.path.exists(os.path.join(folder, layout.SUCCESS)):
            out.append((int(name), folder))
    return out


def read_manifest(folder: str) -> dict[str, Any]:
    """An update's ``_manifest.json``, checked for the fields a mirror relies on."""
    path = os.path.join(folder, MANIFEST)
    try:
        man = json.loads(open(path, "rb").read())
    except FileNotFoundError:
        raise UpdateError(f"{path}: no manifest (not an update folder, or not downloaded whole)") from None
    except ValueError as e:
        raise UpdateError(f"{path}: not JSON ({e})") from None
    missing = [k for k in ("format", "seq", "id", "previous", "target", "shards", "slice", "files") if k not in man]
    if missing or man.get("format") != FORMAT:
        raise UpdateError(
            f"{path}: not a {FORMAT} manifest (missing {missing or 'nothing'}, format {man.get('format')!r})"
        )
    return man


def verify_files(folder: str, man: dict[str, Any]) -> None:
    """Every file the manifest lists is in ``folder`` with its size and sha256 (else UpdateError naming it)."""
    for rel, f in sorted(man["files"].items()):
        path = os.path.join(folder, *rel.split("/"))
        if not os.path.isfile(path):
            raise UpdateError(f"update {man['id']}: {rel} is missing from {folder}")
        if os.path.getsize(path) != f["bytes"] or storage.file_sha256(path) != f["sha256"]:
            raise UpdateError(f"update {man['id']}: {rel} differs from the manifest (size or sha256)")


def slice_digest(digests: dict[str, str]) -> str:
    """One sha256 over a slice's canonical shard digests (:func:`lib.index.shard_digests.shard_digests`)."""
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()


def _previous(done: list[tuple[int, str]], target: str) -> tuple[dict[str, Any], pa.Table] | None:
    for _, folder in reversed(done):
        man = read_manifest(folder)
        if man["target"] == target:
            return man, pq.read_table(os.path.join(folder, STATE))
    return None


def _reason(rid: str, url: str, now_ids: set[str], now_urls: set[str], exclusions: Exclusions) -> str:
    if rid in now_ids or url in now_urls:
        return "replaced"  # the record or its URL is in the slice again, as one of the added documents
    return "purged" if exclusions.match(url) else "gone"


def _diff_shard(rel: str, path: str, prev_rows: dict[str, str], out_dir: str) -> tuple[list[dict], list[str], int]:
    """(state rows, removed record ids, documents written) of one changed shard."""
    shard = update_shards.read(path)
    fps = update_shards.fingerprints(shard)
    urls = shard.meta.column("url").to_pylist()
    rows = [{"shard": rel, "record_id": r, "url": u, "fp": f} for r, u, f in zip(shard.ids, urls, fps)]
    now = dict(zip(shard.ids, fps))
    add = np.array([d for d, (r, f) in enumerate(zip(shard.ids, fps)) if prev_rows.get(r) != f], np.int64)
    removed = [r for r, f in prev_rows.items() if now.get(r) != f]
    if len(add):
        update_shards.write(update_shards.subset(shard, add), os.path.join(out_dir, *rel.split("/")))
    return rows, removed, len(add)


def _listed_files(out: str) -> dict[str, dict[str, Any]]:
    """``{relative path: {bytes, sha256}}`` of the files a mirror fetches (not the publisher's state)."""
    files = {}
    for dirpath, _, names in os.walk(out):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), out).replace(os.sep, "/")
            if rel not in (STATE, MANIFEST, layout.SUCCESS):
                p = os.path.join(dirpath, name)
                files[rel] = {"bytes": os.path.getsize(p), "sha256": storage.file_sha256(p)}
    return dict(sorted(files.items()))


def build_update(
    folder: str, target: str, seq: int, prev: tuple[dict[str, Any], pa.Table] | None, out: str, exclusions: Exclusions
) -> dict[str, Any] | None:
    """Write update ``seq`` of the slice ``folder`` into ``out``; None when nothing changed."""
    digests = shard_digests(folder, canonical=True)
    prev_man, prev_state = prev if prev else ({"slice": {"digests": {}}, "id": None}, STATE_SCHEMA.empty_table())
    if prev and prev_man["slice"]["digests"] == digests:
        return None
    old = prev_man["slice"]["digests"]
    by_shard: dict[str, dict[str, str]] = {}
    old_rows: dict[str, list[dict]] = {}
    old_urls: dict[tuple[str, str], str] = {}
    for r in prev_state.to_pylist():
        by_shard.setdefault(r["shard"], {})[r["record_id"]] = r["fp"]
        old_rows.setdefault(r["shard"], []).append(r)
        old_urls[(r["shard"], r["record_id"])] = r["url"]
    state: list[dict] = []
    removed: list[tuple[str, str]] = []
    shards: dict[str, dict[str, Any]] = {}
    ciffs = sorted(p for p in digests if p.endswith(".ciff.gz"))
    for rel in ciffs:
        meta_rel = posixpath.join(posixpath.dirname(rel), layout.metadata_for(rel) or "")
        path = os.path.join(folder, *rel.split("/"))
        prev_rows = by_shard.get(rel, {})
        if prev and old.get(rel) == digests[rel] and old.get(meta_rel) == digests.get(meta_rel):
            rows = old_rows.get(rel, [])
            gone: list[str] = []
            added = 0
            description = prev_man["shards"][rel]["description"]
        else:
            rows, gone, added = _diff_shard(rel, path, prev_rows, out)
            description = CiffReader(path).header.description
        state += rows
        removed += [(rel, r) for r in gone]
        shards[rel] = {"description": description, "docs": len(rows), "added": added, "removed": len(gone)}
    for rel, fps in by_shard.items():
        if rel not in shards:  # a shard of the old slice that is no more: all its documents leave
            removed += [(rel, r) for r in fps]
    now_ids = {r["record_id"] for r in state}
    now_urls = {r["url"] for r in state}
    rem_rows = [
        {
            "shard": s,
            "record_id": r,
            "url": old_urls[(s, r)],
            "reason": _reason(r, old_urls[(s, r)], now_ids, now_urls, exclusions),
        }
        for s, r in removed
    ]
    pq.write_table(pa.Table.from_pylist(rem_rows, schema=REMOVED_SCHEMA), os.path.join(out, REMOVED))
    for name in SIDE_FILES:
        if os.path.isfile(os.path.join(folder, name)):
            shutil.copyfile(os.path.join(folder, name), os.path.join(out, name))
    pq.write_table(pa.Table.from_pylist(state, schema=STATE_SCHEMA), os.path.join(out, STATE))
    old_ids, old_u = {r for _, r in old_urls}, set(old_urls.values())
    added_total = sum(s["added"] for s in shards.values())
    new_docs = sum(1 for r in state if r["record_id"] not in old_ids and r["url"] not in old_u)
    files = _listed_files(out)
    reasons = [r["reason"] for r in rem_rows]
    man = {
        "format": FORMAT,
        "seq": seq,
        "id": update_id(seq),
        "previous": update_id(seq - 1) if seq > 1 else None,
        "target": target,
        "follows_on_target": prev_man["id"],
        "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "counts": {
            "documents": len(state),
            "added": new_docs,
            "replaced": added_total - new_docs,
            "removed": {k: reasons.count(k) for k in ("gone", "purged", "replaced")},
        },
        "shards": shards,
        "slice": {"digests": digests, "digest": slice_digest(digests)},
        "files": files,
    }
    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump(man, f, indent=1, sort_keys=True)
    return man


def publish_update(
    root: str, day: dt.date, batch: int | None = None, *, exclusions: Exclusions | None = None, wait: float = 60.0
) -> dict[str, Any] | None:
    """Publish the next update for ``day``'s slice (or its batch ``batch``) under
    ``ROOT/public/_updates``; returns its manifest, or None when the slice did not change
    since its last update. The published slice must be complete (``_SUCCESS``)."""
    if storage.is_s3(root):
        raise UpdateError(f"{root}: updates are built on a local or cluster filesystem, not on S3 (as public/ is)")
    target = target_of(day, batch)
    folder = os.path.join(storage.local_path(root), *target.split("/"))
    if not os.path.exists(os.path.join(folder, layout.SUCCESS)):
        raise UpdateError(f"{folder}: not a published slice (no {layout.SUCCESS})")
    excl = exclusions if exclusions is not None else exclusions_for(root, None)
    base = updates_dir(root)
    os.makedirs(base, exist_ok=True)
    with Lease(base, "mirror-publish", wait, busy="another run is publishing an update"):
        done = complete(base)
        seq = (done[-1][0] if done else 0) + 1
        with WorkDir(os.path.join(base, update_id(seq)), name="update") as wd:
            man = build_update(folder, target, seq, _previous(done, target), wd.path, excl)
            if man is None:
                return None
            wd.publish({"update": man["id"], "target": target})
    return man
