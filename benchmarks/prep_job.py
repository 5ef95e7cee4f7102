"""The preprocess job on ``local[N]`` over a set of archives, as bench_preprocess_peers times it:
its wall and CPU seconds by process (benchmarks/proctree.py) and its phases from the summary's
``task_timing``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from typing import Sequence

from benchmarks import job_cmd, proctree
from benchmarks.common import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB_HEAP = "1g"


def run_job(files: list[str], work: str, cores: int, extra: Sequence[str] = ()) -> dict:
    day = os.path.join(work, "job-input")
    shutil.rmtree(day, ignore_errors=True)
    os.makedirs(day)
    for p in files:
        os.symlink(p, os.path.join(day, os.path.basename(p)))
    out_dir = os.path.join(work, "job-out")
    shutil.rmtree(out_dir, ignore_errors=True)
    summary = os.path.join(work, "job-summary.json")
    cmd = [
        *job_cmd("preprocess", day, out_dir, cores),
        "--summary",
        summary,
        "--conf",
        f"spark.driver.memory={JOB_HEAP}",
        "--conf",
        "spark.ui.enabled=false",
        *extra,
    ]
    l0 = load()
    launched = time.time()
    err = os.path.join(work, "job-stderr.txt")
    with open(err, "wb") as e:
        r = proctree.run(cmd, stdout=subprocess.DEVNULL, stderr=e, cwd=ROOT)
    ended = launched + r["wall"]
    if r["returncode"] != 0:
        sys.stderr.write(open(err, errors="replace").read()[-3000:])
        raise SystemExit(f"preprocess job failed ({r['returncode']})")
    with open(summary) as f:
        s = json.load(f)
    out: dict = {
        "pages": s["pages_kept"],
        "wall": round(r["wall"], 2),
        "cpu": r["cpu"],
        "load_before": l0,
        "load_after": load(),
    }
    tt = s.get("task_timing", {})
    if tt.get("tasks"):  # fixed start (launch to the first task), the tasks' span, the end (last task to exit)
        out["phases"] = {
            "start": round(tt["first_start"] - launched, 2),
            "tasks": tt["span"],
            "end": round(ended - tt["last_end"], 2),
        }
        out["task_timing"] = {k: v for k, v in tt.items() if k != "tasks"} | {"tasks": len(tt["tasks"])}
    return out


def ensure_class_archive(files: list[str], work: str, cores: int) -> float | None:
    """The nightly job runs where it ran before: its driver JVM maps Spark's classes from
    the archive. When there is none yet, one untimed run on one file writes it."""
    from lib.runtime import jvm_cache

    p = jvm_cache.plan(JOB_HEAP)
    if p is None or not p.creating:
        return None
    return run_job(files[:1], work, cores)["wall"]
