"""A SWAP collection's placement, chosen per collection: md5-mod (doubling moves about half of the
files, from slice i to i + n only) or a consistent-hash ring (adding or removing one of n slices
moves about 1/n of the keys, measured against that figure, and only to or from that slice)."""

from __future__ import annotations

import pytest

from lib.placement.net.namespace import CollectionDef, CollectionError, Holder, Layout, Registry
from lib.placement.swap import locate

KEYS = [f"index/2026-01/{d:02d}/eng/part-{i:05d}.ciff.gz" for d in range(1, 11) for i in range(2000)]


def _holders(n: int) -> list[Holder]:
    return [Holder(f"http://s{i % 3}", f"part-{i}") for i in range(n)]


@pytest.mark.parametrize("n", [4, 8])
def test_consistent_adding_one_slice_moves_about_one_in_n_plus_one(n):
    before = Layout("consistent", _holders(n), vnodes=128)
    after = Layout("consistent", _holders(n + 1), vnodes=128)
    moved = [k for k in KEYS if before.holder(k) != after.holder(k)]
    share = len(moved) / len(KEYS)
    assert abs(share - 1 / (n + 1)) < 0.35 / (n + 1), share  # within 35% of the ideal figure
    assert {after.holder(k) for k in moved} == {after.slices[n]}  # only onto the new slice
    # removing it again moves exactly those keys back
    assert [k for k in KEYS if after.holder(k) != before.holder(k)] == moved


def test_consistent_removing_a_slice_moves_only_its_keys():
    full = Layout("consistent", _holders(6), vnodes=128)
    gone = full.slices[2]
    less = Layout("consistent", [h for h in full.slices if h != gone], vnodes=128)
    moved = [k for k in KEYS if full.holder(k) != less.holder(k)]
    assert moved == [k for k in KEYS if full.holder(k) == gone]
    assert abs(len(moved) / len(KEYS) - 1 / 6) < 0.35 / 6


def test_md5_mod_is_the_library_placement_and_doubling_moves_half_to_i_plus_n():
    two, four = Layout("md5-mod", _holders(2)), Layout("md5-mod", _holders(4))
    assert [two.slice_of(k) for k in KEYS[:500]] == [locate(k, 2) for k in KEYS[:500]]
    moved = [k for k in KEYS if two.slice_of(k) != four.slice_of(k)]
    assert all(four.slice_of(k) == two.slice_of(k) + 2 for k in moved)
    assert 0.47 < len(moved) / len(KEYS) < 0.53


def test_layouts_and_names_refuse_bad_definitions(tmp_path):
    with pytest.raises(CollectionError, match="placement"):
        Layout("random", _holders(2))
    with pytest.raises(CollectionError, match="at most one slice"):
        Layout("md5-mod", [Holder("http://a", "p"), Holder("http://b", "p")])
    with pytest.raises(CollectionError):
        CollectionDef.from_json({"name": "a/../b", "layout": {"slices": []}})
    with pytest.raises(CollectionError, match="start with"):
        CollectionDef.from_json({"name": ".hidden", "layout": Layout("md5-mod", _holders(1)).to_json()})
    reg = Registry(str(tmp_path / "state.json"))
    reg.merge(CollectionDef("chronopolis/umiacs", Layout("md5-mod", _holders(1))))
    with pytest.raises(CollectionError, match="nest"):
        reg.merge(CollectionDef("chronopolis/umiacs/code", Layout("md5-mod", _holders(1))))
    c, rel = reg.split("chronopolis/umiacs/a/b.txt")
    assert (c.name, rel) == ("chronopolis/umiacs", "a/b.txt")
    with pytest.raises(KeyError):
        reg.split("chronopolis/other/a")
    # a newer version wins, an older one changes nothing; the state file keeps it
    newer = CollectionDef("chronopolis/umiacs", Layout("consistent", _holders(2)), version=2)
    assert reg.merge(newer) and not reg.merge(CollectionDef("chronopolis/umiacs", Layout("md5-mod", _holders(1))))
    reg.save()
    assert Registry(str(tmp_path / "state.json")).colls["chronopolis/umiacs"].layout.placement == "consistent"
