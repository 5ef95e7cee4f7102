"""The daily catalogue job (Spark): CDXJ index, URL database merge and report for one day.

Input: a completed preprocess day (``ROOT/preprocessed/YYYY-MM/DD`` with ``_SUCCESS``).
Output: ``ROOT/catalogue/YYYY-MM/DD/{index.cdxj, report.html, _SUCCESS}`` (written to a
temporary folder and swapped in, or uploaded with ``_SUCCESS`` last for S3), and the
URL database under ``ROOT/urldb`` (or ``--urldb``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import time
from typing import Any

from lib.catalogue import cdxj, report, urldb
from lib.core import storage
from lib.core.schema import CAPTURE_SCHEMA, spark_schema
from lib.core.sparkjob import JobResult, SparkJob

CDXJ_NAME = "index.cdxj"


def day_from_path(path: str) -> dt.date | None:
    """The date of a ``.../YYYY-MM/DD`` folder, if the path ends like one."""
    m = re.search(r"(\d{4})-(\d{2})/(\d{2})/?$", path.replace(os.sep, "/"))
    return dt.date(int(m[1]), int(m[2]), int(m[3])) if m else None


class CatalogueJob(SparkJob):
    name = "catalogue"
    description = "Per-day CDXJ index, URL database merge and HTML report from preprocess output"
    input_kind = "preprocessed"
    output_kind = "catalogue"

    def add_arguments(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("--urldb", help="URL database folder (default ROOT/urldb; local/cluster filesystem)")
        p.add_argument("--no-urldb", action="store_true", help="skip the URL database merge")
        p.add_argument("--url-partitions", type=int, default=urldb.DEFAULT_PARTITIONS,
                       help="key-space partitions of a new URL database (default %(default)s)")
        p.add_argument("--keep-versions", type=int, default=urldb.DEFAULT_KEEP,
                       help="URL database versions kept for re-runs (default %(default)s)")
        p.add_argument("--warc-prefix", help="archive folder that CDXJ filenames are relative to: a path, "
                       "file:// or s3:// URI, trailing slash optional (default ROOT/warc; full URIs when no ROOT)")
        p.add_argument("--index", help="the day's index output, for shard sizes (default ROOT/index/YYYY-MM/DD)")
        p.add_argument("--no-report", action="store_true", help="skip the HTML report")

    def run(self, spark: Any, args: argparse.Namespace) -> JobResult:
        t0 = time.time()
        day = args.date or day_from_path(args.input)
        if day is None:
            raise SystemExit("catalogue: give --date (the input path does not end in YYYY-MM/DD)")
        src = storage.local_path(args.input) if not storage.is_s3(args.input) else None
        if src is None:
            raise ValueError(f"catalogue input must be on a local/cluster filesystem (Spark has no S3 here): {args.input}")
        if not os.path.exists(os.path.join(src, storage.SUCCESS)):
            raise FileNotFoundError(f"{src}: preprocess output is not complete (no {storage.SUCCESS})")
        prefix = args.warc_prefix or (storage.join(args.root, "warc") if args.root else None)
        caps_dir = os.path.join(src, "_captures")
        captures = spark.read.schema(spark_schema(CAPTURE_SCHEMA)).parquet(caps_dir) if os.path.isdir(caps_dir) \
            else spark.createDataFrame([], spark_schema(CAPTURE_SCHEMA))
        summary: dict[str, Any] = {"date": day.isoformat(), "input": args.input}

        with self.work_dir(spark, args) as wd:
            work = wd.path
            summary["captures"] = urldb.count_rows(caps_dir) if os.path.isdir(caps_dir) else 0
            summary["cdxj_lines"] = cdxj.write_cdxj(cdxj.cdxj_lines_df(captures, prefix),
                                                    os.path.join(work, CDXJ_NAME), work)
            # totals add up: every capture is a line or counted here (no URL or WARC-Date)
            summary["captures_not_indexed"] = summary["captures"] - summary["cdxj_lines"]
            summary["cdxj_seconds"] = round(time.time() - t0, 3)
            if not args.no_urldb:
                db = args.urldb or (storage.join(args.root, "urldb") if args.root else None)
                if db is None:
                    raise SystemExit("catalogue: give --urldb or --root (or --no-urldb)")
                t1 = time.time()
                summary["urldb"] = urldb.merge_day(spark, db, day, captures, args.url_partitions, args.keep_versions)
                summary["urldb_seconds"] = round(time.time() - t1, 3)
            if not args.no_report:
                root = args.root or os.path.dirname(os.path.dirname(os.path.dirname(src.rstrip("/"))))
                index_day = args.index or storage.join(root, "index", f"{day:%Y-%m}", f"{day:%d}")
                report.write_report(root, day, os.path.join(work, report.REPORT), index_day, day_path=src)
            wd.publish()
        return JobResult(ok=True, summary=summary, output=args.output)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return CatalogueJob().main(argv, spark=spark)
