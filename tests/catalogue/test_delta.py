"""The daily delta (lib/catalogue/delta.py): three days merged into a URL database in order, each
day's delta written beside it; applying the deltas in order gives the database's URL set, and
each kind holds what an independent fold of the captures (tests.catalogue.test_catalogue's
reference) says: first seen that day, changed (with the previous day and digest), gone (404/410,
or purged from the database between day 2 and day 3: listed once, by day 3's delta)."""

from __future__ import annotations

import datetime as dt
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

from lib.catalogue import delta, urldb
from lib.catalogue.keys import url_id
from lib.pages import exclusions
from lib.pages.schema import CAPTURE_SCHEMA
from lib.purge.urldb_removal import purge_urldb
from tests.catalogue.test_catalogue import D1, D2, NEWS, K, _t, day_captures, read_table, reference_db

D3 = dt.date(2026, 1, 16)


def d3_captures(root: str) -> list[dict]:
    """The third day: the home page changed, the news URL gone (410), one URL new, one unchanged."""
    f = f"file://{root}/warc/2026-01/16/crawler1/100000-0.warc.gz"
    spec = [
        ("http://www.example.com/", 200, "sha1:AA99"),
        (NEWS, 410, "sha1:GONE"),
        ("http://third.example.net/", 200, "sha1:TTTT"),
        ("http://example.org/page", 200, "sha1:CC22"),
    ]
    return [
        dict(zip(CAPTURE_SCHEMA.names, (u, _t(D3, 8, i), "response", f"<urn:uuid:{D3}-{i}>", s, "text/html", d)))
        | {"kept": s == 200, "warc_file": f, "warc_offset": 100 * i, "warc_length": 90, "robots_txt": None}
        for i, (u, s, d) in enumerate(spec)
    ]


def test_deltas_applied_in_order_give_the_database_s_urls(spark, tmp_path):
    root, db = str(tmp_path), str(tmp_path / "urldb")
    days = {D1: day_captures(root, D1), D2: day_captures(root, D2), D3: d3_captures(root)}
    ref = reference_db([(d, r) for d, rows in days.items() for r in rows])
    urls: set[str] = set()
    last: dict[str, tuple] = {}  # id -> (day, digest) of its last capture with a digest, as the deltas tell it
    purged = None
    for day, rows in days.items():
        if day == D3:  # a purge between day 2 and day 3: the next delta lists its URL as gone
            purged = sorted(e["url"] for e in read_table(db).values() if e["url"] not in {r["url"] for r in rows})[0]
            with urldb.lock(db, "purge", 60):
                assert purge_urldb(db, exclusions.parse(json.dumps({"url": purged})))["urls"] == [purged]
            ref.pop(url_id(purged))
        path = str(tmp_path / f"captures-{day}.parquet")
        caps = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
        pq.write_table(pa.Table.from_pylist(caps, schema=CAPTURE_SCHEMA), path)
        frame = spark.read.parquet(path)
        urldb.merge_day(spark, db, day, frame, K)
        dest = str(tmp_path / "catalogue" / str(day) / delta.DELTA)
        counts = delta.write_delta(spark, db, day, frame, dest, K, 60)
        got = pq.read_table(dest).to_pylist()
        assert [(r["kind"], r["id"]) for r in got] == sorted((r["kind"], r["id"]) for r in got)
        assert counts == {k: sum(r["kind"] == k for r in got) for k in ("new", "changed", "gone")} | {"same_text": 0}
        by = {k: {r["id"]: r for r in got if r["kind"] == k} for k in ("new", "changed", "gone")}
        assert set(by["new"]) == {i for i, e in ref.items() if e["first_seen"].date() == day}
        assert not set(by["new"]) & urls and set(by["changed"]) <= urls
        assert set(by["changed"]) == {i for i, e in ref.items() if day in e["changed_days"] and i in urls}
        for i, r in by["changed"].items():  # the previous capture the consumer already has
            assert (r["prev_day"], r["prev_digest"]) == last[i] and r["digest"] != r["prev_digest"]
        gone = {url_id(r["url"]): (r["http_status"], "status") for r in rows if r["http_status"] in (404, 410)}
        if day == D3:
            gone[url_id(purged)] = (None, "purged")
        assert {i: (r["http_status"], r["reason"]) for i, r in by["gone"].items()} == gone
        urls |= set(by["new"])
        assert set(by["gone"]) <= urls
        urls -= {i for i, r in by["gone"].items() if r["reason"] == "purged"}  # gone from the database too
        for r in rows:  # what a consumer folds from the day: each URL's last digest
            if r["warc_date"] is not None and r["payload_digest"]:
                last[url_id(r["url"])] = (day, r["payload_digest"])
    assert urls == set(read_table(db)) and len(urls) == 6 and url_id(purged) not in urls
    # a re-run of day 3's delta lists the purge again; a later delta would not
    frame = spark.read.parquet(str(tmp_path / f"captures-{D3}.parquet"))
    again = str(tmp_path / "again")
    delta.write_delta(spark, db, D3, frame, again, K, 60)
    assert [(r["id"], r["url"]) for r in pq.read_table(again).to_pylist() if r["reason"] == "purged"] == [
        (url_id(purged), None)  # the id only: the URL is taken down
    ]
    assert delta.claim_purged(db, "2026-01-17") == []
    assert {url_id(NEWS), url_id("http://www.example.com/")} <= set(by["changed"]) | set(by["gone"])
    assert os.listdir(dest) and not [n for n in os.listdir(dest) if n.startswith((".", "_"))]
