"""Benchmark the slice API's downloads against Starlette's StaticFiles (FileResponse, which also
answers Range) serving the same files from the same uvicorn process, and the manifest cold/warm.

    python -m benchmarks.bench_serve_files [--mb 256] [--files 400] [--rounds 3] [--ranges 500]

Writes one day under benchmarks/work/serve/: one ``--mb`` MB random shard file and ``--files``
small files (64 KiB). Both servers run in one uvicorn on 127.0.0.1 (a background thread); the
client is httpx in the main thread. Prints a Markdown table and the ratios ours/peer.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import shutil
import socket
import statistics
import threading
import time

import httpx
import uvicorn
from fastapi.staticfiles import StaticFiles

from benchmarks import WORK as BENCH_WORK
from benchmarks.common import write_result
from lib.serve.files_api import create_app
from lib.serve.published import SliceStore

WORK = BENCH_WORK / "serve"


def build(mb: int, files: int) -> pathlib.Path:
    shutil.rmtree(WORK, ignore_errors=True)
    day = WORK / "index" / "2026-06" / "01"
    (day / "de" / "deu").mkdir(parents=True)
    with open(day / "de" / "deu" / "index-0.ciff.gz", "wb") as f:
        for _ in range(mb):
            f.write(os.urandom(1 << 20))
    for i in range(files):
        d = day / f"t{i % 20:02d}" / "eng"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"metadata-{i}.parquet").write_bytes(os.urandom(64 << 10))
    (day / "_SUCCESS").write_bytes(b"")
    return WORK


def serve(app) -> tuple[uvicorn.Server, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def timed_get(client: httpx.Client, url: str, headers=None) -> tuple[float, int]:
    t = time.perf_counter()
    n = 0
    with client.stream("GET", url, headers=headers) as r:
        assert r.status_code in (200, 206), r.status_code
        for chunk in r.iter_raw():
            n += len(chunk)
    return time.perf_counter() - t, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=256)
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ranges", type=int, default=500)
    a = ap.parse_args()
    root = build(a.mb, a.files)
    store = SliceStore({"dc1": str(root)})
    t = time.perf_counter()
    entries = store.list_files("2026-06-01")
    cold = time.perf_counter() - t
    t = time.perf_counter()
    store.list_files("2026-06-01")
    warm = time.perf_counter() - t
    app = create_app(store)
    app.mount("/static", StaticFiles(directory=str(root)), name="static")
    server, base = serve(app)
    big = "index/2026-06/01/de/deu/index-0.ciff.gz"
    urls = {"ours": f"{base}/download/dc1/{big}", "peer": f"{base}/static/{big}"}
    rows: dict[str, dict[str, list[float]]] = {k: {"full": [], "range": []} for k in urls}
    load = [os.getloadavg()[0]]
    with httpx.Client(timeout=120) as c:
        for _ in range(a.rounds):
            for name, url in urls.items():
                secs, n = timed_get(c, url)
                assert n == a.mb << 20
                rows[name]["full"].append(n / secs / 1e6)
                lat = []
                for i in range(a.ranges):
                    off = (i * 7919 * 4096) % ((a.mb << 20) - 65536)
                    s, n = timed_get(c, url, {"Range": f"bytes={off}-{off + 65535}"})
                    assert n == 65536
                    lat.append(s * 1000)
                rows[name]["range"].append(statistics.median(lat))
            load.append(os.getloadavg()[0])
    server.should_exit = True
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; "
        f"load average (1 min) before/after rounds: {', '.join(f'{x:.1f}' for x in load)}"
    )
    print(
        f"Manifest of {len(entries)} files ({sum(e.size for e in entries) / 1e6:.0f} MB): cold (sha256 of every file) "
        f"{cold:.2f} s, warm (cached sums) {warm * 1000:.1f} ms"
    )
    print(
        "\n| server | full download MB/s (median) | runs | 64 KiB Range GET p50 ms (median of rounds) "
        "|\n|---|---:|---|---:|"
    )
    for name in urls:
        f, r = rows[name]["full"], rows[name]["range"]
        label = (
            "ours: /download (StreamingResponse, 256 KiB reads)"
            if name == "ours"
            else "peer: Starlette StaticFiles (FileResponse)"
        )
        print(
            f"| {label} | {statistics.median(f):.0f} | {', '.join(f'{x:.0f}' for x in f)} | "
            f"{statistics.median(r):.2f} |"
        )
    med = {k: {m: statistics.median(rows[k][m]) for m in ("full", "range")} for k in ("ours", "peer")}
    print(
        f"\nRatio ours/peer: throughput {med['ours']['full'] / med['peer']['full']:.2f}, "
        f"range latency {med['ours']['range'] / med['peer']['range']:.2f}"
    )
    write_result(
        "bench_serve_files",
        {"full_mb_per_s": round(med["ours"]["full"]), "range_p50_ms": round(med["ours"]["range"], 2)},
        what="the slice API's /download: full files and 64 KiB ranges (medians of rounds)",
        peer="Starlette StaticFiles (FileResponse)",
        peers={"full_mb_per_s": round(med["peer"]["full"]), "range_p50_ms": round(med["peer"]["range"], 2)},
        ratio={
            "throughput ours / peer": round(med["ours"]["full"] / med["peer"]["full"], 3),
            "range latency ours / peer": round(med["ours"]["range"] / med["peer"]["range"], 3),
        },
        shape={"big_file_mb": a.mb, "files": a.files, "ranges": a.ranges, "rounds": a.rounds},
        load_before=[load[0]],
    )


if __name__ == "__main__":
    main()
