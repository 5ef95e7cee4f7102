"""The index of one preprocessed day, as jobs/index.py runs it: plan, map, reduce, graph.

:func:`plan_day` lists the day's page files and plans its shards on the driver
(:mod:`lib.index.shards`); :func:`build_index` runs the Spark stages into a work folder: the
map (each file's pages analyzed into per-shard segments, :mod:`lib.index.invert`), the
reduce (each shard's CIFF and metadata, :mod:`lib.index.write`) and, beside them, the web
graph (:mod:`lib.index.graph`). It returns the statistics the job writes to ``_stats.json``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lib.index import graph
from lib.index import shards as index_shards
from lib.index.invert import MAP_SCHEMA, STATS_SCHEMA, MapPlan, index_files
from lib.index.page_files import PAGE_COLUMNS, input_files
from lib.index.run_stats import DayIndexStats, GroupStats, IndexTotals, ShardStats
from lib.index.write import ShardSpec, shard_inputs, write_shards
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.runtime import packing
from lib.runtime.maptasks import map_tasks
from lib.runtime.result import log
from lib.runtime.steps import Steps
from lib.text import stoplists as stoplists_mod
from lib.text.analysis import get_analyzer
from lib.text.stoplists import Ref

#: map tasks a core gets at least (a day's languages cost different times per byte)
RUNS_PER_SLOT = 3


@dataclass
class DayPlan:
    """A day's page files (docid order), its page counts per (url_suffix, language) and shards."""

    inp: str  # the day's folder (local or cluster filesystem)
    files: list[tuple[str, str, int]]  # (path, language, bytes)
    counts: dict[tuple[str, str], int]
    groups: list[index_shards.Group]
    assign: dict[tuple[str, str], int]  # (url_suffix, language) -> gid
    docs_per_shard: int
    min_group_docs: int


def plan_day(inp: str, docs_per_shard: int, min_group_docs: int) -> DayPlan:
    """List and count the day's pages (raises ValueError for a file lacking a column) and plan
    the TLD/LANG groups and their shards."""
    files = input_files(inp)
    counts = index_shards.count_pages([(path, lang) for path, lang, _ in files], PAGE_COLUMNS)
    groups, assign = index_shards.plan_groups(counts, docs_per_shard, min_group_docs)
    return DayPlan(inp, files, counts, groups, assign, docs_per_shard, min_group_docs)


def build_index(
    spark: Any,
    day: DayPlan,
    work: str,
    steps: Steps,
    *,
    gzip_level: int = 2,
    with_graph: bool = True,
    date: dt.date | None = None,
    exclusions: Exclusions = NO_EXCLUSIONS,
    graph_single_task_bytes: int = graph.SINGLE_TASK_BYTES,
    graph_files: list[tuple[str, str, int]] | None = None,
    dup_cluster: str = "",
    dup_of: str = "",
    stoplists: tuple[Ref, ...] = (),
) -> DayIndexStats:
    """Write the day's shards, metadata and (``with_graph``) graph into ``work``; returns the
    statistics (``_stats.json``), with ``seconds`` of the steps (``steps``: ``map``, ``write``, ``graph``).
    ``graph_single_task_bytes``: the largest day whose graph is one task (lib.index.graph);
    ``graph_files``: the page files the graph reads when they are not the indexed ones (the
    pages that say noindex link too: lib.index.indexable); ``dup_cluster``: the day's near-duplicate
    clusters (lib.neardup.day_clusters), "" for none; ``dup_of``: its pages' earlier copies
    (lib.neardup.crossday), "" for none; ``stoplists``: the shared stop-word lists the driver
    pinned (lib.text.stoplists), () for the packaged ones."""
    os.makedirs(work, exist_ok=True)
    # The graph is independent of the shards: its jobs run beside the index stage (Spark
    # takes jobs from several threads), filling the cores the index stage leaves idle.
    pool = ThreadPoolExecutor(1, thread_name_prefix="graph")
    graph_job = (
        pool.submit(
            _graph,
            spark,
            day.files if graph_files is None else graph_files,
            os.path.join(work, "graph"),
            steps,
            exclusions,
            graph_single_task_bytes,
        )
        if with_graph
        else None
    )
    try:
        shards, groups = _index(spark, day, work, steps, gzip_level, date, dup_cluster, dup_of, stoplists)
    finally:
        pool.shutdown(wait=True)  # never leave a graph job writing into a folder being removed
    stats = DayIndexStats(
        groups=groups,
        shards=shards,
        docs_per_shard=day.docs_per_shard,
        min_group_docs=day.min_group_docs,
        graph=graph_job.result() if graph_job is not None else None,  # None: --no-graph
        seconds=dict(steps.seconds),
        totals=IndexTotals.of(shards, len(groups), sum(day.counts.values())),
    )
    drop_checksums(work)
    log.info("index: %s", dataclasses.asdict(stats.totals))
    return stats


