"""The delta's ``changed`` needs another text, not only another digest (issue 47, point 5a;
lib/catalogue/textroots.py): real main texts indexed on two days with a signature store, the
captures of those pages merged into a URL database, each day's delta written with the text roots
the index gave. On day 2 one URL's article comes back under a new date line, one URL serves the
text another URL had on day 1, and one URL serves the same text in new markup: only the second is
``changed``; the other two are counted as ``same_text``. Without the index's roots the digest
alone decides, as before (tests/catalogue/test_delta.py, whose captures have no roots)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.catalogue import delta, textroots, urldb
from lib.catalogue.keys import url_id
from lib.pages.schema import CAPTURE_SCHEMA
from tests.index.test_index_job import run_index, write_day
from tests.neardup.test_crossday import D1, D2, _day, texts  # noqa: F401  (texts: the fixture)

U, V, W = "https://news.example.com/a", "https://b.example.com/", "https://c.example.com/"


def _captures(pages: list[dict], digests: dict[str, str]) -> list[dict]:
    """The capture rows of the pages (one response each, the digest given by URL)."""
    return [
        {
            "url": p["url"],
            "warc_date": p["warc_date"],
            "record_type": "response",
            "record_id": p["record_id"],
            "http_status": 200,
            "mime_type": "text/html",
            "payload_digest": digests[p["url"]],
            "kept": True,
            "warc_file": p["warc_file"],
            "warc_offset": p["warc_offset"],
            "warc_length": 500,
            "robots_txt": None,
        }
        for p in pages
    ]


@pytest.fixture(scope="module")
def two_days(spark, tmp_path_factory, texts):  # noqa: F811
    tmp = tmp_path_factory.mktemp("deltatext")
    again = "Updated 16 January 2026, 08:05. " + texts["a"]
    days = {
        D1: (_day([(1, U, texts["a"]), (2, V, texts["b"]), (3, W, texts["c"])], D1), "1"),
        D2: (_day([(11, U, again), (12, V, texts["c"]), (13, W, texts["c"])], D2), "2"),
    }
    out = {}
    for day, (pages, tag) in days.items():
        inp = write_day(tmp / str(day), pages)
        index = tmp / str(day) / "index"
        args = ("--date", day.isoformat(), "--min-group-docs", "1", "--no-graph", "--dup-store", str(tmp / "sigs"))
        assert run_index(spark, inp, index, *args) == 0
        path = tmp / f"captures-{day}.parquet"
        digests = {p["url"]: f"sha1:{tag}{i}" for i, p in enumerate(pages)}
        pq.write_table(pa.Table.from_pylist(_captures(pages, digests), schema=CAPTURE_SCHEMA), path)
        out[day] = (str(path), str(index))
    return tmp, out


def _deltas(spark, tmp, days, name: str) -> dict:
    db = str(tmp / name / "urldb")
    got = {}
    for day, (path, index) in sorted(days.items()):
        frame = spark.read.parquet(path)
        roots, info = textroots.day_roots(spark, index, day)
        assert info["metadata_files"] >= 1
        assert textroots.with_roots(frame, roots).where("text_root is null").count() == 0
        urldb.merge_day(spark, db, day, frame, 4, roots=roots)
        dest = str(tmp / name / str(day) / delta.DELTA)
        counts = delta.write_delta(spark, db, day, frame, dest, 4, 60)
        got[day] = (counts, {r["id"]: r for r in pq.read_table(dest).to_pylist()})
    return got


def test_a_new_date_line_or_new_markup_is_not_a_change(spark, two_days):
    tmp, days = two_days
    got = _deltas(spark, tmp, days, "roots")
    counts, rows = got[D2]
    assert {r["url"] for r in rows.values() if r["kind"] == "changed"} == {V}
    assert counts["changed"] == 1 and counts["same_text"] == 2 and counts["new"] == 0
    v = rows[url_id(V)]
    # V now serves the text W had on day 1: its root is W's day-1 page, its previous root its own
    assert (v["text_root"], v["prev_text_root"]) == (_root(D1, 3), _root(D1, 2))
    assert (v["prev_day"], v["prev_digest"], v["digest"]) == (D1, "sha1:11", "sha1:21")
    first = got[D1][1]
    assert {r["url"]: (r["kind"], r["text_root"]) for r in first.values()} == {
        U: ("new", _root(D1, 1)),
        V: ("new", _root(D1, 2)),
        W: ("new", _root(D1, 3)),
    }
    # the database keeps each URL's last root: U's article is still day 1's text; V and W share W's
    assert {r["url"]: r["last_root"] for r in _table(tmp / "roots" / "urldb")} == {
        U: _root(D1, 1),
        V: _root(D1, 3),
        W: _root(D1, 3),
    }


def _table(db) -> list[dict]:
    return pq.read_table(urldb.table_path(str(db))).to_pylist()


def _root(day: dt.date, i: int) -> str:
    return f"{day}/<urn:uuid:00000000-0000-0000-0000-{i:012d}>"
