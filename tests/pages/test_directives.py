"""Robots directives, link rel and AI opt-outs as search engines read them (lib/pages/directives.py),
and through preprocess on archived responses (meta tags and HTTP headers)."""

from __future__ import annotations

import io

import pytest

from lib.pages import directives as d
from lib.preprocess.archive_pages import process_file
from tests.helpers_warc import warc_gz, warc_record


@pytest.mark.parametrize(
    "content, want",
    [
        ("noindex", {"noindex"}),
        ("NoIndex , NOFOLLOW", {"noindex", "nofollow"}),
        ("  none ", {"noindex", "nofollow"}),
        ("noindex nofollow", {"noindex", "nofollow"}),  # spaces only: read as a list too
        ("index, follow, all", set()),
        ("max-snippet:0, max-image-preview:large", {"nosnippet"}),
        ("max-snippet: -1", set()),
        ("unavailable_after: 25 Jun 2010 15:00:00 PST, noarchive", {"noarchive"}),
        ("noai, noimageai, notranslate, nocache", {"noai", "noimageai"}),
        ("", set()),
        (None, set()),
    ],
)
def test_values(content, want):
    assert d.parse_values(content) == want


def test_x_robots_tag_agent_lines():
    # an agent prefix lasts to the end of its line; lines without one apply to everyone
    assert d.parse_x_robots_tag("googlebot: noindex\nnosnippet") == {"nosnippet"}
    assert d.parse_x_robots_tag("googlebot: noindex\nnosnippet", ["robots", "googlebot"]) == {"noindex", "nosnippet"}
    assert d.parse_x_robots_tag("GoogleBot: noindex, nofollow", ["googlebot"]) == {"noindex", "nofollow"}
    assert d.parse_x_robots_tag("otherbot: noindex, ccbot: noarchive", ["ccbot"]) == {"noarchive"}
    assert d.parse_x_robots_tag("unavailable_after: 2010-06-25, noindex") == {"noindex"}  # a value, not an agent
    assert d.parse_x_robots_tag("robots: none") == {"noindex", "nofollow"}


def test_page_signals_sources_and_details():
    s = d.page_signals([("robots", "noindex, follow"), ("ccbot", "nofollow")], {}, ["robots"])
    assert (s.robots, s.ows_index, s.ows_index_details, s.ows_genai) == (
        ["noindex"],
        False,
        "noindex (meta robots)",
        True,
    )
    s = d.page_signals([("ccbot", "nofollow")], {"x-robots-tag": "noindex"}, ["robots", "ccbot"])
    assert s.robots == ["noindex", "nofollow"] and s.ows_index_details == "noindex (x-robots-tag)"
    s = d.page_signals([("robots", "noai")], {"tdm-reservation": "1", "tdm-policy": "https://p.example/policy.json"})
    assert s.ows_index and not s.ows_genai
    assert s.ows_genai_details == "noai (meta robots); tdm-reservation=1; tdm-policy=https://p.example/policy.json"
    s = d.page_signals([("tdm-reservation", "0"), ("tdm-policy", "https://p.example/x")], {})
    assert (s.ows_genai, s.ows_genai_details, s.robots) == (True, None, None)  # not reserved: no opt-out
    s = d.page_signals([("tdm-reservation", " 1 ")], {})
    assert (s.ows_genai, s.ows_genai_details) == (False, "tdm-reservation=1")
    s = d.page_signals([], {})
    assert s.row() == {
        "robots": None,
        "ows_index": True,
        "ows_index_details": None,
        "ows_genai": True,
        "ows_genai_details": None,
    }


def test_link_rel():
    assert d.link_rel("NoFollow noopener") == "nofollow"
    assert d.link_rel("sponsored UGC") == "ugc sponsored"
    assert d.link_rel("me noreferrer") is None and d.link_rel(None) is None
    assert d.link_rel(None, page_nofollow=True) == "nofollow"
    assert d.link_rel("ugc", page_nofollow=True) == "nofollow ugc"


def _response(body: bytes, headers: list[str]) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: text/html; charset=utf-8", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


PAGE = (
    b"<html><head><title>T</title>%s</head><body><p>Some text of the page to keep here.</p>"
    b"<a href='/a'>a</a><a href='/b' rel='sponsored'>b</a></body></html>"
)


def test_preprocess_reads_metas_and_headers_and_marks_links():
    records = [
        warc_record("http://e.example/1", _response(PAGE % b"<meta name=robots content='noindex,nofollow'>", [])),
        warc_record(
            "http://e.example/2",
            _response(PAGE % b"", ["X-Robots-Tag: googlebot: noarchive", "X-Robots-Tag: nosnippet"]),
        ),
        warc_record("http://e.example/3", _response(PAGE % b"<meta name='tdm-reservation' content='1'>", [])),
        warc_record("http://e.example/robots.txt", _response(b"User-agent: *\nDisallow: /private\n", [])),
    ]
    data = warc_gz(records)
    rows, proc = process_file(io.BufferedReader(io.BytesIO(data)), "day.warc.gz", len(data))
    by = {r["url"]: r for r in rows}
    one, two, three = by["http://e.example/1"], by["http://e.example/2"], by["http://e.example/3"]
    assert (one["robots"], one["ows_index"], one["ows_index_details"]) == (
        ["noindex", "nofollow"],
        False,
        "noindex (meta robots)",
    )
    assert one["outgoing_links"] == [
        ("http://e.example/a", "a", "nofollow"),
        ("http://e.example/b", "b", "nofollow sponsored"),
    ]
    assert two["robots"] == ["nosnippet"] and two["ows_index"]  # googlebot's line is not ours by default
    assert two["outgoing_links"] == [("http://e.example/a", "a", None), ("http://e.example/b", "b", "sponsored")]
    assert (three["ows_genai"], three["ows_genai_details"], three["robots"]) == (False, "tdm-reservation=1", None)
    stats = proc.stats.as_dict()
    assert stats["pages_by_directive"] == {"noindex": 1, "nofollow": 1, "nosnippet": 1, "genai_opt_out": 1}
    robots = [c for c in proc.captures if c["robots_txt"] is not None]
    assert [(c["url"], c["robots_txt"]) for c in robots] == [
        ("http://e.example/robots.txt", b"User-agent: *\nDisallow: /private\n")
    ]
