"""``--verify``: a copied range must be exactly one whole compressed member (gzip member,
zstd or LZ4 frame) holding exactly one record whose URL is the line's url
(WARC-Target-URI, or the URL of the ARC header line).

The check is streaming: the range is fed chunk by chunk as it is copied, only the start
of the decompressed record is kept (for its header) and its total length is counted.
Uncompressed ``.warc``/``.arc`` ranges get the same record check without the member part.
"""

from __future__ import annotations

from lib.extract.formats import ArchiveFormat
from lib.extract.lines import ExtractError
from lib.warc.streams import PADDING

_HEAD_KEEP = 64 * 1024
_TAIL_KEEP = 16  # writers leave a few line ends or NULs after a record: read past, as readers do
#: bytes of a range the start check needs (an uncompressed ARC range: its header line)
HEAD_BYTES = 4096


def magic_error(fmt: ArchiveFormat, first: bytes) -> ExtractError:
    what = f"a {fmt.codec} member" if fmt.codec else f"a {fmt.kind.upper()} record"
    return ExtractError("not-member", f"range does not start {what} (first bytes {first[:8]!r})")


def check_magic(fmt: ArchiveFormat, first: bytes) -> None:
    """Checked even without --verify: a wrong offset must not silently produce a corrupt archive."""
    if not fmt.starts_record(first):
        raise magic_error(fmt, first)


class RecordCheck:
    """Feed the range's bytes with :meth:`feed`, then :meth:`finish` raises on any problem."""

    def __init__(self, fmt: ArchiveFormat, url: str):
        self.fmt, self.url = fmt, url
        self.decoder = fmt.decoder() if fmt.codec else None
        self.head = bytearray()
        self.total = 0
        self.tail = b""
        self.trailing = 0
        self.codec_error: str | None = None

    def feed(self, chunk: bytes) -> None:
        d = self.decoder
        if d is None:
            self._record(chunk)
            return
        if self.codec_error is not None:
            return
        data = memoryview(chunk)
        try:
            while data and not d.eof:
                out, used = d.feed(bytes(data))  # output bounded per call: huge records stay in bounds
                self._record(out)
                data = data[used:]
                if not out and not used:
                    break
        except ValueError as e:
            self.codec_error = str(e)
            return
        if d.eof:
            self.trailing += len(data)

    def _record(self, data: bytes) -> None:
        if not data:
            return
        if len(self.head) < _HEAD_KEEP:
            self.head += data[: _HEAD_KEEP - len(self.head)]
        self.total += len(data)
        self.tail = (self.tail + data[-_TAIL_KEEP:])[-_TAIL_KEEP:]

    def finish(self) -> None:
        if self.decoder is not None:
            name = self.fmt.codec
            if self.codec_error is not None:
                raise ExtractError("not-member", f"corrupt {name} data: {self.codec_error}")
            if not self.decoder.eof:
                raise ExtractError("not-member", f"range ends inside a {name} member (too short?)")
            if self.trailing:
                raise ExtractError(
                    "not-member", f"{self.trailing} bytes after the end of the {name} member (more than one member?)"
                )
        if self.fmt.kind == "arc":
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
        excess = self.total - expected
        if 0 < excess <= _TAIL_KEEP and not self.tail[-excess:].strip(PADDING):
            return  # the record, then padding
        if excess > 0:
            raise ExtractError(
                "not-member", f"{self.total - expected} bytes after the {kind} record (more than one record?)"
            )
        if tail and not self.tail.endswith(tail):
            raise ExtractError("not-member", f"{kind} record not terminated by {tail!r}")

    def _check_url(self, found: str) -> None:
        if found != self.url:
            raise ExtractError("url-mismatch", f"record URL {found or '(none)'!r} != line url {self.url!r}")
