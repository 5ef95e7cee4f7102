"""The day's web graph from the pages' outgoing links: one Spark task, or two stages of tasks.

Three Parquet tables under ``ROOT/index/YYYY-MM/DD/graph/`` (docs/index.md):

* ``edges/``   one row per (page, outgoing link) as preprocess extracted them (deduplicated
  per page by url + anchor text + rel): src_url, dst_url, anchor_text, src_host, dst_host, rel
  (the link's nofollow/ugc/sponsored tokens, or nofollow from the page's robots; null: followed);
* ``inlinks/`` one row per linked URL ("what links point to it"): inlinks (followed edges),
  source_pages, source_hosts (distinct, of followed edges), and anchor_texts: up to
  :data:`MAX_ANCHORS` distinct non-empty anchor texts of followed links, the most frequent
  first (ties by text); nofollow_inlinks (the other edges); each file sorted by dst_url;
* ``hosts/``   the host graph: src_host, dst_host, links (followed edges), pages (distinct
  source pages), nofollow_links.

Two plans (:mod:`lib.index.graph_tasks` holds the tasks). A day of at most
``single_task_bytes`` of page files (:data:`SINGLE_TASK_BYTES` by default) is ONE task: one
DuckDB with the executor's cores as threads reads every file and writes the three tables
from its temp tables (no spill files, no second stage). A larger day takes two stages. Map:
one task per run of consecutive page files, packed by bytes (:mod:`lib.runtime.packing`: a day
in thousands of small files costs what its bytes cost), writes its edges file and spills its
edges by key range (destination URL for the in-links, source host for the host graph).
Reduce: one task per key range aggregates it. Both plans give the same rows. No edge reaches
the driver: only counts.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from lib.index.graph_tasks import (
    EDGE_COLUMNS,
    MAX_ANCHORS,
    GraphDirs,
    map_file,
    reduce_partition,
    whole_day,
    write_empty,
)
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.runtime import packing
from lib.runtime.maptasks import map_tasks
from lib.store import storage

__all__ = ["MAX_ANCHORS", "SINGLE_TASK_BYTES", "write_graph", "partitions_for"]

#: map tasks a core gets at least (runs of files differ in links per byte)
RUNS_PER_SLOT = 2
#: spilled edge bytes a key range aims at (Parquet input bytes are a proxy: ~1:1)
TARGET_PARTITION_BYTES = 256 << 20
#: page-file bytes up to which the day is one task (what a reduce task of the two-stage plan
#: already takes in; beyond the task's memory limit DuckDB spills, it does not grow)
SINGLE_TASK_BYTES = TARGET_PARTITION_BYTES

_MAP_SCHEMA = pa.schema([("edges", pa.int64()), ("excluded", pa.int64())])
_REDUCE_SCHEMA = pa.schema([("inlinks", pa.int64()), ("hosts", pa.int64())])
_WHOLE_SCHEMA = pa.schema([(c, pa.int64()) for c in ("edges", "excluded", "inlinks", "hosts")])


def partitions_for(input_bytes: int, slots: int) -> int:
    """Key ranges for a day of ``input_bytes`` of pages: at least one per task slot, more when
    a range would exceed :data:`TARGET_PARTITION_BYTES` (so a reduce task's input is bounded)."""
    return max(1, slots, -(-input_bytes // TARGET_PARTITION_BYTES))


def write_graph(
    spark: Any,
    files: list[str],
    folder_uri: str,
    parts: int = 0,
    input_bytes: int = 0,
    exclusions: Exclusions = NO_EXCLUSIONS,
    single_task_bytes: int = SINGLE_TASK_BYTES,
    sizes: list[int] | None = None,
) -> dict[str, int]:
    """Write edges/, inlinks/ and hosts/ of the page ``files`` under ``folder_uri`` (a local
    or ``file://`` folder every executor sees); return their row counts (and, with
    ``exclusions``, ``excluded_edges``: links to excluded pages, left out).

    ``sizes``: the files' bytes when the caller has them (else read from the filesystem). A
    day of at most ``single_task_bytes`` (0: never) is one task, unless ``parts`` asks for
    that many key ranges of the two-stage plan."""
    dirs = GraphDirs.under(storage.local_path(folder_uri))
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    if sizes is None:
        sizes = [os.path.getsize(storage.local_path(f)) for f in files]
    slots = spark.sparkContext.defaultParallelism
    try:
        if not files:
            write_empty_edges(dirs.edges)
            write_empty(dirs.inlinks, dirs.hosts)
            counts = {"edges": 0, "excluded": 0, "inlinks": 0, "hosts": 0}
        elif not parts and sum(sizes) <= single_task_bytes:
            threads = executor_cores(spark)
            counts = map_tasks(spark, 1, lambda it: _whole(it, files, dirs, exclusions, threads), _WHOLE_SCHEMA)[0]
        else:
            counts = _two_stages(
                spark,
                files,
                sizes,
                dirs,
                slots,
                parts or partitions_for(input_bytes or sum(sizes), slots),
                exclusions,
            )
    finally:
        shutil.rmtree(dirs.spill, ignore_errors=True)
    for d in (dirs.edges, dirs.inlinks, dirs.hosts):
        open(os.path.join(d, "_SUCCESS"), "wb").close()
    out = {k: int(counts[k]) for k in ("edges", "inlinks", "hosts")}
    if exclusions:
        out["excluded_edges"] = int(counts["excluded"])
    return out


def executor_cores(spark: Any) -> int:
    """The cores of the executor that runs the single task: ``spark.executor.cores`` when set,
    else the default parallelism (local mode: the driver's cores)."""
    slots = spark.sparkContext.defaultParallelism
    cores = int(spark.sparkContext.getConf().get("spark.executor.cores", "0") or 0)
    return max(1, min(slots, cores) if cores else slots)


def _two_stages(
    spark: Any,
    files: list[str],
    sizes: list[int],
    dirs: GraphDirs,
    slots: int,
    parts: int,
    exclusions: Exclusions,
) -> dict[str, int]:
    """The map stage, then (when there are edges) the reduce stage over ``parts`` key ranges."""
    runs = map_runs(files, slots, sizes)
    mapped = map_tasks(spark, len(runs), lambda it: _map(it, runs, dirs, parts, exclusions), _MAP_SCHEMA)
    counts = {"edges": sum(r["edges"] for r in mapped), "excluded": sum(r["excluded"] for r in mapped)}
    if counts["edges"] == 0:
        write_empty(dirs.inlinks, dirs.hosts)
        return {**counts, "inlinks": 0, "hosts": 0}
    reduced = map_tasks(spark, parts, lambda it: _reduce(it, dirs), _REDUCE_SCHEMA)
    return {**counts, "inlinks": sum(r["inlinks"] for r in reduced), "hosts": sum(r["hosts"] for r in reduced)}


def map_runs(files: list[str], slots: int, sizes: list[int] | None = None) -> list[tuple[int, list[str], int]]:
    """The map's tasks: (number of the run's first file, its files, DuckDB threads), runs of
    consecutive ``files`` packed by bytes, :data:`RUNS_PER_SLOT` or more a core, biggest
    first. A file is never split, so a day whose bytes are mostly one file (one large
    language) has one run doing most of the work: a run gets threads in proportion to its
    share of the day's bytes, the cores the other runs leave idle."""
    if sizes is None:
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
    schema = pa.schema([(c, pa.string()) for c in EDGE_COLUMNS.split(", ")])
    pq.write_table(schema.empty_table(), os.path.join(folder, "part-00000.parquet"))


def _map(
    batches: Any, runs: list[tuple[int, list[str], int]], dirs: GraphDirs, parts: int, exclusions: Exclusions
) -> Any:
    for b in batches:
        out = [map_file(runs[i][1], runs[i][0], dirs, parts, exclusions, runs[i][2]) for i in b.column(0).to_pylist()]
        yield pa.record_batch(
            [pa.array([o[0] for o in out], pa.int64()), pa.array([o[1] for o in out], pa.int64())], schema=_MAP_SCHEMA
        )


def _whole(batches: Any, files: list[str], dirs: GraphDirs, exclusions: Exclusions, threads: int) -> Any:
    for b in batches:
        for _ in b.column(0).to_pylist():
            n = whole_day(files, dirs, exclusions, threads)
            yield pa.record_batch([pa.array([v], pa.int64()) for v in n], schema=_WHOLE_SCHEMA)


def _reduce(batches: Any, dirs: GraphDirs) -> Any:
    for b in batches:
        rows = [reduce_partition(k, dirs) for k in b.column(0).to_pylist()]
        yield pa.record_batch(
            [pa.array([r[0] for r in rows], pa.int64()), pa.array([r[1] for r in rows], pa.int64())],
            schema=_REDUCE_SCHEMA,
        )
