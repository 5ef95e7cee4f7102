"""Rebalancing slices: doubling, halving, other counts, and crashes at every step."""

from __future__ import annotations

import json
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.placement.config import load
from lib.placement.rebalance import RebalanceError, plan_moves, read_plan, rebalance
from lib.placement.swap import Collection, PlacementError, locate
from tests.fixtures_placement import COLLECTION, fill, layout, make_config, snapshot

SETTINGS = settings(max_examples=30, deadline=None)


class Crash(Exception):
    pass


def crash_at(k: int):
    """A hook that fails right after the k-th step (1-based) of a rebalance."""
    seen = []

    def hook(step: str, i: int) -> None:
        seen.append((step, i))
        if len(seen) == k:
            raise Crash(f"after step {k}: {step} {i}")

    return hook, seen


def _config(d: str, files: dict[str, bytes], n: int, roots: int) -> str:
    cfg = make_config(d, roots, n)
    fill(cfg, files)
    return cfg


def _check_final(cfg_path: str, files: dict[str, bytes], to: int) -> Collection:
    coll = Collection(load(cfg_path))
    assert coll.n == to
    assert snapshot(coll) == files  # same files, same bytes, each exactly once
    assert all(s == locate(rel, to) for rel, s in layout(coll).items())
    assert coll.verify().ok and not coll.verify().leftovers
    assert not os.path.exists(cfg_path + ".rebalance")
    return coll


@SETTINGS
@given(COLLECTION, st.integers(1, 4))
def test_doubling_moves_only_i_to_i_plus_n(files, n):
    with tempfile.TemporaryDirectory() as d:
        cfg = _config(d, files, n, 2 * n)
        before = layout(Collection(load(cfg)))
        res = rebalance(cfg, 2 * n)
        after = layout(_check_final(cfg, files, 2 * n))
        moved = {r for r in files if after[r] != before[r]}
        assert all(after[r] == before[r] + n for r in moved)
        assert moved == {r for r in files if locate(r, 2 * n) != locate(r, n)}
        assert res["moved"] == len(moved)


@SETTINGS
@given(COLLECTION, st.integers(1, 4))
def test_halving_inverts_doubling(files, n):
    with tempfile.TemporaryDirectory() as d:
        cfg = _config(d, files, n, 2 * n)
        before = layout(Collection(load(cfg)))
        rebalance(cfg, 2 * n)
        rebalance(cfg, n)
        coll = _check_final(cfg, files, n)
        assert layout(coll) == before
        # the upper slices are empty again, with no folders left behind
        for i in range(n, 2 * n):
            top = os.path.join(d, f"slice{i}")
            assert not os.path.exists(top) or not os.listdir(top)


def test_doubling_moves_about_half(tmp_path):
    files = {f"day/{i % 7}/file-{i}.bin": b"%d" % i for i in range(400)}
    cfg = _config(str(tmp_path), files, 4, 8)
    coll = Collection(load(cfg))
    moves = plan_moves(coll, 8)
    assert {(a, b) for _, a, b in moves} <= {(0, 4), (1, 5), (2, 6), (3, 7)}
    assert 0.4 < len(moves) / len(files) < 0.6
    res = rebalance(cfg, 8)
    assert res["moved"] == len(moves)
    _check_final(cfg, files, 8)


def test_other_counts_move_most(tmp_path):
    files = {f"f{i}": b"%d" % i for i in range(200)}
    cfg = _config(str(tmp_path), files, 4, 5)
    res = rebalance(cfg, 5)
    assert res["moved"] > 0.7 * len(files)  # ~4/5 change slice: why SWAP doubles
    _check_final(cfg, files, 5)


@SETTINGS
@given(COLLECTION, st.integers(1, 3), st.booleans(), st.sampled_from([1, 3]), st.data())
def test_crash_at_any_step_then_rerun_finishes(files, n, halve, workers, data):
    frm, to = (2 * n, n) if halve else (n, 2 * n)
    with tempfile.TemporaryDirectory() as d:
        probe = os.path.join(d, "probe")
        os.mkdir(probe)
        hook, seen = crash_at(0)
        rebalance(_config(probe, files, frm, 2 * n), to, hook=hook)
        total = len(seen)  # plan, copy/verify/delete per move, config, done
        k = data.draw(st.integers(1, total), label="crash after step")
        run = os.path.join(d, "run")
        os.mkdir(run)
        cfg = _config(run, files, frm, 2 * n)
        hook, _ = crash_at(k)
        with pytest.raises(Crash):
            rebalance(cfg, to, hook=hook, workers=workers)
        if data.draw(st.booleans(), label="crash again on the re-run") and k < total:
            hook, _ = crash_at(data.draw(st.integers(1, 3)))
            try:
                rebalance(cfg, to, hook=hook)
            except Crash:
                pass
        rebalance(cfg, to, workers=workers)
        _check_final(cfg, files, to)


