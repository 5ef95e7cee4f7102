"""Where a CIFF writer's bytes go: a temporary file beside the target (:mod:`lib.store.atomic`), gzip by suffix,
synced and renamed into place."""

from __future__ import annotations

import gzip
import os
import shutil

from isal import igzip

from lib.ciff.stream import is_gzip_name
from lib.store import atomic

FLUSH_BYTES = 1 << 20
#: levels up to this one are ISA-L's (igzip, the same gzip format): on CIFF postings ~4x faster
#: than zlib's level 2 at +2% size (docs/benchmarks.md, "Indexing"); ISA-L has no higher levels
ISAL_MAX_LEVEL = 3


def gzip_writer(name: str, fileobj, level: int) -> gzip.GzipFile:
    """A gzip member writer on ``fileobj`` (mtime 0: re-runs give identical bytes). Levels 1-3
    compress with ISA-L, 4-9 with zlib."""
    cls = igzip.IGzipFile if level <= ISAL_MAX_LEVEL else gzip.GzipFile
    return cls(filename=name, mode="wb", fileobj=fileobj, compresslevel=level, mtime=0)


class AtomicOutput:
    """Buffered output to a temporary file (:func:`lib.store.atomic.temp_path`); ``commit`` renames it.

    ``header_last``: the first message is only known at the end (counted mode). The body then
    goes to the temporary file and ``commit(head)`` writes ``head`` as a gzip member of its
    own, then copies the body's compressed bytes after it (a .gz file is a series of members:
    RFC 1952 2.2). gzip headers carry mtime 0 (and the name only in the first member), so
    re-runs produce identical bytes."""

    def __init__(self, path: str, compresslevel: int, header_last: bool = False):
        self.path = path
        self.level = compresslevel
        self.header_last = header_last
        self.gz = is_gzip_name(path)
        folder, name = os.path.split(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        self.tmp = atomic.temp_path(os.path.join(folder, name))
        self.body_tmp: str | None = None
        self.raw = open(self.tmp, "wb")
        self.out = (
            gzip_writer("" if header_last else name[:-3], self.raw, compresslevel)
            if self.gz
            else self.raw
        )
        self.parts: list[bytes] = []
        self.buffered = 0
        self.bytes_uncompressed = 0

    def write(self, *chunks: bytes) -> None:
        for c in chunks:
            self.parts.append(c)
            self.buffered += len(c)
        if self.buffered >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            data = b"".join(self.parts)
            self.out.write(data)
            self.bytes_uncompressed += len(data)
            self.parts = []
            self.buffered = 0

    def commit(self, head: bytes = b"") -> int:
        """Finish the file (``head`` in front when ``header_last``), fsync, rename; returns its size."""
        self.flush()
        if self.out is not self.raw:
            self.out.close()
        if self.header_last:
            self._prepend(head)
        self.raw.close()
        atomic.replace(self.tmp, self.path, fsync=True)  # a shard is committed alone: sync it
        return os.path.getsize(self.path)

    def _prepend(self, head: bytes) -> None:
        self.raw.close()
        body = self.tmp
        self.tmp = atomic.temp_path(self.path)
        self.body_tmp = body  # removed by abort() if the copy fails
        self.raw = open(self.tmp, "wb")
        if self.gz:
            name = os.path.basename(self.path)[:-3]
            with gzip_writer(name, self.raw, self.level) as g:
                g.write(head)
        else:
            self.raw.write(head)
        self.bytes_uncompressed += len(head)
        with open(body, "rb") as src:
            shutil.copyfileobj(src, self.raw, 1 << 20)
        os.remove(body)
        self.body_tmp = None

    def abort(self) -> None:
        """Close and remove every temporary file."""
        for f in (self.out, self.raw):
            try:
                f.close()
            except Exception:  # closing a half-written gzip stream may fail; the file is removed anyway
                pass
        for tmp in (self.tmp, self.body_tmp):
            atomic.discard(tmp)
