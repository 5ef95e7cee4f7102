"""Near-duplicate clusters of the pages a day indexes, as Spark stages (docs/dedup.md): what the
metadata store's ``dup_cluster`` names. The record-level steps are lib.neardup.clusters's.

1. **Bands** (one task per run of page files, ``t`` its first file): each page's signature
   (``minhash`` column) is read once and kept in ``sigs/t{t}.arrow`` (record id, capture, text
   length, signature); its ``bands`` band keys go to ``bands/{p}/t{t}.arrow`` as (key, t, row),
   ``p = key mod parts``: the shuffle partitioned by band key, 16 bytes a key, the signature not
   repeated.
2. **Pairs** (one task per key partition ``p``): its keys sorted; each key shared by two or more
   pages is a bucket, whose signatures are read from the (memory-mapped) ``sigs`` files;
   :func:`lib.neardup.clusters.verified_pairs` keeps the pairs at estimated Jaccard >= threshold. The
   task writes the edges and their pages (``edges/{p}.arrow``). Memory: the partition's keys
   (16 bytes x pages x bands / parts) and the pages of its buckets of two or more (read with
   one ``take`` per file); a bucket past ``max_bucket`` is walked against its leaders.
3. **Clusters** (the driver): the verified edges and their pages only (about 600 bytes a page
   that has a verified near-duplicate; none for the others) go through
   :func:`lib.neardup.clusters.clusters`; the pages whose representative is another page are
   written to ``dup_cluster.arrow`` (record id, representative), which the index's map tasks
   read (:func:`lib.index.invert.load_dup_clusters`). Every other page points to itself.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.index.invert import write_arrow
from lib.neardup import clusters
from lib.runtime import packing
from lib.runtime.maptasks import map_tasks
from lib.store import locations

COLUMN = "minhash"
MAPPING = "dup_cluster.arrow"
SIGS_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("capture", pa.string()),
        ("text_len", pa.int64()),
        ("sig", pa.binary()),
        ("url", pa.string()),  # for the signature store (lib.neardup.sigstore)
    ]
)
BANDS_SCHEMA = pa.schema([("key", pa.uint64()), ("t", pa.int32()), ("row", pa.int32())])
EDGES_SCHEMA = pa.schema([("a", pa.string()), ("b", pa.string())])
MAPPING_SCHEMA = pa.schema([("record_id", pa.string()), ("dup_cluster", pa.string())])
_BANDS_RESULT = pa.schema([("t", pa.int32()), ("pages", pa.int64()), ("judged", pa.int64())])
_PAIRS_RESULT = pa.schema(
    [("p", pa.int32()), ("buckets", pa.int64()), ("candidates", pa.int64()), ("edges", pa.int64())]
)


@dataclass(frozen=True)
class Settings:
    """The clustering's options (jobs/index.py ``--dup-bands``, ``--dup-threshold``)."""

    bands: int = clusters.BANDS
    threshold: float = clusters.THRESHOLD
    max_bucket: int = clusters.MAX_BUCKET
    #: > 0: also write the band keys by the signature store's partitions (``xkeys/{q}/``, key mod
    #: store_parts) for the lookup across days (lib.neardup.crossday)
    store_parts: int = 0


def sigs_path(work: str, t: int) -> str:
    return os.path.join(work, "sigs", f"t{t:06d}.arrow")


def _bands_path(work: str, p: int, t: int, folder: str = "bands") -> str:
    return os.path.join(work, folder, str(p), f"t{t:06d}.arrow")


def _file_sigs(path: str) -> pa.Table:
    """A page file's judged pages as SIGS_SCHEMA rows (none when it has no ``minhash`` column:
    a day preprocessed before signatures existed)."""
    f = pq.ParquetFile(locations.local_path(path))
    if COLUMN not in f.schema_arrow.names:
        return SIGS_SCHEMA.empty_table()
    t = f.read(columns=["record_id", "warc_date", "plain_text", COLUMN, "url"])
    t = t.filter(pc.is_valid(t.column(COLUMN)))
    return pa.table(
        [
            pc.fill_null(t.column("record_id").cast(pa.string()), ""),
            t.column("warc_date").cast(pa.string()),  # ISO 8601 UTC, fixed width: sorts as the times
            pc.fill_null(pc.utf8_length(t.column("plain_text")), 0).cast(pa.int64()),
            t.column(COLUMN),
            t.column("url").cast(pa.string()),
        ],
        schema=SIGS_SCHEMA,
    )


