"""``--verify``: a copied range must be exactly one whole gzip member holding exactly one
record whose URL is the line's url (WARC-Target-URI, or the URL of the ARC header line).

The check is streaming: the range is fed chunk by chunk as it is copied, only the start
of the decompressed record is kept (for its header) and its total length is counted.
Uncompressed ``.warc`` ranges get the same record check without the gzip part.
"""

from __future__ import annotations

import zlib

from lib.extract.lines import ExtractError

_HEAD_KEEP = 64 * 1024
_OUT_STEP = 4 << 20  # decompress at most this much per call: bounded memory for huge records

#: First bytes every range of a format must start with (checked even without --verify:
#: a wrong offset must not silently produce a corrupt archive).
MAGIC = {"warc.gz": b"\x1f\x8b\x08", "arc.gz": b"\x1f\x8b\x08", "warc": b"WARC/"}


def magic_error(fmt: str, first: bytes) -> ExtractError:
    what = "a gzip member" if fmt.endswith(".gz") else "a WARC record"
    return ExtractError("not-member", f"range does not start {what} (first bytes {first[:8]!r})")


def check_magic(fmt: str, first: bytes) -> None:
    if not first.startswith(MAGIC[fmt]):
        raise magic_error(fmt, first)


class RecordCheck:
    """Feed the range's bytes with :meth:`feed`, then :meth:`finish` raises on any problem."""

    def __init__(self, fmt: str, url: str):
        self.fmt, self.url = fmt, url
        self.inflate = zlib.decompressobj(31) if fmt.endswith(".gz") else None
        self.head = bytearray()
        self.total = 0
        self.tail = b""
        self.trailing = 0
        self.gzip_error: str | None = None

    def feed(self, chunk: bytes) -> None:
        d = self.inflate
        if d is None:
            self._record(chunk)
            return
        if self.gzip_error is not None:
            return
        if d.eof:
            self.trailing += len(chunk)
            return
        try:
            data = d.decompress(chunk, _OUT_STEP)
            self._record(data)
            while d.unconsumed_tail and not d.eof:
                data = d.decompress(d.unconsumed_tail, _OUT_STEP)
                self._record(data)
        except zlib.error as e:
            self.gzip_error = str(e)
            return
        if d.eof:
            self.trailing += len(d.unused_data)

    def _record(self, data: bytes) -> None:
        if not data:
            return
        if len(self.head) < _HEAD_KEEP:
            self.head += data[: _HEAD_KEEP - len(self.head)]
        self.total += len(data)
        self.tail = (self.tail + data[-4:])[-4:]

    def finish(self) -> None:
        if self.inflate is not None:
            if self.gzip_error is not None:
                raise ExtractError("not-member", f"corrupt gzip data: {self.gzip_error}")
            if not self.inflate.eof:
                raise ExtractError("not-member", "range ends inside a gzip member (too short?)")
            if self.trailing:
                raise ExtractError("not-member", f"{self.trailing} bytes after the end of the gzip member (more than one member?)")
        if self.fmt.startswith("arc"):
            self._finish_arc()
        else:
            self._finish_warc()

    def _finish_warc(self) -> None:
        head = bytes(self.head)
        if not head.startswith(b"WARC/"):
            raise ExtractError("not-member", "member does not hold a WARC record")
        end = head.find(b"\r\n\r\n")
        if end < 0:
            raise ExtractError("not-member", "WARC record header not terminated")
        fields: dict[str, str] = {}
        for line in head[:end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower().decode("latin-1")] = value.strip().decode("utf-8", "surrogateescape")
        try:
            length = int(fields.get("content-length", ""))
        except ValueError:
            raise ExtractError("not-member", "WARC record without a valid Content-Length") from None
        expected = end + 4 + length + 4
        self._check_length(expected, b"\r\n\r\n", "WARC")
        uri = fields.get("warc-target-uri", "")
        if uri.startswith("<") and uri.endswith(">"):  # WARC 1.0 examples wrap it in <>
            uri = uri[1:-1]
        self._check_url(uri)

    def _finish_arc(self) -> None:
        head = bytes(self.head)
        nl = head.find(b"\n")
        if nl < 0:
            raise ExtractError("not-member", "ARC record header line not terminated")
        parts = head[:nl].rstrip(b"\r").split(b" ")
        try:
            length = int(parts[-1])
        except ValueError:
            raise ExtractError("not-member", f"ARC header line without a length: {head[:nl][:200]!r}") from None
        if len(parts) < 5:
            raise ExtractError("not-member", f"ARC header line has {len(parts)} fields: {head[:nl][:200]!r}")
        body_end = nl + 1 + length
        # Records end with one newline; tolerate writers that leave it out.
        if self.total == body_end:
            expected, tail = body_end, b""
        else:
            expected, tail = body_end + 1, b"\n"
        self._check_length(expected, tail, "ARC")
        self._check_url(parts[0].decode("utf-8", "surrogateescape"))

    def _check_length(self, expected: int, tail: bytes, kind: str) -> None:
        if self.total < expected:
            raise ExtractError("not-member", f"{kind} record truncated: {self.total} of {expected} bytes")
        if self.total > expected:
            raise ExtractError("not-member", f"{self.total - expected} bytes after the {kind} record (more than one record?)")
        if tail and not self.tail.endswith(tail):
            raise ExtractError("not-member", f"{kind} record not terminated by {tail!r}")

    def _check_url(self, found: str) -> None:
        if found != self.url:
            raise ExtractError("url-mismatch", f"record URL {found or '(none)'!r} != line url {self.url!r}")
