"""Preprocess a day's crawl: WARC/ARC files -> cleaned, language-tagged Parquet.

    spark-submit jobs/preprocess.py --date 2026-01-15 --root s3://bucket
    python jobs/preprocess.py --input DIR --output DIR          # local[*]

Reads ROOT/warc/YYYY-MM/DD/** (``lib.warc.records.ARCHIVE_SUFFIXES``, any case) and writes
ROOT/preprocessed/YYYY-MM/DD/: ``language=xxx/part-*.parquet`` (pages), ``_captures/``,
``_stats.json``, ``_errors.jsonl`` and ``_SUCCESS`` last. See docs/preprocess.md for the columns.

Exit codes: 0 the day is published and healthy; 1 the run failed (nothing published);
2 usage (an input folder or prefix that does not exist included: nothing published);
3 the day is published but unhealthy (:mod:`lib.preprocess.health`: too many failed records,
too few HTML pages kept, too many unreadable files; the summary and ``_stats.json`` carry the
``health`` block); 4 the input day exists but holds no archives: nothing published, unless
``--allow-empty`` asks for an empty day (then 0).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
from typing import Any

from lib.core import exclusions, layout, storage
from lib.core.sparkjob import EXIT_UNHEALTHY, JobResult, SparkJob, empty_input, map_tasks
from lib.core.schema import PAGE_SCHEMA
from lib.preprocess import enrich, health, plan
from lib.preprocess.inputs import input_record
from lib.preprocess.tasks import FILE_BYTES, RESULT_SCHEMA, make_mapper, merge_results, remove_strays
from lib.warc.records import ARCHIVE_SUFFIXES

log = logging.getLogger("dailyslice.preprocess")
DEFAULTS = health.Thresholds()


def share(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return v


def thresholds(args: argparse.Namespace) -> health.Thresholds:
    """The health thresholds, tightened by ``--fail-on``: ``unreadable`` allows no unreadable
    file, ``any`` no failed record (and no unreadable file, which is a failed record too)."""
    t = health.Thresholds(args.max_failed_share, args.min_kept_share, args.max_unreadable_share,
                          args.max_empty_text_share)
    if args.fail_on in ("unreadable", "any"):
        t = dataclasses.replace(t, max_unreadable_share=0.0)
    if args.fail_on == "any":
        t = dataclasses.replace(t, max_failed_share=0.0)
    return t


class PreprocessJob(SparkJob):
    name = "preprocess"
    description = "WARC/ARC files of a day -> cleaned, language-tagged Parquet with record offsets"
    input_kind = layout.WARC
    output_kind = layout.PREPROCESSED
    light_driver = True  # the JVM schedules Python tasks; the work is in Python
    checks_input = True  # a missing input folder: exit 2; a day without archives: exit 4

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--max-page-bytes", type=int, default=10 << 20,
                       help="skip (and report) pages whose HTTP body is larger (default 10 MiB)")
        p.add_argument("--task-bytes", type=int, default=plan.TASK_BYTES, metavar="BYTES",
                       help="archives are grouped into tasks of at most this many bytes, a file counting its size "
                            "plus --open-cost-bytes (a bigger file is a task alone; a small day is cut finer to "
                            "fill every core), as Spark's spark.sql.files.maxPartitionBytes (default 128 MiB)")
        p.add_argument("--open-cost-bytes", type=int, default=plan.OPEN_COST_BYTES, metavar="BYTES",
                       help="what opening one archive costs, in bytes, when tasks are planned, as Spark's "
                            "spark.sql.files.openCostInBytes (default 512 KiB; Spark's is 4 MiB)")
        p.add_argument("--file-bytes", type=int, default=FILE_BYTES, metavar="BYTES",
                       help="a task starts a new Parquet file of a language when the current one reaches this "
                            "size (default 128 MiB)")
        p.add_argument("--batch-rows", type=int, default=500, help="pages per Arrow batch handed to Spark")
        p.add_argument("--max-failed-share", type=share, default=DEFAULTS.max_failed_share,
                       help="unhealthy above this share of failed records among records read (default %(default)s)")
        p.add_argument("--min-kept-share", type=share, default=DEFAULTS.min_kept_share,
                       help="unhealthy below this share of kept pages among parsed 2xx HTML responses (default %(default)s)")
        p.add_argument("--max-unreadable-share", type=share, default=DEFAULTS.max_unreadable_share,
                       help="unhealthy above this share of unreadable input files (default %(default)s)")
        p.add_argument("--max-empty-text-share", type=share, default=DEFAULTS.max_empty_text_share,
                       help="warn above this share of kept pages whose main text is empty although their body has "
                            "text (default %(default)s)")
        p.add_argument("--s3-max-connections", type=int, metavar="N",
                       default=int(os.environ.get("DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB", "0") or 0),
                       help="at most N archives read from S3 at once by the whole job (one connection each; "
                            "default $DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB, 0: one per task slot)")
        p.add_argument("--enrich", action="append", default=[], metavar="NAME[,NAME]",
                       help="run these enrichment plugins (entry-point group dailyslice.enrichers, e.g. microdata); "
                            "their columns are added to the pages (docs/enrich.md)")
        p.add_argument("--main-html", action="store_true",
                       help="add the main_html column: the main content with structural tags only (p, h1-h6, lists, "
                            "tables, pre/code, blockquote, links), written in the walk that writes plain_text")
        p.add_argument("--fail-on", choices=("health", "unreadable", "any", "never"), default="health",
                       help="exit 3 (published, unhealthy) when: a health threshold is breached (default); that or "
                            "any unreadable file; that or any failed record; never (health is still reported)")

    def run(self, spark: Any, args: argparse.Namespace) -> JobResult:
        excluded = exclusions.for_job(args.root, args.exclusions)
        plugins = enrich.load([n.strip() for a in args.enrich for n in a.split(",") if n.strip()], PAGE_SCHEMA.names)
        listed = storage.list_files(args.input, ARCHIVE_SUFFIXES)
        files = sorted((f.uri, f.size) for f in listed)  # _stats.json and _errors.jsonl list them in name order
        if not files and (empty := empty_input(self.name, args, "no archives")) is not None:
            return empty
        with self.work_dir(spark, args) as work:
            tmp = work.path
            with self.steps("map"):  # tasks by bytes, biggest first; one small result row per input file
                tasks = plan.pack(files, args.task_bytes, args.open_cost_bytes, spark.sparkContext.defaultParallelism)
                mapper = make_mapper(files, tasks, tmp, args.max_page_bytes, args.batch_rows, args.input, excluded,
                                     args.file_bytes, plugins, args.main_html)
                results = map_tasks(spark, len(tasks), mapper, RESULT_SCHEMA, args.partitions,
                                    max_concurrent=args.s3_max_connections if storage.is_s3(args.input) else 0)
            with self.steps("write"):
                os.makedirs(os.path.join(tmp, layout.CAPTURES), exist_ok=True)
                remove_strays(tmp, results)
                stats, reported = merge_results(tmp, files, results, thresholds(args))
                t = stats["totals"]
                assert t["read"] == t["kept"] + t["skipped"] + t["failed"], "counters do not add up"
                storage.write_bytes(os.path.join(tmp, layout.INPUTS), input_record(args.input, listed))
                work.publish({"job": self.name, "files": len(files), "pages": t["kept"], "healthy": stats["health"]["ok"]})

        day = stats["health"]
        (log.info if day["ok"] else log.error)("%s: %s", args.output, health.describe(day))
        for w in day.get("warnings", []):
            log.warning("%s: %s", args.output, w)
        for name, r in t.get("enrich", {}).items():
            if r["failed"]:
                log.warning("%s: enrichment plugin %s failed on %d of %d pages (%s); those pages are kept without its columns",
                            args.output, name, r["failed"], r["pages"], r["failed_by_reason"])
        summary = {
            "input": args.input, "output": args.output, "files": len(files), "tasks": len(tasks), "bytes": t["bytes"],
            "records_read": t["read"], "pages_kept": t["kept"], "skipped": t["skipped"], "failed": t["failed"],
            "failed_by_reason": t["failed_by_reason"], "warnings_by_reason": t["warnings_by_reason"],
            "excluded": t["skipped_by_reason"].get("excluded", 0), "exclusion_rules": len(excluded),
            "html_seen": t["html_seen"], "empty_text": t["empty_text"], "unreadable_files": day["counts"]["unreadable_files"],
            "error_report_lines": reported, "health": day, "steps": self.steps.seconds,
            "html_extraction": t.get("html_extraction", []),
            "s3_executors": t.get("s3", {}),  # the tasks' share of "s3" (driver and tasks together)
            "enrich": t.get("enrich", {}),  # per plugin: pages, seconds, failed (by reason), samples
        }
        return JobResult(ok=day["ok"] or args.fail_on == "never", summary=summary, output=args.output,
                         code=EXIT_UNHEALTHY)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return PreprocessJob().main(argv, spark)


if __name__ == "__main__":
    sys.exit(main())
