"""``python -m lib.placement`` end to end, each command in a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from lib.placement.config import load
from lib.placement.swap import Collection, locate
from tests.fixtures_placement import make_config, snapshot

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli(*args: str, stdin: bytes | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "lib.placement", *args], input=stdin, capture_output=True, cwd=ROOT, env=env)
    if ok:
        assert p.returncode == 0, p.stderr.decode()
    return p


def test_locate_prints_slice_last():
    out = cli("locate", "--slices", "5", "a/b.txt", "日本/x").stdout.decode().splitlines()
    assert [line.split("\t")[-1] for line in out] == [str(locate("a/b.txt", 5)), str(locate("日本/x", 5))]
    bad = cli("locate", "--slices", "5", "/abs", ok=False)
    assert bad.returncode == 2 and "relative" in bad.stderr.decode()


def test_put_get_ls_verify_recover(tmp_path):
    cfg = make_config(str(tmp_path), 3, 3)
    src = tmp_path / "in.bin"
    src.write_bytes(b"\x00\x01payload")
    out = cli("put", "--config", cfg, str(src), "docs/project1").stdout.decode().split("\t")
    assert out[0] == "docs/project1" and out[-1].strip() == str(locate("docs/project1", 3))
    cli("put", "--config", cfg, "-", "docs/notes.txt", stdin=b"from stdin")
    folder = tmp_path / "tree"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "f").write_bytes(b"F")
    cli("put", "--config", cfg, str(folder), "docs/tree")
    refused = cli("put", "--config", cfg, str(src), "docs/project1/readme.txt", ok=False)
    assert refused.returncode == 2 and "is a file on slice" in refused.stderr.decode()
    assert cli("get", "--config", cfg, "docs/notes.txt").stdout == b"from stdin"
    cli("get", "--config", cfg, "docs/project1", "-o", str(tmp_path / "back"))
    assert (tmp_path / "back").read_bytes() == b"\x00\x01payload"
    lines = [line.split("\t") for line in cli("ls", "--config", cfg, "docs").stdout.decode().splitlines()]
    assert [(p, int(n), int(s)) for p, n, s in lines] == sorted(
        (p, n, locate(p, 3)) for p, n in [("docs/project1", 9), ("docs/notes.txt", 10), ("docs/tree/sub/f", 1)]
    )
    assert cli("verify", "--config", cfg).stdout.decode().startswith("ok: 3 files")
    rec = json.loads(cli("recover", "--config", cfg, "--out", str(tmp_path / "rec")).stdout)
    assert rec["files"] == 3 and (tmp_path / "rec" / "docs" / "tree" / "sub" / "f").read_bytes() == b"F"
    # a misplaced copy makes verify fail with exit 1
    wrong = (locate("docs/notes.txt", 3) + 1) % 3
    (tmp_path / f"slice{wrong}" / "docs").mkdir(parents=True, exist_ok=True)
    (tmp_path / f"slice{wrong}" / "docs" / "notes.txt").write_bytes(b"x")
    bad = cli("verify", "--config", cfg, ok=False)
    assert bad.returncode == 1 and "misplaced: docs/notes.txt" in bad.stdout.decode()


def test_rebalance_dry_run_then_killed_then_resumed(tmp_path):
    cfg = make_config(str(tmp_path), 2, 2)
    files = {f"f/{i}": b"%d" % i for i in range(30)}
    coll = Collection(load(cfg))
    for rel, data in files.items():
        coll.put_bytes(rel, data)
    extra = [str(tmp_path / "slice2"), str(tmp_path / "slice3")]
    adds = [a for r in extra for a in ("--add", r)]
    dry = cli("rebalance", "--config", cfg, "--to", "4", *adds, "--dry-run").stdout.decode().splitlines()
    moves = [line.split("\t") for line in dry]
    assert moves and all(int(b) == int(a) + 2 for _, a, b in moves)
    assert Collection(load(cfg)).n == 2 and len(load(cfg).roots) == 2  # dry run changed nothing
    for crash_after in (1, 5, 11):  # the process dies (os._exit) after that many steps
        p = cli("rebalance", "--config", cfg, "--to", "4", *adds, "--crash-after-step", str(crash_after), ok=False)
        assert p.returncode == 70
    res = json.loads(cli("rebalance", "--config", cfg, "--to", "4").stdout)
    assert res["resumed"] and res["planned"] == len(moves) and res["to"] == 4
    assert snapshot(Collection(load(cfg))) == files
    assert cli("verify", "--config", cfg).returncode == 0
    json.loads(cli("rebalance", "--config", cfg, "--to", "2").stdout)
    assert snapshot(Collection(load(cfg))) == files and load(cfg).slices == 2


def test_publish_command_and_locate_with_config(tmp_path):
    day = tmp_path / "out"
    (day / "language=eng").mkdir(parents=True)
    (day / "language=eng" / "part-0.parquet").write_bytes(b"PAR1")
    (day / "_stats.json").write_text("{}")
    cfg = make_config(str(tmp_path), 4, 4)
    missing = cli("publish", str(day), "--config", cfg, "--prefix", "index/2026-01/15", ok=False)
    assert missing.returncode == 2 and "_SUCCESS" in missing.stderr.decode()
    (day / "_SUCCESS").write_text("")
    res = json.loads(cli("publish", str(day), "--config", cfg, "--prefix", "index/2026-01/15").stdout)
    assert res["files"] == 3
    rel = "index/2026-01/15/language=eng/part-0.parquet"
    line = cli("locate", "--config", cfg, rel).stdout.decode().strip().split("\t")
    assert line[-1] == str(locate(rel, 4)) and line[1].endswith(f"slice{line[-1]}/{rel}")
    assert open(line[1], "rb").read() == b"PAR1"


@pytest.mark.parametrize("content", ['{"roots": "x"}', "not json"])
def test_bad_config_is_a_clear_error(tmp_path, content):
    cfg = tmp_path / "c.json"
    cfg.write_text(content)
    p = cli("ls", "--config", str(cfg), ok=False)
    assert p.returncode == 2 and "c.json" in p.stderr.decode()
