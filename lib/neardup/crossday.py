"""Near-duplicates across days: the metadata store's ``dup_of`` (docs/dedup.md, "Across days").

After the day's clusters (lib.neardup.day_clusters, whose bands stage also wrote each judged page's band
keys by the store's partitions, ``xkeys/{q}/t{t}.arrow``), in the same work folder:

1. **Lookup** (:func:`lookup_day`, under the store's lease): one task per group of store
   partitions; for partition ``q`` the day's keys are searched in each key run of the store that
   holds a day of the window (lib.neardup.sigstore.lookup: about log2(N) + 2 runs for N kept
   days, not one search per kept day); the verified matches go to ``xmatch/{i}.arrow``. The
   driver keeps per page the earliest day's root (:func:`lib.neardup.sigstore.earliest`) and writes
   ``dup_of.arrow`` (record id, day, record id), which the index's map tasks read into each
   metadata row.
2. **Store** (:func:`store_day`): one task per ``sigs`` file keeps the day's representatives
   (pages not moved by ``dup_cluster.arrow``), with their root, in the new day folder; one task
   per group of partitions sorts their keys into ``keys/{q}.arrow`` (the day's run); the driver
   commits the folder under the lease (lib.neardup.sigstore.commit), dropping days past the
   window; when the commit merges runs, one task per group of partitions writes the merged run.

The work per day is the day's keys, the file pages they land in and the pages they match: the
runs are memory-mapped, never read whole, except by a merge (amortized O(log N) per key).
"""

from __future__ import annotations

import glob
import os
import re
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pyarrow as pa

from lib.index.invert import load_dup_clusters, load_dup_of, write_arrow
from lib.neardup import day_clusters, sigstore
from lib.runtime.maptasks import map_tasks

MAPPING = "dup_of.arrow"
MAPPING_SCHEMA = pa.schema([("record_id", pa.string()), ("dup_of_day", pa.string()), ("dup_of", pa.string())])
_MATCH_SCHEMA = pa.schema([(n, pa.string()) for n in ("rid", "match", "root_day", "root_id")])
_LOOKUP_RESULT = pa.schema([("i", pa.int32()), ("keys", pa.int64()), ("matches", pa.int64())])
_STORE_RESULT = pa.schema([("i", pa.int32()), ("rows", pa.int64())])
_MERGE_RESULT = pa.schema([("folder", pa.string()), ("keys", pa.int64())])


@dataclass(frozen=True)
class Store:
    """Where and how long signatures are kept (jobs/index.py ``--dup-store``, ``--dup-days``)."""

    path: str
    days: int = sigstore.DEFAULT_DAYS
    parts: int = sigstore.DEFAULT_PARTS
    wait: float = sigstore.DEFAULT_WAIT


def store_parts(store: Store) -> int:
    """The store's key partitions (``store.parts`` for a new store)."""
    return int(sigstore.read_state(store.path).get("parts") or store.parts)


def _groups(parts: int, slots: int) -> list[list[int]]:
    n = max(1, min(parts, slots * 2))
    return [list(range(i, parts, n)) for i in range(n)]


def _day_keys(work: str, q: int) -> dict[str, np.ndarray]:
    """The day's band keys of store partition ``q`` (key, t, row), sorted by key."""
    tabs = [sigstore.read_arrow(f) for f in sorted(glob.glob(os.path.join(work, "xkeys", str(q), "*.arrow")))]
    if not tabs:
        return {"key": np.empty(0, np.uint64), "t": np.empty(0, np.int32), "row": np.empty(0, np.int32)}
    cols = {c: np.concatenate([tb.column(c).to_numpy() for tb in tabs]) for c in ("key", "t", "row")}
    order = np.argsort(cols["key"], kind="stable")
    return {c: v[order] for c, v in cols.items()}


