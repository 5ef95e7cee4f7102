"""HTTP responses inside archive records: status line, headers, decoded body."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

_STATUS = re.compile(rb"^HTTP/\d(?:\.\d)?\s+(\d{3})(?:\s.*)?$", re.S)
MAX_HEADER_BYTES = 64 << 10
MAX_DECODED_BYTES = 64 << 20  # a gzip "bomb" must not blow the executor's memory


class HttpError(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class HttpResponse:
    status: int
    headers: dict[str, str]  # lowercased names; repeated headers joined with ", "
    body: bytes
    payload_start: int = 0  # where the payload (as transferred) starts in the record block

    @property
    def mime_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        m = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", self.headers.get("content-type", ""), re.I)
        return m.group(1) if m else None


def parse_response(block: bytes) -> HttpResponse:
    """Split a WARC response block into status, headers and the decoded body.

    Raises :class:`HttpError` ('http_malformed') when the status line or headers are broken.
    """
    end = block.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES)
    sep = 4
    lf = block.find(b"\n\n", 0, MAX_HEADER_BYTES)
    if end < 0 or (0 <= lf < end):
        end, sep = lf, 2
    if end < 0:
        if len(block) < MAX_HEADER_BYTES and block.startswith(b"HTTP/"):
            end, sep = len(block), 0  # headers without a body
        else:
            raise HttpError("http_malformed", "no end of HTTP headers (blank line) found")
    head = block[:end].split(b"\n")
    m = _STATUS.match(head[0].rstrip(b"\r"))
    if not m:
        raise HttpError("http_malformed", f"bad status line {head[0][:60]!r}")
    headers: dict[str, str] = {}
    last = None
    for raw in head[1:]:
        line = raw.rstrip(b"\r")
        if not line:
            continue
        if line[:1] in (b" ", b"\t") and last:
            headers[last] += " " + line.strip().decode("latin-1")
            continue
        name, colon, value = line.partition(b":")
        if not colon or not name.strip() or b" " in name.strip():
            raise HttpError("http_malformed", f"bad header line {line[:60]!r}")
        key = name.strip().decode("latin-1").lower()
        val = value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {val}" if key in headers else val
        last = key
    body = block[end + sep :]
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = dechunk(body)
    enc = headers.get("content-encoding", "").strip().lower()
    if enc in ("gzip", "x-gzip", "deflate"):
        body = decompress(body, enc)
    elif enc == "br":
        try:
            import brotli  # type: ignore

            body = brotli.decompress(body)
        except ImportError:
            raise HttpError("http_unsupported_encoding", "brotli body and no brotli module") from None
        except Exception as e:
            raise HttpError("http_bad_encoding", f"brotli: {e}") from None
    return HttpResponse(int(m.group(1)), headers, body, end + sep)


def dechunk(body: bytes) -> bytes:
    """Undo chunked transfer coding; lenient: body returned as-is if it isn't chunked."""
    out = []
    pos = 0
    while pos < len(body):
        nl = body.find(b"\n", pos)
        if nl < 0:
            break
        size_text = body[pos:nl].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            return body if not out else b"".join(out)  # not really chunked
        if size == 0:
            break
        start = nl + 1
        out.append(body[start : start + size])
        pos = start + size
        if body[pos : pos + 2] == b"\r\n":
            pos += 2
        elif body[pos : pos + 1] == b"\n":
            pos += 1
    return b"".join(out)


def decompress(body: bytes, enc: str) -> bytes:
    """gzip/deflate content coding (raw deflate too, as some servers send)."""
    for wbits in ((31, 15, -15) if enc != "deflate" else (15, -15, 31)):
        try:
            d = zlib.decompressobj(wbits)
            out = d.decompress(body, MAX_DECODED_BYTES)
            if d.unconsumed_tail:
                raise HttpError("http_body_too_large", f"{enc} body decodes to more than {MAX_DECODED_BYTES} bytes")
            return out + d.flush()
        except zlib.error:
            continue
    if not body.startswith(b"\x1f\x8b"):
        # many archives store the body already decoded but keep the header (ClueWeb, warcio rewrites)
        return body
    raise HttpError("http_bad_encoding", f"body declared {enc} but does not decompress")
