"""One capture by (file, offset, length): the archive member as stored, or its HTTP payload.

What the service calls to hand out a page behind a search hit. Everything is a ranged read
of the one record (``os.pread`` locally, ranged GETs on S3 through ``lib.store.storage``),
never the whole file; only the file's first bytes are read besides, to learn its format
(compression, WARC or ARC, and the dictionary of a WARC-zstd file).

- ``content_only=False``: the bytes at ``[offset, offset + length)`` as stored, streamed in
  chunks (a gzip member, zstd or LZ4 frame, or a plain record). The first bytes are checked
  to start a record of the file's format, so a wrong offset is an error, not garbage.
- ``content_only=True``: the record's payload. For HTTP records (``response``, ``revisit``,
  ``request`` and ARC records of http(s) URLs) the body after the HTTP head, de-chunked and
  content-decoded as preprocess decodes it (``lib.warc.http``) unless ``decode=False``, which
  gives the payload as transferred: the bytes the record's ``WARC-Payload-Digest`` covers.
  Other records (``resource``, ``metadata``, ...) give their whole block. The record is
  decoded in memory up to ``max_payload`` bytes (a larger one is an error).

Errors are :class:`CaptureError`, naming the file, the offset and the reason.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from typing import Iterator

from lib.errors import DailysliceError
from lib.extract.formats import ArchiveFormat, FormatError, first_bytes, record_kind, sniff_format
from lib.extract.lines import ExtractError, Resolver, check_real_path
from lib.store import storage
from lib.warc.http import HttpError, parse_head, parse_response, split_head
from lib.warc.records import BadRecord, iter_records

CHUNK = 1 << 20
#: media types of a member as stored
ARCHIVE_MEDIA_TYPE = {"warc": "application/warc", "arc": "application/x-arc"}
_HTTP_TYPES = ("response", "revisit", "request")


class CaptureError(DailysliceError):
    """A capture that cannot be served: ``reason`` is a short stable code (``missing-file``,
    ``escapes-root``, ``bad-range``, ``past-eof``, ``not-archive``, ``not-record``,
    ``too-large``, ``read-error``)."""

    def __init__(self, reason: str, file: str, offset: int, detail: str):
        super().__init__(f"{file} at offset {offset}: {reason}: {detail}")
        self.reason, self.file, self.offset, self.detail = reason, file, offset, detail


@dataclass
class Capture:
    """A capture ready to stream: iterate it for its bytes (once)."""

    file: str
    offset: int
    length: int
    format: ArchiveFormat
    content_only: bool
    content_type: str  # of what is streamed: the archive format's, or the payload's
    rec_type: str = ""
    url: str = ""
    status: int | None = None  # HTTP status of a response (content_only)
    warc_headers: dict[str, str] = field(default_factory=dict)  # lowercased names (content_only)
    http_headers: dict[str, str] = field(default_factory=dict)  # lowercased names (content_only)
    size: int | None = None  # bytes the iterator yields, where known in advance
    _chunks: Iterator[bytes] = iter(())

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def read(self) -> bytes:
        return b"".join(self._chunks)

    def close(self) -> None:
        """Release the source without streaming it (a capture that will not be sent)."""
        getattr(self._chunks, "close", lambda: None)()


class _Source:
    """Ranged reads of one archive, local or S3."""

    def __init__(self, uri: str, offset: int):
        self.uri = uri
        try:
            self.size = storage.size(uri)
        except FileNotFoundError:
            raise CaptureError("missing-file", uri, offset, "no such file") from None
        except IsADirectoryError:
            raise CaptureError("missing-file", uri, offset, "is a directory") from None
        except Exception as e:  # S3: a 404 from HEAD, or an unreachable endpoint
            code = getattr(e, "response", {}).get("Error", {}).get("Code")
            if code in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
                raise CaptureError("missing-file", uri, offset, "no such object") from None
            raise CaptureError("read-error", uri, offset, f"{type(e).__name__}: {e}") from None
        if not storage.is_s3(uri) and not storage.httpread.is_http(uri) and not os.path.isfile(uri):
            raise CaptureError("missing-file", uri, offset, "not a regular file")

    def read(self, offset: int, n: int) -> bytes:
        return storage.read_range(self.uri, offset, n)

    def stream(self, start: int, end: int) -> io.BufferedReader:
        if storage.is_s3(self.uri):
            return io.BufferedReader(storage.S3Stream(self.uri, start, end), buffer_size=CHUNK)
        raw = storage.open_raw(self.uri, start)
        return io.BufferedReader(storage.Prefixed(b"", raw, end - start), buffer_size=CHUNK)


def resolve(file: str, root: str | None, offset: int = 0) -> str:
    """The URI of ``file``: below ``root`` (never leaving it) when given, else a full URI or
    an absolute path."""
    try:
        uri = Resolver(root).resolve(file)
        if root and not storage.is_s3(uri) and not storage.httpread.is_http(uri):
            check_real_path(uri, os.path.realpath(Resolver(root).root or root))
    except ExtractError as e:
        raise CaptureError(e.kind, file, offset, e.detail) from None
    return uri


def _stream_range(src: _Source, offset: int, length: int) -> Iterator[bytes]:
    f = src.stream(offset, offset + length)
    try:
        left = length
        while left:
            data = f.read(min(CHUNK, left))
            if not data:
                raise CaptureError(
                    "read-error", src.uri, offset, f"file ended {left} bytes before the end of the record"
                )
            left -= len(data)
            yield data
    finally:
        f.close()


def _slices(data: bytes) -> Iterator[bytes]:
    for i in range(0, len(data), CHUNK):
        yield data[i : i + CHUNK]


def head_url(first: bytes) -> str:
    """The target URL named in a record's first bytes: WARC-Target-URI of a WARC header, the
    first field of an ARC header line ('' when the bytes hold neither)."""
    if first.startswith(b"WARC/"):
        for line in first.split(b"\r\n\r\n", 1)[0].split(b"\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"warc-target-uri":
                return value.strip().strip(b"<>").decode("utf-8", "replace")
        return ""
    line = first.lstrip(b"\r\n").split(b"\n", 1)[0]
    return line.split(b" ", 1)[0].decode("utf-8", "replace") if b" " in line else ""


def open_capture(
    file: str,
    offset: int,
    length: int,
    *,
    root: str | None = None,
    content_only: bool = False,
    decode: bool = True,
    max_payload: int = 64 << 20,
) -> Capture:
    """The capture at ``offset``/``length`` of ``file`` (a path below ``root``, or an absolute
    path / ``file://`` / ``s3://`` URI); see the module docstring. Raises :class:`CaptureError`
    before any byte is streamed when the range is not one record of the file."""
    uri = resolve(file, root, offset)
    if offset < 0 or length < 1:
        raise CaptureError("bad-range", uri, offset, f"offset must be >= 0 and length >= 1, got {offset}+{length}")
    src = _Source(uri, offset)
    if offset + length > src.size:
        raise CaptureError(
            "past-eof", uri, offset, f"range {offset}+{length} ends past the end of the file ({src.size} bytes)"
        )
    try:
        fmt = sniff_format(src.read, uri)
    except FormatError as e:
        raise CaptureError("not-archive", uri, offset, e.detail) from None
    head = src.read(offset, min(length, 256 << 10))
    first = first_bytes(fmt.codec, head, fmt.dictionary) if fmt.starts_record(head) else b""
    if not fmt.starts_record(head) or record_kind(first) is None:
        what = f"a {fmt.codec} member" if fmt.codec else "a record"
        raise CaptureError(
            "not-record",
            uri,
            offset,
            f"the range does not start {what} holding a WARC/ARC record (first bytes {head[:8]!r})",
        )
    if not content_only:
        return Capture(
            uri,
            offset,
            length,
            fmt,
            False,
            ARCHIVE_MEDIA_TYPE[fmt.kind],
            url=head_url(first),
            size=length,
            _chunks=_stream_range(src, offset, length),
        )
    return _payload(src, fmt, offset, length, decode, max_payload)


def _payload(src: _Source, fmt: ArchiveFormat, offset: int, length: int, decode: bool, cap: int) -> Capture:
    # the record read through lib.warc, as preprocess reads it; a zstd record needs the
    # file's dictionary frame in front of it
    raw = src.stream(offset, offset + length)
    stream = io.BufferedReader(storage.Prefixed(fmt.dict_frame, raw, length), buffer_size=CHUNK)
    try:
        first = next(iter_records(stream, src.uri, max_content=cap), None)
    finally:
        stream.close()
    if first is None or isinstance(first, BadRecord):
        detail = f"{first.reason}: {first.detail}" if first is not None else "no record in the range"
        raise CaptureError("not-record", src.uri, offset, detail)
    rec = first
    if rec.oversized:
        raise CaptureError("too-large", src.uri, offset, f"record block of {rec.content_length} bytes is over {cap}")
    if rec.truncated:
        raise CaptureError("not-record", src.uri, offset, "the record is cut off by the end of the range")
    cap_out = Capture(
        src.uri, offset, length, fmt, True, "", rec_type=rec.rec_type, url=rec.url, warc_headers=dict(rec.headers)
    )
    block = rec.content
    http = rec.rec_type in _HTTP_TYPES and rec.url.lower().startswith(("http:", "https:"))
    if not http:
        cap_out.content_type = rec.headers.get("content-type", "application/octet-stream")
        return _done(cap_out, block)
    try:
        lines, start = split_head(block)
        if rec.rec_type == "request":
            _, headers, _ = _request_head(lines)
            body = block[start:]
        elif decode:
            resp = parse_response(block)
            cap_out.status, headers, body = resp.status, resp.headers, resp.body
        else:
            cap_out.status, headers, _ = parse_head(lines)
            body = block[start:]
    except HttpError as e:
        raise CaptureError("not-record", src.uri, offset, f"HTTP record without a usable HTTP head: {e}") from None
    if rec.rec_type == "revisit":
        body = b""  # a revisit stores the HTTP head only; its payload is another capture's
    cap_out.http_headers = headers
    cap_out.content_type = headers.get("content-type", "application/octet-stream")
    return _done(cap_out, body)


def _request_head(lines: list[str]) -> tuple[None, dict[str, str], list]:
    """Headers of an HTTP request head (its first line is no status line)."""
    return None, parse_head(["HTTP/1.1 000"] + lines[1:])[1], []


def _done(c: Capture, body: bytes) -> Capture:
    c.size = len(body)
    c._chunks = _slices(body)
    return c
