"""Index a preprocessed day: per TLD/language CIFF shards, metadata store and web graph.

    python jobs/index.py --date 2026-01-15 --root /data/bucket
    python jobs/index.py --input DAY/preprocessed --output DAY/index [--docs-per-shard N]

Reads ``ROOT/preprocessed/YYYY-MM/DD/language=*/`` and writes ``ROOT/index/YYYY-MM/DD/``:
``{TLD}/{LANG}/index-{n}.ciff.gz`` + ``metadata-{n}.parquet``, ``graph/{edges,inlinks,hosts}/``,
``_stats.json`` and ``_SUCCESS`` (last). See docs/index.md for the layout and the rules.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa

if __package__ in (None, ""):  # `python jobs/index.py`: make the project importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib.core import storage
from lib.core.analysis import get_analyzer
from lib.core.schema import PAGE_SCHEMA, spark_schema
from lib.core.sparkjob import JobResult, SparkJob, log
from lib.index import graph, plan as index_plan
from lib.index.build import MAP_SCHEMA, READ_COLUMNS, STATS_SCHEMA, MapPlan, index_files
from lib.index.write import ShardSpec, shard_inputs, write_shards

GRAPH_COLUMNS = ["url", "url_host", "outgoing_links"]
#: columns every preprocessed file must have (checked on the driver before anything runs)
PAGE_COLUMNS = sorted(set(READ_COLUMNS) | set(GRAPH_COLUMNS))


class IndexJob(SparkJob):
    name = "index"
    description = "Preprocessed day (Parquet) -> CIFF index shards per TLD/language, metadata, web graph"
    input_kind = "preprocessed"
    output_kind = "index"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--docs-per-shard", type=int, default=100_000,
                            help="target documents per shard; shards per group = next power of two (default 100000)")
        parser.add_argument("--min-group-docs", type=int, default=1000,
                            help="TLD/LANG groups with fewer pages go to other/LANG (default 1000)")
        parser.add_argument("--gzip-level", type=int, default=2, choices=range(1, 10), metavar="1-9",
                            help="zlib level of the .ciff.gz files (default 2; docs/index.md has the speed/size trade)")
        parser.add_argument("--no-graph", dest="graph", action="store_false",
                            help="write the CIFF shards and metadata only, no web graph (graph/ absent)")

    def run(self, spark: Any, args: argparse.Namespace) -> JobResult:
        if not storage.exists(storage.join(args.input, storage.SUCCESS)):
            raise FileNotFoundError(f"input day is not complete (no {storage.SUCCESS}): {args.input}")
        with self.work_dir(spark, args) as wd:
            inp = args.input
            try:
                if storage.is_s3(inp):
                    inp = _download(inp, wd.path + ".input")
                summary = build_index(spark, inp, wd.path, args)
            finally:
                shutil.rmtree(wd.path + ".input", ignore_errors=True)
            storage.write_bytes(os.path.join(wd.path, "_stats.json"), json.dumps(summary, indent=1, sort_keys=True).encode())
            wd.publish()
        totals = summary["totals"]
        return JobResult(ok=True, summary={"totals": totals, "groups": len(summary["groups"]), "steps": summary["seconds"]},
                         output=args.output)


def _download(uri: str, local: str) -> str:
    """Copy the preprocessed day's pages from S3 to a local folder Spark can read (Spark has
    no S3 connector here; in production the index reads the cluster filesystem copy)."""
    for f in storage.list_files(uri):
        rel = f.uri[len(uri.rstrip("/")) + 1 :]
        if not (rel.startswith("language=") or rel == storage.SUCCESS):
            continue
        dest = os.path.join(local, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with storage.open_stream(f.uri) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return local


def read_links(spark: Any, inp: str) -> Any:
    """The day's pages' ``url``, ``url_host`` and ``outgoing_links`` (all ``language=*``
    folders), read with the known schema: no schema-inference job, only these columns."""
    schema = spark_schema(pa.schema([PAGE_SCHEMA.field(c) for c in GRAPH_COLUMNS]))
    root = storage.local_path(inp)
    dirs = _language_dirs(root)
    if not dirs:
        return spark.createDataFrame([], schema)
    base = storage.normalize(root)
    return spark.read.schema(schema).option("basePath", base).parquet(*[f"{base}/{d}" for d in dirs])


def _language_dirs(root: str) -> list[str]:
    """The ``language=*`` folders of a preprocessed day, sorted."""
    return sorted(d for d in os.listdir(root) if d.startswith("language=") and os.path.isdir(os.path.join(root, d)))


def input_files(inp: str) -> list[tuple[str, str, int]]:
    """(path, language, bytes) of the day's page files, sorted by path: the docid order."""
    root = storage.local_path(inp)
    out = []
    for d in _language_dirs(root):
        lang = d[len("language="):]
        lang = "" if lang == "__HIVE_DEFAULT_PARTITION__" else lang
        for name in sorted(os.listdir(os.path.join(root, d))):
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                path = os.path.join(root, d, name)
                out.append((path, lang, os.path.getsize(path)))
    return out


