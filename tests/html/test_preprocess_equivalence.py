"""The faster extraction (one pass over the tree, the compiled walker) gives the same output as the old one.

The oracle is a frozen copy of the old lib/html/content.py (tests/legacy_extract.py, commit
c5ded4b). Rows are compared whole: every file of the shared samples goes through
lib.preprocess.archive_pages.FileProcessor twice, once as it is and once with the old ``extract`` put in its
place, so reading, charset, language and row building are the same code on both sides and
any difference comes from the extraction. The committed heavy pages of the peer benchmark
(tests/data/heavy_pages) are compared page by page, and the link resolver against the
old ``absolute_link`` on every href of those pages and on generated ones.

Known, accepted differences: the main text (``text``, the row's ``plain_text`` and what is
derived from it: language, word counts). It changed on purpose with lib/html/maintext.py (a
content root, link density, no rule dropping the page); its quality is held by
tests/html/test_main_text_quality.py and its two paths to each other by test_native_walk.py.
Every other field is compared.
"""

from __future__ import annotations

import glob
import gzip
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.html import content as new
from lib.html.charset import decode_html
from lib.preprocess import archive_pages
from tests import legacy_extract as old
from tests.conftest import ROOT

HEAVY = ROOT / "tests" / "data" / "heavy_pages"


def old_extract(html: str, url: str, utf8: bytes | None = None, main_html: bool = False, meta_names=new.META_NAMES):
    page = old.extract(html, url)  # always from the decoded text, as before
    now = new.extract(html, url, meta_names=meta_names)
    page.text = now.text  # the main text changed on purpose (see above)
    page.body_chars = now.body_chars  # (a field the old code had not)
    # links carry their rel since (tests/html/test_directives.py holds it to the markup); the
    # metas the page signals are read from are new too
    rels = {(u, a): rel for u, a, rel in now.links}
    page.links = [(u, a, rels.get((u, a))) for u, a in page.links]
    page.metas = now.metas
    # the JSON-LD column came later (the old code had none): taken as the new code gives it,
    # held to extruct's output by tests/html/test_json_ld.py
    page.json_ld = new.json_ld(new.LexborHTMLParser(html)) if new.JSON_LD_TYPE in html else None
    page.main_html = None  # opt-in and new (tests/html/test_main_html.py); not asked here
    page.embeds = now.embeds  # new too, held to lxml's reading of the same tags by tests/html/test_embeds.py
    return page


def rows_of(path: str, extract) -> list[dict]:
    saved = archive_pages.extract
    archive_pages.extract = extract
    try:
        with open(path, "rb") as f:
            proc = archive_pages.FileProcessor(path)
            rows = list(proc.pages(f))
        return rows + [
            {"stats": proc.stats.as_dict() | {"seconds": 0}, "captures": proc.captures, "errors": proc.errors}
        ]
    finally:
        archive_pages.extract = saved


def test_rows_identical_on_the_shared_samples(corpus):
    files = sorted(
        p for p in glob.glob(str(corpus / "*" / "*")) if p.endswith((".warc.gz", ".warc", ".arc.gz", ".arc"))
    )
    assert files
    compared = 0
    for path in files:
        got, want = rows_of(path, new.extract), rows_of(path, old_extract)
        assert len(got) == len(want), path
        for g, w in zip(got, want):
            diff = {k: (g.get(k), w.get(k)) for k in set(g) | set(w) if g.get(k) != w.get(k)}
            assert not diff, (path, g.get("url"), diff)
        compared += len(got) - 1
    assert compared > 250  # ~289 HTML pages in the samples


def heavy_pages() -> list[tuple[str, str]]:
    out = []
    with open(HEAVY / "pages.tsv") as f:
        next(f)
        for line in f:
            name, url = line.split("\t")[:2]
            with gzip.open(HEAVY / name) as g:
                out.append((url, decode_html(g.read()).text))
    return out


def test_extract_identical_on_the_heavy_pages():
    pages_ = heavy_pages()
    assert len(pages_) == 138
    for url, html in pages_:
        want = vars(old_extract(html, url))
        assert vars(new.extract(html, url)) == want, url
        assert vars(new.extract(html, url, html.encode())) == want, url


