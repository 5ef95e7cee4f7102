"""The committed heavy pages (tests/data/heavy_pages: 138 real pages, see its SOURCES.md) and
the WARC response record a benchmark wraps each in, as a crawler writes them."""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import uuid

HEAVY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "heavy_pages")


def warc_member(url: str, body: bytes, i: int) -> bytes:
    """One gzip member: a WARC response record with the usual headers of a crawler."""
    ctype = "text/html"
    try:
        body.decode("utf-8")
        ctype += "; charset=utf-8"
    except UnicodeDecodeError:
        pass
    http = (
        f"HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nServer: nginx\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    digest = base64.b32encode(hashlib.sha1(body).digest()).decode()
    head = (
        f"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n"
        f"WARC-Date: 2026-11-2{i % 10}T0{i % 10}:1{i % 10}:00Z\r\n"
        f"WARC-Record-ID: <urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>\r\n"
        f"WARC-IP-Address: 192.0.2.{i % 250 + 1}\r\nWARC-Payload-Digest: sha1:{digest}\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n"
    ).encode()
    return gzip.compress(head + http + b"\r\n\r\n", 6, mtime=0)


def heavy_pages() -> list[tuple[str, bytes]]:
    """(url, html bytes) of the committed heavy pages."""
    out = []
    with open(os.path.join(HEAVY, "pages.tsv")) as f:
        next(f)
        for line in f:
            name, url = line.split("\t")[:2]
            with gzip.open(os.path.join(HEAVY, name)) as g:
                out.append((url, g.read()))
    return out