def band_run(t: int, files: list[str], work: str, parts: int, s: Settings) -> dict[str, int]:
    """Step 1 for a run of page files: their signatures and band keys (module doc)."""
    pages = sum(pq.ParquetFile(locations.local_path(f)).metadata.num_rows for f in files)
    sigs = pa.concat_tables([_file_sigs(f) for f in files])
    write_arrow(sigs_path(work, t), sigs.combine_chunks())
    n = sigs.num_rows
    if n:
        raw = b"".join(sigs.column("sig").to_pylist())
        mat = np.frombuffer(raw, dtype="<u4").reshape(n, -1)
        if mat.shape[1] % s.bands:
            raise ValueError(f"{files[0]}: signatures of {mat.shape[1]} slots do not split into {s.bands} bands")
        keys = clusters.band_matrix(mat, s.bands, mat.shape[1] // s.bands).ravel()
        rows = np.repeat(np.arange(n, dtype=np.int32), s.bands)
        _write_parts(work, t, keys, rows, parts, "bands")
        if s.store_parts:
            _write_parts(work, t, keys, rows, s.store_parts, "xkeys")
    return {"t": t, "pages": pages, "judged": n}


def _write_parts(work: str, t: int, keys: np.ndarray, rows: np.ndarray, parts: int, folder: str) -> None:
    """The run's band keys as (key, t, row) files by partition ``key mod parts``."""
    part = (keys % np.uint64(parts)).astype(np.int64)
    order = np.argsort(part, kind="stable")
    cuts = np.searchsorted(part[order], np.arange(parts + 1))
    for p in range(parts):
        sel = order[cuts[p] : cuts[p + 1]]
        if sel.size:
            write_arrow(
                _bands_path(work, p, t, folder),
                pa.table([keys[sel], np.full(sel.size, t, np.int32), rows[sel]], schema=BANDS_SCHEMA),
            )


def sig_rows(work: str, ts: np.ndarray, rows: np.ndarray) -> dict[tuple[int, int], tuple]:
    """(t, row) -> (record id, capture, text length, signature, url) of the given rows of the ``sigs``
    files (memory-mapped: only these rows are read into Python, one ``take`` per file)."""
    out: dict[tuple[int, int], tuple] = {}
    for t in np.unique(ts).tolist():
        want = np.unique(rows[ts == t])
        with pa.memory_map(sigs_path(work, t)) as m:
            got = pa.ipc.open_file(m).read_all().take(pa.array(want))
        cols = [got.column(c).to_pylist() for c in SIGS_SCHEMA.names]
        out.update(zip(((t, r) for r in want.tolist()), zip(*cols)))
    return out


def pair_partition(p: int, work: str, s: Settings) -> dict[str, int]:
    """Step 2 for key partition ``p``: its verified pairs and their pages in ``edges/{p}.arrow``."""
    files = sorted(glob.glob(os.path.join(work, "bands", str(p), "*.arrow")))
    tabs = []
    for f in files:
        with pa.memory_map(f) as m:
            tabs.append(pa.ipc.open_file(m).read_all())
    keys = np.concatenate([tb.column("key").to_numpy() for tb in tabs]) if tabs else np.empty(0, np.uint64)
    ts = np.concatenate([tb.column("t").to_numpy() for tb in tabs]) if tabs else np.empty(0, np.int32)
    rows = np.concatenate([tb.column("row").to_numpy() for tb in tabs]) if tabs else np.empty(0, np.int32)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if keys.size else np.empty(0, np.int64)
    sizes = np.diff(np.r_[starts, keys.size])
    multi = np.repeat(sizes > 1, sizes)  # sorted positions in a bucket of two or more keys
    sigs = sig_rows(work, ts[order[multi]], rows[order[multi]])
    edges: set[tuple[str, str]] = set()
    pages: dict[str, tuple[str, str, int, bytes]] = {}
    buckets = candidates = 0
    for a, n in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist()):
        members = {}
        for j in order[a : a + n].tolist():
            page = sigs[(int(ts[j]), int(rows[j]))]
            members[page[0]] = page
        if len(members) < 2:  # one page twice (a record repeated in the day)
            continue
        buckets += 1
        candidates += len(members) * (len(members) - 1) // 2
        found = clusters.verified_pairs(((rid, pg[3]) for rid, pg in members.items()), s.threshold, s.max_bucket)
        for x, y in found:
            edges.add((x, y) if x < y else (y, x))
            pages[x], pages[y] = members[x], members[y]
    ordered = sorted(edges)
    write_arrow(
        os.path.join(work, "edges", f"{p}.arrow"),
        pa.table(
            {
                "a": pa.array([e[0] for e in ordered], pa.string()),
                "b": pa.array([e[1] for e in ordered], pa.string()),
            }
        ),
    )
    nodes = [pages[r] for r in sorted(pages)]
    write_arrow(
        os.path.join(work, "edges", f"{p}.pages.arrow"),
        pa.table([pa.array([x[i] for x in nodes], f.type) for i, f in enumerate(SIGS_SCHEMA)], schema=SIGS_SCHEMA),
    )
    return {"p": p, "buckets": buckets, "candidates": candidates, "edges": len(ordered)}


