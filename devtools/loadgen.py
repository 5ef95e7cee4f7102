"""Load on the service over loopback: queries drawn from the day's titles, and N client threads
mixing searches and downloads for S seconds (the load benchmark, ``benchmarks/bench_serve_load.py``,
and the suite's load test, ``tests/serve/test_load.py``, share it)."""

from __future__ import annotations

import random
import re
import statistics
import threading
import time

import httpx

from lib.serve.engine import OPERATORS

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
