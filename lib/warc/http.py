"""HTTP responses inside archive records: status line, headers, decoded body.

Lenient the way warcio, FastWARC, pywb and browsers are: archived responses come from
every server and every re-archiving tool chain, so a quirk that a mature reader accepts
must not cost us the page. Repeated or missing protocol tokens in the status line
(``HTTP/1.1 HTTP/1.1 200 OK``, ``200 OK``), lowercase ``http/``, no reason phrase,
stray whitespace and LF or CR-CR-LF line ends are read; a junk header line is skipped
with a warning; a body that says ``Transfer-Encoding: chunked`` is de-chunked only when
the chunk structure really holds, and one that says ``Content-Encoding: gzip`` but is
stored decoded is kept as stored. Only what no reader can use (no status code at all)
raises :class:`HttpError`.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

import brotli

from lib.errors import DailysliceError

MAX_HEADER_BYTES = 256 << 10  # where we give up looking for the end of the HTTP head
MAX_HEADER_LINE = 16 << 10  # a longer header line is skipped (with a warning)
MAX_DECODED_BYTES = 64 << 20  # a gzip "bomb" must not blow the executor's memory
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
_BLANK_LINE = re.compile(rb"\n[ \t]*(?:\r\n|$)")  # a whitespace-only line ends a head, as in warcio


class HttpError(DailysliceError):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class HttpResponse:
    status: int
    # lowercased names; repeated headers joined with ", " (Content-Type: the first; X-Robots-Tag: "\n")
    headers: dict[str, str]
    body: bytes
    payload_start: int = 0  # where the payload (as transferred) starts in the record block
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (reason, detail): quirks read past

    @property
    def mime_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    @property
    def charset(self) -> str | None:
        m = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", self.headers.get("content-type", ""), re.I)
        return m.group(1) if m else None


_CODE = re.compile(r"(\d{1,3})(?!\d)")


def status_code(line: str) -> int | None:
    """The code of a status line, however many protocol tokens (``HTTP/1.1``, ``http/1.0``,
    even ``HTTPX/1.1``) precede it; None if there is none. Like warcio, a code need not have
    three digits (``HTTP/1.1 0 No Content`` is status 0)."""
    tokens = line.split()
    i = 0
    while i < len(tokens) and tokens[i][:4].upper() == "HTTP":
        i += 1
    if i == len(tokens):
        return None
    m = _CODE.match(tokens[i])
    return int(m.group(1)) if m else None


def _text(raw: bytes) -> str:
    """Header bytes as text: UTF-8 where they are, else latin-1 (as warcio decodes them)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def split_head(block: bytes) -> tuple[list[str], int]:
    """(lines of the HTTP head, decoded, without line ends; offset of the body).

    The head ends at the first blank line (a line holding nothing but whitespace, however
    it ends: CRLF, LF, CR CR LF); leading blank lines before the status line are skipped.
    """
    end = block.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES)
    if end > 0 and block[:1] not in b" \t\r\n":
        head = block[:end]
        if (
            b"\r\r" not in head
            and head.count(b"\n") == head.count(b"\r\n")
            and (b"\n " not in head and b"\n\t" not in head or _BLANK_LINE.search(head) is None)
        ):
            # the common case, checked in C: CRLF lines only, no whitespace-only line
            return _text(head).split("\r\n"), end + 4
    lines: list[str] = []
    pos = 0
    n = len(block)
    while pos < n:
        if pos > MAX_HEADER_BYTES:
            raise HttpError(
                "http_malformed", f"no end of HTTP headers (blank line) in the first {MAX_HEADER_BYTES} bytes"
            )
        nl = block.find(b"\n", pos)
        end = n if nl < 0 else nl + 1
        line = block[pos:end].rstrip()
        pos = end
        if not line:
            if lines:
                return lines, pos
            continue  # blank lines before the status line
        lines.append(_text(line))
    return lines, n  # headers without a body


def parse_head(lines: list[str]) -> tuple[int, dict[str, str], list[tuple[str, str]]]:
    """Status code and headers of an HTTP head; raises HttpError only without a status code.

    A line that is no ``Name: value`` (no colon, a space in the name, over MAX_HEADER_LINE)
    is skipped with a warning; a line starting with whitespace continues the last value."""
    if not lines:
        raise HttpError("http_malformed", "empty HTTP head")
    status = status_code(lines[0])
    if status is None:
        raise HttpError("http_malformed", f"bad status line {lines[0][:60]!r}")
    headers: dict[str, str] = {}
    warnings: list[tuple[str, str]] = []
    last = None
    for line in lines[1:]:
        if len(line) > MAX_HEADER_LINE:
            warnings.append(("http_header_skipped", f"header line of {len(line)} characters: {line[:40]!r}"))
            last = None
            continue
        if line[:1] in (" ", "\t"):
            if last is not None:
                extra = line.strip()
                headers[last] = f"{headers[last]} {extra}" if headers[last] else extra
            continue
        name, colon, value = line.partition(":")
        name = name.rstrip()
        if not colon or not name or " " in name or "\t" in name:
            if line.strip():
                warnings.append(("http_header_skipped", f"not a header line: {line[:60]!r}"))
            last = None
            continue
        key = name.lower()
        val = value.strip()
        if key not in headers:
            headers[key] = val
        elif key == "x-robots-tag":  # one line each: an 'agent:' prefix ends with its line
            headers[key] = f"{headers[key]}\n{val}"
        elif key != "content-type":  # readers take the first Content-Type
            headers[key] = f"{headers[key]}, {val}"
        last = key
    return status, headers, warnings