def build_index(spark: Any, inp: str, work: str, args: argparse.Namespace) -> dict:
    """The Spark plan: shards, CIFF + metadata, graph. Returns the statistics."""
    os.makedirs(work, exist_ok=True)
    clock = _Clock()  # "plan" includes listing and counting the pages
    files = input_files(inp)
    counts = index_plan.count_pages([(path, lang) for path, lang, _ in files], PAGE_COLUMNS)
    # The graph is independent of the shards: its jobs run beside the index stage (Spark
    # takes jobs from several threads), filling the cores the index stage leaves idle.
    pool = ThreadPoolExecutor(1, thread_name_prefix="graph")
    graph_job = pool.submit(_graph, spark, inp, storage.normalize(os.path.join(work, "graph"))) if args.graph else None
    try:
        summary = _index(spark, work, args, files, counts, clock)
    finally:
        pool.shutdown(wait=True)  # never leave a graph job writing into a folder being removed
    if graph_job is not None:
        summary["graph"], summary["seconds"]["graph"] = graph_job.result()
    else:
        summary["graph"] = None  # --no-graph
    _drop_checksums(work)
    keys = ("docs", "terms", "postings", "total_terms", "ciff_bytes", "metadata_bytes")
    summary["totals"] = {k: sum(s[k] for s in summary["shards"]) for k in keys}
    summary["totals"].update(groups=len(summary["groups"]), shards=len(summary["shards"]), pages_in=sum(counts.values()))
    if summary["totals"]["docs"] != summary["totals"]["pages_in"]:
        raise RuntimeError(f"indexed {summary['totals']['docs']} documents of {summary['totals']['pages_in']} pages")
    log.info("index: %s", summary["totals"])
    return summary


def _graph(spark: Any, inp: str, folder: str) -> tuple[dict, float]:
    t = time.time()
    counts = graph.write_graph(read_links(spark, inp), folder)
    return counts, round(time.time() - t, 3)


def _index(spark: Any, work: str, args: argparse.Namespace, files: list, counts: dict, clock: "_Clock") -> dict:
    """Plan the shards, then the map (analysis) and reduce (CIFF + metadata) stages."""
    groups, assign = index_plan.plan_groups(counts, args.docs_per_shard, args.min_group_docs)
    clock("plan")
    shards = sum(g.k for g in groups)
    date = f"; date={args.date:%Y-%m-%d}" if isinstance(args.date, dt.date) else ""
    summary: dict = {"groups": [], "shards": [], "docs_per_shard": args.docs_per_shard,
                     "min_group_docs": args.min_group_docs}
    if shards:
        spill = os.path.join(work, "_spill")
        plan = MapPlan(groups={key: (groups[g].base, groups[g].bits) for key, g in assign.items()}, spill=spill)
        # one task per file, biggest first (fewest stragglers); t (the docid order) is the sorted
        # path order. spark.range gives exactly one row per partition without a Python RDD
        # (whose rows would need a Python worker of their own in every task).
        order = sorted(range(len(files)), key=lambda i: -files[i][2])
        todo = [(i, files[i][0], files[i][1]) for i in order]
        by_pidx = {g.base + n: (g, n) for g in groups for n in range(g.k)}
        specs = {
            p: ShardSpec(folder=os.path.join(work, index_plan.shard_dir(g)), shard=n,
                         description=f"{get_analyzer(g.lang).name}; dailyslice index {g.tld}/{g.lang} shard {n} of {g.k}{date}",
                         gzip_level=args.gzip_level)
            for p, (g, n) in by_pidx.items()
        }
        try:
            # map: each file's pages analyzed in Python into per-shard segments in the spill
            # folder (lib/index/build.py); only per (shard, file) counts come back
            reports = (spark.range(0, len(todo), 1, len(todo))
                       .mapInArrow(lambda it: index_files(it, plan, todo), spark_schema(MAP_SCHEMA)).collect())
            inputs = shard_inputs([r.asDict() for r in reports])
            clock("map")
            # reduce: one task per shard merges its segments into its CIFF and metadata
            # (lib/index/write.py), biggest shards first
            shard_todo = sorted(inputs, key=lambda p: (-sum(inputs[p].docs), p))
            written = (spark.range(0, len(shard_todo), 1, max(len(shard_todo), 1))
                       .mapInArrow(lambda it: write_shards(it, shard_todo, inputs, specs, spill),
                                   spark_schema(STATS_SCHEMA)).collect()) if shard_todo else []
        finally:
            shutil.rmtree(spill, ignore_errors=True)
        clock("write")
        for r in sorted(written, key=lambda r: r["pidx"]):
            g, n = by_pidx[r["pidx"]]
            summary["shards"].append({"tld": g.tld, "lang": g.lang, "shard": n, "k": g.k,
                                      **{k: r[k] for k in STATS_SCHEMA.names if k != "pidx"}})
    for g in groups:
        mine = [s for s in summary["shards"] if (s["tld"], s["lang"]) == (g.tld, g.lang)]
        summary["groups"].append({"tld": g.tld, "lang": g.lang, "docs": g.docs, "k": g.k, "files": len(mine),
                                  "analyzer": get_analyzer(g.lang).name})
    summary["seconds"] = clock.steps
    return summary


class _Clock:
    """Wall time per step of the plan (in the stats: where a day's time went)."""

    def __init__(self) -> None:
        self.t = time.time()
        self.steps: dict[str, float] = {}

    def __call__(self, step: str) -> None:
        now = time.time()
        self.steps[step] = round(now - self.t, 3)
        self.t = now


def _drop_checksums(folder: str) -> None:
    """Hadoop's local filesystem leaves ``.*.crc`` side files: not part of the output."""
    for dirpath, _, names in os.walk(folder):
        for n in names:
            if n.startswith(".") and n.endswith(".crc"):
                os.remove(os.path.join(dirpath, n))


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return IndexJob().main(argv, spark=spark)


if __name__ == "__main__":
    sys.exit(main())
