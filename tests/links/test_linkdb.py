"""The link database (lib/links) on real links: days made from a real day's graph (the shared
corpus through the index's graph task), merged night by night, held to an independent fold of the
same edge rows in plain Python; re-runs, a crashed run, runs that meet and the purge."""

from __future__ import annotations

import datetime as dt
import threading

import pyarrow.compute as pc
import pytest

from lib.links import entries, inlinks, linkdb
from lib.links.urls import BadUrl
from lib.pages import exclusions as excl_mod
from lib.pages.weburls import normalize_url
from lib.purge.linkdb_removal import purge_linkdb
from tests.links.conftest import fold as _fold
from tests.links.conftest import merge_day as _merge
from tests.links.conftest import norm as _norm


def _all(db: str, days: int | None, until: dt.date) -> dict[tuple[str, str], dict]:
    """Every link of the database over a window, by (target, source) URL, through the SQL the look-ups use."""
    state = linkdb.read_state(db)
    win = inlinks.window(state, days, until)
    files = [f for q in range(state["parts"]) for f in linkdb.files(db, state, q)]
    con = entries.connect()
    rows = con.sql(entries.window_sql(files, win["first"], win["last"])).to_arrow_table().to_pylist()
    con.close()
    return {
        (_norm(r["dst_url"]), _norm(r["src_url"])): {
            "first_seen": r["first_seen"].isoformat(),
            "last_seen": r["last_seen"].isoformat(),
            "days_seen": r["days_seen"],
            "rel": r["rel"],
            "anchors": r["anchors"],
        }
        for r in rows
    }


def test_nights_merged_equal_the_fold_over_every_window(days, merged):
    db, s = merged["db"], merged["summary"]
    tables = {d: t for d, (t, _) in days.items()}
    last = max(days)
    state = linkdb.read_state(db)
    assert linkdb.merged_days(state) == sorted(days) and len(state["runs"]) <= 3  # runs merged as they grow
    assert s["links"] > 5_000
    for window, first in ((None, None), (2, sorted(days)[-2]), (1, last)):
        got = _all(db, window, dt.date.fromisoformat(last))
        assert got == _fold(tables, first, last)
    # a window ending earlier: the days after it are not seen
    mid = sorted(days)[2]
    assert _all(db, 2, dt.date.fromisoformat(mid)) == _fold(tables, sorted(days)[1], mid)


def test_inlinks_of_a_url_over_the_window(days, merged):
    db = merged["db"]
    tables = {d: t for d, (t, _) in days.items()}
    want = _fold(tables, None, max(days))
    targets: dict[str, int] = {}
    for dst, _ in want:
        targets[dst] = targets.get(dst, 0) + 1
    top = max(targets, key=lambda u: (targets[u], u))
    got = inlinks.inlinks(db, top, days=None)
    assert got["normalized"] == top and got["totals"]["links"] == targets[top]
    mine = {normalize_url(r["src_url"]): r for r in got["inlinks"]}
    for (dst, src), w in want.items():
        if dst == top:
            r = mine[src]
            assert (r["first_seen"].isoformat(), r["last_seen"].isoformat(), r["days_seen"]) == (
                w["first_seen"],
                w["last_seen"],
                w["days_seen"],
            )
            assert (r["rel"], r["anchors"]) == (w["rel"], w["anchors"])
    counted: dict[str, int] = {}
    for r in got["inlinks"]:
        if r["rel"] is None:
            for a in r["anchors"]:
                counted[a] = counted.get(a, 0) + 1
    assert {a["text"]: a["sources"] for a in got["anchors"]} == counted
    # a window longer than the history: answered with the whole history and a note
    long = inlinks.inlinks(db, top, days=400)
    assert "longer than the history" in long["window"]["note"] and long["totals"] == got["totals"]
    with pytest.raises(BadUrl, match="not an http"):
        inlinks.inlinks(db, "ftp://example.com/", days=None)
    with pytest.raises(BadUrl, match="cannot normalise"):
        inlinks.inlinks(db, "http://[::1/", days=None)
    with pytest.raises(inlinks.BadInput):
        inlinks.parse_window("-3")


def test_rerun_and_crash_leave_what_single_runs_give(days, tmp_path):
    """Day 1 merged again with day 3's rows (a re-run after its edges changed), after later days:
    the database equals the fold with day 1 replaced; a run that died before its commit leaves
    nothing a reader sees and its folder is swept."""
    db, urldb = str(tmp_path / "linkdb"), str(tmp_path / "urldb")
    names = sorted(days)[:3]
    for day in names:
        _merge(db, day, days[day][1], urldb)
    _merge(db, names[1], days[sorted(days)[3]][1], urldb)
    tables = {d: days[d][0] for d in names}
    tables[names[1]] = days[sorted(days)[3]][0]
    assert _all(db, None, dt.date.fromisoformat(names[-1])) == _fold(tables, None, names[-1])
    con = entries.connect()
    entries.day_run(con, [days[names[0]][1]], "2026-02-01", f"{db}/day=2026-02-01-deadbeef0000", 4)
    con.close()
    assert "2026-02-01" not in linkdb.merged_days(linkdb.read_state(db))
    _merge(db, names[2], days[names[2]][1], urldb)  # an idempotent re-run of the newest day, which sweeps
    assert _all(db, None, dt.date.fromisoformat(names[-1])) == _fold(tables, None, names[-1])
    assert not (tmp_path / "linkdb" / "day=2026-02-01-deadbeef0000").exists()


def test_runs_that_meet_lose_nothing_and_purge_removes_a_url(days, tmp_path):
    db, urldb = str(tmp_path / "linkdb"), str(tmp_path / "urldb")
    names = sorted(days)[:3]
    threads = [threading.Thread(target=_merge, args=(db, d, days[d][1], urldb)) for d in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert linkdb.merged_days(linkdb.read_state(db)) == names
    tables = {d: days[d][0] for d in names}
    before = _all(db, None, dt.date.fromisoformat(names[-1]))
    assert before == _fold(tables, None, names[-1])
    host = pc.value_counts(days[names[0]][0].column("dst_host")).to_pylist()
    host = max(host, key=lambda v: (v["counts"], v["values"]))["values"]  # the most linked-to host
    rules = excl_mod.Exclusions([excl_mod.parse_rule({"host": host})])
    with linkdb.lock(urldb, "purge", 30):
        r = purge_linkdb(db, rules)
    assert r["rows"] > 0
    after = _all(db, None, dt.date.fromisoformat(names[-1]))
    assert after == {k: v for k, v in before.items() if not (rules.match(k[0]) or rules.match(k[1]))}
    assert len(after) < len(before) and not purge_linkdb(db, rules)["rows"]  # a second purge finds nothing
