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
import random
import re
import statistics
import subprocess
import sys
import threading
import time

import httpx
import psutil

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import write_result
from lib.serve.engine import OPERATORS

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_ROOT = BENCH_WORK / "search" / "root"
WHOLE_MAX = 8 << 20  # larger files are fetched by 64 KiB ranges only


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (nearest rank) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def query_pool(base: str, day: str, n: int = 400, seed: int = 5) -> list[str]:
    """One- to four-word queries drawn from the titles the service returns for seed words."""
    words: list[str] = []
    with httpx.Client(timeout=120) as c:
        for seedq in ("the", "news", "city", "information", "library", "music", "weather", "river"):
            r = c.get(f"{base}/search", params={"q": seedq, "day": day, "k": 100})
            if r.status_code == 200:
                for h in r.json()["results"]:
                    words += [
                        w for w in re.findall(r"[^\W\d_]{3,}", h.get("title") or "") if w.lower() not in OPERATORS
                    ]  # "and" alone is refused (400), rightly
    if not words:
        raise RuntimeError(f"no titles to draw queries from on {day}")
    rng = random.Random(seed)
    return [" ".join(rng.sample(words, rng.randint(1, min(4, len(words))))) for _ in range(n)]


def run_load(base: str, day: str, seconds: float, clients: int = 16, seed: int = 1) -> dict:
    """Drive the service at ``base`` with ``clients`` threads for ``seconds``; latencies and errors."""
    queries = query_pool(base, day)
    with httpx.Client(timeout=60) as c:
        files = c.get(f"{base}/files", params={"day": day}).json()["files"]
        langs = c.get(f"{base}/index-info").json()["languages"]
    files = [f for f in files if f["size"] > 0]
    if not files:
        raise RuntimeError(f"no published file on {day}")
    lat: dict[str, list[float]] = {"search": [], "download": []}
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        mine = {"search": [], "download": []}
        errs = []
        with httpx.Client(timeout=60) as c:
            while time.monotonic() < stop:
                t = time.perf_counter()
                try:
                    if rng.random() < 0.75:
                        kind = "search"
                        params = {"q": rng.choice(queries), "day": day, "k": 10}
                        if rng.random() < 0.25:
                            params["lang"] = rng.choice(langs)
                        r = c.get(f"{base}/search", params=params)
                        ok = r.status_code == 200 and "results" in r.json()
                    else:
                        kind = "download"
                        f = rng.choice(files)
                        url = f"{base}/download/{f['dc']}/{f['path']}"
                        if rng.random() < 0.5 or f["size"] > WHOLE_MAX:
                            start = rng.randrange(f["size"])
                            r = c.get(url, headers={"Range": f"bytes={start}-{start + 65535}"})
                            ok = r.status_code == 206 and len(r.content) == min(65536, f["size"] - start)
                        else:
                            r = c.get(url)
                            ok = r.status_code == 200 and len(r.content) == f["size"]
                    if not ok:
                        errs.append(f"{kind} {r.status_code} {r.text[:120]!r}")
                except httpx.HTTPError as e:
                    kind, ok = "error", False
                    errs.append(f"{type(e).__name__}: {e}")
                if ok:
                    mine[kind].append((time.perf_counter() - t) * 1000)
        with lock:
            for k, v in mine.items():
                lat[k] += v
            errors.extend(errs)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    t0 = time.monotonic()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.monotonic() - t0
    out = {
        "clients": clients,
        "seconds": round(wall, 1),
        "errors": len(errors),
        "error_samples": errors[:5],
        "requests": sum(len(v) for v in lat.values()) + len(errors),
    }
    out["rps"] = round(out["requests"] / wall, 1)
    for k, v in lat.items():
        out[k] = {
            "n": len(v),
            "p50_ms": round(pct(v, 50), 2),
            "p95_ms": round(pct(v, 95), 2),
            "p99_ms": round(pct(v, 99), 2),
            "mean_ms": round(statistics.fmean(v), 2) if v else None,
        }
    return out


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
