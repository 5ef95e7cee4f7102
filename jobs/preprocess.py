"""Preprocess a day's crawl: WARC/ARC files -> cleaned, language-tagged Parquet.

    spark-submit jobs/preprocess.py --date 2026-01-15 --root s3://bucket
    python jobs/preprocess.py --input DIR --output DIR          # local[*]

Reads ROOT/warc/YYYY-MM/DD/** (``*.warc.gz``, ``*.warc``, ``*.arc.gz``, ``*.arc``) and writes
ROOT/preprocessed/YYYY-MM/DD/: ``language=xxx/part-*.parquet`` (pages), ``_captures/``,
``_stats.json``, ``_errors.jsonl`` and ``_SUCCESS`` last. See README for the columns.
"""

from __future__ import annotations

import os
import sys

if __package__ in (None, ""):  # run as a script: make `lib` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from lib import storage  # noqa: E402
from lib.preprocess_tasks import RESULT_SCHEMA, make_mapper, merge_results, remove_strays  # noqa: E402
from lib.schema import spark_schema  # noqa: E402
from lib.sparkjob import JobResult, SparkJob  # noqa: E402

SUFFIXES = (".warc.gz", ".warc", ".arc.gz", ".arc")


class Preprocess(SparkJob):
    name = "preprocess"
    description = "WARC/ARC files of a day -> cleaned, language-tagged Parquet with record offsets"
    input_kind = "warc"
    output_kind = "preprocessed"

    def add_arguments(self, p):
        p.add_argument("--max-page-bytes", type=int, default=10 << 20,
                       help="skip (and report) pages whose HTTP body is larger (default 10 MiB)")
        p.add_argument("--batch-rows", type=int, default=500, help="pages per Arrow batch handed to Spark")
        p.add_argument("--fail-on", choices=("unreadable", "never", "any"), default="unreadable",
                       help="exit non-zero when: a file could not be read (default), never, or any record failed")

    def run(self, spark, args) -> JobResult:
        files = [(f.uri, f.size) for f in storage.list_files(args.input, SUFFIXES)]
        files.sort(key=lambda f: -f[1])  # biggest first: fewer stragglers at the end of the day
        with self.work_dir(spark, args) as work:
            tmp = work.path
            results: list[dict] = []
            if files:
                mapper = make_mapper(files, tmp, args.max_page_bytes, args.batch_rows)
                n = args.partitions or len(files)
                done = spark.range(0, len(files), 1, n).mapInArrow(mapper, spark_schema(RESULT_SCHEMA))
                results = [r.asDict() for r in done.collect()]  # one small row per input file
            os.makedirs(os.path.join(tmp, "_captures"), exist_ok=True)
            remove_strays(tmp, results)
            stats, reported = merge_results(tmp, files, results)
            t = stats["totals"]
            assert t["read"] == t["kept"] + t["skipped"] + t["failed"], "counters do not add up"
            work.publish({"job": self.name, "files": len(files), "pages": t["kept"]})

        unreadable = t["failed_by_reason"].get("read_error", 0)
        ok = {"never": True, "unreadable": unreadable == 0, "any": t["failed"] == 0}[args.fail_on]
        summary = {
            "input": args.input, "output": args.output, "files": len(files), "bytes": t["bytes"],
            "records_read": t["read"], "pages_kept": t["kept"], "skipped": t["skipped"], "failed": t["failed"],
            "failed_by_reason": t["failed_by_reason"], "warnings_by_reason": t["warnings_by_reason"],
            "unreadable_files": unreadable, "error_report_lines": reported,
        }
        return JobResult(ok=ok, summary=summary, output=args.output)


def main(argv: list[str] | None = None, spark=None) -> int:
    return Preprocess().main(argv, spark)


if __name__ == "__main__":
    sys.exit(main())
