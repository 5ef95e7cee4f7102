"""The collision check's claims: of two colliding claims in flight the smaller token wins on both
servers, and a committed claim refuses every colliding check."""

from __future__ import annotations

from lib.placement.net.claims import COMMITTED, LOST, Claim, ClaimTable, collides


def test_collides_is_file_against_directory_either_way():
    assert collides("a/b", frozenset(), None, frozenset({"a", "a/b"}))
    assert collides(None, frozenset({"a"}), "a", frozenset())
    assert not collides("a/b", frozenset({"a"}), "a/c", frozenset({"a"}))


def test_racing_claims_one_wins_on_both_sides():
    a, b = ClaimTable(), ClaimTable()
    ca = Claim("c", "x", frozenset(), (100, "http://a"))  # file x on server a
    cb = Claim("c", "x/y", frozenset({"x"}), (200, "http://b"))  # file x/y (folder x) on server b
    assert a.add(ca) is None and b.add(cb) is None
    # each asks the other: b's check loses at a (a's token is smaller), a's check wins at b
    assert a.answer("c", cb.file, cb.dirs, cb.token) is not None
    assert b.answer("c", ca.file, ca.dirs, ca.token) is None
    assert cb.state == LOST and not b.commit(cb)
    assert a.commit(ca) and ca.state == COMMITTED
    # committed: even a smaller token is refused now
    assert a.answer("c", None, frozenset({"x"}), (1, "http://z")) is not None
    a.release(ca)
    assert a.answer("c", None, frozenset({"x"}), (1, "http://z")) is None


def test_claims_of_other_collections_do_not_collide():
    t = ClaimTable()
    t.add(Claim("one", "x", frozenset(), (5, "s")))
    assert t.answer("two", None, frozenset({"x"}), (9, "s")) is None
