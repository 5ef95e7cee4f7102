"""SWAP slices on local roots: locate, put/get/ls, the namespace-collision check and its
cache, verify, recover, publish; key-space partitions; consistent hashing."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.pages import keyspace
from lib.placement.config import ConfigError, load
from lib.placement.consistent import ConsistentHashRing, imbalance, moved_fraction
from lib.placement.consistent import load as ring_load
from lib.placement.slice_publish import publish_tree
from lib.placement.swap import Collection, NamespaceError, PlacementError, check_path, locate
from tests.fixtures_placement import COLLECTION, PATH, fill, make_config, snapshot

SETTINGS = settings(max_examples=30, deadline=None)


@SETTINGS
@given(st.text(min_size=1, max_size=40), st.integers(1, 64))
def test_locate_is_md5_mod_n(path, n):
    want = int(hashlib.md5(path.encode("utf-8")).hexdigest(), 16) % n
    assert locate(path, n) == want


def test_locate_known_value():
    # MD5("a") = 0cc175b9c0f1b6a831c399e269772661 -> 0x...61 is odd
    assert locate("a", 2) == 1
    assert locate("a", 16) == 1
    assert locate("a", 1) == 0


@pytest.mark.parametrize("bad", ["", "/abs", "a//b", "a/./b", "../a", "a\\b", "a/.b.swaptmp"])
def test_bad_paths_refused(bad):
    with pytest.raises(ValueError):
        check_path(bad)


@SETTINGS
@given(COLLECTION, st.integers(1, 4))
def test_put_places_by_locate_and_get_returns_bytes(files, n):
    with tempfile.TemporaryDirectory() as d:
        coll = fill(make_config(d, n, n), files)
        assert snapshot(coll) == files
        for rel, data in files.items():
            assert coll.get_bytes(rel) == data
            assert os.path.isfile(os.path.join(d, f"slice{locate(rel, n)}", *rel.split("/")))
        assert coll.verify().ok


@SETTINGS
@given(COLLECTION, st.integers(1, 4))
def test_recover_rebuilds_the_collection(files, n):
    with tempfile.TemporaryDirectory() as d:
        coll = fill(make_config(d, n, n), files)
        out = os.path.join(d, "recovered")
        res = coll.recover(out)
        assert res["files"] == len(files)
        got = {}
        for dirpath, _, names in os.walk(out):
            for name in names:
                p = os.path.join(dirpath, name)
                got[os.path.relpath(p, out).replace(os.sep, "/")] = open(p, "rb").read()
        assert got == files
        # and with no placement software at all: plain recursive copies of every slice
        plain = os.path.join(d, "plain")
        for i in range(n):
            if os.path.isdir(os.path.join(d, f"slice{i}")):
                shutil.copytree(os.path.join(d, f"slice{i}"), plain, dirs_exist_ok=True)
        assert Collection([plain]).ls() == [(r, len(b), 0) for r, b in sorted(files.items())]


@SETTINGS
@given(PATH, st.lists(st.sampled_from(["a", "b", "c.txt"]), min_size=1, max_size=3), st.integers(1, 4))
def test_collisions_refused_both_directions(base, tail, n):
    longer = base + "/" + "/".join(tail)
    for first, second in ((base, longer), (longer, base)):
        with tempfile.TemporaryDirectory() as d:
            coll = fill(make_config(d, n, n), {first: b"1"})
            with pytest.raises(NamespaceError):
                coll.put_bytes(second, b"2")
            # a fresh process (empty cache) refuses it too, by asking the slices
            with pytest.raises(NamespaceError):
                Collection(load(os.path.join(d, "slices.json"))).put_bytes(second, b"2")
            assert snapshot(coll) == {first: b"1"}


def test_collision_across_slices_names_the_slice(tmp_path):
    coll = fill(make_config(str(tmp_path), 4, 4), {"documents/project1": b"x"})
    with pytest.raises(NamespaceError, match=f"slice {locate('documents/project1', 4)}"):
        coll.put_bytes("documents/project1/readme.txt", b"y")


def test_cache_avoids_reasking_slices(tmp_path):
    coll = fill(make_config(str(tmp_path), 4, 4), {"day/a/file0": b"0"})
    fresh = Collection(load(str(tmp_path / "slices.json")))
    fresh.put_bytes("day/a/file1", b"1")
    first = fresh.listings
    assert first == 3 * 4  # "", "day", "day/a" listed once on each of the 4 slices
    for i in range(2, 30):
        fresh.put_bytes(f"day/a/file{i}", b"%d" % i)
    assert fresh.listings == first
    fresh.put_bytes("day/new/sub/f", b"z")  # "day/new" is absent everywhere: nothing below it is listed
    assert fresh.listings == first
    assert len(coll.ls("day/a")) == 30


def test_overwrite_keeps_one_copy(tmp_path):
    coll = fill(make_config(str(tmp_path), 3, 3), {"a/b": b"old"})
    coll.put_bytes("a/b", b"new")
    assert snapshot(coll) == {"a/b": b"new"}


def test_verify_reports_misplaced_duplicates_collisions(tmp_path):
    coll = fill(make_config(str(tmp_path), 2, 2), {"p/q": b"1", "r": b"2"})
    other = 1 - locate("p/q", 2)
    coll.roots[other].write_bytes("p/q", b"1")  # duplicate, misplaced copy
    coll.roots[1 - locate("r", 2)].write_bytes("r/inner", b"3")  # 'r' is a file and a directory
    open(os.path.join(tmp_path, "slice0", ".half.swaptmp"), "wb").close()
    rep = coll.verify()
    assert not rep.ok
    assert ("p/q", other, locate("p/q", 2)) in rep.misplaced
    assert rep.duplicates == {"p/q": sorted([0, 1])}
    assert rep.collisions == ["r"]
    assert rep.leftovers == [(0, ".half.swaptmp")]
    with pytest.raises(PlacementError):
        coll.recover(str(tmp_path / "out"))


def test_get_missing_names_slice(tmp_path):
    coll = fill(make_config(str(tmp_path), 2, 2), {"x": b"1"})
    with pytest.raises(FileNotFoundError, match=f"slice {locate('nope/y', 2)}"):
        coll.open("nope/y")


def test_config_toml_and_errors(tmp_path):
    cfg = load(make_config(str(tmp_path), 3, 2, name="slices.toml"))
    assert cfg.slices == 2 and len(cfg.roots) == 3
    bad = tmp_path / "bad.json"
    bad.write_text('{"roots": []}')
    with pytest.raises(ConfigError, match="bad.json"):
        load(str(bad))
    bad.write_text('{"roots": ["a"], "slices": 2}')
    with pytest.raises(ConfigError, match="slices=2"):
        load(str(bad))
    (tmp_path / "rel.toml").write_text('roots = ["s0", "s1"]\n')
    assert load(str(tmp_path / "rel.toml")).roots == [str(tmp_path / "s0"), str(tmp_path / "s1")]


def _day(tmp_path, files: dict[str, bytes]) -> str:
    day = tmp_path / "day"
    for rel, data in files.items():
        p = day / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return str(day)


def test_publish_tree_spreads_and_locate_finds(tmp_path):
    files = {f"eng/part-{i}.ciff": b"c%d" % i for i in range(12)} | {"_stats.json": b"{}", "_SUCCESS": b""}
    cfg = make_config(str(tmp_path), 4, 4)
    res = publish_tree(_day(tmp_path, files), cfg, "index/2026-01/15")
    assert res["files"] == 14 and sum(res["per_slice"].values()) == 14
    assert len(res["per_slice"]) > 1  # really spread
    coll = Collection(load(cfg))
    for rel, data in files.items():
        full = f"index/2026-01/15/{rel}"
        assert (tmp_path / f"slice{locate(full, 4)}" / full).read_bytes() == data
    assert coll.verify().ok


def test_publish_refuses_unfinished_and_is_idempotent(tmp_path):
    cfg = make_config(str(tmp_path), 3, 3)
    day = _day(tmp_path, {"a/x": b"1", "a/y": b"2"})
    with pytest.raises(PlacementError, match="_SUCCESS"):
        publish_tree(day, cfg, "p")
    assert Collection(load(cfg)).ls() == []
    (tmp_path / "day" / "_SUCCESS").write_bytes(b"")
    publish_tree(day, cfg, "p")
    os.remove(tmp_path / "day" / "a" / "y")
    (tmp_path / "day" / "a" / "z").write_bytes(b"3")
    res = publish_tree(day, [str(tmp_path / f"slice{i}") for i in range(3)], "p")
    assert res["removed"] == 1
    assert snapshot(Collection(load(cfg))) == {"p/a/x": b"1", "p/a/z": b"3", "p/_SUCCESS": b""}


# -- key space --------------------------------------------------------------------------
@SETTINGS
@given(st.text(max_size=30), st.integers(1, 1000))
def test_partition_in_its_range(key, k):
    p = keyspace.partition_of(key, k)
    lo, hi = keyspace.partition_range(p, k)
    assert lo <= keyspace.md5_int(key) < hi
    assert keyspace.split_points(k)[p] == lo


@SETTINGS
@given(st.integers(1, 12))
def test_power_of_two_is_first_bits(bits):
    k = 1 << bits
    assert keyspace.prefix_bits(k) == bits
    for key in ("a", "b", "http://example.com/", "日本"):
        assert keyspace.partition_of(key, k) == keyspace.md5_int(key) >> (128 - bits)


@SETTINGS
@given(st.integers(1, 500))
def test_split_points_balanced_and_contiguous(k):
    pts = keyspace.split_points(k) + [keyspace.SPACE]
    sizes = [b - a for a, b in zip(pts, pts[1:])]
    assert max(sizes) - min(sizes) <= 1
    assert pts[0] == 0


# -- consistent hashing -----------------------------------------------------------------
KEYS = [f"key-{i}" for i in range(3000)]


def test_ring_add_moves_only_to_new_node_about_1_over_n():
    ring = ConsistentHashRing([f"n{i}" for i in range(10)], vnodes=100)
    before = [ring.lookup(k) for k in KEYS]
    ring.add_node("n10")
    after = [ring.lookup(k) for k in KEYS]
    assert all(a == b or b == "n10" for a, b in zip(before, after))
    assert 0.05 < moved_fraction(before, after) < 0.14  # ideal 1/11


def test_ring_remove_moves_only_removed_keys_and_is_inverse_of_add():
    ring = ConsistentHashRing([f"n{i}" for i in range(10)], vnodes=50)
    before = [ring.lookup(k) for k in KEYS]
    ring.remove_node("n3")
    after = [ring.lookup(k) for k in KEYS]
    assert all(a == b for a, b in zip(before, after) if a != "n3")
    assert "n3" not in after
    ring.add_node("n3")
    assert [ring.lookup(k) for k in KEYS] == before


def test_vnodes_even_out_load():
    one = imbalance(ring_load(ConsistentHashRing([f"n{i}" for i in range(10)], vnodes=1), KEYS))
    many = imbalance(ring_load(ConsistentHashRing([f"n{i}" for i in range(10)], vnodes=200), KEYS))
    assert many < one and many < 1.3


def test_ring_lookup_is_first_point_clockwise():
    ring = ConsistentHashRing(["a", "b", "c"], vnodes=3)
    pts = sorted((keyspace.md5_int(f"{n}#{i}"), n) for n in "abc" for i in range(3))
    for key in KEYS[:200]:
        h = keyspace.md5_int(key)
        want = next((n for p, n in pts if p >= h), pts[0][1])
        assert ring.lookup(key) == want
    assert len(set(ring.preference_list("k", 3))) == 3
    with pytest.raises(LookupError):
        ConsistentHashRing().lookup("x")


@SETTINGS
@given(st.text(max_size=30), st.integers(1, 1000))
def test_doubling_k_splits_each_range_in_two(key, k):
    assert keyspace.partition_of(key, 2 * k) // 2 == keyspace.partition_of(key, k)


def test_ring_weight_scales_share():
    ring = ConsistentHashRing([f"n{i}" for i in range(4)], vnodes=200)
    ring.add_node("big", weight=2)
    counts = ring_load(ring, KEYS)
    assert 1.5 < counts["big"] / (sum(counts[f"n{i}"] for i in range(4)) / 4) < 2.6


@pytest.mark.parametrize("fail_at", [1, 3, 5])
def test_publish_crash_never_leaves_success(tmp_path, monkeypatch, fail_at):
    cfg = make_config(str(tmp_path), 3, 3)
    files = {f"lang/p{i}": b"%d" % i for i in range(4)} | {"_SUCCESS": b"", "lang/_SUCCESS": b""}
    day = _day(tmp_path, files)
    publish_tree(day, cfg, "d")  # a complete earlier publish
    calls = []
    real_put = Collection.put_file

    def failing_put(self, src, rel):
        calls.append(rel)
        if len(calls) == fail_at:
            raise OSError("disk gone")
        return real_put(self, src, rel)

    monkeypatch.setattr(Collection, "put_file", failing_put)
    with pytest.raises(OSError):
        publish_tree(day, cfg, "d")
    published = {rel for rel, _, _ in Collection(load(cfg)).ls("d")}
    assert "d/_SUCCESS" not in published and "d/lang/_SUCCESS" not in published
    monkeypatch.undo()
    publish_tree(day, cfg, "d")
    assert snapshot(Collection(load(cfg))) == {f"d/{r}": b for r, b in files.items()}
