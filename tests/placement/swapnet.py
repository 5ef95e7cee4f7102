"""A SWAP network for the tests: N ``dailyslice swap-server`` processes on loopback, each with two
partitions in a temp folder, every server the peer of every other; a server can be stopped and
started again on the same port, config and partitions."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

from lib.placement.net.swap_client import SwapClient

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SwapNet:
    def __init__(self, base: str, n: int = 3, partitions: int = 2, extra: str = "", workers: tuple[int, ...] = ()):
        self.base = base
        self.ports = [free_port() for _ in range(n)]
        self.urls = [f"http://127.0.0.1:{p}" for p in self.ports]
        self.procs: list[subprocess.Popen | None] = [None] * n
        self.configs = []
        self._clients: dict[int, SwapClient] = {}
        #: one connection pool for the tests' raw requests (an httpx client per call costs an SSL context)
        self.http = httpx.Client(timeout=30)
        for i, port in enumerate(self.ports):
            peers = ", ".join(f'"{u}"' for j, u in enumerate(self.urls) if j != i)
            parts = ", ".join(f'"node{i}/p{k}"' for k in range(partitions))
            cfg = os.path.join(base, f"node{i}.toml")
            with open(cfg, "w") as f:
                f.write(
                    f'listen = "127.0.0.1:{port}"\npartitions = [{parts}]\npeers = [{peers}]\n'
                    f"peer_retry_seconds = 0.3\npeer_timeout_seconds = 3\n{extra}"
                    f"workers = {workers[i] if i < len(workers) else 1}\n"
                )
            self.configs.append(cfg)

    def start(self, i: int) -> None:
        log = open(os.path.join(self.base, f"node{i}.log"), "a")
        self.procs[i] = subprocess.Popen(
            [sys.executable, "-m", "jobs.cli", "swap-server", "--config", self.configs[i]],
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=ROOT),
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def wait(self, i: int, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            proc = self.procs[i]
            assert proc is not None and proc.poll() is None, self.log(i)
            try:
                # through a reader process's 307 too: up once the primary answers
                if self.http.get(self.urls[i] + "/mgmt/status", timeout=1.0, follow_redirects=True).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError(f"server {i} did not start:\n{self.log(i)}")

    def start_all(self) -> None:
        for i in range(len(self.urls)):
            self.start(i)
        for i in range(len(self.urls)):
            self.wait(i)
        self.wait_peers()

    def wait_peers(self, timeout: float = 20.0) -> None:
        """Until every running server sees every other running server online."""
        running = [i for i, p in enumerate(self.procs) if p is not None and p.poll() is None]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(
                all(
                    p["online"] for p in self.client(i).status()["peers"] if p["url"] in {self.urls[j] for j in running}
                )
                for i in running
            ):
                return
            time.sleep(0.1)
        raise AssertionError("peers did not find each other")

    def stop(self, i: int) -> None:
        proc = self.procs[i]
        assert proc is not None
        proc.terminate()
        proc.wait(10)
        self.procs[i] = None

    def stop_all(self) -> None:
        for i, p in enumerate(self.procs):
            if p is not None:
                self.stop(i)
        for c in self._clients.values():
            c.close()
        self.http.close()

    def client(self, i: int) -> SwapClient:
        if i not in self._clients:
            self._clients[i] = SwapClient(self.urls[i], timeout=30)
        return self._clients[i]

    def log(self, i: int) -> str:
        path = os.path.join(self.base, f"node{i}.log")
        return open(path).read() if os.path.exists(path) else ""

    def slice_folders(self, collection: str) -> list[str]:
        out = []
        for i in range(len(self.urls)):
            for p in sorted(os.listdir(os.path.join(self.base, f"node{i}"))):
                d = os.path.join(self.base, f"node{i}", p, *collection.split("/"))
                if os.path.isdir(d):
                    out.append(d)
        return out

    def union(self, collection: str, out: str) -> dict[str, bytes]:
        """Copy every slice folder into ``out`` (plain copies, no SWAP code) and read it back."""
        for d in self.slice_folders(collection):
            shutil.copytree(d, out, dirs_exist_ok=True)
        got = {}
        for dirpath, _, names in os.walk(out):
            for n in names:
                p = os.path.join(dirpath, n)
                got[os.path.relpath(p, out).replace(os.sep, "/")] = open(p, "rb").read()
        return got


def running(base: str, coll: str, slices: int, workers: tuple[int, ...] = (1, 2, 1)) -> Iterator[SwapNet]:
    """A module's network: three servers started (server 1 with a reader process beside its primary),
    ``coll`` created with ``slices`` slices; stopped when the fixture ends (``yield from`` it)."""
    n = SwapNet(base, workers=workers)
    n.start_all()
    try:
        n.client(0).create(coll, slices)
        yield n
    finally:
        n.stop_all()