def lookup_partitions(
    work: str, i: int, parts: list[int], store: str, runs: list[dict], allowed: set[str], s: day_clusters.Settings
) -> dict[str, int]:
    """Step 1's task ``i``: the day's keys of store partitions ``parts`` against the key ``runs``
    of ``store``, entries of the ``allowed`` day folders only (the window); the verified matches
    go to ``work/xmatch/{i}.arrow``."""
    found: dict[str, list] = {n: [] for n in _MATCH_SCHEMA.names}
    keys = 0

    def today(ts: np.ndarray, rows: np.ndarray) -> dict[tuple[int, int], tuple]:
        return day_clusters.sig_rows(work, ts, rows)

    for q in parts:
        query = _day_keys(work, q)
        keys += query["key"].size
        for run in runs:
            got = sigstore.lookup(query, today, store, run, allowed, q, s.threshold, s.max_bucket)
            for n in found:
                found[n] += got[n]
    write_arrow(os.path.join(work, "xmatch", f"{i}.arrow"), pa.table(found, schema=_MATCH_SCHEMA))
    return {"i": i, "keys": keys, "matches": len(found["rid"])}


def lookup_day(spark: Any, work: str, store: Store, day: str, s: day_clusters.Settings) -> dict[str, Any]:
    """Step 1 (module doc): writes ``work/dup_of.arrow``; returns the counts for ``_stats.json``
    (``matched_days``: kept days searched, ``runs_searched``: their key runs, ``pages_with_earlier_copy``,
    ``matches``) and ``mapping``."""
    groups = _groups(s.store_parts, spark.sparkContext.defaultParallelism)
    perms = _perms(work, _runs(work))
    with sigstore.lock(store.path, f"index {day}: dup_of lookup", store.wait):
        state = sigstore.read_state(store.path)
        sigstore.check_shape(state, s.store_parts, s.bands, perms)
        kept = sigstore.window(state, day, store.days)
        allowed = {f for _, f in kept}
        runs = [r for r in sigstore.runs(state) if allowed.intersection(r["days"])]

        def task(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for b in it:
                for i in b.column(0).to_pylist():
                    yield pa.RecordBatch.from_pylist(
                        [lookup_partitions(work, i, groups[i], store.path, runs, allowed, s)], schema=_LOOKUP_RESULT
                    )

        done = map_tasks(spark, len(groups), task, _LOOKUP_RESULT) if kept else []
    matches: dict[str, list] = {n: [] for n in _MATCH_SCHEMA.names}
    for r in done:
        t = sigstore.read_arrow(os.path.join(work, "xmatch", f"{r['i']}.arrow"))
        for n in matches:
            matches[n] += t.column(n).to_pylist()
    best = sigstore.earliest(matches)
    rids = sorted(best)
    mapping = os.path.join(work, MAPPING)
    write_arrow(
        mapping,
        pa.table(
            {"record_id": rids, "dup_of_day": [best[r][0] for r in rids], "dup_of": [best[r][1] for r in rids]},
            schema=MAPPING_SCHEMA,
        ),
    )
    return {
        "matched_days": len(kept),
        "runs_searched": len(runs),
        "pages_with_earlier_copy": len(best),
        "matches": sum(r["matches"] for r in done),
        "days": store.days,
        "mapping": mapping,
    }


def _runs(work: str) -> list[int]:
    """The ``t`` of the day's ``sigs`` files (lib.neardup.day_clusters's bands stage)."""
    if not os.path.isdir(os.path.join(work, "sigs")):
        return []
    return sorted(
        int(m.group(1)) for f in os.listdir(os.path.join(work, "sigs")) if (m := re.fullmatch(r"t(\d+)\.arrow", f))
    )


def store_run(
    work: str, folder: str, t: int, day: str, moved: dict[str, str], earlier: dict[str, tuple[str, str]]
) -> int:
    """Step 2, first stage, for the day's ``sigs`` file ``t``: its representatives (not in
    ``moved``, the day's dup_cluster mapping) with their root (``earlier``, the dup_of mapping, or
    themselves) into the store's day ``folder``; the new row of each old one (-1: not kept) into
    ``work/remap/``. Returns the rows kept."""
    sigs = sigstore.read_arrow(day_clusters.sigs_path(work, t))
    keep = np.array([r not in moved for r in sigs.column("record_id").to_pylist()], bool)
    np.save(os.path.join(work, "remap", f"t{t:06d}.npy"), np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int32))
    kept = sigs.filter(pa.array(keep))
    root = [earlier.get(r, (day, r)) for r in kept.column("record_id").to_pylist()]
    out = pa.table(
        [kept.column(c) for c in ("record_id", "url", "capture", "text_len", "sig")]
        + [pa.array([x[0] for x in root], pa.string()), pa.array([x[1] for x in root], pa.string())],
        schema=sigstore.SIGS_SCHEMA,
    )
    write_arrow(sigstore.sigs_path(folder, t), out)
    return out.num_rows


