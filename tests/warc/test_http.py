"""Lenient HTTP response parsing: chunked, content codings, broken headers, bombs (no Spark)."""

from __future__ import annotations

import pytest

from lib.warc.http import HttpError, parse_response


def test_http_parsing_chunked_gzip_and_broken():
    import gzip

    body = gzip.compress(b"<html>hi</html>")
    chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
    r = parse_response(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n"
        b"Content-Type: text/html; charset=ISO-8859-1\r\n\r\n" + chunked
    )
    assert (r.status, r.body, r.mime_type, r.charset) == (200, b"<html>hi</html>", "text/html", "ISO-8859-1")
    with pytest.raises(HttpError) as e:
        parse_response(b"HTPP/1.1 200 OK\r\n\r\nbody")
    assert e.value.reason == "http_malformed"
    # a junk header line costs the line (with a warning), never the response
    r = parse_response(b"HTTP/1.1 200 OK\r\nBad Header Line\r\nContent-Type: text/html\r\n\r\nbody")
    assert (r.status, r.mime_type, r.body) == (200, "text/html", b"body")
    assert [w[0] for w in r.warnings] == ["http_header_skipped"] and "Bad Header Line" in r.warnings[0][1]


def test_content_coding_bomb_is_refused_not_expanded():
    import zlib

    from lib.warc import http

    bomb = zlib.compress(b"\0" * (http.MAX_DECODED_BYTES + (1 << 20)), 9)
    with pytest.raises(HttpError) as e:
        parse_response(b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Type: text/html\r\n\r\n" + bomb)
    assert e.value.reason == "http_body_too_large"


def _br_response(body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def test_brotli_body_decoded():
    import brotli

    page = "<html><title>Brötli</title><p>" + "text " * 5000
    resp = parse_response(_br_response(brotli.compress(page.encode())))
    assert resp.body.decode() == page and not resp.warnings


def test_brotli_bomb_and_truncation_are_reported():
    import brotli

    with pytest.raises(HttpError) as e:
        parse_response(_br_response(brotli.compress(b"a" * (70 << 20))))
    assert e.value.reason == "http_body_too_large"
    with pytest.raises(HttpError) as e:
        parse_response(_br_response(brotli.compress(b"<p>" + bytes(range(256)) * 400)[:-8]))
    assert e.value.reason == "http_bad_encoding"
