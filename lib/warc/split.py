"""Where a byte range of a multi-member gzip WARC begins: the first member proven to start a record.

Every mature WARC writer compresses each record as a gzip member of its own, so such a file can
be read from the middle as Spark reads a text file from the middle of a block: a range
``[offset, end)`` begins at the first member that starts in it, and the range before reads the
member straddling ``offset`` whole. The gzip magic (``1f 8b 08``) also occurs by chance inside
compressed data, so a candidate counts only when its first decompressed bytes are ``WARC/``
(a continuation member of a record spanning members, a corrupt or false one never are).
Memory is bounded by :data:`WINDOW` plus :data:`PROBE`, whatever the file's size.

A limit: a record whose payload is itself a ``.warc.gz`` file may be stored by deflate as raw
bytes (incompressible data goes into stored blocks), and then its inner members would pass the
check; no writer we know compresses that way, and the same is true of any splitter of gzip files.
"""

from __future__ import annotations

import os
from typing import Protocol

from isal import isal_zlib

from lib.warc.streams import GZIP_MAGIC

__all__ = ["PROBE", "WINDOW", "begins_record", "find_member", "member_start"]

#: compressed bytes scanned for the magic at a time
WINDOW = 1 << 19
#: compressed bytes a candidate may take to yield its first decompressed bytes (gzip header
#: fields included: a writer's FEXTRA or FNAME is a few dozen bytes)
PROBE = 1 << 16


def begins_record(data: bytes) -> bool:
    """Whether ``data`` (compressed bytes starting with the gzip magic) begins a gzip member
    whose first decompressed bytes are ``WARC/`` (any case, as the reader accepts)."""
    if (
        len(data) < 10 or not data.startswith(GZIP_MAGIC) or data[3] & 0xE0
    ):  # a header is 10 bytes; reserved flags are 0 (RFC 1952)
        return False
    try:
        out = isal_zlib.decompressobj(31).decompress(data, 5)  # inflates no further than 5 bytes
    except isal_zlib.error:  # type: ignore[misc]  # isal's stub types `error` loosely
        return False
    return out[:5].upper() == b"WARC/"


class ByteStream(Protocol):
    """What the search reads: a stream of bytes, seekable or not (a file, an S3 stream)."""

    def read(self, size: int = -1, /) -> bytes | None: ...

    def seekable(self) -> bool: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...


def _scan(f: ByteStream, offset: int, end: int | None) -> tuple[int | None, bytes]:
    """:func:`find_member` over ``f`` positioned at ``offset`` (read forward only)."""
    buf = b""
    pos = offset  # absolute offset of buf[0]
    eof = False
    i = 0  # where in buf the search goes on
    while True:
        if not eof and len(buf) - i < PROBE + len(GZIP_MAGIC):
            buf, pos, i = buf[i:], pos + i, 0  # drop what is searched: the buffer stays bounded
            data = f.read(WINDOW) or b""  # None (a raw stream with nothing ready): as at the end
            buf += data
            eof = not data
            continue  # a short read: check again
        j = buf.find(GZIP_MAGIC, i)
        if j < 0:
            if eof or (end is not None and pos + len(buf) - len(GZIP_MAGIC) >= end):
                return None, b""
            i = len(buf) - len(GZIP_MAGIC) + 1  # a magic may straddle the next read
            continue
        at = pos + j
        if end is not None and at >= end:
            return None, b""
        if not eof and len(buf) - j < PROBE:
            i = j  # read on until the candidate's probe is whole
            continue
        if begins_record(buf[j : j + PROBE]):
            return at, buf[j:]
        i = j + 1


def member_start(source: ByteStream | str | os.PathLike, offset: int, end: int | None = None) -> int | None:
    """The offset of the first gzip member starting at or after ``offset`` and before ``end``
    (None: the end of the file) whose first decompressed bytes are ``WARC/``; None when there is
    none. ``source`` is a path, a seekable stream, or a forward-only stream positioned at
    ``offset`` (an S3 object read from there)."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            f.seek(offset)
            return _scan(f, offset, end)[0]
    return find_member(source, offset, end)[0]


def find_member(f: ByteStream, offset: int, end: int | None = None) -> tuple[int | None, bytes]:
    """:func:`member_start` over the stream ``f`` (seekable, or forward-only and positioned at
    ``offset``), and the bytes from that member on which the search already read: ``head +
    f.read()`` is the file from the member on, so that one S3 request serves both the search
    and the reading after it. A seekable ``f`` is left at the member (``head`` empty)."""
    if f.seekable():
        f.seek(offset)
    at, head = _scan(f, offset, end)
    if at is not None and f.seekable():
        f.seek(at)
        head = b""
    return at, head
