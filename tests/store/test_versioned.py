"""lib/store/versioned.py: a state replaced by compare-and-swap, locally and on S3: of runs that
read the same version one commits, a lagging pointer is followed, and writers that race with no
lock at all lose no update. Also the lease's takeover of a stale holder by many runs at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

from lib.store import lease, storage, versioned

EMPTY = {"names": []}


def _folders(tmp_path, s3_bucket) -> list[str]:
    return [str(tmp_path / "db"), f"s3://{s3_bucket}/urldb"]


def test_one_commit_per_version_and_the_pointer_is_followed(tmp_path, s3_bucket) -> None:
    for db in _folders(tmp_path, s3_bucket):
        assert versioned.read(db, EMPTY) == {"names": [], "version": 0}
        versioned.commit(db, 0, {"version": 1, "names": ["a"]})
        with pytest.raises(versioned.Conflict, match="version 0 was already followed by version 1"):
            versioned.commit(db, 0, {"version": 1, "names": ["b"]})  # read 0 too: refused, nothing changed
        versioned.commit(db, 1, {"version": 3, "names": ["a", "c"]})
        # a pointer left behind (a crash after a commit, a slow writer) still leads to the newest state
        storage.write_bytes(storage.join(db, versioned.POINTER), json.dumps({"version": 1, "names": ["a"]}).encode())
        assert versioned.read(db, EMPTY) == {"version": 3, "names": ["a", "c"]}
        with pytest.raises(versioned.Conflict):
            versioned.commit(db, 1, {"version": 2, "names": ["late"]})
        assert versioned.read(db, EMPTY)["names"] == ["a", "c"]


def test_writers_without_a_lock_lose_no_update(tmp_path, s3_bucket) -> None:
    """Each writer reads, appends its name and commits, retrying on a conflict: every name ends
    in the state, as with a lock (a plain read-modify-write loses most of them)."""
    for db in _folders(tmp_path, s3_bucket):
        conflicts = []

        def add(name: str) -> None:
            while True:
                state = versioned.read(db, EMPTY)
                new = {"version": state["version"] + 1, "names": [*state["names"], name]}
                try:
                    versioned.commit(db, state["version"], new)
                    return
                except versioned.Conflict:
                    conflicts.append(name)

        names = [f"w{i}-{j}" for i in range(6) for j in range(4)]
        threads = [threading.Thread(target=lambda i=i: [add(f"w{i}-{j}") for j in range(4)]) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        state = versioned.read(db, EMPTY)
        assert sorted(state["names"]) == sorted(names) and state["version"] == len(names)
        assert conflicts, "the writers never met: the test proved nothing"


def test_many_runs_taking_over_one_stale_lease_leave_one_holder(tmp_path, s3_bucket) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for out in _folders(tmp_path, s3_bucket):
        stale = {"owner": "dead", "job": "killed", "host": os.uname().nodename, "pid": int(dead.stdout), "started": 0}
        storage.write_bytes(lease.lock_uri(out), json.dumps(dict(stale, expires=time.time() + 3600)).encode())
        held, start = [], threading.Barrier(8)

        def take(i: int) -> None:
            start.wait()
            try:
                held.append(lease.Lease(out, f"run{i}", wait=0).acquire())
            except lease.Busy:
                pass

        threads = [threading.Thread(target=take, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(held) == 1, [h.job for h in held]
        assert lease.read_json(lease.lock_uri(out))["owner"] == held[0].owner
        held[0].release()
