"""Batches within a day against the nightly run: freshness (an archive's arrival to its pages being
searchable) and the CPU of the batched day against the same day in one run.

    python -m benchmarks.bench_batches [--copies 1] [--archives 12] [--windows 15,60,180] [--seed 0]

The day is the real-shaped day of devtools/realday (its small cut, ``--copies`` copies of the real
samples), its first ``--archives`` archives. Arrivals are modelled: each archive arrives at a time
drawn uniformly over the day's 24 hours (``--seed``), the crawler closing it then. Time is modelled,
work is real: for each batch window W, a tick at every multiple of W runs ``python -m jobs.day --batch``
for real on the archives that arrived in its window (a tick with nothing new is skipped: it would only
list the folder), and its pages are searchable at the tick's time plus the tick's measured wall time;
the day then closes with the consolidating night (``python -m jobs.day``, not counted in freshness:
the batches were searchable before). The nightly run starts at DD+1 02:00 (the day closed plus two
hours) and its pages are searchable at that time plus its measured wall time. Freshness is per
archive, p50 and p95. CPU is the whole process tree's (benchmarks/proctree.py): the batched day is
every tick plus its closing night, against the one nightly run; the consolidated day must equal the
nightly one by canonical digests (checked). Every command is a fresh process and Spark application,
as a Slurm job per tick would be.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
from typing import Any

from benchmarks import proctree
from benchmarks.common import load, machine_text, utc_now, write_result
from devtools.realday import shared_day
from lib.index.shard_digests import shard_digests
from lib.store import layout

DAY = dt.date(2026, 1, 15)
DAY_MINUTES = 24 * 60
NIGHT_START = DAY_MINUTES + 120  # the nightly run: DD+1 02:00


def day_cmd(root: str) -> list[str]:
    """``python -m jobs.day`` on ``root`` (input and output)."""
    return [sys.executable, "-m", "jobs.day", "--date", DAY.isoformat(), "--input-root", root, "--output-root", root]


def run(cmd: list[str], root: str) -> dict[str, Any]:
    """One command, measured (it must exit 0)."""
    with open(os.path.join(root, "bench.log"), "a") as err:
        r = proctree.run(cmd, stdout=open(os.devnull, "w"), stderr=err)
    if r["returncode"] != 0:
        raise SystemExit(
            f"{' '.join(cmd)} exited {r['returncode']}\n{open(os.path.join(root, 'bench.log')).read()[-3000:]}"
        )
    return {"wall": r["wall"], "cpu": r["cpu"]["total"]}


def arrive(archives: list[str], src: str, root: str) -> None:
    """Copy archives (paths under ``src``) into the root's day folder: they arrive."""
    for a in archives:
        dest = os.path.join(layout.day_path(root, layout.WARC, DAY), os.path.relpath(a, src))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(a, dest)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def batched(archives: list[str], times: list[float], src: str, root: str, window: int) -> dict[str, Any]:
    """The day in batches every ``window`` minutes, then its closing night (module doc)."""
    fresh: list[float] = []
    ticks: list[dict[str, Any]] = []
    for k in range(1, math.ceil(DAY_MINUTES / window) + 1):
        t = k * window
        new = [i for i, at in enumerate(times) if (k - 1) * window < at <= t]
        if not new:
            continue
        arrive([archives[i] for i in new], src, root)
        m = run(day_cmd(root) + ["--batch", "--settle", "0"], root)
        ticks.append({"at_min": t, "archives": len(new), **m})
        fresh += [t + m["wall"] / 60 - times[i] for i in new]
    close = run(day_cmd(root), root)
    return {
        "fresh_min": fresh,
        "ticks": ticks,
        "close": close,
        "cpu": sum(x["cpu"] for x in ticks) + close["cpu"],
        "digests": shard_digests(layout.day_path(root, layout.INDEX, DAY), canonical=True),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--archives", type=int, default=12)
    ap.add_argument("--windows", default="15,60,180")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    windows = [int(w) for w in a.windows.split(",")]
    day = shared_day(a.copies)
    src = day["small"]
    archives = sorted(day["files"]["small"])[: a.archives]
    rng = random.Random(a.seed)
    times = [rng.uniform(0, DAY_MINUTES) for _ in archives]
    size = sum(os.path.getsize(p) for p in archives)
    started, load_before = utc_now(), load()
    work = tempfile.mkdtemp(prefix="bench-batches-")
    try:
        night_root = os.path.join(work, "night")
        arrive(archives, src, night_root)
        night = run(day_cmd(night_root), night_root)
        night_fresh = [NIGHT_START + night["wall"] / 60 - at for at in times]
        want = shard_digests(layout.day_path(night_root, layout.INDEX, DAY), canonical=True)
        print(f"nightly: {night['wall']:.1f} s wall, {night['cpu']:.1f} s CPU", flush=True)
        rows: dict[str, Any] = {}
        for w in windows:
            r = batched(archives, times, src, os.path.join(work, f"every-{w}"), w)
            if r["digests"] != want:
                raise SystemExit(f"batches every {w} min: the consolidated day differs from the nightly one")
            rows[str(w)] = {
                "p50_min": round(statistics.median(r["fresh_min"]), 1),
                "p95_min": round(percentile(r["fresh_min"], 0.95), 1),
                "ticks": len(r["ticks"]),
                "cpu_s": round(r["cpu"], 1),
                "cpu_over_night": round(r["cpu"] / night["cpu"], 2),
                "close_wall_s": round(r["close"]["wall"], 1),
                "tick_wall_s_median": round(statistics.median(x["wall"] for x in r["ticks"]), 1),
                "tick_runs": r["ticks"],
            }
            print(f"every {w} min: { ({k: v for k, v in rows[str(w)].items() if k != 'tick_runs'}) }", flush=True)
        nightly = {
            "p50_min": round(statistics.median(night_fresh), 1),
            "p95_min": round(percentile(night_fresh, 0.95), 1),
            "cpu_s": round(night["cpu"], 1),
            "wall_s": round(night["wall"], 1),
        }
        shape = {
            "archives": len(archives),
            "archive_bytes": size,
            "day": f"devtools/realday small cut, {a.copies} copies of the samples, first {len(archives)} archives",
            "arrivals": f"uniform over 24 h, seed {a.seed}",
        }
        print(f"machine: {machine_text()}; load before {load_before}, after {load()}")
        print(f"nightly: {nightly}")
        for w in windows:
            r = rows[str(w)]
            print(
                f"ratio every {w} min / nightly: freshness p50 {r['p50_min'] / nightly['p50_min']:.3f}, "
                f"p95 {r['p95_min'] / nightly['p95_min']:.3f}, CPU {r['cpu_over_night']:.2f}"
            )
        figures: dict[str, Any] = {}
        for w in windows:
            r = rows[str(w)]
            figures.update(
                {f"every{w}_p50_min": r["p50_min"], f"every{w}_p95_min": r["p95_min"], f"every{w}_cpu_s": r["cpu_s"]}
            )
        path = write_result(
            "bench_batches",
            figures,
            what="freshness (arrival to searchable, minutes, p50/p95) of a real-shaped day published in batches "
            f"every {', '.join(map(str, windows))} min, and its CPU (ticks + closing night) against the nightly run",
            peer="the nightly run (one run at DD+1 02:00)",
            peers={
                "nightly_p50_min": nightly["p50_min"],
                "nightly_p95_min": nightly["p95_min"],
                "nightly_cpu_s": nightly["cpu_s"],
            },
            ratio={f"cpu_every{w}_over_nightly": rows[str(w)]["cpu_over_night"] for w in windows},
            shape=shape,
            started=started,
            load_before=load_before,
            command=f"python -m benchmarks.bench_batches --copies {a.copies} --archives {a.archives} "
            f"--windows {a.windows} --seed {a.seed}",
            notes="time modelled (arrivals, tick times), work real: each tick and night a fresh process and Spark "
            "application, its measured wall time added to the modelled wait; CPU of the whole process tree; the "
            "consolidated days equal the nightly one (canonical digests)",
            details={"windows": rows, "nightly": nightly, "arrivals_min": [round(t, 1) for t in times]},
        )
        print(f"result: {path}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
