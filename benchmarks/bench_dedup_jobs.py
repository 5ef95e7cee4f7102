"""Added CPU of near-duplicates in the jobs (docs/benchmarks.md, "Near-duplicates (MinHash)"):
the preprocess tasks' ``minhash_cpu`` against their whole CPU, and the index's dedup stages
(lib.neardup.day_clusters: bands, pairs, clusters) run in-process on the same day's pages.

    python -m benchmarks.bench_dedup_jobs [WARC_DAY_FOLDER] [--night PAIRS]   # default: ../shared/corpus

``--night PAIRS``: also the whole night's CPU (benchmarks/night_cpu.py: preprocess, index, catalogue,
JVM and workers included) with and without near-duplicates, PAIRS runs each in turn; the issue's
target (<= 10%) is of the night.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pyspark.sql import SparkSession

from benchmarks.bench_minhash import day_variant
from benchmarks.common import write_result
from jobs import preprocess
from lib.index.page_files import input_files
from lib.neardup import clusters, day_clusters


def clusters_in_process(work: str, files: list[str], st: day_clusters.Settings, parts: int = 4) -> tuple:
    """The index's dedup stages in this process (one bands run, ``parts`` pair partitions, the
    clusters): (bands result, pair results, verified edges, record id -> representative)."""
    r1 = day_clusters.band_run(0, files, work, parts, st)
    r2 = [day_clusters.pair_partition(p, work, st) for p in range(parts)]
    edges = set()
    pages = {}
    for p in range(parts):
        t = day_clusters._read(os.path.join(work, "edges", f"{p}.arrow"))
        edges |= set(zip(t.column("a").to_pylist(), t.column("b").to_pylist()))
        t = day_clusters._read(os.path.join(work, "edges", f"{p}.pages.arrow"))
        for rid, cap, n, sig in zip(*(t.column(c).to_pylist() for c in day_clusters.SIGS_SCHEMA.names[:4])):
            pages[rid] = clusters.Page(rid, cap, n, sig)
    return r1, r2, edges, clusters.clusters(pages.values(), sorted(edges))


def main() -> None:
    """Preprocess the day (one core), then run the dedup stages in this process; print the shares."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("warc", nargs="?", help="a day's folder of archives (default: a copy of ../shared/corpus)")
    ap.add_argument("--night", type=int, default=0, metavar="PAIRS", help="night CPU with/without, PAIRS runs each")
    ap.add_argument("--shape", help="the day's shape.json (devtools/realday), recorded with the figures")
    ap.add_argument("--cut", help="which cut of that day WARC is (small, large), recorded with the figures")
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
    r1, r2, edges, reps = clusters_in_process(work, [f[0] for f in files], day_clusters.Settings())
    c1 = time.process_time()
    copies = sum(rid != rep for rid, rep in reps.items())
    candidates = sum(r["candidates"] for r in r2)
    print("judged", r1["judged"], "candidates", candidates, "edges", len(edges), "copies", copies)
    print("cluster_cpu", round(c1 - c0, 3))
    print(
        "share signatures %.2f%%, clusters %.2f%% of preprocess task CPU"
        % (100 * tt["minhash_cpu"] / tt["task_cpu"], 100 * (c1 - c0) / tt["task_cpu"])
    )
    figures = {
        "pages": s["pages_kept"],
        "signatures_share_of_task_cpu": round(tt["minhash_cpu"] / tt["task_cpu"], 4),
        "clusters_share_of_task_cpu": round((c1 - c0) / tt["task_cpu"], 4),
        "candidates": candidates,
        "copies": copies,
    }
    if args.night:
        figures |= night(str(warc), args.night)
    write_result(
        "bench_dedup_jobs",
        figures,
        what="the share of the preprocess task CPU that near-duplicate signatures and clusters take in the jobs"
        + ("; the whole night's CPU (process tree) with and without them (night_added)" if args.night else ""),
        shape=day_shape(args.warc, args.shape, args.cut),
        variant=day_variant(args.warc) if args.warc else "corpus",
    )
    shutil.rmtree(tmp, ignore_errors=True)
    spark.stop()


def day_shape(warc: str | None, shape: str | None, cut: str | None) -> dict:
    """What the figures were measured on: the realday shape's counts (pages, archives of the cut,
    links and distinct targets, pages without text, repeated record ids) when given."""
    out: dict = {"day": warc or "the shared corpus"}
    if shape:
        s = json.loads(pathlib.Path(shape).read_text())
        keys = ("copies", "records", "html_pages", "links", "distinct_targets_per_link", "pages_without_text")
        out |= {k: s.get(k) for k in keys} | {"repeated_record_ids": s.get("repeated_record_ids")}
        if cut:
            out |= {"cut": cut, "archives": s["files"][cut], "archive_bytes": s["file_bytes"][cut]}
    return out


def night(warc: str, pairs: int) -> dict[str, float]:
    """The night's CPU with and without near-duplicates, ``pairs`` runs each in turn (medians)."""
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    for _ in range(pairs):
        for mode in cpu:
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.night_cpu", warc, mode], capture_output=True, text=True, check=True
            ).stdout
            cpu[mode].append(float(next(x for x in out.splitlines() if x.startswith("NIGHT")).split()[-1]))
            print(f"night {mode}: {cpu[mode][-1]:.2f} CPU s", flush=True)
    on, off = statistics.median(cpu["on"]), statistics.median(cpu["off"])
    print(f"night: {on:.1f} against {off:.1f} CPU s: near-duplicates add {100 * (on / off - 1):.1f}%")
    return {"night_cpu_on_s": round(on, 2), "night_cpu_off_s": round(off, 2), "night_added": round(on / off - 1, 4)}


if __name__ == "__main__":
    main()
