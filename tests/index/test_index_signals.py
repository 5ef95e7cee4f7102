"""The index honours what pages and sites say (docs/robots.md): noindex pages and pages the
day's robots.txt disallows stay out of the CIFF shards and the metadata store, listed in
``_left_out.parquet``; nofollow links feed no in-links and no anchors; ``--ignore-robots``
indexes everything and says so in ``_stats.json``."""

from __future__ import annotations

import datetime as dt
import json
import urllib.parse

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.ciff.reader import CiffReader
from lib.pages.schema import CAPTURE_SCHEMA
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.index.test_index_job import DAY, _page, run_index, write_day

ROBOTS = b"User-agent: *\nDisallow: /private/\n\nUser-agent: ccbot\nDisallow: /\n"


def _pages() -> list[dict]:
    pages = [
        _page(i, f"https://site{i}.example.com/page", "com", "eng", f"Page {i}", f"river number {i} flows", [])
        for i in range(6)
    ]
    pages[0]["outgoing_links"] = [
        {"url": "https://site1.example.com/page", "anchor_text": "followed anchor", "rel": None},
        {"url": "https://site2.example.com/page", "anchor_text": "spam anchor", "rel": "nofollow"},
    ]
    pages[1].update(ows_index=False, ows_index_details="noindex (meta robots)", robots=["noindex"])
    pages[1]["plain_text"] += " quokka"  # a term only the noindex page has
    pages[1]["outgoing_links"] = [{"url": "https://site3.example.com/page", "anchor_text": "from noindex", "rel": None}]
    pages[2].update(ows_genai=False, ows_genai_details="noai (meta robots)", robots=["noai"])
    pages[3].update(robots=["nosnippet"])
    pages[4].update(robots=["noarchive"])
    pages += [
        _page(10, "https://shop.example.com/private/cart", "com", "eng", "Cart", "your wombat cart", []),
        _page(11, "https://shop.example.com/public/list", "com", "eng", "List", "our list of things", []),
    ]
    for p in pages:
        p.setdefault("ows_index", True)
        p.setdefault("ows_genai", True)
    return pages


def _captures(folder) -> None:
    row = dict.fromkeys(CAPTURE_SCHEMA.names)
    row.update(
        url="https://shop.example.com/robots.txt",
        warc_date=dt.datetime(2026, 1, 15, 1, tzinfo=dt.timezone.utc),
        record_type="response",
        http_status=200,
        robots_txt=ROBOTS,
    )
    pq.write_table(pa.Table.from_pylist([row], schema=CAPTURE_SCHEMA), folder / "_captures" / "part-robots.parquet")


def _indexed(out) -> dict[str, dict]:
    return {r["url"]: r for m in sorted(out.rglob("metadata-*.parquet")) for r in pq.read_table(m).to_pylist()}


def _terms(out) -> set[str]:
    return {pl.term for c in sorted(out.rglob("index-*.ciff.gz")) for pl in CiffReader(str(c)).postings()}


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    root = tmp_path_factory.mktemp("signals")
    inp = write_day(root, _pages())
    _captures(inp)
    return root, inp