EDGE_PAGES = [
    # boilerplate tokens in odd case and spacing, nested drops, wrappers that must stay
    "<html><body><div class=' Has-Nav  wrap'><p>keep</p><div CLASS='NAV'>drop<div class=menu-x>x</div></div>"
    "<article class=nav><p>article stays</p></article><main id=sidebar>main stays</main>"
    "<div id='x\tcookie-bar'>tab token</div><div class='xnav'>substring only: stays</div>"
    "<div class='\u212aookie'>kelvin sign lowercases to cookie</div><p hidden>hidden</p>"
    "<section role=navigation><div class=share>in drop</div></section><p aria-hidden=true>aria</p></body></html>",
    # metadata: first match of each selector, empty values falling through, base and canonical
    "<html lang=' en '><head><title>  A  <b>t</b> </title><title>second</title><meta name=description content='  '>"
    "<meta name=Description content='Upper D'><meta property='og:description' content=og>"
    "<base href='/dir/'><base href='http://other/'><link rel=CANONICAL href='c.html#frag'></head>"
    "<body><svg><title>svg title</title></svg><a href='x'>rel</a></body></html>",
    "<html><body><meta name=description content='in body'><link rel=canonical href=''><base href=''>"
    "<a href='http://h/x'>one</a><a href='http://h/x'>one</a><a href='http://h/x'>two</a>"
    "<a href='/p?'>empty query</a><a href='/p;x'>params</a><a href='/a//b'>double slash</a><a href='/a/../b'>dots</a>"
    "<a href=' /sp ace '>space</a><a href='/t\tab'>tab</a><a href='//proto/x'>proto</a><a href='?q'>q</a>"
    "<a href='HTTPS://UP/x#y'>upper</a><a href='http:'>bare</a><a href='/'>root</a><a href='#f'>frag</a>"
    "<a href='/img'><img alt=' Alt  text '></a><a href='/img2'><img></a><a href='/nest'>a <span>b</span>c</a>"
    "<a href='http://[::1]/v6'>v6</a><a href='http://[bad/x'>bad</a><a href='/x\\y'>backslash</a></body></html>",
    # a selector of higher priority only in <body>: the whole document is searched for it
    "<html><head><meta name=Description content=head-upper><base target=x></head><body><meta name=description "
    "content=body-lower><svg><title>svg title</title></svg><base href=/b/><a href=x>x</a></body></html>",
    "<html><head></head><frameset><title>frames</title><meta name=description content=d></frameset></html>",
    "<html><body></body></html>",
    "no html at all, just text",
    "<html><head><title>only head</title></head></html>",
]


@pytest.mark.parametrize("html", EDGE_PAGES)
@pytest.mark.parametrize("url", ["http://www.example.com/a/b.html?x=1", "https://h.example/", "http://h.example"])
def test_extract_identical_on_edge_cases(html, url):
    assert vars(new.extract(html, url)) == vars(old_extract(html, url))


def test_resolver_identical_on_real_hrefs():
    from selectolax.lexbor import LexborHTMLParser

    n = 0
    for url, html in heavy_pages():
        resolve = new.LinkResolver(url)
        for a in LexborHTMLParser(html).css("a[href]"):
            href = a.attributes.get("href") or ""
            assert resolve(href) == old.absolute_link(url, href), (url, href)
            n += 1
    assert n > 15000


HREF = st.lists(
    st.sampled_from(list("/.?#;:\\@[]%aZ9- \t\n\x00é") + ["//", "..", "/./", "http://", "HTTPS://", "#x"]), max_size=12
).map("".join)
BASE = st.sampled_from(
    [
        "http://h.example/a/b.html?q=1#f",
        "https://H.Example:443/",
        "http://h.example",
        "http://u@h:8/x/",
        "https://h.example/a;p/b;q?x",
        "http://[::1]:80/v6/",
        "ftp://h/x",
        "file:///tmp/x",
        "notaurl",
    ]
)


@settings(max_examples=3000, deadline=None)
@given(BASE, HREF)
def test_resolver_identical_on_generated_hrefs(base, href):
    assert new.LinkResolver(base)(href) == old.absolute_link(base, href)


def test_resolver_identical_on_network_paths():
    # '//host/path' skips urljoin when only the base's scheme goes in front: every mix of up to
    # three of these parts after '//' (hosts, brackets, ports, dots, parameters, controls)
    parts = ["h", "H.Ex", "é", "[", "]", "::1", "/", "?", "#", ";", "\\", "\t", "%2F", "@", ":80", ".", ".."]
    parts += [" ", "\x00"]
    n = 0
    for k in range(1, 4):
        for combo in itertools.product(parts, repeat=k):
            href = "//" + "".join(combo)
            for base in ("http://h.example/a/b", "HTTPS://X.org", "https://u@h:8/x;p?q", "ftp://h/x"):
                assert new.LinkResolver(base)(href) == old.absolute_link(base, href), (base, href)
                n += 1
    assert n == 4 * (19 + 19**2 + 19**3)
