"""Builders for small archives (good and deliberately broken) used by several tests."""

from __future__ import annotations

import gzip
import io
import uuid


def http_response(
    body: bytes, ctype: str = "text/html; charset=utf-8", status: str = "200 OK", extra: bytes = b""
) -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
        + body
    )


def warc_record(
    url: str,
    block: bytes,
    rec_type: str = "response",
    date: str = "2026-01-15T01:02:03Z",
    content_type: str = "application/http; msgtype=response",
    record_id: str | None = None,
) -> bytes:
    rid = record_id or f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url + rec_type)}>"
    head = (
        f"WARC/1.1\r\nWARC-Type: {rec_type}\r\nWARC-Target-URI: {url}\r\nWARC-Date: {date}\r\n"
        f"WARC-Record-ID: {rid}\r\nContent-Type: {content_type}\r\nContent-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def html_page(title: str, text: str, links: str = "") -> bytes:
    return (f"<html lang='en'><head><title>{title}</title></head><body><p>{text}</p>{links}</body></html>").encode()


def gz(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
        f.write(data)
    return buf.getvalue()


ENGLISH = "The library council approved a new budget for reading rooms and public lectures this spring."


def good_pages(n: int, host: str = "example.com") -> list[tuple[str, bytes]]:
    """(url, whole WARC record) for n English HTML pages."""
    out = []
    for i in range(n):
        url = f"http://{host}/page{i}.html"
        body = html_page(f"Page {i}", f"{ENGLISH} Page number {i}.", f"<a href='/page{i + 1}.html'>next page</a>")
        out.append((url, warc_record(url, http_response(body))))
    return out


def warc_gz(records: list[bytes]) -> bytes:
    return b"".join(gz(r) for r in records)


def warc_with_broken_http(good: int, broken: int) -> tuple[bytes, list[int]]:
    """A .warc.gz of ``good`` pages, then ``broken`` responses whose HTTP head is junk (failed
    records); returns the bytes and the broken records' offsets."""
    members = [gz(r) for _, r in good_pages(good)]
    junk = [
        gz(warc_record(f"http://example.com/broken{i}.html", b"\x00\x01 no status line here\r\n\r\n<html>x</html>"))
        for i in range(broken)
    ]
    first = sum(len(m) for m in members)
    return b"".join(members + junk), [first + sum(len(m) for m in junk[:i]) for i in range(broken)]
