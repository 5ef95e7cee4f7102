"""One night of a day (preprocess, index with the graph and the lookup across days, catalogue) in
one ``local[2]`` session, with or without near-duplicates; prints the CPU seconds of the whole
process tree (this driver, the JVM, the Python workers), read just before the session stops.

    python -m benchmarks.night_cpu WARC_DAY_FOLDER on|off

``off``: ``--minhash-perms 0`` (no signatures, so no clusters) and ``--dup-days 0``. Used by
``bench_dedup_jobs --night N`` to take the night's share of near-duplicates.
"""

import datetime as dt
import shutil
import sys
import tempfile

import psutil
from pyspark.sql import SparkSession

from jobs import catalogue, index, preprocess
from lib.store import layout

DAY = dt.date(2026, 1, 15)


def tree_cpu() -> float:
    """User + system CPU seconds of this process, its live descendants and the children they reaped."""
    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def main() -> int:
    warc, mode = sys.argv[1], sys.argv[2]
    if mode not in ("on", "off"):
        sys.exit("usage: python -m benchmarks.night_cpu WARC_DAY_FOLDER on|off")
    root = tempfile.mkdtemp(prefix="night-")
    shutil.copytree(warc, layout.day_path(root, layout.WARC, DAY))
    common = {"date": DAY, "root": root}
    off = mode == "off"
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        rc = preprocess.run(spark, preprocess.PreprocessOptions(**common, **({"minhash_perms": 0} if off else {})))
        rc2 = index.run(spark, index.IndexOptions(**common, dup_days=0 if off else 30))
        rc3 = catalogue.run(spark, catalogue.CatalogueOptions(**common))
        print(f"NIGHT {mode} cpu {tree_cpu():.2f}", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    return rc.exit_code or rc2.exit_code or rc3.exit_code


if __name__ == "__main__":
    sys.exit(main())
