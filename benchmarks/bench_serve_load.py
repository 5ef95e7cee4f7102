"""Load on the service over loopback: N concurrent clients for S seconds, mixed search and download.

    python -m benchmarks.bench_serve_load [--root ROOT] [--day YYYY-MM-DD] [--clients 16] [--seconds 60]

Starts ``python -m lib.serve`` on ROOT in a subprocess (the search engine built before the clock
starts), then runs ``--clients`` threads, each with its own keep-alive HTTP connection: 3 of 4
requests are searches (top-10, queries of one to four words drawn from the day's titles, on the day,
a quarter of them with a language filter), 1 of 4 downloads a published file of the day (half whole
files up to 8 MiB checked against the manifest's size, else a 64 KiB Range). Prints p50/p95/p99 per kind,
requests/s, the error count and the server's peak RSS (psutil, sampled every 0.2 s). The default
root is the 1M-document day that ``benchmarks/bench_index.py --copies 10`` makes for the engine's
benchmark (benchmarks/work/search/root).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import httpx
import psutil

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import write_result
from devtools.loadgen import run_load

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_ROOT = BENCH_WORK / "search" / "root"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(DEFAULT_ROOT))
    ap.add_argument("--day", help="default: the newest published day")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--cache", default=str(BENCH_WORK / "serve-cache"))
    a = ap.parse_args()
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "lib.serve", "--root", a.root, "--port", "0", "--cache", a.cache],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()
        if " on http://" not in line:
            print(f"the service did not start: {line!r}", file=sys.stderr)
            return 1
        base = line.strip().rsplit(" on ", 1)[1].rstrip("/")
        startup = time.perf_counter() - t
        t = time.perf_counter()
        info = httpx.get(f"{base}/index-info", timeout=1800).json()  # builds/loads the serving index
        load_s = time.perf_counter() - t
        day = a.day or info["days"][-1]
        ps = psutil.Process(proc.pid)
        rss_start = ps.memory_info().rss
        peak = [rss_start]
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], ps.memory_info().rss)
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        res = run_load(base, day, a.seconds, a.clients)
        done.set()
        sampler.join()
    finally:
        proc.terminate()
        proc.wait(30)
    load = os.getloadavg()
    res.update(
        day=day,
        docs=info["docs"],
        shards=info["shards"],
        startup_s=round(startup, 1),
        index_load_s=round(load_s, 1),
        server_rss_start_mib=round(rss_start / 2**20),
        server_rss_peak_mib=round(peak[0] / 2**20),
        load=[round(x, 2) for x in load],
        cpus=os.cpu_count(),
        date=dt.date.today().isoformat(),
    )
    print(json.dumps(res, indent=2))
    write_result("bench_serve_load", res, what=f"the service under {res.get('clients', 'many')} clients")
    print(
        f"\n{a.clients} clients x {res['seconds']} s on {day} ({info['docs']:,} docs, {info['shards']} shards), "
        f"load {load[0]:.1f}: {res['requests']:,} requests, {res['rps']} req/s, {res['errors']} errors; "
        f"search p50/p95/p99 {res['search']['p50_ms']}/{res['search']['p95_ms']}/{res['search']['p99_ms']} ms; "
        f"download p50/p95/p99 {res['download']['p50_ms']}/{res['download']['p95_ms']}/{res['download']['p99_ms']} ms; "
        f"server RSS {res['server_rss_start_mib']} -> peak {res['server_rss_peak_mib']} MiB"
    )
    return 0 if res["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
