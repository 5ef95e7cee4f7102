"""The index job's results as typed records (lib.index.run_stats): shards add up to the day's
totals, and the records' JSON is the ``_stats.json`` and summary shape the job wrote before."""

from __future__ import annotations

import pytest

from lib.index.run_stats import (
    DayIndexStats,
    ExcludedCounts,
    GroupStats,
    IndexRunSummary,
    IndexTotals,
    ShardStats,
    SignalCounts,
)
from lib.index.shards import Group


def _row(pidx: int, docs: int, dups: int) -> dict:
    """A shard task's STATS_SCHEMA row."""
    return dict(
        pidx=pidx,
        docs=docs,
        duplicates=dups,
        terms=10 * docs,
        postings=20 * docs,
        total_terms=30 * docs,
        ciff_bytes=1000 + docs,
        metadata_bytes=500 + docs,
        ciff_sha256=f"c{pidx}",
        metadata_sha256=f"m{pidx}",
    )


def _day() -> DayIndexStats:
    com, org = Group(0, "com", "eng", 6, 2, 0), Group(1, "org", "deu", 3, 1, 2)
    shards = [
        ShardStats.of(com, 0, _row(0, 3, 1)),
        ShardStats.of(com, 1, _row(1, 2, 0)),
        ShardStats.of(org, 0, _row(2, 3, 0)),
    ]
    groups = [GroupStats("com", "eng", 6, 2, 2, "english"), GroupStats("org", "deu", 3, 1, 1, "german")]
    return DayIndexStats(groups, shards, 100, 10, None, {"map": 1.0}, IndexTotals.of(shards, 2, 9))


def test_the_days_totals_add_up_the_shards():
    t = _day().totals
    assert (t.docs, t.duplicates, t.terms, t.ciff_bytes, t.groups, t.shards, t.pages_in) == (8, 1, 80, 3008, 2, 3, 9)
    with pytest.raises(RuntimeError, match="indexed 8 documents and 1 repeated records of 10 pages"):
        IndexTotals.of(_day().shards, 2, 10)


def test_a_shard_row_with_an_unknown_counter_is_refused():
    with pytest.raises(TypeError, match="docs_twice"):
        ShardStats.of(Group(0, "com", "eng", 1, 1, 0), 0, _row(0, 1, 0) | {"docs_twice": 2})


def test_stats_json_has_the_parts_a_run_filled():
    day = _day()
    out = day.to_dict()
    assert list(out) == ["groups", "shards", "docs_per_shard", "min_group_docs", "graph", "seconds", "totals"]
    assert out["graph"] is None and out["totals"]["pages_in"] == 9
    assert out["shards"][2] == {"tld": "org", "lang": "deu", "shard": 0, "k": 1} | {
        k: v for k, v in _row(2, 3, 0).items() if k != "pidx"
    }
    assert out["groups"][0] == {"tld": "com", "lang": "eng", "docs": 6, "k": 2, "files": 2, "analyzer": "english"}
    day.signals = SignalCounts(9, 1, 0, 5, 2, [], 1, True, ["*"])
    day.dedup = {"pages": 9, "across_days": None}
    day.excluded = ExcludedCounts(rules=3, pages=2, edges=4)
    out = day.to_dict()
    assert out["signals"]["robots_txt_agents"] == ["*"] and out["excluded"] == {"rules": 3, "pages": 2, "edges": 4}
    assert "anchors" not in out and "args" not in out
    summary = IndexRunSummary.of(day).to_dict()
    assert list(summary) == ["totals", "groups", "steps", "excluded", "signals", "dedup"]
    assert summary["groups"] == 2 and summary["totals"] == out["totals"] and summary["signals"] == out["signals"]
    day.excluded = None
    assert IndexRunSummary.of(day).to_dict()["excluded"] is None
