"""``make demo``: the daily pipeline end to end on an embedded default.

Generates a sample crawl in the bucket layout under ``--root`` (local folder, no S3, no
cluster), then runs preprocess, index and the catalogue (CDXJ, URL database, daily report)
for ``--date`` in one local Spark session, checks the index with the CIFF validator, and
prints where everything is.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys

if __package__ in (None, ""):  # `python jobs/demo.py`: make the project importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import SparkSession  # noqa: E402

from jobs.catalogue import CatalogueJob  # noqa: E402
from jobs.index import IndexJob  # noqa: E402
from jobs.preprocess import PreprocessJob  # noqa: E402
from lib.catalogue.report import REPORT  # noqa: E402
from lib.ciff.__main__ import main as ciff_main  # noqa: E402
from lib.core import layout, storage  # noqa: E402
from lib.core.sparkjob import use_this_python  # noqa: E402
from lib.warc.sample import write_sample_crawl  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="demo")
    ap.add_argument("--date", type=dt.date.fromisoformat, default=dt.date(2026, 1, 15))
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--pages-per-file", type=int, default=60)
    ap.add_argument("--s3", metavar="s3://BUCKET/PREFIX",
                    help="run against S3 (AWS_ENDPOINT_URL, e.g. make demo-s3's SeaweedFS): the sample crawl is "
                         "uploaded there, the jobs read and publish there; --root then holds the URL database, "
                         "the staging folders and a copy of what was published")
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    warc = layout.day_path(root, layout.WARC, a.date)
    if not os.path.isdir(warc):
        paths = write_sample_crawl(root, a.date, a.files, a.pages_per_file)
        print(f"demo: wrote a sample crawl of {len(paths)} WARC files under {warc}")
    common = ["--date", a.date.isoformat(), "--root", root]
    extra: dict[str, list[str]] = {}
    if a.s3:
        common = ["--date", a.date.isoformat(), "--root", a.s3.rstrip("/"), "--staging", os.path.join(root, "staging")]
        extra["catalogue"] = ["--urldb", os.path.join(root, layout.URLDB)]
        sent = storage.upload_tree(warc, layout.day_path(a.s3, layout.WARC, a.date))
        print(f"demo: uploaded {sent} archives to {layout.day_path(a.s3, layout.WARC, a.date)}", file=sys.stderr)
    use_this_python()
    spark = (SparkSession.builder.appName("dailyslice-demo").config("spark.ui.showConsoleProgress", "true")
             .config("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false").getOrCreate())
    spark.sparkContext.setLogLevel("WARN")
    rc = 0
    try:
        for job in (PreprocessJob(), IndexJob(), CatalogueJob()):
            print(f"demo: running jobs/{job.name}.py {' '.join(common)}", file=sys.stderr)
            rc = job.main(common + extra.get(job.name, []), spark=spark)
            if rc != 0:
                print(f"demo: jobs/{job.name}.py failed (exit {rc})", file=sys.stderr)
                return rc
    finally:
        spark.stop()
    if a.s3:  # bring the published day back to look at it (and to validate the shards below)
        for kind in (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE):
            src = layout.day_path(a.s3, kind, a.date)
            files = storage.list_files(src)
            for f in files:
                storage.write_bytes(os.path.join(layout.day_path(root, kind, a.date), f.uri[len(src) + 1:]),
                                    storage.read_bytes(f.uri))
            print(f"demo: {len(files)} files published under {src} (copied to {layout.day_path(root, kind, a.date)})")
    index_dir = layout.day_path(root, layout.INDEX, a.date)
    if os.path.isdir(index_dir):
        shards = sorted(os.path.join(d, f) for d, _, fs in os.walk(index_dir) for f in fs if f.endswith(".ciff.gz"))
        if shards and ciff_main(["validate", *shards]) != 0:
            return 1
        print(f"demo: {len(shards)} CIFF shards valid under {index_dir}")
        if shards:
            pick = ([s for s in shards if "/eng/" in s] or shards)[0]
            py = os.path.relpath(sys.executable)
            print(f"demo: try  {py} -m lib.ciff search {pick} \"library budget\"")
    print(f"demo: pages under {layout.day_path(root, layout.PREPROCESSED, a.date)}")
    report = os.path.join(layout.day_path(root, layout.CATALOGUE, a.date), REPORT)
    if os.path.exists(report):
        print(f"demo: CDXJ and the daily report (open in a browser): {os.path.dirname(report)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
