"""Benchmark the SWAP servers (``dailyslice swap-server``) against nginx (Debian's package) serving
the same files from the same partitions.

    python -m benchmarks.bench_swap [--files 2000] [--big-mb 256] [--seconds 8] [--connections 32]

Two servers on 127.0.0.1, two partitions each, one collection of four slices. ``--files`` 4 KB
files and one ``--big-mb`` MB file are PUT through the servers. Then, with wrk (one thread,
``--connections`` connections, ``--seconds`` each), against node A:

- **4 KB files/s**: GETs of the files node A holds, each request a different file (a Lua list);
- **redirects/s**: GETs at node B of the files node A holds (every answer a 302 to A);
- **large file MB/s**: GETs of the big file at its holder.

Each server runs ``--workers`` processes (a primary and readers sharing the socket, docs/swap.md),
and nginx as many worker processes (``sendfile on``); nginx serves the same files
from the same partition folders (``try_files`` over the node's two slice folders) and answers
the same redirects with ``return 302``. The floors are the SWAP design's: 2,000 files/s and
3,000 redirects/s. Requests per CPU second of the server processes are recorded too: on a
machine shared with other work they say what one free core would give, where wall-clock
requests/s say what the server got of the loaded machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import httpx
import psutil

from benchmarks import ROOT
from benchmarks import WORK as BENCH_WORK
from benchmarks.common import load, machine_text, utc_now, write_result
from lib.placement.net.namespace import CollectionDef
from lib.placement.net.swap_client import SwapClient

WORK = BENCH_WORK / "swap"
COLL = "bench/coll"
FLOORS = {"files_per_s": 2000.0, "redirects_per_s": 3000.0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_servers(workers: int) -> tuple[list[subprocess.Popen], list[str]]:
    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    procs = []
    for i, port in enumerate(ports):
        cfg = WORK / f"node{i}.toml"
        cfg.write_text(
            f'listen = "127.0.0.1:{port}"\npartitions = ["node{i}/p0", "node{i}/p1"]\n'
            f'peers = ["{urls[1 - i]}"]\npeer_retry_seconds = 0.5\nworkers = {workers}\n'
        )
        log = open(WORK / f"node{i}.log", "w")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "jobs.cli", "swap-server", "--config", str(cfg), "--log-level", "WARNING"],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    for u in urls:
        for _ in range(600):
            try:
                st = httpx.get(u + "/mgmt/status", follow_redirects=True).json()
                if all(p["online"] for p in st["peers"]):
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    return procs, urls


def nginx_conf(port: int, node_dir: str, redirect_to: str, workers: int) -> str:
    return f"""
