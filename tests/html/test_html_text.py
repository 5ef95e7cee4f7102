"""Charset decoding and HTML extraction (no Spark)."""

from __future__ import annotations

import pytest

from lib.html.boilerplate import boiler_token
from lib.html.charset import decode_html
from lib.html.content import absolute_link, extract

PAGE = """<!doctype html><html lang="de-AT"><head><title>  Die   Bibliothek </title>
<meta name="description" content="Neue Öffnungszeiten">
<base href="https://www.example.at/sub/">
<link rel="canonical" href="/kanon.html"><script>var x = "SCRIPT TEXT";</script><style>.a{}</style></head>
<body><nav><a href="/menu">Menü</a></nav><header>Kopfzeile</header>
<div id="cookie-banner">Wir verwenden Cookies</div>
<main><h1>Öffnungszeiten</h1><p>Die Bibliothek ist <b>montags</b> geschlossen.</p>
<p>Mehr <a href="seite2.html#x">auf Seite zwei</a> und <a href="https://other.example.org/">extern</a>
<a href="mailto:a@b.c">mail</a><a href="javascript:void(0)">js</a><a href="bild.html"><img
alt="Ein Bild"></a></p></main>
<aside class="sidebar">Seitenleiste</aside><footer>Impressum</footer></body></html>"""


def test_extract_fields_and_links():
    page = extract(PAGE, "https://www.example.at/start.html")
    assert page.title == "Die Bibliothek"
    assert page.description == "Neue Öffnungszeiten"
    assert page.html_lang == "de-AT"
    assert page.canonical_url == "https://www.example.at/kanon.html"
    assert page.links == [
        ("https://www.example.at/menu", "Menü", None),
        ("https://www.example.at/sub/seite2.html", "auf Seite zwei", None),
        ("https://other.example.org/", "extern", None),
        ("https://www.example.at/sub/bild.html", "Ein Bild", None),
    ]


def test_main_text_drops_boilerplate_keeps_inline_text_together():
    text = extract(PAGE, "https://www.example.at/").text
    lines = text.split("\n")
    assert "Öffnungszeiten" in lines
    assert "Die Bibliothek ist montags geschlossen." in lines
    for junk in ("SCRIPT TEXT", "Menü", "Kopfzeile", "Cookies", "Seitenleiste", "Impressum"):
        assert junk not in text


def test_wrapper_with_nav_like_class_is_not_dropped():
    html = "<html><body><div class='has-nav page-wrapper'><p>Keep this sentence.</p></div></body></html>"
    assert extract(html, "http://x/").text == "Keep this sentence."


@pytest.mark.parametrize(
    "token,boiler",
    [
        ("and-w-sidebar", False),
        ("layout-with-sidebar", False),
        ("page-no-nav", False),  # a layout's state
        ("post-sidebar", True),
        ("nav-is-open", True),
        ("main-nav", True),
        ("has-nav", False),
    ],
)
def test_boiler_token_state_parts(token, boiler):
    assert boiler_token(token) is boiler
    other = "Other words here. " * 10
    html = f"<html><body><div class='{token}'><p>Kept or not.</p></div><div>{other}</div></body></html>"
    assert ("Kept or not." in extract(html, "http://x/").text) is not boiler


@pytest.mark.parametrize(
    "href,expected",
    [
        ("../a.html", "http://h.example/a.html"),
        ("  //cdn.example/x  ", "http://cdn.example/x"),
        ("#top", None),
        ("ftp://h/x", None),
        ("javascript:alert(1)", None),
        ("http://[bad", None),
    ],
)
def test_absolute_link(href, expected):
    assert absolute_link("http://h.example/dir/page.html", href) == expected


def test_charset_from_http_meta_and_detection():
    text = "Grüße aus Köln"
    assert decode_html(text.encode("cp1252"), "windows-1252").source == "http"
    d = decode_html(b'<meta charset="iso-8859-15">' + "Grüße".encode("iso-8859-15"))
    assert (d.charset, d.source, d.replaced) == ("iso8859-15", "meta", False) and "Grüße" in d.text
    assert decode_html("ok ✓".encode()).source == "utf-8"
    assert decode_html(b"\xef\xbb\xbfBOM").source == "bom"
    russian = ("Городской совет во вторник утвердил новый бюджет для публичных библиотек. " * 5).encode("cp1251")
    d = decode_html(russian)
    assert d.source == "detected" and "Городской" in d.text


def test_invalid_bytes_in_declared_charset_are_replaced_and_flagged():
    d = decode_html(b"<p>caf\xc3\xa9 and broken \xff\xfe bytes</p>", "utf-8")
    assert d.replaced and "\ufffd" in d.text and "café" in d.text


def test_unknown_charset_label_falls_through():
    d = decode_html("plain ascii".encode(), "x-no-such-charset")
    assert d.charset == "utf-8" and not d.replaced
