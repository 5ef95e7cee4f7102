"""Added CPU of near-duplicates in the jobs (docs/benchmarks.md, "Near-duplicates (MinHash)"):
the preprocess tasks' ``minhash_cpu`` against their whole CPU, and the index's dedup stages
(lib.index.dedup: bands, pairs, clusters) run in-process on the same day's pages.

    python -m benchmarks.bench_dedup_jobs [WARC_DAY_FOLDER]    # default: a copy of ../shared/corpus
"""

import argparse
import json
import os
import pathlib
import shutil
import tempfile
import time

from pyspark.sql import SparkSession

from benchmarks.common import write_result
from jobs import preprocess
from lib.index import dedup
from lib.index.page_files import input_files
from lib.text import neardup


def clusters_in_process(work: str, files: list[str], st: dedup.Settings, parts: int = 4) -> tuple:
    """The index's dedup stages in this process (one bands run, ``parts`` pair partitions, the
    clusters): (bands result, pair results, verified edges, record id -> representative)."""
    r1 = dedup.band_run(0, files, work, parts, st)
    r2 = [dedup.pair_partition(p, work, st) for p in range(parts)]
    edges = set()
    pages = {}
    for p in range(parts):
        t = dedup._read(os.path.join(work, "edges", f"{p}.arrow"))
        edges |= set(zip(t.column("a").to_pylist(), t.column("b").to_pylist()))
        t = dedup._read(os.path.join(work, "edges", f"{p}.pages.arrow"))
        for rid, cap, n, sig in zip(*(t.column(c).to_pylist() for c in dedup.SIGS_SCHEMA.names[:4])):
            pages[rid] = neardup.Page(rid, cap, n, sig)
    return r1, r2, edges, neardup.clusters(pages.values(), sorted(edges))


def main() -> None:
    """Preprocess the day (one core), then run the dedup stages in this process; print the shares."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("warc", nargs="?", help="a day's folder of archives (default: a copy of ../shared/corpus)")
    args = ap.parse_args()
    spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    tmp = pathlib.Path(tempfile.mkdtemp())
    if args.warc:
        warc = pathlib.Path(args.warc)
    else:
        warc = tmp / "warc"
        corpus = os.environ.get("DAILYSLICE_SHARED", os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
        shutil.copytree(os.path.join(corpus, "corpus"), warc, ignore=shutil.ignore_patterns("*.md"))
    summ = tmp / "summary.json"
    preprocess.main(["--input", str(warc), "--output", str(tmp / "pre"), "--summary", str(summ)], spark=spark)
    s = json.loads(summ.read_text())
    tt = s["task_timing"]
    print("pages", s["pages_kept"], "task_cpu", tt["task_cpu"], "minhash_cpu", tt.get("minhash_cpu"))
    files = input_files(str(tmp / "pre"))
    work = str(tmp / "dedup")
    c0 = time.process_time()
    r1, r2, edges, reps = clusters_in_process(work, [f[0] for f in files], dedup.Settings())
    c1 = time.process_time()
    copies = sum(rid != rep for rid, rep in reps.items())
    candidates = sum(r["candidates"] for r in r2)
    print("judged", r1["judged"], "candidates", candidates, "edges", len(edges), "copies", copies)
    print("cluster_cpu", round(c1 - c0, 3))
    print(
        "share signatures %.2f%%, clusters %.2f%% of preprocess task CPU"
        % (100 * tt["minhash_cpu"] / tt["task_cpu"], 100 * (c1 - c0) / tt["task_cpu"])
    )
    write_result(
        "bench_dedup_jobs",
        {
            "pages": s["pages_kept"],
            "signatures_share_of_task_cpu": round(tt["minhash_cpu"] / tt["task_cpu"], 4),
            "clusters_share_of_task_cpu": round((c1 - c0) / tt["task_cpu"], 4),
            "candidates": candidates,
            "copies": copies,
        },
        what="the share of the preprocess task CPU that near-duplicate signatures and clusters take in the jobs",
        shape={"day": args.warc or "the shared corpus"},
    )
    shutil.rmtree(tmp, ignore_errors=True)
    spark.stop()


if __name__ == "__main__":
    main()
