"""The ``json_ld`` page column equals what Resilipipe stores: ``str`` of extruct's JSON-LD items."""

from __future__ import annotations

import gzip
import pathlib

import extruct
import pytest

from lib.html.content import JSON_LD_TYPE, extract

HEAVY = pathlib.Path(__file__).parents[2] / "tests" / "data" / "heavy_pages"


def resilipipe_json_ld(html: str) -> str | None:
    """Resilipipe's apply_extruct_extractors, json-ld part."""
    try:
        items = extruct.extract(html, syntaxes=["json-ld"])["json-ld"]
    except Exception:  # Resilipipe stores None then
        return None
    return str(items) if items else None


def test_real_pages_equal_extruct():
    pages = [gzip.decompress(p.read_bytes()).decode("utf-8", "replace") for p in sorted(HEAVY.glob("*.html.gz"))]
    with_ld = [h for h in pages if JSON_LD_TYPE in h]
    assert len(with_ld) >= 50
    for h in with_ld:
        assert extract(h, "https://example.org/").json_ld == resilipipe_json_ld(h)
    assert sum(extract(h, "https://example.org/").json_ld is not None for h in with_ld) >= 50


@pytest.mark.parametrize(
    "blocks",
    [
        ['{"@type": "Thing", "name": "a"}'],
        ['[{"@type": "A"}, {}, {"@type": "B"}]', '{"@type": "C", "x": [1, 2.5, true, null]}'],
        ['<!-- {"x": 1} -->\n{"@type": "D"}'],  # a leading comment line
        ['{"@type": "E", "k": ["a", "b", ],}'],  # trailing commas
        ['{"@type": "F", // comment\n "n": "x"}'],
        ['"just a string"', '{"@type": "G", "t": "line\nbreak"}'],
        ['{"@type": broken'],
        ["{}"],
    ],
)
def test_edge_cases_equal_extruct(blocks):
    html = (
        "<html><head>"
        + "".join(f'<script type="application/ld+json">{b}</script>' for b in blocks)
        + '<script type="application/json">{"not": "ld"}</script></head><body><p>text</p></body></html>'
    )
    assert extract(html, "https://example.org/").json_ld == resilipipe_json_ld(html)


def test_page_without_json_ld():
    assert extract("<html><body><p>plain</p></body></html>", "https://example.org/").json_ld is None
