"""Where the time of a day's Slurm job goes: queueing, starting the Spark standalone
cluster in the allocation, the one driver (``dailyslice day``), preprocess, index, catalogue,
shutdown. The fixed part (everything but the jobs' work) is what ``sizing.overhead_minutes`` must cover.

Runs on the same one-host, two-node Slurm cluster as the tests (Debian's slurm-wlm and
munge, started here and stopped at the end), with a synthetic crawl on local disk:

    python -m benchmarks.bench_orchestration --files 2 --pages-per-file 40 [--nodes 2]

Prints one JSON object (phases in seconds) and a Markdown table row, and writes the result to
benchmarks/results/bench_orchestration/.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time

from benchmarks.common import write_result
from devtools.slurm import start_cluster, stop_cluster
from lib.orchestration.slurm import parse_job_id, parse_scontrol, sbatch_argv
from lib.warc.sample import write_sample_crawl

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: the time-stamped lines of the run log: run-day.sh's ("run-day: TS data center ...", "... spark-submit
#: dailyslice day ...", "... finished ...") and the night's steps' ("day: TS preprocess")
STAMP = re.compile(r"(?:run-day|day): (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) (.*)")


def phases(log_text: str) -> dict[str, float]:
    """Seconds between the run log's time-stamped lines."""
    marks = {}
    for ts, what in STAMP.findall(log_text):
        t = dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").timestamp()
        key = "start" if what.startswith("data center") else what.split(" ")[0]
        marks.setdefault("submit" if key == "spark-submit" else key, t)
    out = {}
    for name, a, b in (
        ("cluster_start", "start", "submit"),
        ("driver_start", "submit", "preprocess"),
        ("preprocess", "preprocess", "index"),
        ("index", "index", "catalogue"),
        ("catalogue_and_shutdown", "catalogue", "finished"),
        ("job_total", "start", "finished"),
    ):
        if {a, b} <= marks.keys():
            out[name] = marks[b] - marks[a]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--pages-per-file", type=int, default=40)
    ap.add_argument("--nodes", type=int, default=2, choices=(1, 2))
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="bench-orch-")
    cluster = start_cluster(tempfile.mkdtemp(prefix="dsslurm-", dir="/tmp"))
    try:
        day = dt.date(2026, 1, 15)
        write_sample_crawl(os.path.join(work, "bucket"), day, files=args.files, pages_per_file=args.pages_per_file)
        out = os.path.join(work, "out")
        os.makedirs(os.path.join(out, "logs"))
        env = {
            "DATE": day.isoformat(),
            "DATA_CENTER": "bench",
            "INPUT_ROOT": os.path.join(work, "bucket"),
            "OUTPUT_ROOT": out,
            "DAILYSLICE_HOME": ROOT,
            "VENV": sys.prefix,
            "SCRATCH_DIR": os.path.join(work, "scratch"),
            "SPARK_WORKER_CORES": "1",
            "SPARK_WORKER_MEMORY": "1g",
            "SPARK_EXECUTOR_MEMORY": "512m",
            "SPARK_DRIVER_MEMORY": "768m",
            "SPARK_MASTER_HOST": "127.0.0.1",
            "SPARK_LOCAL_IP": "127.0.0.1",
            "INDEX_ARGS": "--min-group-docs 1",
        }
        argv = sbatch_argv(
            os.path.join(ROOT, "deploy/slurm/dailyslice.sbatch"),
            "dailyslice-bench",
            args.nodes,
            "0-00:30:00",
            os.path.join(out, "logs", "slurm-%j.out"),
            env,
        )
        t0 = time.time()
        job = parse_job_id(cluster.run(*argv).stdout)
        while cluster.run("squeue", "-h", "-j", job, check=False).stdout.strip():
            time.sleep(0.5)
        wall = time.time() - t0
        info = parse_scontrol(cluster.run("scontrol", "show", "job", "-o", job).stdout)
        marker = json.load(open(os.path.join(out, "_runs", "bench", f"{day}.json")))
        log_text = open(marker["log"]).read()
        result = {
            "machine": f"{platform.node()} {os.cpu_count()} cores, {platform.platform()}",
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_avg_1m": round(os.getloadavg()[0], 1),
            "nodes": args.nodes,
            "files": args.files,
            "pages": marker["summaries"]["preprocess"]["pages_kept"],
            "input_bytes": marker["summaries"]["preprocess"]["bytes"],
            "state": info.get("JobState"),
            "submit_to_end_s": round(wall, 1),
            **{f"{k}_s": round(v, 1) for k, v in phases(log_text).items()},
            "preprocess_job_s": marker["summaries"]["preprocess"]["seconds"],
            "index_job_s": marker["summaries"]["index"]["seconds"],
        }
        print(json.dumps(result, indent=2))
        write_result("bench_orchestration", result, what="one day's Slurm job on a one-host Slurm cluster")
        print(
            "| {date} | {nodes} | {files} | {pages} | {submit_to_end_s} | {cluster_start_s} | {preprocess_job_s} | "
            "{index_job_s} | {load_avg_1m} |".format(
                **{
                    k: result.get(k, "")
                    for k in (
                        "date",
                        "nodes",
                        "files",
                        "pages",
                        "submit_to_end_s",
                        "cluster_start_s",
                        "preprocess_job_s",
                        "index_job_s",
                        "load_avg_1m",
                    )
                }
            )
        )
    finally:
        stop_cluster(cluster)
        shutil.rmtree(cluster.root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