worker_processes {workers};
daemon off;
pid {WORK}/nginx.pid;
error_log {WORK}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    default_type application/octet-stream;
    client_body_temp_path {WORK}/nginx-tmp;
    proxy_temp_path {WORK}/nginx-tmp;
    fastcgi_temp_path {WORK}/nginx-tmp;
    uwsgi_temp_path {WORK}/nginx-tmp;
    scgi_temp_path {WORK}/nginx-tmp;
    server {{
        listen 127.0.0.1:{port};
        location ~ ^/get/{COLL}/(.*)$ {{
            root /;
            try_files {node_dir}/p0/{COLL}/$1 {node_dir}/p1/{COLL}/$1 =404;
        }}
        location /redirect/ {{
            return 302 {redirect_to}$request_uri;
        }}
    }}
}}
"""


def wrk(url: str, paths: list[str], seconds: int, connections: int) -> dict[str, float]:
    """Requests/s and MB/s of wrk cycling through ``paths`` on ``url``."""
    script = WORK / f"paths-{abs(hash(url)) % 10**6}.lua"
    body = ",".join(f'"{p}"' for p in paths)
    script.write_text(
        f"local paths = {{{body}}}\nlocal i = 0\n"
        "request = function()\n  i = i % #paths + 1\n  return wrk.format('GET', paths[i])\nend\n"
    )
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    m = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", out)
    assert m is not None
    mb = float(m.group(1)) * {"B": 1e-6, "KB": 1e-3, "MB": 1.0, "GB": 1e3}[m.group(2)]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"wrk: {errors.group(1)} error responses from {url}:\n{out}")
    return {"rps": rps, "mb_per_s": mb}


def measured(procs: list[psutil.Process], fn):
    """(fn's result, CPU seconds the processes used meanwhile)."""
    cpu0 = sum(sum(p.cpu_times()[:2]) for p in procs)
    r = fn()
    return r, sum(sum(p.cpu_times()[:2]) for p in procs) - cpu0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--big-mb", type=int, default=256)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2, help="processes per server, as nginx's worker_processes")
    args = ap.parse_args(argv)
    for tool in ("nginx", "wrk"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            raise SystemExit(f"{tool} is not installed: bash scripts/install-system-deps.sh")
    nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
    started, load_before = utc_now(), load()
    shutil.rmtree(WORK, ignore_errors=True)
    (WORK / "nginx-tmp").mkdir(parents=True)
    procs, urls = start_servers(args.workers)
    ng = None
    try:
        with SwapClient(urls[0]) as cl:
            cl.create(COLL, 4)
            c = CollectionDef.from_json(next(x for x in cl.collections() if x["name"] == COLL))
            for i in range(args.files):
                cl.put(f"{COLL}/d{i % 50:02d}/f{i:06d}.bin", os.urandom(4096))
            big_rel = next(f"big{k}.bin" for k in range(99) if c.layout.holder(f"big{k}.bin").server == urls[0])
            chunk = os.urandom(1 << 20)
            with open(WORK / "big.bin", "wb") as f:
                for _ in range(args.big_mb):
                    f.write(chunk)
            with open(WORK / "big.bin", "rb") as f:
                cl.put(f"{COLL}/{big_rel}", f)
        os.remove(WORK / "big.bin")
        mine = [
            f"/get/{COLL}/d{i % 50:02d}/f{i:06d}.bin"
            for i in range(args.files)
            if c.layout.holder(f"d{i % 50:02d}/f{i:06d}.bin").server == urls[0]
        ]
        ps = [q for p in procs for q in (psutil.Process(p.pid), *psutil.Process(p.pid).children())]
        ours: dict[str, float] = {}
        (r, cpu) = measured(ps, lambda: wrk(urls[0], mine, args.seconds, args.connections))
        ours["files_per_s"], ours["files_per_cpu_s"] = r["rps"], r["rps"] * args.seconds / cpu
        (r, cpu) = measured(ps, lambda: wrk(urls[1], mine, args.seconds, args.connections))
        ours["redirects_per_s"], ours["redirects_per_cpu_s"] = r["rps"], r["rps"] * args.seconds / cpu
        r = wrk(urls[0], [f"/get/{COLL}/{big_rel}"], args.seconds, 4)
        ours["large_file_mb_per_s"] = r["mb_per_s"]

        port = free_port()
        (WORK / "nginx.conf").write_text(nginx_conf(port, str(WORK / "node0"), urls[0], args.workers))
        ng = subprocess.Popen([nginx_bin, "-c", str(WORK / "nginx.conf"), "-e", str(WORK / "nginx-error.log")])
        nurl = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                httpx.get(nurl + mine[0]).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        nps = [psutil.Process(ng.pid), *psutil.Process(ng.pid).children()]
        peer: dict[str, float] = {}
        (r, cpu) = measured(nps, lambda: wrk(nurl, mine, args.seconds, args.connections))
        peer["files_per_s"], peer["files_per_cpu_s"] = r["rps"], r["rps"] * args.seconds / cpu
        redirects = [p.replace("/get/", "/redirect/get/", 1) for p in mine]
        (r, cpu) = measured(nps, lambda: wrk(nurl, redirects, args.seconds, args.connections))
        peer["redirects_per_s"], peer["redirects_per_cpu_s"] = r["rps"], r["rps"] * args.seconds / cpu
        r = wrk(nurl, [f"/get/{COLL}/{big_rel}"], args.seconds, 4)
        peer["large_file_mb_per_s"] = r["mb_per_s"]
    finally:
        if ng is not None:
            ng.terminate()
            ng.wait(10)
        for p in procs:
            p.terminate()
            p.wait(10)
    ratio = {k: round(ours[k] / peer[k], 3) for k in ("files_per_s", "redirects_per_s", "large_file_mb_per_s")}
    floors = {k: ours[k] >= v for k, v in FLOORS.items()}
    per_core = {k: ours[k.replace("_per_s", "_per_cpu_s")] >= v for k, v in FLOORS.items()}
    rounded = {k: round(v, 3) for k, v in ours.items()}
    print(f"machine: {machine_text()}; load before {load_before}, after {load()}")
    print(f"| figure | swap-server ({args.workers} processes) | nginx ({args.workers} workers) | ours / nginx |")
    print("|---|---|---|---|")
    for k in ours:
        print(f"| {k} | {ours[k]:,.1f} | {peer[k]:,.1f} | {ours[k] / peer[k]:.2f} |")
    print("floors (files/s >= 2,000, redirects/s >= 3,000), wall clock:", floors, "per CPU second:", per_core)
    path = write_result(
        "bench_swap",
        {**rounded, "floors_held_wall": all(floors.values()), "floors_held_per_cpu_s": all(per_core.values())},
        what="SWAP servers: 4 KB files/s per node, redirects/s, large-file MB/s (wrk, 1 thread)",
        peer=f"nginx (Debian), {args.workers} workers, sendfile, the same files and partitions",
        peers={k: round(v, 3) for k, v in peer.items()},
        ratio=ratio,
        shape={
            "files_4k": args.files,
            "files_on_node": len(mine),
            "big_file_mb": args.big_mb,
            "servers": 2,
            "partitions_per_server": 2,
            "connections": args.connections,
            "seconds_per_run": args.seconds,
            "processes_per_server": args.workers,
        },
        started=started,
        load_before=load_before,
        command="python -m benchmarks.bench_swap " + " ".join(argv if argv is not None else sys.argv[1:]),
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