def parse_response(block: bytes) -> HttpResponse:
    """Split a response record's block into status, headers and the decoded body.

    Raises :class:`HttpError` ('http_malformed') when there is no status code to read,
    ('http_bad_encoding', 'http_body_too_large') when a compressed body cannot be used.
    """
    lines, start = split_head(block)
    status, headers, warnings = parse_head(lines)
    body = block[start:]
    if "chunked" in headers.get("transfer-encoding", "").lower():
        decoded, note = dechunk(body)
        if note:
            warnings.append(note)
        body = decoded
    enc = headers.get("content-encoding", "").strip().lower()
    if enc in ("gzip", "x-gzip", "deflate"):
        body = decompress(body, enc, warnings)
    elif enc == "br":
        body = _brotli(body, warnings)
    return HttpResponse(status, headers, body, start, warnings)


def dechunk(body: bytes) -> tuple[bytes, tuple[str, str] | None]:
    """Undo chunked transfer coding where the chunk structure holds: (body, warning or None).

    Chunks up to a terminating zero chunk are joined. Data that ends between or inside
    chunks (a cut-off record) gives what is there and a ``chunked_truncated`` warning.
    Anything else (a first line that is no chunk size, a chunk not followed by a line end:
    a body stored already de-chunked under a ``chunked`` header) is returned as stored,
    with a ``chunked_not_chunked`` warning.
    """
    out: list[bytes] = []
    pos, n = 0, len(body)
    while True:
        if pos >= n:
            if not out:
                return body, None  # empty body: nothing to decode
            return b"".join(out), (
                "chunked_truncated",
                f"chunked body ends after {len(out)} chunks without a last chunk",
            )
        nl = body.find(b"\n", pos, pos + 1024)
        if nl < 0:
            break
        size_text = body[pos:nl].split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(size_text):
            break
        size = int(size_text, 16)
        if size == 0:
            return b"".join(out), None
        start = nl + 1
        chunk = body[start : start + size]
        out.append(chunk)
        if len(chunk) < size:
            return b"".join(out), ("chunked_truncated", f"chunk of {size} bytes holds {len(chunk)}")
        pos = start + size
        if body.startswith(b"\r\n", pos):
            pos += 2
        elif body.startswith(b"\n", pos):
            pos += 1
        elif pos < n:
            break
    return body, (
        "chunked_not_chunked",
        f"Transfer-Encoding: chunked, but no chunk structure at byte {pos}: kept as stored",
    )


def decompress(body: bytes, enc: str, warnings: list[tuple[str, str]] | None = None) -> bytes:
    """gzip/deflate content coding (raw deflate too, as some servers send)."""
    if not body:
        return body
    for wbits in (31, 15, -15) if enc != "deflate" else (15, -15, 31):
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
        if warnings is not None:
            warnings.append(("content_encoding_not_applied", f"Content-Encoding: {enc}, body stored decoded"))
        return body
    raise HttpError("http_bad_encoding", f"body declared {enc} but does not decompress")


def _brotli_decode(body: bytes) -> bytes:
    """Decode a brotli body in input steps, so that a "bomb" stops at MAX_DECODED_BYTES.
    (Google's ``Brotli`` names the step ``process``; brotlipy, which pywb installs under the
    same module name, ``decompress``.)"""
    d = brotli.Decompressor()
    step = getattr(d, "process", None) or d.decompress
    out, size = [], 0
    for i in range(0, len(body), 1 << 14):
        chunk = step(body[i : i + (1 << 14)])
        size += len(chunk)
        if size > MAX_DECODED_BYTES:
            raise HttpError("http_body_too_large", f"br body decodes to more than {MAX_DECODED_BYTES} bytes")
        out.append(chunk)
    if hasattr(d, "is_finished"):
        if not d.is_finished():
            raise ValueError("truncated brotli stream")
    else:
        d.finish()  # raises on a truncated stream
    return b"".join(out)


def _brotli(body: bytes, warnings: list[tuple[str, str]]) -> bytes:
    try:
        return _brotli_decode(body)
    except HttpError:
        raise
    except Exception as e:
        if body.lstrip()[:1] == b"<":  # stored decoded, as with gzip above
            warnings.append(("content_encoding_not_applied", "Content-Encoding: br, body stored decoded"))
            return body
        raise HttpError("http_bad_encoding", f"brotli: {e}") from None
