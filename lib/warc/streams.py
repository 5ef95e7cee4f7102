"""Byte streams over archive files that know where every compressed member starts and ends.

Record offsets must be exact (the extraction job copies ``warc_offset``/``warc_length``
bytes without decompressing), so instead of a generic reader we decompress one member
(gzip member, zstd or LZ4 frame) at a time and count the compressed bytes each consumed.
Memory is bounded by the chunk size: nothing ever holds a whole file or a whole member.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator

import lz4.frame
import zstandard
from isal import isal_zlib

from lib.errors import DailysliceError

GZIP_MAGIC = b"\x1f\x8b\x08"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
CHUNK = 1 << 18
MAX_LINE = 1 << 16
#: bytes writers leave between records and members (line ends, space and NUL padding)
PADDING = b"\r\n \t\x00"


class _Inflate:
    """One gzip member. ISA-L's inflate (zlib's API and output, ~2x faster: a sixth of a heavy
    page's CPU was zlib, docs/benchmarks.md, "Preprocess per core against peer loops")."""

    magic = GZIP_MAGIC
    name = "gzip"

    def __init__(self, dict_data: bytes | None = None) -> None:  # one signature for every codec (CODECS)
        if dict_data is not None:
            raise ValueError("a gzip member takes no dictionary")
        self._d = isal_zlib.decompressobj(31)

    @property
    def eof(self) -> bool:
        return self._d.eof

    def feed(self, data: bytes) -> tuple[bytes, int]:
        """(output, bytes of ``data`` consumed); raises ValueError on corrupt data."""
        try:
            out = self._d.decompress(data, CHUNK)
        except isal_zlib.error as e:  # type: ignore[misc]  # isal's stub types `error` loosely
            raise ValueError(str(e)) from None
        rest = self._d.unused_data if self._d.eof else self._d.unconsumed_tail
        return out, len(data) - len(rest)


class _Zstd:
    """One zstd frame (WARC-zstd: one record a frame, an optional dictionary frame first)."""

    magic = ZSTD_MAGIC
    name = "zstd"

    def __init__(self, dict_data: bytes | None = None) -> None:
        zd = zstandard.ZstdCompressionDict(dict_data) if dict_data else None
        self._d = zstandard.ZstdDecompressor(dict_data=zd).decompressobj()
        self._err = zstandard.ZstdError

    @property
    def eof(self) -> bool:
        return self._d.eof

    def feed(self, data: bytes) -> tuple[bytes, int]:
        data = data[:CHUNK]  # the whole output of a call is returned: bound it by the input
        try:
            out = self._d.decompress(data)
        except self._err as e:
            raise ValueError(str(e)) from None
        return out, len(data) - (len(self._d.unused_data) if self._d.eof else 0)


class _Lz4:
    """One LZ4 frame."""

    magic = LZ4_MAGIC
    name = "lz4"

    def __init__(self, dict_data: bytes | None = None) -> None:  # one signature for every codec (CODECS)
        if dict_data is not None:
            raise ValueError("an LZ4 frame takes no dictionary")
        self._d = lz4.frame.LZ4FrameDecompressor()

    @property
    def eof(self) -> bool:
        return self._d.eof

    def feed(self, data: bytes) -> tuple[bytes, int]:
        data = data[:CHUNK]  # no max_length: then unused_data is always this call's input
        try:
            out = self._d.decompress(data)
        except RuntimeError as e:
            raise ValueError(str(e)) from None
        return out, len(data) - (len(self._d.unused_data or b"") if self._d.eof else 0)


CODECS = {c.name: c for c in (_Inflate, _Zstd, _Lz4)}


