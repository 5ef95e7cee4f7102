"""The graph's two plans (one task for a small day, two stages for a large one) give the same
rows on a real-shaped day built from real archives (devtools/realday.py on the shared
samples: renamed copies, many small archives), with and without an exclusion list."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from devtools import realday
from lib.index import graph
from lib.index.page_files import input_files
from lib.pages import exclusions as excl_mod
from tests.index.test_graph import _rows

TABLES = ("edges", "inlinks", "hosts")


@pytest.fixture(scope="module")
def real_pages(spark, corpus, tmp_path_factory):
    """Two renamed copies of the shared samples, the many-small-archives cut, preprocessed."""
    from jobs import preprocess  # a job, not a library dependency: imported where used

    out = tmp_path_factory.mktemp("graph-realday")
    day = realday.build_day(out / "day", 2, [corpus], large_bytes=8 << 20, heavy=False, shape=False, quiet=True)
    assert len(day["files"]["small"]) > 5
    pre = out / "pre"
    assert preprocess.main(["--input", day["small"], "--output", str(pre)], spark=spark) == 0
    return [f[0] for f in input_files(str(pre))]


def _both(spark, files, tmp_path, exclusions=excl_mod.NONE):
    got = {}
    for name, single in (("two", 0), ("one", 1 << 40)):
        counts = graph.write_graph(spark, files, str(tmp_path / name), exclusions=exclusions, single_task_bytes=single)
        got[name] = (counts, {t: _rows(tmp_path / name / t) for t in TABLES})
        for f in (tmp_path / name / "inlinks").glob("*.parquet"):
            urls = pq.read_table(f, columns=["dst_url"]).column(0).to_pylist()
            assert urls == sorted(urls, key=lambda u: u.encode())
    return got


def test_both_plans_give_the_same_rows_on_a_real_shaped_day(spark, real_pages, tmp_path):
    got = _both(spark, real_pages, tmp_path)
    assert got["one"] == got["two"]
    counts, rows = got["one"]
    assert counts == {t: len(rows[t]) for t in TABLES}
    # real link diversity: many distinct targets, and a page captured more than once repeats its rows
    assert counts["edges"] > 10_000 and counts["inlinks"] > 0.2 * counts["edges"] and counts["hosts"] > 100
    assert len(list((tmp_path / "one" / "inlinks").glob("*.parquet"))) == 1
    assert len(list((tmp_path / "two" / "inlinks").glob("*.parquet"))) == spark.sparkContext.defaultParallelism


def test_both_plans_leave_out_the_same_excluded_links(spark, real_pages, tmp_path):
    """A host rule on the most linked-to host of the day: its URLs leave both plans' tables,
    counted the same."""
    plain = _both(spark, real_pages, tmp_path / "plain")["one"][1]
    linked = {}
    for r in plain["edges"]:
        linked[r[4]] = linked.get(r[4], 0) + 1
    host = max((h for h in linked if h), key=lambda h: (linked[h], h))
    rules = excl_mod.parse(f'{{"host": "{host}", "date": "2026-11-26", "reason": "test"}}')
    got = _both(spark, real_pages, tmp_path / "excl", rules)
    assert got["one"] == got["two"]
    counts, rows = got["one"]
    assert counts["excluded_edges"] >= linked[host] > 100
    assert (
        not any(r[4] == host for r in rows["edges"])
        and len(rows["edges"]) == len(plain["edges"]) - counts["excluded_edges"]
    )
