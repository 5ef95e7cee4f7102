"""Length-delimited message framing over a plain or gzip file, with byte offsets for errors."""

from __future__ import annotations

import gzip
import io
import zlib

from lib.ciff.errors import CiffError
from lib.ciff.messages import MAX_MESSAGE
from lib.ciff.varint import decode_varint
from lib.store import locations

READ_CHUNK = 1 << 20


def is_gzip_name(path: str) -> bool:
    """CIFF files are gzip-compressed exactly when the name ends in ``.gz``."""
    return str(path).endswith(".gz")


def open_ciff(path: str) -> io.BufferedIOBase:
    """Open a local CIFF file (plain path or file:// URI) for reading; gzip by suffix."""
    p = locations.local_path(str(path))
    raw = open(p, "rb")
    if is_gzip_name(p):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # closing it leaves raw open: see MessageStream.close
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == b"\x1f\x8b":
        raw.close()
        raise CiffError("file is gzip-compressed but its name does not end in .gz", path=str(path), offset=0)
    return raw


class MessageStream:
    """Reads varint-length-prefixed messages one at a time; memory is one message plus a read chunk.

    ``offset`` is the position in the uncompressed stream, which is what error messages report.
    """

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self._f = open_ciff(self.path)
        self._raw = getattr(self._f, "fileobj", None)
        self._buf = b""
        self._pos = 0
        self._base = 0  # stream offset of _buf[0]
        self._eof = False

    @property
    def offset(self) -> int:
        return self._base + self._pos

    def _read(self, n: int) -> bytes:
        try:
            return self._f.read(n)
        except EOFError:
            raise CiffError(
                "compressed stream ends early (truncated .gz file)", path=self.path, offset=self._base + len(self._buf)
            ) from None
        except (gzip.BadGzipFile, zlib.error) as e:
            raise CiffError(f"corrupt gzip data: {e}", path=self.path, offset=self._base + len(self._buf)) from None

    def _fill(self, need: int) -> int:
        """Make at least ``need`` bytes available after the cursor (fewer only at EOF); returns the count."""
        avail = len(self._buf) - self._pos
        if avail >= need or self._eof:
            return avail
        parts = [self._buf[self._pos :]]
        self._base += self._pos
        self._pos = 0
        while avail < need:
            data = self._read(max(READ_CHUNK, need - avail))
            if not data:
                self._eof = True
                break
            parts.append(data)
            avail += len(data)
        self._buf = b"".join(parts)
        return avail

    def at_eof(self) -> bool:
        return self._fill(1) == 0

    def next_message(self, what: str = "message") -> tuple[int, bytes] | None:
        """Return (offset of the length prefix, message bytes), or None at a clean end of file."""
        start = self.offset
        avail = self._fill(10)
        if avail == 0:
            return None
        try:
            n, after = decode_varint(self._buf, self._pos, self._pos + avail)
        except CiffError:
            raise CiffError(f"truncated or invalid length prefix of {what}", path=self.path, offset=start) from None
        if n > MAX_MESSAGE:
            raise CiffError(f"{what} length {n} exceeds the 2 GiB message limit", path=self.path, offset=start)
        self._pos = after
        got = self._fill(n)
        if got < n:
            raise CiffError(
                f"file ends {got} bytes into a {what} of {n} bytes (truncated file)", path=self.path, offset=start
            )
        msg = self._buf[self._pos : self._pos + n]
        self._pos += n
        return start, msg

    def close(self) -> None:
        self._f.close()
        if self._raw is not None:
            self._raw.close()

    def __enter__(self) -> "MessageStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
