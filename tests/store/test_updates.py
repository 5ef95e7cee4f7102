"""logs.csv (lib.store.updates): two processes appending at once lose, repeat and tear no line."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import textwrap

import pytest

from lib.store import updates

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 150  # lines per writer


def _writer(root: str, tag: str) -> subprocess.Popen:
    code = textwrap.dedent(
        f"""
        import sys
        from lib.store import updates
        sys.stdin.read(1)  # both start on the same signal
        for i in range({N}):
            updates.append({root!r}, "day", "{tag}-%03d" % i, detail="x" * (i % 97))
        """
    )
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT_DIR, stdin=subprocess.PIPE)


def test_two_processes_append_every_line_once_in_seq_order(tmp_path):
    root = str(tmp_path)
    procs = [_writer(root, "a"), _writer(root, "b")]
    for p in procs:
        p.stdin.write(b"g")
        p.stdin.close()
    assert [p.wait(60) for p in procs] == [0, 0]
    with open(updates.path(root), newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(updates.HEADER)  # one header, written by whichever came first
    body = rows[1:]
    assert [int(r[0]) for r in body] == list(range(1, 2 * N + 1))  # no seq lost or repeated
    names = [r[3] for r in body]
    for tag in "ab":  # each writer's lines are all there, in its own order
        mine = [n for n in names if n.startswith(tag)]
        assert mine == [f"{tag}-{i:03d}" for i in range(N)]
    assert all(len(r) == len(updates.HEADER) and r[5] == "x" * (int(r[3][2:]) % 97) for r in body)
    # the interleaving really happened: neither wrote all its lines first
    first_b = names.index("b-000")
    assert any(n.startswith("a") for n in names[first_b:])
    got = updates.read(root, after=2 * N - 5)
    assert [u.seq for u in got] == list(range(2 * N - 4, 2 * N + 1))
    assert [u.seq for u in updates.read(root, after=10, limit=3)] == [11, 12, 13]


def test_a_torn_line_is_never_read_and_the_next_writer_ends_it(tmp_path):
    root = str(tmp_path)
    updates.append(root, "model", "lid", "v1")
    with open(updates.path(root), "a") as f:
        f.write("2,2026-12-07T00:00:00Z,day,preprocessed/2026-")  # a writer killed mid-line
    assert [u.seq for u in updates.read(root)] == [1]
    u = updates.append(root, "purge", "2026-01-15")
    assert u.seq == 2  # the torn line never counted
    got = updates.read(root)
    assert [(x.seq, x.kind, x.name) for x in got] == [(1, "model", "lid"), (2, "purge", "2026-01-15")]


def test_refusals_and_roots_that_cannot_append(tmp_path, caplog):
    with pytest.raises(ValueError, match="not one of"):
        updates.append(str(tmp_path), "holiday", "x")
    assert not os.path.exists(updates.path(str(tmp_path)))
    assert updates.record(None, "day", "x") is None
    assert updates.record("s3://bucket/root", "day", "x") is None
    assert "cannot append" in caplog.text
    assert updates.read("s3://bucket/root") == [] and updates.read(str(tmp_path)) == []