def test_crash_at_every_step_exhaustively(tmp_path):
    files = {f"d/{c}/{i}": bytes([i]) * i for i, c in enumerate("abcdefgh")}
    hook, seen = crash_at(0)
    rebalance(_config(str(tmp_path / "probe"), files, 2, 4), 4, hook=hook)
    steps = [s for s, _ in seen]
    assert steps[0] == "plan" and steps[-2:] == ["config", "done"]
    assert steps.count("delete") == steps.count("copy") > 0
    for k in range(1, len(seen) + 1):
        run = tmp_path / f"run{k}"
        cfg = _config(str(run), files, 2, 4)
        hook, _ = crash_at(k)
        with pytest.raises(Crash):
            rebalance(cfg, 4, hook=hook)
        rebalance(cfg, 4)
        _check_final(cfg, files, 4)


def test_during_rebalance_puts_refused_gets_work(tmp_path):
    files = {f"x/{i}": b"%d" % i for i in range(20)}
    cfg = _config(str(tmp_path), files, 2, 4)
    hook, _ = crash_at(1 + 3 * 3)  # plan + three finished moves
    with pytest.raises(Crash):
        rebalance(cfg, 4, hook=hook)
    coll = Collection(load(cfg))
    with pytest.raises(PlacementError, match="rebalance is in progress"):
        coll.put_bytes("x/new", b"n")
    for rel, data in files.items():
        assert coll.get_bytes(rel) == data
    with pytest.raises(RebalanceError, match="in progress"):
        rebalance(cfg, 1)
    rebalance(cfg, 4)
    _check_final(cfg, files, 4)


def test_damaged_destination_is_recopied(tmp_path):
    files = {f"f{i}": b"content %d" % i for i in range(16)}
    cfg = _config(str(tmp_path), files, 1, 2)
    hook, _ = crash_at(1)  # plan written, nothing moved
    with pytest.raises(Crash):
        rebalance(cfg, 2, hook=hook)
    _, moves = read_plan(cfg + ".rebalance")
    rel, src, dst = moves[0]
    (tmp_path / f"slice{dst}").mkdir(exist_ok=True)
    (tmp_path / f"slice{dst}" / rel).write_bytes(b"trunc")  # e.g. storage without atomic writes
    (tmp_path / f"slice{dst}" / f".{moves[1][0]}.swaptmp").write_bytes(b"half")  # a crashed local copy
    rebalance(cfg, 2)
    _check_final(cfg, files, 2)


def test_lost_file_is_reported_not_ignored(tmp_path):
    files = {f"f{i}": b"%d" % i for i in range(16)}
    cfg = _config(str(tmp_path), files, 1, 2)
    hook, _ = crash_at(1)
    with pytest.raises(Crash):
        rebalance(cfg, 2, hook=hook)
    _, moves = read_plan(cfg + ".rebalance")
    os.remove(tmp_path / "slice0" / moves[0][0])
    with pytest.raises(RebalanceError, match="neither their old nor new slice"):
        rebalance(cfg, 2)
    assert os.path.exists(cfg + ".rebalance")


def test_add_roots_and_too_few_roots(tmp_path):
    files = {f"f{i}": b"%d" % i for i in range(10)}
    cfg = _config(str(tmp_path), files, 2, 2)
    with pytest.raises(RebalanceError, match="roots"):
        rebalance(cfg, 4)
    extra = [str(tmp_path / "more2"), str(tmp_path / "more3")]
    rebalance(cfg, 4, add_roots=extra)
    assert json.load(open(cfg))["roots"][2:] == extra
    _check_final(cfg, files, 4)


def test_rebalance_to_same_count_repairs_misplaced(tmp_path):
    files = {f"f{i}": b"%d" % i for i in range(12)}
    cfg = _config(str(tmp_path), files, 3, 3)
    coll = Collection(load(cfg))
    rel = "f0"
    wrong = (locate(rel, 3) + 1) % 3
    coll.roots[wrong].write_bytes(rel, coll.get_bytes(rel))
    coll.roots[locate(rel, 3)].delete(rel)
    assert [m[0] for m in coll.verify().misplaced] == [rel]
    assert rebalance(cfg, 3)["moved"] == 1
    _check_final(cfg, files, 3)
