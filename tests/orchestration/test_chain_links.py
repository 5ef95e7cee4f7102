"""The night's chain keeps the link database current (jobs/day.py passes the catalogue ``--links``,
default on): two nights of the sample crawl through preprocess, index and catalogue in the test
session, the link database held to an independent fold of the two days' published graph edges
(first and last day seen, days seen); ``--no-links`` leaves it alone."""

from __future__ import annotations

import datetime as dt
import os
import pathlib

import pyarrow.dataset as ds
import pytest

from jobs import day
from lib.errors import UsageError
from lib.links import linkdb
from lib.orchestration import chain
from lib.store import layout
from lib.warc.sample import write_sample_crawl
from tests.links.conftest import fold
from tests.links.test_linkdb import _all

D1, D2 = dt.date(2026, 1, 15), dt.date(2026, 1, 16)


def _night(spark, root: pathlib.Path, date: dt.date, *extra: str) -> tuple[int, dict, chain.DayPaths]:
    """One night of ``dailyslice day`` in the test session: its exit code, summaries and paths."""
    a = day.parser().parse_args(
        ["--date", date.isoformat(), "--input-root", str(root), "--output-root", str(root)]
        + ["--index-args=--min-group-docs 1 --docs-per-shard 1000 --no-anchors"]
        + ["--catalogue-args=--url-partitions 2 --no-report"]
        + list(extra)
    )
    paths = day.day_paths(a)
    codes, summaries = day.run_steps(day.plan_options(a, paths, None), spark, lambda line: None, paths.steps)
    return chain.night_exit(codes, paths.steps), summaries, paths


def _edges(root: pathlib.Path, date: dt.date):
    folder = os.path.join(layout.day_path(str(root), layout.INDEX, date), "graph", "edges")
    return ds.dataset(folder, format="parquet").to_table()


@pytest.mark.slow  # two whole nights in the test session: six jobs
def test_a_night_merges_its_links_and_a_second_night_updates_first_and_last_seen(spark, tmp_path):
    root = tmp_path / "root"
    # the same month: the second day's crawl has the first day's URLs and more, linked afresh
    write_sample_crawl(str(root), D1, files=1, pages_per_file=10)
    write_sample_crawl(str(root), D2, files=1, pages_per_file=14, seed=8)
    rc1, s1, paths = _night(spark, root, D1)
    assert rc1 == 0 and paths.links and paths.linkdb_dir == str(root / "linkdb")
    assert s1["catalogue"]["links"]["links"] > 0
    db = paths.linkdb_dir
    first = {D1.isoformat(): _edges(root, D1)}
    assert _all(db, None, D1) == fold(first, None, D1.isoformat())
    rc2, s2, _ = _night(spark, root, D2)
    assert rc2 == 0 and s2["catalogue"]["links"]["links"] > 0
    both = {**first, D2.isoformat(): _edges(root, D2)}
    got = _all(db, None, D2)
    assert got == fold(both, None, D2.isoformat())
    seen = {r["days_seen"] for r in got.values()}
    assert seen == {1, 2}, "links of both days only, of one day only: the sample crawl has both"
    assert any(r["first_seen"] == D1.isoformat() and r["last_seen"] == D2.isoformat() for r in got.values())
    assert any(r["first_seen"] == D2.isoformat() for r in got.values())
    assert sorted(linkdb.read_state(db)["days"]) == [D1.isoformat(), D2.isoformat()]


def test_no_links_leaves_the_link_database_alone(tmp_path):
    a = day.parser().parse_args(["--date", "2026-01-15", "--input-root", "/i", "--output-root", str(tmp_path)])
    on = day.plan_options(a, day.day_paths(a), None)["catalogue"]
    assert on.links is True and on.linkdb == str(tmp_path / "linkdb")
    a = day.parser().parse_args(
        ["--date", "2026-01-15", "--input-root", "/i", "--output-root", str(tmp_path), "--no-links", "--linkdb", "/x"]
    )
    off = day.plan_options(a, day.day_paths(a), None)["catalogue"]
    assert off.links is False and off.linkdb is None
    a = day.parser().parse_args(
        ["--date", "2026-01-15", "--input-root", "/i", "--output-root", str(tmp_path), "--linkdb", "/elsewhere/db"]
    )
    assert day.plan_options(a, day.day_paths(a), None)["catalogue"].linkdb == "/elsewhere/db"


def test_a_night_on_s3_merges_links_only_into_a_local_link_database(tmp_path):
    base = ["--date", "2026-01-15", "--input-root", "/i", "--output-root", "s3://bucket/out"]
    assert day.day_paths(day.parser().parse_args(base)).links is False, "an S3 index day has no local edges"
    named = day.day_paths(day.parser().parse_args(base + ["--linkdb", str(tmp_path / "db")]))
    assert named.links is True and named.linkdb_dir == str(tmp_path / "db")
    with pytest.raises(UsageError, match="--linkdb s3://bucket/db"):
        day.day_paths(day.parser().parse_args(base + ["--linkdb", "s3://bucket/db"]))