def _graph(
    spark: Any,
    files: list[tuple[str, str, int]],
    folder: str,
    steps: Steps,
    exclusions: Exclusions,
    single_task_bytes: int,
) -> dict[str, int]:
    with steps("graph"):  # the listing's file sizes: no second listing of the day
        return graph.write_graph(
            spark,
            [f[0] for f in files],
            folder,
            exclusions=exclusions,
            single_task_bytes=single_task_bytes,
            sizes=[f[2] for f in files],
        )


def map_runs(files: list[tuple[str, str, int]], slots: int) -> list[tuple[int, list[tuple[str, str]]]]:
    """The map's tasks: runs of consecutive files (t, the docid order, is the sorted path
    order) packed by bytes, :data:`RUNS_PER_SLOT` or more a core so a slow run does not hold
    the stage; biggest first (fewest stragglers)."""
    runs = packing.pack_in_order([f[2] for f in files], slots=slots * RUNS_PER_SLOT)
    runs.sort(key=lambda r: (-sum(files[i][2] for i in r), r.start))
    return [(r.start, [(files[i][0], files[i][1]) for i in r]) for r in runs]


def _shard_specs(
    day: DayPlan, work: str, gzip_level: int, date: dt.date | None, lists: dict[str, Any]
) -> dict[int, ShardSpec]:
    """Folder, shard number and CIFF description of every shard, by global shard ordinal."""
    on = f"; date={date:%Y-%m-%d}" if isinstance(date, dt.date) else ""
    return {
        g.base + n: ShardSpec(
            folder=os.path.join(work, index_shards.shard_dir(g)),
            shard=n,
            description=f"{get_analyzer(g.lang, lists).name}; dailyslice index {g.tld}/{g.lang} shard {n} of {g.k}{on}",
            gzip_level=gzip_level,
        )
        for g in day.groups
        for n in range(g.k)
    }


def _index(
    spark: Any,
    day: DayPlan,
    work: str,
    steps: Steps,
    gzip_level: int,
    date: dt.date | None,
    dup_cluster: str = "",
    dup_of: str = "",
    stoplists: tuple[Ref, ...] = (),
) -> tuple[list[ShardStats], list[GroupStats]]:
    """The map (analysis) and reduce (CIFF + metadata) stages; the shards' and groups' rows."""
    groups, files = day.groups, day.files
    lists = stoplists_mod.load(stoplists)  # loaded and checked on the driver already: cached
    shards: list[ShardStats] = []
    if sum(g.k for g in groups):
        spill = os.path.join(work, "_spill")
        plan = MapPlan(
            groups={key: (groups[g].base, groups[g].bits) for key, g in day.assign.items()},
            spill=spill,
            dup_cluster=dup_cluster,
            dup_of=dup_of,
            stoplists=stoplists,
        )
        todo = map_runs(files, spark.sparkContext.defaultParallelism)
        by_pidx = {g.base + n: (g, n) for g in groups for n in range(g.k)}
        specs = _shard_specs(day, work, gzip_level, date, lists)
        try:
            with steps("map"):
                # each file's pages analyzed in Python into per-shard segments in the spill
                # folder (lib/index/invert.py); only per (shard, file) counts come back
                inputs = shard_inputs(map_tasks(spark, len(todo), lambda it: index_files(it, plan, todo), MAP_SCHEMA))
            with steps("write"):
                # reduce: one task per shard merges its segments into its CIFF and metadata
                # (lib/index/write.py), biggest shards first
                shard_todo = sorted(inputs, key=lambda p: (-sum(inputs[p].docs), p))
                written = map_tasks(
                    spark, len(shard_todo), lambda it: write_shards(it, shard_todo, inputs, specs, spill), STATS_SCHEMA
                )
                shutil.rmtree(spill, ignore_errors=True)  # part of the step's time
        finally:
            shutil.rmtree(spill, ignore_errors=True)  # after a failed stage
        shards = [ShardStats.of(*by_pidx[r["pidx"]], r) for r in sorted(written, key=lambda r: r["pidx"])]
    return shards, [
        GroupStats(
            g.tld,
            g.lang,
            g.docs,
            g.k,
            files=sum(1 for s in shards if (s.tld, s.lang) == (g.tld, g.lang)),
            analyzer=get_analyzer(g.lang, lists).name,
        )
        for g in groups
    ]


def drop_checksums(folder: str) -> None:
    """Hadoop's local filesystem leaves ``.*.crc`` side files: not part of the output."""
    for dirpath, _, names in os.walk(folder):
        for n in names:
            if n.startswith(".") and n.endswith(".crc"):
                os.remove(os.path.join(dirpath, n))
