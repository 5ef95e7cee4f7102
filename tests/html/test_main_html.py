"""main_html (lib/html/mainhtml.py, written in the walk that writes the main text) on real pages:
the heavy pages of the peer benchmark and the ScrapingHub pages (../shared/extraction, skipped
when absent). It is well-formed (every tag opened is closed, in order), has only the structural
tags, escapes what it holds, and parsed back by other parsers (lxml's libxml2, selectolax's
lexbor) it is the main text, block for block: a block tag, ``<br>`` and a line break inside
``<pre>`` end a line, a cell is a space. The compiled walk and the Python one write the same
main_html (tests/html/test_native_walk.py).
"""

from __future__ import annotations

import gzip
import json
from html.parser import HTMLParser

import lxml.html
import pytest
from selectolax.lexbor import LexborHTMLParser

from lib.html import maintext
from lib.html.charset import decode_html
from lib.html.content import extract
from tests.conftest import SHARED
from tests.html.test_preprocess_equivalence import heavy_pages

SCRAPINGHUB = SHARED / "extraction" / "scrapinghub"
# fmt: off
ALLOWED = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "table", "caption", "tr", "td", "th", "pre",
    "code", "blockquote", "a", "br"
}
# fmt: on
# fmt: off
BLOCKS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "table", "caption", "tr", "pre", "blockquote",
    "br"
}
# fmt: on
SEP = maintext.SEP
SHY = maintext.SHY


def scrapinghub_pages() -> list[tuple[str, str]]:
    if not (SCRAPINGHUB / "ground-truth.json").is_file():
        pytest.skip(f"the ScrapingHub benchmark is not at {SCRAPINGHUB} (../shared/extraction/scrapinghub)")
    truth = json.loads((SCRAPINGHUB / "ground-truth.json").read_text(encoding="utf-8"))
    return [
        (
            truth[k].get("url") or "http://example.com/",
            decode_html(gzip.decompress((SCRAPINGHUB / "html" / f"{k}.html.gz").read_bytes())).text,
        )
        for k in sorted(truth)
    ]


class _Tags(HTMLParser):
    """The tags of an HTML string as written (the standard library's tokenizer, no tree repair):
    every start tag must be closed by its own end tag, innermost first."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.seen: set[str] = set()
        self.errors: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.seen.add(tag)
        if tag == "a":
            assert [k for k, _ in attrs] == ["href"], attrs
            self.hrefs.append(dict(attrs)["href"])
        elif attrs:
            self.errors.append(f"<{tag}> with attributes {attrs}")
        if tag != "br":
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(f"</{tag}> closes nothing open")


def lines_of(root) -> list[str]:
    """The lines of an lxml tree as the main text writes them (independently of our walk)."""
    parts: list[str] = []

    def walk(el, pre: bool) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        pre = pre or tag == "pre"
        edge = SEP if tag in BLOCKS else " " if tag in ("td", "th") else ""
        parts.append(edge)
        if el.text:
            parts.append(el.text.replace("\n", SEP) if pre else el.text)
        for child in el:
            walk(child, pre)
            if child.tail:
                parts.append(child.tail.replace("\n", SEP) if pre else child.tail)
        parts.append(edge)

    walk(root, False)
    lines = (" ".join(p.split()) for p in "".join(parts).replace(SHY, "").split(SEP))  # main_html keeps soft hyphens
    return [line for line in lines if line]


def check(pages: list[tuple[str, str]]) -> int:
    """Check main_html on ``pages``; the number of pages with main_html."""
    with_html = 0
    for url, html in pages:
        page = extract(html, url, main_html=True)
        out = page.main_html
        assert page.text == extract(html, url).text, url  # writing main_html does not change the text
        if not page.text:
            assert out == "", url
            continue
        with_html += 1
        tags = _Tags()
        tags.feed(out)
        tags.close()
        assert not tags.errors and not tags.stack, (url, tags.errors[:3], tags.stack)
        assert tags.seen <= ALLOWED, (url, tags.seen - ALLOWED)
        assert all(h.startswith(("http://", "https://")) for h in tags.hrefs), url
        tree = lxml.html.fragment_fromstring(out, create_parent="div")
        assert lines_of(tree) == page.text.split("\n"), url
        lexbor = LexborHTMLParser(out)
        assert "".join(lexbor.body.text(separator="").replace(SHY, "").split()) == "".join(page.text.split()), url
    return with_html


def test_main_html_on_heavy_pages():
    pages = heavy_pages()
    assert len(pages) == 138
    assert check(pages) >= 130


def test_main_html_on_scrapinghub_pages():
    assert check(scrapinghub_pages()) == 181


def test_main_html_holds_the_structure():
    html = (
        "<body><article><h2>Head <span>line</span></h2><div>lead</div><div>second &amp; <b>bold</b></div>"
        "<p>A <a href='/x?a=1&amp;b=\"2\"'>link</a> and <a href='#top'>an anchor</a>.<br>Next line</p>"
        "<table><thead><tr><th>k</th><th>v</th></tr></thead><tr><td>1 <div>one</div></td><td>2</td></tr>"
        "<tr><td></td></tr></table><pre>def f():\n    return 1 &lt; 2\n\nf()</pre>"
        "<ul><li>a</li><li><img alt=x></li></ul><p></p><blockquote><p>said</p></blockquote></article>"
    )
    # a row is one line, its cells apart by a space (a block inside a cell still breaks it); a
    # <pre>'s lines are lines; the <div>s between blocks are <br>s; an anchor to the page itself
    # and an empty item leave no tag
    page = extract(html, "http://h.example/d/", main_html=True)
    assert page.text == (
        "Head line\nlead\nsecond & bold\nA link and an anchor.\nNext line\nk v\n1\none\n2\n"
        "def f():\nreturn 1 < 2\nf()\na\nsaid"
    )
    assert page.main_html == (
        '<h2>Head line</h2>lead<br>second &amp; bold<p>A <a href="http://h.example/x?a=1&amp;b=&quot;2&quot;">'
        "link</a> and an anchor.<br>Next line</p>"
        "<table><tr><th>k</th><th>v</th></tr><tr><td>1<br>one</td><td><br>2</td>"
        "</tr></table><pre>def f():\n    return 1 &lt; 2\n\nf()</pre><ul><li>a</li></ul><blockquote><p>said</p>"
        "</blockquote>"
    )
