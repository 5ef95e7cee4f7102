"""Index a preprocessed day: per TLD/language CIFF shards, metadata store and web graph.

    python jobs/index.py --date 2026-01-15 --root /data/bucket
    python jobs/index.py --input DAY/preprocessed --output DAY/index [--docs-per-shard N]

Reads ``ROOT/preprocessed/YYYY-MM/DD/language=*/`` and writes ``ROOT/index/YYYY-MM/DD/``:
``{TLD}/{LANG}/index-{n}.ciff.gz`` + ``metadata-{n}.parquet`` (+ ``anchors-{n}.ciff.gz``, the
in-link anchor texts, with the graph), ``graph/{edges,inlinks,hosts}/``,
``_stats.json`` and ``_SUCCESS`` (last). See docs/index.md for the layout and the rules.

Exit codes: 0 published; 1 failed (an incomplete input day included), nothing published; 2 usage
(an input that does not exist included); 4 the preprocessed day holds no pages: nothing
published unless ``--allow-empty``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any

from lib.core import exclusions, layout, storage
from lib.core.sparkjob import JobResult, SparkJob, empty_input
from lib.index import graph
from lib.index.anchors import write_day_anchors
from lib.index.inputs import local_copy, page_files
from lib.index.pipeline import build_index, plan_day
from lib.preprocess.exclude import filter_day


class IndexJob(SparkJob):
    name = "index"
    description = "Preprocessed day (Parquet) -> CIFF index shards per TLD/language, metadata, web graph"
    input_kind = layout.PREPROCESSED
    output_kind = layout.INDEX
    light_driver = True  # the JVM schedules Python tasks; the work is in Python
    checks_input = True  # a missing input folder: exit 2; a day without pages: exit 4 (--allow-empty)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--docs-per-shard", type=int, default=100_000,
                            help="target documents per shard; shards per group = next power of two (default 100000)")
        parser.add_argument("--min-group-docs", type=int, default=1000,
                            help="TLD/LANG groups with fewer pages go to other/LANG (default 1000)")
        parser.add_argument("--gzip-level", type=int, default=2, choices=range(1, 10), metavar="1-9",
                            help="zlib level of the .ciff.gz files (default 2; docs/index.md has the speed/size trade)")
        parser.add_argument("--no-graph", dest="graph", action="store_false",
                            help="write the CIFF shards and metadata only, no web graph (graph/ absent)")
        parser.add_argument("--graph-single-task-bytes", type=int, default=graph.SINGLE_TASK_BYTES, metavar="BYTES",
                            help="a day of at most this many bytes of page files gets its graph in one task, "
                                 f"larger days in two stages; 0: always two (default {graph.SINGLE_TASK_BYTES})")
        parser.add_argument("--no-anchors", dest="anchors", action="store_false",
                            help="write the web graph but not the anchor-text CIFFs (anchors-{n}.ciff.gz)")

    def run(self, spark: Any, args: argparse.Namespace) -> JobResult:
        if not storage.exists(storage.join(args.input, layout.SUCCESS)):
            raise FileNotFoundError(f"input day is not complete (no {layout.SUCCESS}): {args.input}")
        if not page_files(args.input) and (empty := empty_input(self.name, args, "no preprocessed pages")) is not None:
            return empty
        excl = exclusions.for_job(args.root, args.exclusions)
        with self.work_dir(spark, args) as wd:
            copy = wd.path + ".input"  # an S3 day, copied where Spark can read it
            kept = wd.path + ".kept"  # the day without its excluded pages, when a list is in force
            try:
                inp = local_copy(args.input, copy) if storage.is_s3(args.input) else args.input
                excluded = None
                if excl:
                    with self.steps("exclude"):
                        excluded = filter_day(storage.local_path(inp), kept, excl, how="symlink", captures=False)
                    inp = kept
                with self.steps("plan"):
                    day = plan_day(inp, args.docs_per_shard, args.min_group_docs)
                summary = build_index(spark, day, wd.path, self.steps, gzip_level=args.gzip_level,
                                      with_graph=args.graph, date=args.date, exclusions=excl,
                                      graph_single_task_bytes=args.graph_single_task_bytes)
            finally:
                shutil.rmtree(copy, ignore_errors=True)
                shutil.rmtree(kept, ignore_errors=True)
            # what a rebuild of this day (the purge command) must repeat to number it the same way
            summary["args"] = {"docs_per_shard": args.docs_per_shard, "min_group_docs": args.min_group_docs,
                               "gzip_level": args.gzip_level, "graph": args.graph, "anchors": args.anchors}
            if excluded is not None:  # counted, never silent; the URLs stay out of the published stats
                summary["excluded"] = {"rules": len(excl), "pages": excluded["pages"]["excluded"],
                                       "edges": (summary.get("graph") or {}).get("excluded_edges", 0)}
            if args.graph and args.anchors:  # the in-link anchor texts of every shard's pages, as a CIFF beside it
                with self.steps("anchors"):
                    files = write_day_anchors(spark, wd.path, os.path.join(wd.path, "graph", "inlinks"), summary)
                summary["seconds"]["anchors"] = self.steps.seconds["anchors"]
                summary["anchors"] = {"files": len(files), "docs_with_anchors":
                                      sum(f["docs_with_anchors"] for f in files.values())}
            storage.write_bytes(os.path.join(wd.path, layout.STATS), json.dumps(summary, indent=1, sort_keys=True).encode())
            wd.publish()
        return JobResult(ok=True, summary={"totals": summary["totals"], "groups": len(summary["groups"]),
                                           "steps": summary["seconds"], "excluded": summary.get("excluded")},
                         output=args.output)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return IndexJob().main(argv, spark=spark)


if __name__ == "__main__":
    sys.exit(main())
