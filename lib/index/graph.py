"""The day's web graph from the pages' outgoing links, in two Spark stages of Python tasks.

Three Parquet tables under ``ROOT/index/YYYY-MM/DD/graph/`` (docs/index.md):

* ``edges/``   one row per (page, outgoing link) as preprocess extracted them (deduplicated
  per page by url + anchor text): src_url, dst_url, anchor_text, src_host, dst_host;
* ``inlinks/`` one row per linked URL ("what links point to it"): inlinks (edges),
  source_pages, source_hosts (distinct), and anchor_texts: up to :data:`MAX_ANCHORS`
  distinct non-empty anchor texts, the most frequent first (ties by text); each file sorted
  by dst_url;
* ``hosts/``   the host graph: src_host, dst_host, links (edges), pages (distinct source pages).

Map: one task per run of consecutive page files, packed by bytes (:mod:`lib.core.packing`:
a day in thousands of small files costs what its bytes cost), writes its edges file and
spills its edges by key range
(destination URL for the in-links, source host for the host graph). Reduce: one task per key
range aggregates it (:mod:`lib.index.graph_tasks`). No edge reaches the driver: only counts.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lib.core import packing, storage
from lib.core.exclusions import NONE as NO_EXCLUSIONS, Exclusions
from lib.core.sparkjob import map_tasks
from lib.index.graph_tasks import MAX_ANCHORS, map_file, reduce_partition, write_empty

__all__ = ["MAX_ANCHORS", "write_graph", "partitions_for"]

#: map tasks a core gets at least (runs of files differ in links per byte)
RUNS_PER_SLOT = 2
#: spilled edge bytes a key range aims at (Parquet input bytes are a proxy: ~1:1)
TARGET_PARTITION_BYTES = 256 << 20

_MAP_SCHEMA = pa.schema([("edges", pa.int64()), ("excluded", pa.int64())])
_REDUCE_SCHEMA = pa.schema([("inlinks", pa.int64()), ("hosts", pa.int64())])


def partitions_for(input_bytes: int, slots: int) -> int:
    """Key ranges for a day of ``input_bytes`` of pages: at least one per task slot, more when
    a range would exceed :data:`TARGET_PARTITION_BYTES` (so a reduce task's input is bounded)."""
    return max(1, slots, -(-input_bytes // TARGET_PARTITION_BYTES))


def write_graph(spark: Any, files: list[str], folder_uri: str, parts: int = 0,
                input_bytes: int = 0, exclusions: Exclusions = NO_EXCLUSIONS) -> dict[str, int]:
    """Write edges/, inlinks/ and hosts/ of the page ``files`` under ``folder_uri`` (a local
    or ``file://`` folder every executor sees); return their row counts (and, with
    ``exclusions``, ``excluded_edges``: links to excluded pages, left out)."""
    root = storage.local_path(folder_uri)
    edges_dir, inl_dir, hst_dir = (os.path.join(root, n) for n in ("edges", "inlinks", "hosts"))
    spill = os.path.join(root, "_spill")
    for d in (edges_dir, inl_dir, hst_dir, spill):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    slots = spark.sparkContext.defaultParallelism
    parts = parts or partitions_for(input_bytes, slots)
    runs = map_runs(files, slots)
    try:
        mapped = map_tasks(spark, len(runs),
                           lambda it: _map(it, runs, edges_dir, spill, parts, exclusions), _MAP_SCHEMA)
        counts = {"edges": sum(r["edges"] for r in mapped)}
        if exclusions:
            counts["excluded_edges"] = sum(r["excluded"] for r in mapped)
        if not files:
            write_empty_edges(edges_dir)
        if counts["edges"] == 0:
            write_empty(inl_dir, hst_dir)
            counts.update(inlinks=0, hosts=0)
        else:
            reduced = map_tasks(spark, parts, lambda it: _reduce(it, spill, inl_dir, hst_dir), _REDUCE_SCHEMA)
            counts.update(inlinks=sum(r["inlinks"] for r in reduced), hosts=sum(r["hosts"] for r in reduced))
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    for d in (edges_dir, inl_dir, hst_dir):
        open(os.path.join(d, "_SUCCESS"), "wb").close()
    return counts


def map_runs(files: list[str], slots: int) -> list[tuple[int, list[str], int]]:
    """The map's tasks: (number of the run's first file, its files, DuckDB threads), runs of
    consecutive ``files`` packed by bytes, :data:`RUNS_PER_SLOT` or more a core, biggest
    first. A file is never split, so a day whose bytes are mostly one file (one large
    language) has one run doing most of the work: a run gets threads in proportion to its
    share of the day's bytes, the cores the other runs leave idle."""
    sizes = [os.path.getsize(storage.local_path(f)) for f in files]
    runs = packing.pack_in_order(sizes, slots=slots * RUNS_PER_SLOT)
    total = max(1, sum(sizes))
    out = []
    for r in sorted(runs, key=lambda r: (-sum(sizes[i] for i in r), r.start)):
        share = sum(sizes[i] for i in r) / total
        out.append((r.start, [files[i] for i in r], max(1, min(slots, round(slots * share)))))
    return out


def write_empty_edges(folder: str) -> None:
    """An empty edges table (a day without page files)."""
    schema = pa.schema([(c, pa.string()) for c in ("src_url", "dst_url", "anchor_text", "src_host", "dst_host")])
    pq.write_table(schema.empty_table(), os.path.join(folder, "part-00000.parquet"))


def _map(batches: Any, runs: list[tuple[int, list[str], int]], edges_dir: str, spill: str, parts: int,
         exclusions: Exclusions) -> Any:
    for b in batches:
        out = [map_file(runs[i][1], runs[i][0], edges_dir, spill, parts, exclusions, runs[i][2])
               for i in b.column(0).to_pylist()]
        yield pa.record_batch([pa.array([o[0] for o in out], pa.int64()), pa.array([o[1] for o in out], pa.int64())],
                              schema=_MAP_SCHEMA)


def _reduce(batches: Any, spill: str, inl_dir: str, hst_dir: str) -> Any:
    for b in batches:
        rows = [reduce_partition(k, spill, inl_dir, hst_dir) for k in b.column(0).to_pylist()]
        yield pa.record_batch([pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], pa.int64())],
                              schema=_REDUCE_SCHEMA)