def sniff_codec(head: bytes) -> str | None:
    """'gzip', 'zstd' or 'lz4' from a file's first bytes (a zstd file may start with a
    skippable dictionary frame); None when uncompressed."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC) or (len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50):
        return "zstd"
    if head.startswith(LZ4_MAGIC):
        return "lz4"
    return None


class StreamError(DailysliceError):
    """Damage in the compressed stream (reason is a short machine-readable tag)."""

    def __init__(self, reason: str, detail: str, offset: int):
        super().__init__(f"{reason} at offset {offset}: {detail}")
        self.reason = reason
        self.detail = detail
        self.offset = offset


class ByteReader:
    """Minimal buffered reader (read, readline, peek, tell) over ``_fill()`` chunks."""

    def __init__(self) -> None:
        self._buf = b""
        self._bufpos = 0
        self._consumed = 0  # bytes handed out so far (logical position)
        self._eof = False

    def _fill(self) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def _more(self) -> bool:
        if self._eof:
            return False
        chunk = self._fill()
        if not chunk:
            self._eof = True
            return False
        self._buf = self._buf[self._bufpos :] + chunk
        self._bufpos = 0
        return True

    def tell(self) -> int:
        return self._consumed

    def peek(self, n: int) -> bytes:
        while len(self._buf) - self._bufpos < n and self._more():
            pass
        return self._buf[self._bufpos : self._bufpos + n]

    def read(self, n: int) -> bytes:
        while len(self._buf) - self._bufpos < n and self._more():
            pass
        out = self._buf[self._bufpos : self._bufpos + n]
        self._bufpos += len(out)
        self._consumed += len(out)
        return out

    def skip(self, n: int) -> int:
        """Discard up to ``n`` bytes without keeping them; returns how many were skipped."""
        done = 0
        while done < n:
            avail = len(self._buf) - self._bufpos
            if avail == 0 and not self._more():
                break
            take = min(n - done, len(self._buf) - self._bufpos)
            self._bufpos += take
            self._consumed += take
            done += take
        return done

    def readline(self, limit: int = MAX_LINE) -> bytes:
        """One line including its ``\n`` (at most ``limit`` bytes; less at EOF)."""
        searched = 0  # bytes after _bufpos already searched for a newline
        while True:
            end = min(len(self._buf), self._bufpos + limit)
            i = self._buf.find(b"\n", self._bufpos + searched, end)
            if i >= 0:
                return self.read(i + 1 - self._bufpos)
            if end - self._bufpos >= limit:
                return self.read(limit)
            searched = end - self._bufpos
            if not self._more():
                return self.read(len(self._buf) - self._bufpos)


class PlainReader(ByteReader):
    """An uncompressed file: the logical position is the file offset."""

    def __init__(self, raw: BinaryIO, chunk: int = CHUNK):
        super().__init__()
        self.raw = raw
        self.chunk = chunk

    def _fill(self) -> bytes:
        return self.raw.read(self.chunk)


class GzipMembers:
    """Iterate the members (gzip members; zstd or LZ4 frames with ``codec``) of a compressed
    stream as :class:`Member` readers.

    After damage (corrupt data, a bad header) it resynchronises on the next magic number
    so that records after the damage are still read; a truncated last member ends the
    iteration. Damage is reported through ``errors``. ``raw`` may be positioned at a member
    that starts at file offset ``start``: offsets are then the file's.
    """

    def __init__(self, raw: BinaryIO, chunk: int = CHUNK, codec: str = "gzip", start: int = 0):
        self.raw = raw
        self.chunk = chunk
        self.codec = CODECS[codec]
        self.magic = self.codec.magic
        self._in = b""  # compressed bytes read from raw but not consumed
        self._pos = start  # absolute offset of self._in[0] (``raw`` is read from ``start`` on)
        self._dict: bytes | None = None  # zstd dictionary from a leading skippable frame
        self.errors: list[StreamError] = []

    def _read_raw(self) -> bool:
        data = self.raw.read(self.chunk)
        if not data:
            return False
        self._in += data
        return True

    def _resync(self, after: int) -> bool:
        """Drop input up to the next magic number strictly after absolute offset ``after``."""
        while True:
            start = max(0, after + 1 - self._pos)
            i = self._in.find(self.magic, start)
            if i >= 0:
                self._pos += i
                self._in = self._in[i:]
                return True
            keep = len(self.magic) - 1
            drop = max(0, len(self._in) - keep)
            self._pos += drop
            self._in = self._in[drop:]
            if not self._read_raw():
                return False

    def _skippable_frame(self) -> bool:
        """Consume a zstd skippable frame at the read position (the WARC-zstd dictionary)."""
        while len(self._in) < 8 and self._read_raw():
            pass
        head = self._in[:8]
        if len(head) < 8 or head[1:4] != b"\x2a\x4d\x18" or head[0] & 0xF0 != 0x50:
            return False
        size = int.from_bytes(head[4:8], "little")
        while len(self._in) < 8 + size and self._read_raw():
            pass
        data = self._in[8 : 8 + size]
        consumed = min(len(self._in), 8 + size)
        self._pos += consumed
        self._in = self._in[consumed:]
        if self._dict is None and data:
            if data.startswith(ZSTD_MAGIC):
                data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
            self._dict = data
        return True

    def __iter__(self) -> Iterator["Member"]:
        name = self.codec.name
        while True:
            if not self._in and not self._read_raw():
                return
            if len(self._in) < 4 and self._read_raw():
                continue
            if name == "zstd" and self._skippable_frame():
                continue
            start = self._pos
            if not self._in.startswith(self.magic):
                if self._in.strip(PADDING) == b"" and not self._read_raw():
                    return  # trailing padding
                reason = f"not_{name}" if start == 0 else f"{name}_garbage"
                self.errors.append(StreamError(reason, f"expected {name} magic, found {self._in[:8]!r}", start))
                if not self._resync(start):
                    return
                continue
            member = Member(self, start)
            yield member
            member.drain()
            if member.error is not None:
                if not member.absorbed:
                    self.errors.append(member.error)
                if member.error.reason.startswith("truncated_") or not self._resync(start):
                    return


class Member(ByteReader):
    """One member's decompressed bytes; ``offset``/``length`` are compressed."""

    def __init__(self, owner: GzipMembers, offset: int):
        super().__init__()
        self.owner = owner
        self.offset = offset
        self.length: int | None = None
        self.error: StreamError | None = None
        self.absorbed = False  # a record reported this member's truncation as its own warning
        codec = owner.codec
        self._d = codec(owner._dict) if owner._dict is not None else codec()
        self.decompressed = 0

    def _fill(self) -> bytes:
        o = self.owner
        if self.length is not None or self.error is not None:
            return b""
        name = o.codec.name
        while True:
            if not o._in and not o._read_raw():
                self.error = StreamError(f"truncated_{name}_member", f"file ends inside a {name} member", self.offset)
                return b""
            try:
                out, consumed = self._d.feed(o._in)
            except ValueError as e:
                self.error = StreamError(f"corrupt_{name}_member", str(e), self.offset)
                return b""
            o._pos += consumed
            o._in = o._in[consumed:]
            if self._d.eof:
                self.length = o._pos - self.offset
            if out:
                self.decompressed += len(out)
                return out
            if self._d.eof:
                return b""

    def drain(self) -> None:
        """Decompress (and discard) the rest of the member to learn where it ends."""
        while self.length is None and self.error is None:
            self._buf, self._bufpos = b"", 0
            if not self._fill():
                break
        self._eof = True

    @property
    def complete(self) -> bool:
        return self.length is not None and self.error is None
