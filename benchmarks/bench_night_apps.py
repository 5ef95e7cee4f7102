"""A night in one Spark application (``dailyslice day``) against three (one per job, as
run-day.sh submitted them before): the JVM starts saved, in wall and CPU seconds and percent.

    python -m benchmarks.bench_night_apps [--files 4] [--pages-per-file 60] [--repeat 2]

The day is the demo's (``make demo``: the sample crawl, 4 archives of 60 pages). Each run gets a
fresh root with the same archives, in local mode on this machine (``local[*]``, the local driver
tricks of lib/runtime/localmode.py in both): ``python -m jobs.day`` once, against ``python -m
jobs.preprocess``, ``jobs.index`` and ``jobs.catalogue`` one after the other with the same
options. The two are run alternately, ``--repeat`` times each; the CPU is the whole process
tree's (benchmarks/proctree.py: drivers, JVMs, Python workers), the machine being shared. Both
must publish the same day: the index's canonical digests and the CDXJ are compared.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import sys
import tempfile
from typing import Any

from benchmarks import proctree
from benchmarks.common import load, machine_text, utc_now, write_result
from lib.index.shard_digests import shard_digests
from lib.store import layout
from lib.warc.sample import write_sample_crawl

DAY = dt.date(2026, 1, 15)
JOBS = ("preprocess", "index", "catalogue")


def one_app(root: str) -> list[list[str]]:
    """The night as one command: one driver, one JVM."""
    return [[sys.executable, "-m", "jobs.day", "--date", DAY.isoformat(), "--input-root", root, "--output-root", root]]


def three_apps(root: str) -> list[list[str]]:
    """The night as three commands, one JVM each (run-day.sh's spark-submits before ``dailyslice day``)."""
    return [[sys.executable, "-m", f"jobs.{job}", "--date", DAY.isoformat(), "--root", root] for job in JOBS]


def run_night(commands: list[list[str]], root: str) -> dict[str, Any]:
    """Run the commands in order (each must exit 0); wall, CPU by kind, the java processes seen (driver JVMs and
    spark-class's launcher JVMs; polled, so a short-lived one may be missed), and what was published."""
    wall, cpu, jvms = 0.0, {}, 0
    for cmd in commands:
        r = proctree.run(cmd, stdout=open(os.devnull, "w"), stderr=open(os.path.join(root, "night.log"), "a"))
        if r["returncode"] != 0:
            tail = open(os.path.join(root, "night.log")).read()[-3000:]
            raise SystemExit(f"{' '.join(cmd)} exited {r['returncode']}\n{tail}")
        wall += r["wall"]
        jvms += r["jvms"]
        for k, v in r["cpu"].items():
            cpu[k] = cpu.get(k, 0.0) + v
    cdxj = os.path.join(layout.day_path(root, layout.CATALOGUE, DAY), "index.cdxj")
    return {
        "wall": wall,
        "cpu": cpu,
        "jvms": jvms,
        "digests": shard_digests(layout.day_path(root, layout.INDEX, DAY), canonical=True),
        "cdxj": open(cdxj).read(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--pages-per-file", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    started, load_before = utc_now(), load()
    work = tempfile.mkdtemp(prefix="bench-night-apps-")
    try:
        crawl = os.path.join(work, "crawl")
        write_sample_crawl(crawl, DAY, a.files, a.pages_per_file)
        archives = layout.day_path(crawl, layout.WARC, DAY)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(archives) for f in fs)
        runs: dict[str, list[dict[str, Any]]] = {"one": [], "three": []}
        plans = {"one": one_app, "three": three_apps}
        for i in range(a.repeat):
            for name, plan in (
                (("three", three_apps), ("one", one_app)) if i % 2 else (("one", one_app), ("three", three_apps))
            ):
                root = os.path.join(work, f"{name}-{i}")
                shutil.copytree(archives, layout.day_path(root, layout.WARC, DAY))
                runs[name].append(run_night(plan(root), root))
                last = runs[name][-1]
                print(
                    f"{name} application(s), run {i + 1}: {last['wall']:.1f} s wall, "
                    f"{last['cpu']['total']:.1f} s CPU, {last['jvms']} JVM(s)",
                    flush=True,
                )
        same = all(
            r["digests"] == runs["one"][0]["digests"] and r["cdxj"] == runs["one"][0]["cdxj"]
            for r in runs["three"] + runs["one"]
        )
        if not same:
            raise SystemExit("the two nights published different days (index digests or CDXJ differ)")
        med = {
            name: {
                "wall_s": round(statistics.median(r["wall"] for r in rs), 1),
                "cpu_s": round(statistics.median(r["cpu"]["total"] for r in rs), 1),
                "jvm_cpu_s": round(statistics.median(r["cpu"].get("jvm", 0.0) for r in rs), 1),
                "driver_jvms": len(plans[name](work)),  # one Spark application, one driver JVM, per command
                "java_processes_seen": [r["jvms"] for r in rs],
            }
            for name, rs in runs.items()
        }
        one, three = med["one"], med["three"]
        saved = {
            "driver_jvm_starts_saved": three["driver_jvms"] - one["driver_jvms"],
            "wall_saved_s": round(three["wall_s"] - one["wall_s"], 1),
            "wall_saved_pct": round(100 * (three["wall_s"] - one["wall_s"]) / three["wall_s"], 1),
            "cpu_saved_s": round(three["cpu_s"] - one["cpu_s"], 1),
            "cpu_saved_pct": round(100 * (three["cpu_s"] - one["cpu_s"]) / three["cpu_s"], 1),
        }
        shape = {"archives": a.files, "pages": a.files * a.pages_per_file, "archive_bytes": size}
        print(f"machine: {machine_text()}; load before {load_before}, after {load()}")
        print(f"one application: {one}\nthree applications: {three}\nsaved: {saved}")
        print(f"ratio one/three: wall {one['wall_s'] / three['wall_s']:.2f}, CPU {one['cpu_s'] / three['cpu_s']:.2f}")
        path = write_result(
            "bench_night_apps",
            {
                "one_app_wall_s": one["wall_s"],
                "one_app_cpu_s": one["cpu_s"],
                "driver_jvms": one["driver_jvms"],
                **saved,
            },
            what=f"the demo day's night ({a.files} archives, {a.files * a.pages_per_file} pages) in one Spark "
            "application (dailyslice day) against three",
            peer="three applications (a JVM per job, run-day.sh before)",
            peers={
                "three_apps_wall_s": three["wall_s"],
                "three_apps_cpu_s": three["cpu_s"],
                "driver_jvms": three["driver_jvms"],
            },
            ratio={
                "wall_one_over_three": round(one["wall_s"] / three["wall_s"], 2),
                "cpu_one_over_three": round(one["cpu_s"] / three["cpu_s"], 2),
            },
            shape=shape,
            started=started,
            load_before=load_before,
            command=f"python -m benchmarks.bench_night_apps --files {a.files} --pages-per-file {a.pages_per_file} "
            f"--repeat {a.repeat}",
            notes="medians of the runs, alternated; CPU of the whole process tree; driver JVMs by construction (one "
            "per Spark application), java processes seen by polling in details (launcher JVMs included); both "
            "publish the same index (canonical digests) and CDXJ",
            details={
                "medians": med,
                "runs": {k: [{kk: r[kk] for kk in ("wall", "cpu", "jvms")} for r in v] for k, v in runs.items()},
            },
        )
        print(f"result: {path}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
