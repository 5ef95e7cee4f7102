"""Byte streams over archive files that know where every gzip member starts and ends.

Record offsets must be exact (the extraction job copies ``warc_offset``/``warc_length``
bytes without decompressing), so instead of a generic gzip reader we decompress one
member at a time with zlib and count the compressed bytes each member consumed. Memory
is bounded by the chunk size: nothing ever holds a whole file or a whole member.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO, Iterator

GZIP_MAGIC = b"\x1f\x8b\x08"
CHUNK = 1 << 18
MAX_LINE = 1 << 16


class StreamError(Exception):
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
    """Iterate the gzip members of a compressed stream as :class:`Member` readers.

    After damage (corrupt deflate data, a bad header) it resynchronises on the next
    gzip magic so that records after the damage are still read; a truncated last
    member ends the iteration. Damage is reported through ``errors``.
    """

    def __init__(self, raw: BinaryIO, chunk: int = CHUNK):
        self.raw = raw
        self.chunk = chunk
        self._in = b""  # compressed bytes read from raw but not consumed
        self._pos = 0  # absolute offset of self._in[0]
        self.errors: list[StreamError] = []

    def _read_raw(self) -> bool:
        data = self.raw.read(self.chunk)
        if not data:
            return False
        self._in += data
        return True

    def _resync(self, after: int) -> bool:
        """Drop input up to the next gzip magic strictly after absolute offset ``after``."""
        while True:
            start = max(0, after + 1 - self._pos)
            i = self._in.find(GZIP_MAGIC, start)
            if i >= 0:
                self._pos += i
                self._in = self._in[i:]
                return True
            keep = len(GZIP_MAGIC) - 1
            drop = max(0, len(self._in) - keep)
            self._pos += drop
            self._in = self._in[drop:]
            if not self._read_raw():
                return False

    def __iter__(self) -> Iterator["Member"]:
        while True:
            if not self._in and not self._read_raw():
                return
            if len(self._in) < 3 and self._read_raw():
                continue
            start = self._pos
            if not self._in.startswith(GZIP_MAGIC):
                if self._in.strip(b"\x00\r\n\t ") == b"" and not self._read_raw():
                    return  # trailing padding
                reason = "not_gzip" if start == 0 else "gzip_garbage"
                self.errors.append(StreamError(reason, f"expected gzip magic, found {self._in[:8]!r}", start))
                if not self._resync(start):
                    return
                continue
            member = Member(self, start)
            yield member
            member.drain()
            if member.error is not None:
                self.errors.append(member.error)
                if member.error.reason == "truncated_gzip_member" or not self._resync(start):
                    return


class Member(ByteReader):
    """One gzip member's decompressed bytes; ``offset``/``length`` are compressed."""

    def __init__(self, owner: GzipMembers, offset: int):
        super().__init__()
        self.owner = owner
        self.offset = offset
        self.length: int | None = None
        self.error: StreamError | None = None
        self._d = zlib.decompressobj(31)
        self.decompressed = 0

    def _fill(self) -> bytes:
        o = self.owner
        if self.length is not None or self.error is not None:
            return b""
        while True:
            if not o._in and not o._read_raw():
                self.error = StreamError("truncated_gzip_member", "file ends inside a gzip member", self.offset)
                return b""
            chunk = o._in
            try:
                out = self._d.decompress(chunk, CHUNK)
            except zlib.error as e:
                self.error = StreamError("corrupt_gzip_member", str(e), self.offset)
                return b""
            rest = self._d.unused_data if self._d.eof else self._d.unconsumed_tail
            consumed = len(chunk) - len(rest)
            o._pos += consumed
            o._in = rest
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
