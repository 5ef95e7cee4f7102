"""lib/store/lease.py: one holder per output, locally and on S3 (conditional create), stale
leases taken over, waiting or refusing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from lib.store import lease, storage


def _outputs(tmp_path, s3_bucket):
    return [str(tmp_path / "out"), f"s3://{s3_bucket}/preprocessed/2026-01/15"]


def test_one_holder_refuses_the_second_then_releases(tmp_path, s3_bucket) -> None:
    for out in _outputs(tmp_path, s3_bucket):
        with lease.Lease(out, "preprocess"):
            holder = json.loads(storage.read_bytes(lease.lock_uri(out)))
            assert holder["job"] == "preprocess" and holder["pid"] == os.getpid()
            with pytest.raises(lease.Busy, match="another run of this day is publishing"):
                lease.Lease(out, "preprocess").acquire()
        assert not storage.exists(lease.lock_uri(out))
        with lease.Lease(out, "again"):  # free again
            pass


def test_the_second_waits_for_the_first(tmp_path, s3_bucket) -> None:
    out = _outputs(tmp_path, s3_bucket)[1]
    first = lease.Lease(out, "first").acquire()
    threading.Timer(1.0, first.release).start()
    second = lease.Lease(out, "second", wait=30).acquire()
    assert second.waited >= 0.8
    second.release()


def test_stale_leases_are_taken_over(tmp_path, s3_bucket) -> None:
    for out in _outputs(tmp_path, s3_bucket):
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        pid = int(dead.stdout)  # a process of this host that has exited
        doc = {"owner": "x", "job": "killed", "host": os.uname().nodename, "pid": pid, "started": 0,
               "expires": time.time() + 3600}
        storage.write_bytes(lease.lock_uri(out), json.dumps(doc).encode())
        with lease.Lease(out, "next") as held:
            assert json.loads(storage.read_bytes(lease.lock_uri(out)))["owner"] == held.owner
        expired = dict(doc, host="another-node", pid=1, expires=time.time() - 1)
        storage.write_bytes(lease.lock_uri(out), json.dumps(expired).encode())
        with lease.Lease(out, "next"):
            pass
        alive = dict(doc, host="another-node", pid=1)
        storage.write_bytes(lease.lock_uri(out), json.dumps(alive).encode())
        with pytest.raises(lease.Busy):  # another node's unexpired lease is respected
            lease.Lease(out, "next").acquire()


def test_heartbeat_extends_the_lease(tmp_path) -> None:
    out = str(tmp_path / "out")
    with lease.Lease(out, "long", ttl=0.6):
        first = json.loads(storage.read_bytes(lease.lock_uri(out)))["expires"]
        time.sleep(0.8)
        assert json.loads(storage.read_bytes(lease.lock_uri(out)))["expires"] > first