def _read(path: str) -> pa.Table:
    with pa.memory_map(path) as m:
        return pa.ipc.open_file(m).read_all()


def day_clusters(spark: Any, files: list[tuple[str, str, int]], work: str, s: Settings = Settings()) -> dict[str, Any]:
    """Steps 1-3 over the day's page files ``(path, language, bytes)``; writes ``work/dup_cluster.arrow``
    and returns the day's counts (``pages``, ``judged``, ``clusters`` of two or more pages,
    ``pages_in_clusters``, ``copies``: pages whose representative is another page; ``buckets``,
    ``candidates``, ``edges``) and ``mapping``, that file's path."""
    slots = spark.sparkContext.defaultParallelism
    runs = (
        [[files[i][0] for i in r] for r in packing.pack_in_order([f[2] for f in files], slots=slots)] if files else []
    )
    parts = max(1, slots * 2)

    def bands(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in it:
            yield pa.RecordBatch.from_pylist(
                [band_run(t, runs[t], work, parts, s) for t in b.column(0).to_pylist()], schema=_BANDS_RESULT
            )

    def pairs(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in it:
            yield pa.RecordBatch.from_pylist(
                [pair_partition(p, work, s) for p in b.column(0).to_pylist()], schema=_PAIRS_RESULT
            )

    banded = map_tasks(spark, len(runs), bands, _BANDS_RESULT)
    paired = map_tasks(spark, parts, pairs, _PAIRS_RESULT) if any(r["judged"] for r in banded) else []
    edge_files = [os.path.join(work, "edges", f"{r['p']}.arrow") for r in paired]
    edges = {(a, b) for f in edge_files for a, b in zip(*(_read(f).column(c).to_pylist() for c in ("a", "b")))}
    pages: dict[str, clusters.Page] = {}
    for f in edge_files:
        for rid, cap, n, sig in zip(
            *(_read(f[: -len(".arrow")] + ".pages.arrow").column(c).to_pylist() for c in SIGS_SCHEMA.names[:4])
        ):
            pages[rid] = clusters.Page(rid, cap, n, sig)
    reps = clusters.clusters(pages.values(), sorted(edges), s.threshold)
    moved = sorted((rid, rep) for rid, rep in reps.items() if rid != rep)
    mapping = os.path.join(work, MAPPING)
    write_arrow(
        mapping,
        pa.table({"record_id": [m[0] for m in moved], "dup_cluster": [m[1] for m in moved]}, schema=MAPPING_SCHEMA),
    )
    members: dict[str, int] = {}
    for rep in reps.values():
        members[rep] = members.get(rep, 0) + 1
    big = [n for n in members.values() if n > 1]
    return {
        "pages": sum(r["pages"] for r in banded),
        "judged": sum(r["judged"] for r in banded),
        "clusters": len(big),
        "pages_in_clusters": sum(big),
        "copies": len(moved),
        "buckets": sum(r["buckets"] for r in paired),
        "candidates": sum(r["candidates"] for r in paired),
        "edges": len(edges),
        "bands": s.bands,
        "threshold": s.threshold,
        "mapping": mapping,
    }