def store_keys(work: str, folder: str, parts: list[int]) -> int:
    """Step 2, second stage, for store partitions ``parts``: the kept rows' band keys, sorted,
    into ``folder/keys/{q}.arrow``; returns the keys written."""
    remaps: dict[int, np.ndarray] = {}
    n = 0
    for q in parts:
        k = _day_keys(work, q)
        row = np.full(k["row"].size, -1, np.int32)
        for t in np.unique(k["t"]).tolist():
            remaps.setdefault(t, np.load(os.path.join(work, "remap", f"t{t:06d}.npy")))
            at = k["t"] == t
            row[at] = remaps[t][k["row"][at]]
        sel = row >= 0
        write_arrow(
            sigstore.keys_path(folder, q), pa.table([k["key"][sel], k["t"][sel], row[sel]], schema=sigstore.KEYS_SCHEMA)
        )
        n += int(sel.sum())
    return n


def store_day(
    spark: Any, work: str, store: Store, day: str, s: day_clusters.Settings, dup_cluster: str, dup_of: str
) -> dict:
    """Step 2 (module doc): the day's representatives into the store; returns ``stored`` (pages)
    ``kept_days`` (the days the store keeps after the commit) and ``kept_runs`` (its key runs)."""
    folder = os.path.join(store.path, sigstore.day_folder(day, uuid.uuid4().hex[:12]))
    runs = _runs(work)

    def reps(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        moved, earlier = load_dup_clusters(dup_cluster), load_dup_of(dup_of)
        for b in it:
            for i in b.column(0).to_pylist():
                n = store_run(work, folder, runs[i], day, moved, earlier)
                yield pa.RecordBatch.from_pylist([{"i": i, "rows": n}], schema=_STORE_RESULT)

    groups = _groups(s.store_parts, spark.sparkContext.defaultParallelism)

    def keys(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in it:
            for i in b.column(0).to_pylist():
                yield pa.RecordBatch.from_pylist(
                    [{"i": i, "rows": store_keys(work, folder, groups[i])}], schema=_STORE_RESULT
                )

    os.makedirs(os.path.join(work, "remap"), exist_ok=True)
    os.makedirs(os.path.join(folder, "keys"), exist_ok=True)
    stored = map_tasks(spark, len(runs), reps, _STORE_RESULT)
    written = map_tasks(spark, len(groups), keys, _STORE_RESULT)
    shape = {"parts": s.store_parts, "bands": s.bands, "perms": _perms(work, runs)}
    n = sum(r["rows"] for r in written)
    with sigstore.lock(store.path, f"index {day}: signature store commit", store.wait):
        state = sigstore.commit(store.path, day, folder, store.days, shape, n, spark_merge(spark, groups))
    stored_rows = sum(r["rows"] for r in stored)
    return {"stored": stored_rows, "kept_days": sorted(state["days"]), "kept_runs": len(state["runs"])}


def spark_merge(spark: Any, groups: list[list[int]]) -> sigstore.Merge:
    """A commit's merge of runs (lib.neardup.sigstore.merge_part) as one task per group of partitions."""

    def merge(path: str, name: str, sources: list[dict], folders: list[str]) -> dict[str, int]:
        def task(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for b in it:
                for i in b.column(0).to_pylist():
                    got = dict.fromkeys(folders, 0)
                    for q in groups[i]:
                        for f, k in sigstore.merge_part(path, name, sources, folders, q).items():
                            got[f] += k
                    yield pa.RecordBatch.from_pylist(
                        [{"folder": f, "keys": k} for f, k in got.items()], schema=_MERGE_RESULT
                    )

        total = dict.fromkeys(folders, 0)
        for r in map_tasks(spark, len(groups), task, _MERGE_RESULT):
            total[r["folder"]] += r["keys"]
        return total

    return merge


def _perms(work: str, runs: list[int]) -> int | None:
    """Slots of the day's signatures (None: the day has none)."""
    for t in runs:
        sigs = sigstore.read_arrow(day_clusters.sigs_path(work, t)).column("sig")
        if len(sigs):
            return len(sigs[0].as_py()) // 4
    return None
