"""What an archive file is, from its first bytes (never its name): compression, WARC or ARC,
and for WARC-zstd the dictionary frame every record frame needs.

Copying a record without decompressing it works for every format preprocess indexes,
because each record is its own compressed unit: a gzip member (``.warc.gz``, ``.arc.gz``),
a zstd frame (``.warc.zst``, compressed with the dictionary of the file's leading skippable
frame when it has one), an LZ4 frame (``.warc.lz4``), or a plain byte range (``.warc``,
``.arc``). A copy is valid in its new file when that file has the same format: the same
compression, and for zstd the same dictionary frame at its start.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import zstandard

from lib.errors import DailysliceError
from lib.warc.parse import arc_fields
from lib.warc.streams import CODECS, GZIP_MAGIC, LZ4_MAGIC, PADDING, ZSTD_MAGIC, sniff_codec

#: output file suffix of each compression
SUFFIX = {"gzip": ".gz", "zstd": ".zst", "lz4": ".lz4", None: ""}
MAGIC = {"gzip": GZIP_MAGIC, "zstd": ZSTD_MAGIC, "lz4": LZ4_MAGIC}
_SNIFF_BYTES = 256 << 10  # enough compressed input for the first bytes of any first record


class FormatError(DailysliceError):
    """The file is no archive we can copy from (reason is a short stable code)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def is_skippable(head: bytes) -> bool:
    return len(head) >= 8 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50


def dictionary_of(frame: bytes) -> bytes | None:
    """The zstd dictionary a WARC-zstd skippable frame carries (itself zstd-compressed or not)."""
    data = frame[8:]
    if not data:
        return None
    if data.startswith(ZSTD_MAGIC):
        data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return data


@dataclass(frozen=True)
class ArchiveFormat:
    codec: str | None  # "gzip", "zstd", "lz4" or None (uncompressed)
    kind: str  # "warc" or "arc"
    dict_frame: bytes = b""  # zstd: the leading skippable frame as stored ("" when none)

    @property
    def suffix(self) -> str:
        """Output file suffix, e.g. ``warc.gz``, ``arc``, ``warc.zst``."""
        return self.kind + SUFFIX[self.codec]

    @property
    def key(self) -> str:
        """Records with equal keys may share an output file (same dictionary for zstd)."""
        if not self.dict_frame:
            return self.suffix
        return f"{self.suffix}#{hashlib.sha1(self.dict_frame).hexdigest()[:12]}"

    @property
    def dictionary(self) -> bytes | None:
        return dictionary_of(self.dict_frame) if self.dict_frame else None

    def starts_record(self, first: bytes) -> bool:
        """Whether a range starting with ``first`` can be a record of this format: the
        compression's magic number, or for uncompressed files a WARC/ARC header line."""
        if self.codec is not None:
            return first.startswith(MAGIC[self.codec])
        if self.kind == "warc":
            return first[:5].upper() == b"WARC/"
        line = first.split(b"\n", 1)[0]
        return line[:11].lower() == b"filedesc://" or arc_fields(line) is not None

    def starts_record_at(self, data: bytes | memoryview, pos: int, end: int) -> bool:
        """:meth:`starts_record` for ``data[pos:end]`` without copying it for the compressed
        formats (the local fast path checks every range of a big read this way)."""
        if self.codec is not None:
            magic = MAGIC[self.codec]
            return end - pos >= len(magic) and bytes(data[pos : pos + len(magic)]) == magic
        return self.starts_record(bytes(data[pos : min(end, pos + 4096)]))

    def decoder(self):  # -> a lib.warc.streams codec (feed/eof)
        assert self.codec is not None
        d = self.dictionary
        return CODECS[self.codec](d) if d is not None else CODECS[self.codec]()


def first_bytes(fmt_codec: str | None, data: bytes, dictionary: bytes | None, n: int = 4096) -> bytes:
    """Up to ``n`` decompressed bytes from the start of the member/frame ``data``."""
    if fmt_codec is None:
        return data[:n]
    d = CODECS[fmt_codec](dictionary) if dictionary is not None else CODECS[fmt_codec]()
    out = b""
    pos = 0
    while len(out) < n and pos < len(data) and not d.eof:
        try:
            chunk, used = d.feed(data[pos:])
        except ValueError:
            break
        out += chunk
        pos += used
        if not chunk and not used:
            break
    return out[:n]


def record_kind(start: bytes) -> str | None:
    """``warc`` or ``arc`` from a record's first bytes, None when they start neither."""
    start = start.lstrip(PADDING)
    if start[:5].upper() == b"WARC/":
        return "warc"
    line = start.split(b"\n", 1)[0]
    if line[:11].lower() == b"filedesc://" or arc_fields(line) is not None:
        return "arc"
    return None


def sniff_format(read: Callable[[int, int], bytes], name: str) -> ArchiveFormat:
    """The format of the archive whose bytes ``read(offset, n)`` returns (``name`` for errors).

    Compression from the magic number, WARC or ARC from the first record's first line."""
    head = read(0, _SNIFF_BYTES)
    codec = sniff_codec(head[:16])
    dict_frame = b""
    body = head
    if codec == "zstd" and is_skippable(head):
        size = int.from_bytes(head[4:8], "little")
        dict_frame = head[: 8 + size] if 8 + size <= len(head) else read(0, 8 + size)
        if len(dict_frame) < 8 + size:
            raise FormatError("not-archive", f"{name}: file ends inside its zstd dictionary frame")
        body = head[8 + size :] if 8 + size <= len(head) else read(8 + size, _SNIFF_BYTES)
    dictionary = dictionary_of(dict_frame) if dict_frame else None
    kind = record_kind(first_bytes(codec, body, dictionary))
    if kind is None:
        what = f"{codec} data" if codec else "uncompressed data"
        raise FormatError("not-archive", f"{name}: {what} that starts no WARC or ARC record ({head[:12]!r})")
    return ArchiveFormat(codec, kind, dict_frame)
