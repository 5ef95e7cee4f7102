"""Charset decoding, HTML extraction, language id and URL helpers (no Spark)."""

from __future__ import annotations

import pytest

from lib.preprocess import langid
from lib.core import urls
from lib.html.charset import decode_html
from lib.html.extract import absolute_link, extract
from lib.warc.http import HttpError, parse_response

PAGE = """<!doctype html><html lang="de-AT"><head><title>  Die   Bibliothek </title>
<meta name="description" content="Neue Öffnungszeiten">
<base href="https://www.example.at/sub/">
<link rel="canonical" href="/kanon.html"><script>var x = "SCRIPT TEXT";</script><style>.a{}</style></head>
<body><nav><a href="/menu">Menü</a></nav><header>Kopfzeile</header>
<div id="cookie-banner">Wir verwenden Cookies</div>
<main><h1>Öffnungszeiten</h1><p>Die Bibliothek ist <b>montags</b> geschlossen.</p>
<p>Mehr <a href="seite2.html#x">auf Seite zwei</a> und <a href="https://other.example.org/">extern</a>
<a href="mailto:a@b.c">mail</a><a href="javascript:void(0)">js</a><a href="bild.html"><img alt="Ein Bild"></a></p></main>
<aside class="sidebar">Seitenleiste</aside><footer>Impressum</footer></body></html>"""


def test_extract_fields_and_links():
    page = extract(PAGE, "https://www.example.at/start.html")
    assert page.title == "Die Bibliothek"
    assert page.description == "Neue Öffnungszeiten"
    assert page.html_lang == "de-AT"
    assert page.canonical_url == "https://www.example.at/kanon.html"
    assert page.links == [
        ("https://www.example.at/menu", "Menü"),
        ("https://www.example.at/sub/seite2.html", "auf Seite zwei"),
        ("https://other.example.org/", "extern"),
        ("https://www.example.at/sub/bild.html", "Ein Bild"),
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


@pytest.mark.parametrize("href,expected", [
    ("../a.html", "http://h.example/a.html"),
    ("  //cdn.example/x  ", "http://cdn.example/x"),
    ("#top", None), ("ftp://h/x", None), ("javascript:alert(1)", None), ("http://[bad", None),
])
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


@pytest.mark.parametrize("text,code", [
    ("The council approved the new budget for the public libraries on Tuesday.", "eng"),
    ("Der Stadtrat hat am Dienstag den neuen Haushalt für die Bibliotheken beschlossen.", "deu"),
    ("Le conseil municipal a approuvé mardi le nouveau budget des bibliothèques.", "fra"),
    ("Городской совет во вторник утвердил новый бюджет для публичных библиотек.", "rus"),
    ("市议会星期二批准了公共图书馆的新预算。", "zho"),
])
def test_language_id_iso639_3(text, code):
    lang, score = langid.identify(text)
    assert lang == code and 0.5 < score <= 1.0


def test_language_id_empty_text():
    assert langid.identify("   \n ") == ("und", 0.0)


def test_url_normalisation_and_parts():
    assert urls.normalize_url("HTTP://Example.COM:80/a?b=1#frag") == "http://example.com/a?b=1"
    assert urls.url_id("http://example.com") == urls.url_id("HTTP://EXAMPLE.com:80/")
    p = urls.url_parts("https://news.bbc.co.uk/x/y?q=1")
    assert (p["url_subdomain"], p["url_domain"], p["url_suffix"], p["url_query"]) == ("news", "bbc.co.uk", "co.uk", "q=1")


def test_http_parsing_chunked_gzip_and_broken():
    import gzip

    body = gzip.compress(b"<html>hi</html>")
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    r = parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"
                       b"Content-Type: text/html; charset=ISO-8859-1\r\n\r\n" + chunked)
    assert (r.status, r.body, r.mime_type, r.charset) == (200, b"<html>hi</html>", "text/html", "ISO-8859-1")
    with pytest.raises(HttpError) as e:
        parse_response(b"HTPP/1.1 200 OK\r\n\r\nbody")
    assert e.value.reason == "http_malformed"
    # a junk header line costs the line (with a warning), never the response
    r = parse_response(b"HTTP/1.1 200 OK\r\nBad Header Line\r\nContent-Type: text/html\r\n\r\nbody")
    assert (r.status, r.mime_type, r.body) == (200, "text/html", b"body")
    assert [w[0] for w in r.warnings] == ["http_header_skipped"] and "Bad Header Line" in r.warnings[0][1]


def test_ipv6_hosts_keep_their_brackets():
    assert urls.normalize_url("http://[::1]:8080/x#y") == "http://[::1]:8080/x"
    assert urls.normalize_url("https://[2001:db8::1]:443/") == "https://[2001:db8::1]/"


def test_content_coding_bomb_is_refused_not_expanded():
    import zlib

    from lib.warc import http

    bomb = zlib.compress(b"\0" * (http.MAX_DECODED_BYTES + (1 << 20)), 9)
    with pytest.raises(HttpError) as e:
        parse_response(b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Type: text/html\r\n\r\n" + bomb)
    assert e.value.reason == "http_body_too_large"
