"""logs.csv (lib.store.update_log): two processes appending at once lose, repeat and tear no line."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap

import pytest

from lib.store import s3, update_log

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 150  # lines per writer


def _writer(root: str, tag: str, n: int = N) -> subprocess.Popen:
    other = "b" if tag == "a" else "a"
    code = textwrap.dedent(
        f"""
        import sys, time
        from lib.store import s3, update_log
        sys.stdin.read(1)  # both start on the same signal
        for i in range({n}):
            if i == {n} // 2:  # half-way, wait for the other writer's first line: the appends do interleave
                deadline = time.monotonic() + 60
                while not any(u.name.startswith("{other}") for u in update_log.read({root!r})):
                    if time.monotonic() > deadline:
                        sys.exit("the other writer never wrote")
                    time.sleep(0.01)
            update_log.append({root!r}, "day", "{tag}-%03d" % i, detail="x" * (i % 97))
        """
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT_DIR, stdin=subprocess.PIPE)


def _race(root: str, n: int) -> list[str]:
    """Two writer processes append ``n`` lines each at once; returns the names in seq order,
    having checked that the seqs run 1..2n without a gap or a repeat."""
    procs = [_writer(root, "a", n), _writer(root, "b", n)]
    for p in procs:
        p.stdin.write(b"g")
        p.stdin.close()
    assert [p.wait(120) for p in procs] == [0, 0]
    got = update_log.read(root)
    assert [u.seq for u in got] == list(range(1, 2 * n + 1))  # no seq lost or repeated
    names = [u.name for u in got]
    for tag in "ab":  # each writer's lines are all there, in its own order
        assert [x for x in names if x.startswith(tag)] == [f"{tag}-{i:03d}" for i in range(n)]
    assert all(u.detail == "x" * (int(u.name[2:]) % 97) for u in got)
    return names


def test_two_processes_append_every_line_once_in_seq_order(tmp_path):
    root = str(tmp_path)
    names = _race(root, N)
    with open(update_log.path(root), newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(update_log.HEADER) and len(rows) == 2 * N + 1  # one header, by whichever came first
    # the interleaving really happened: neither wrote all its lines first
    assert any(n.startswith("a") for n in names[names.index("b-000") :])
    got = update_log.read(root, after=2 * N - 5)
    assert [u.seq for u in got] == list(range(2 * N - 4, 2 * N + 1))
    assert [u.seq for u in update_log.read(root, after=10, limit=3)] == [11, 12, 13]


def test_a_torn_line_is_never_read_and_the_next_writer_ends_it(tmp_path):
    root = str(tmp_path)
    update_log.append(root, "model", "lid", "v1")
    with open(update_log.path(root), "a") as f:
        f.write("2,2026-12-07T00:00:00Z,day,preprocessed/2026-")  # a writer killed mid-line
    assert [u.seq for u in update_log.read(root)] == [1]
    u = update_log.append(root, "purge", "2026-01-15")
    assert u.seq == 2  # the torn line never counted
    got = update_log.read(root)
    assert [(x.seq, x.kind, x.name) for x in got] == [(1, "model", "lid"), (2, "purge", "2026-01-15")]


def test_two_processes_on_an_s3_root_never_share_a_seq(s3_bucket):
    root = f"s3://{s3_bucket}/dc1"
    _race(root, 12)
    assert [u.seq for u in update_log.read(root, after=20)] == [21, 22, 23, 24]
    u = update_log.record(root, "purge", "2026-01-15")
    assert u is not None and u.seq == 25 and update_log.read(root, after=24) == [u]
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=s3_bucket, Prefix="dc1/")["Contents"]]
    assert keys[0] == "dc1/shared/auxiliary/logs/000000000001.csv" and len(keys) == 25


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match="not one of"):
        update_log.append(str(tmp_path), "holiday", "x")
    assert not os.path.exists(update_log.path(str(tmp_path)))
    assert update_log.record(None, "day", "x") is None
    assert update_log.read(str(tmp_path)) == []