def test_noindex_and_disallowed_pages_are_left_out_and_listed(spark, day):
    root, inp = day
    out = root / "index" / "honoured"
    assert run_index(spark, inp, out, "--date", DAY.isoformat()) == 0
    got = _indexed(out)
    assert "https://site1.example.com/page" not in got  # meta noindex
    assert "https://shop.example.com/private/cart" not in got  # robots.txt: Disallow /private/
    assert "https://shop.example.com/public/list" in got and len(got) == 6
    assert "quokka" not in _terms(out) and "wombat" not in _terms(out) and "river" in _terms(out)
    left = pq.read_table(out / "_left_out.parquet").to_pylist()
    assert [(r["url"], r["reason"].split(":")[0]) for r in left] == [
        ("https://shop.example.com/private/cart", "robots.txt disallow"),
        ("https://site1.example.com/page", "noindex"),
    ]
    assert "/private/" in left[0]["reason"]
    stats = json.loads((out / "_stats.json").read_text())
    s = stats["signals"]
    assert (s["honoured"], s["noindex"], s["robots_txt_disallowed"], s["left_out"], s["rows"]) == (True, 1, 1, 2, 8)
    assert s["robots_txt_allowed"] == 1 and s["robots_txt_origins"] == 1 and s["robots_txt_agents"] == ["*"]
    assert len(s["captures_unreadable"]) == 1  # the day's broken captures file (test_index_job's)
    assert stats["args"]["honour_robots"] is True
    # every indexed row says it may be indexed; the opt-out is kept with its reason
    assert {r["ows_index"] for r in got.values()} == {True}
    assert got["https://site2.example.com/page"]["ows_genai"] is False
    assert got["https://site2.example.com/page"]["ows_genai_details"] == "noai (meta robots)"
    assert got["https://site2.example.com/page"]["robots"] == ["noai"]
    assert {r["ows_genai"] for u, r in got.items() if u != "https://site2.example.com/page"} == {True}
    # the graph: noindex pages still link (noindex, follow); nofollow links are counted apart
    inl = {r["dst_url"]: r for r in pq.read_table(out / "graph" / "inlinks").to_pylist()}
    assert inl["https://site3.example.com/page"]["inlinks"] == 1  # from the noindex page
    assert inl["https://site2.example.com/page"]["inlinks"] == 0
    assert inl["https://site2.example.com/page"]["nofollow_inlinks"] == 1
    assert inl["https://site2.example.com/page"]["anchor_texts"] == []
    edges = pq.read_table(out / "graph" / "edges").to_pylist()
    assert sorted((e["dst_url"], e["rel"]) for e in edges if e["src_url"] == "https://site0.example.com/page") == [
        ("https://site1.example.com/page", None),
        ("https://site2.example.com/page", "nofollow"),
    ]
    # anchors CIFF: the nofollow link's anchor feeds no page (site2 is indexed); the noindex page's
    # followed link does (site3); site1's own anchors are gone with it
    anchors = {pl.term for c in out.rglob("anchors-*.ciff.gz") for pl in CiffReader(str(c)).postings()}
    assert anchors == {"noindex"}


def test_search_and_captures_over_http_honour_nosnippet_and_noarchive(spark, day, tmp_path):
    root, inp = day
    out = root / "served" / "index" / "2026-01" / "15"
    assert run_index(spark, inp, out, "--date", DAY.isoformat()) == 0
    for allow in (False, True):
        app = create_app({"dc1": str(root / "served")}, cache_dir=str(tmp_path / "cache"), serve_noarchive=allow)
        with ServerThread(app) as srv:
            r = httpx.get(f"{srv.url}/search", params={"q": "river", "day": DAY.isoformat(), "k": 20}, timeout=60)
            hits = {h["url"]: h for h in r.json()["results"]}
            assert "https://site1.example.com/page" not in hits  # noindex: never found
            assert set(hits) == {f"https://site{i}.example.com/page" for i in (0, 2, 3, 4, 5)}
            assert hits["https://site3.example.com/page"]["textSnippet"] == ""  # nosnippet
            assert "river" in hits["https://site4.example.com/page"]["textSnippet"]
            rid = urllib.parse.quote(hits["https://site4.example.com/page"]["id"], safe="")
            c = httpx.get(f"{srv.url}/capture/{rid}", timeout=60)
            if allow:  # handed out: here the test's archive does not exist, so it is not found
                assert c.status_code != 403 and c.json().get("reason") != "noarchive"
            else:
                assert c.status_code == 403 and c.json()["reason"] == "noarchive"


def test_the_crawler_s_own_agent_and_ignore_robots(spark, day):
    root, inp = day
    out = root / "index" / "ccbot"
    assert run_index(spark, inp, out, "--date", DAY.isoformat(), "--robots-txt-agents", "*,ccbot") == 0
    got = _indexed(out)
    assert not any(u.startswith("https://shop.example.com/") for u in got)  # ccbot: Disallow /
    out = root / "index" / "ignored"
    assert run_index(spark, inp, out, "--date", DAY.isoformat(), "--ignore-robots") == 0
    got = _indexed(out)
    assert len(got) == 8 and "quokka" in _terms(out)
    stats = json.loads((out / "_stats.json").read_text())
    assert stats["signals"]["honoured"] is False and stats["args"]["honour_robots"] is False
    assert stats["signals"]["noindex"] == 1 and stats["signals"]["left_out"] == 0
    assert pq.read_table(out / "_left_out.parquet").num_rows == 0
