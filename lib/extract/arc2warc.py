"""ARC records as WARC/1.0 records (Arc2Warc, ``--output-format warc``), as warcio writes them.

The ARC header line's fields go into WARC headers the way warcio's ARC-to-WARC conversion
(``warcio recompress``, ``ArchiveIterator(arc2warc=True)``) maps them, in its order:

| ARC field | WARC header |
|---|---|
| URL | ``WARC-Target-URI`` (a ``filedesc://NAME`` header: ``WARC-Filename: NAME``) |
| IP-address | ``WARC-IP-Address`` |
| Archive-date | ``WARC-Date`` (ISO 8601) |
| Content-type | ``Content-Type`` (``application/http;msgtype=response`` for a response, as warcio) |
| Archive-length | ``Content-Length`` (of the block) |

``WARC-Type`` is ``response`` (``warcinfo`` for the file header), ``WARC-Payload-Digest`` and
``WARC-Block-Digest`` are SHA-1 in base32. Unlike warcio we keep the record's block byte for
byte (warcio re-serialises the HTTP head, so its ``Content-Length`` and block digest can
differ where the original head was not in canonical form); the payload and its digest
are the same. ``WARC-Record-ID`` is derived from the source file and offset, so a re-run
writes the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import uuid

from lib.warc.http import HttpError, split_head
from lib.warc.parse import Record


def _sha1(data: bytes | memoryview) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def _iso(rec: Record) -> str:
    return rec.date.strftime("%Y-%m-%dT%H:%M:%SZ") if rec.date else ""


def _http_payload_start(block: bytes, url: str) -> int:
    """Where the payload starts in an ARC response's block: after the HTTP head for http(s)
    URLs whose block has one (warcio parses HTTP headers only for those), else 0."""
    if not url.lower().startswith(("http:", "https:")):
        return 0
    try:
        _, start = split_head(block)
    except HttpError:
        return 0
    return start


def arc_to_warc(rec: Record, source: str, offset: int) -> bytes:
    """The uncompressed WARC/1.0 record for ARC record ``rec`` (read whole: ``rec.content``
    is its full block) taken from ``source`` at ``offset``."""
    rid = uuid.uuid5(uuid.NAMESPACE_URL, f"arc2warc:{source}#{offset}")
    block = rec.content
    desc = rec.url.lower().startswith("filedesc://")
    headers: list[tuple[str, str]] = [
        ("WARC-Type", "warcinfo" if desc else "response"),
        ("WARC-Record-ID", f"<urn:uuid:{rid}>"),
    ]
    if desc:
        headers.append(("WARC-Filename", rec.url[len("filedesc://") :]))
        # the version and field-spec lines of an ARC file header are not carried over (warcio)
        for _ in range(2):
            nl = block.find(b"\n")
            block = block[nl + 1 :] if nl >= 0 else b""
        ctype = rec.headers.get("content-type", "")
    else:
        headers.append(("WARC-Target-URI", rec.url))
        ctype = "application/http;msgtype=response"
    headers += [
        ("WARC-IP-Address", rec.headers.get("warc-ip-address", "")),
        ("WARC-Date", _iso(rec)),
        ("Content-Type", ctype),
        ("Content-Length", str(len(block))),
    ]
    if not desc:
        headers.append(("WARC-Payload-Digest", _sha1(memoryview(block)[_http_payload_start(block, rec.url) :])))
    headers.append(("WARC-Block-Digest", _sha1(block)))
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"
