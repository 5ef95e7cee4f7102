"""Plain functions of the service: root options, query checks, language lists, OpenSearch XML."""

from __future__ import annotations

import datetime as dt
import os
import xml.etree.ElementTree as ET

import pytest

from lib.serve import opensearch
from lib.serve.app import roots_from_args
from lib.serve.engine import check_query
from lib.serve.errors import QueryError
from lib.serve.published import split_values as parse_langs


def test_roots_from_args():
    assert roots_from_args(["demo"]) == {"default": os.path.abspath("demo")}
    assert roots_from_args(["a=/data/a", "b=s3://bucket/p"]) == {"a": "/data/a", "b": "s3://bucket/p"}
    assert roots_from_args(["s3://bucket/x=y"]) == {"default": "s3://bucket/x=y"}  # '=' inside a path, no name
    assert roots_from_args(["/r1", "/r2"]) == {"default": "/r1", "dc1": "/r2"}
    with pytest.raises(ValueError, match="twice"):
        roots_from_args(["a=/x", "a=/y"])


@pytest.mark.parametrize("q,msg", [("", "empty"), (" \t", "empty"), (None, "empty"), ("a" * 513, "too long"),
                                   ("AND or NOT", "operators"), ("+-()\"*", "operators"), ("___", "operators")])
def test_check_query_refuses(q, msg):
    with pytest.raises(QueryError, match=msg):
        check_query(q)


def test_check_query_keeps_words():
    assert check_query("  Häuser AND Fluss ") == "Häuser AND Fluss"
    assert check_query("北京") == "北京"
    # no proximity operator exists (the search is an OR of terms): "near" is a word to look up
    assert check_query("near") == "near" and check_query("NEAR the river") == "NEAR the river"


def test_check_query_limits_distinct_words():
    assert check_query(" ".join(f"w{i}" for i in range(32)) + " w0")
    with pytest.raises(QueryError, match="32 distinct words"):
        check_query(" ".join(f"w{i}" for i in range(33)))


def test_parse_langs():
    assert parse_langs(None) is None and parse_langs(["", " "]) is None
    assert parse_langs(["eng,deu", " fra "]) == ["eng", "deu", "fra"]


def test_atom_escapes_and_counts():
    hit = {"score": 1.5, "record_id": "urn:uuid:1", "url": "http://x/?a=1&b=<2>", "title": "T & <b>",
           "snippet": "a <em>b</em> &amp; c", "language": "eng", "warc_date": "2026-01-15T00:00:00Z",
           "warc_file": "f.warc.gz", "warc_offset": 0, "warc_length": 10}
    feed = ET.fromstring(opensearch.atom("http://h", "http://h/searchxml?q=b", "b", dt.date(2026, 1, 15),
                                         dt.date(2026, 1, 16), None, 10, 42, [hit]))
    ns = {"a": opensearch.ATOM_NS, "os": opensearch.OS_NS, "r": opensearch.RELEVANCE_NS}
    assert feed.find("os:totalResults", ns).text == "42" and "2026-01-15..2026-01-16" in feed.find("a:title", ns).text
    e = feed.find("a:entry", ns)
    assert e.find("a:title", ns).text == "T & <b>" and e.find("a:link", ns).get("href") == hit["url"]
    assert e.find("a:summary", ns).text == hit["snippet"] and e.find("r:score", ns).text == "1.500000"


def test_app_limits_reach_the_engine(tmp_path):
    """The limits given to the app are the engine's (it checks them): a 51-day range passes a 60-day
    limit and gets to the day look-up (404 here: the root has no day), a 101-character query fails a 100."""
    from fastapi.testclient import TestClient

    from lib.serve.app import create_app

    app = create_app({"dc1": str(tmp_path)}, cache_dir=str(tmp_path / "cache"), max_range_days=60, max_query_chars=100)
    client = TestClient(app)
    r = client.get("/search", params={"q": "near", "day": "2026-01-01", "to": "2026-02-20"})
    assert (r.status_code, r.json()) == (404, {"error": "no published index day in 2026-01-01..2026-02-20; days: none"})
    r = client.get("/search", params={"q": "x" * 101, "day": "2026-01-01"})
    assert (r.status_code, r.json()) == (400, {"error": "query too long: 101 characters, at most 100"})
    r = client.get("/search", params={"q": "river", "day": "2026-01-01", "to": "2026-03-02"})  # 61 days
    assert r.status_code == 400 and "at most 60" in r.json()["error"]
