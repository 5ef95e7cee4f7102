"""One sorted run of the capture index (lib.catalogue.capindex): CDXJ lines in compressed blocks
with a small secondary index, as a ZipNum cluster keeps them.

A run is a folder of two Arrow IPC files::

    lines.arrow    record batches of BLOCK lines (``line``: the CDXJ line, ``src``: the index of
                   its source in the run's sorted source list), sorted by line; each batch's
                   buffers zstd-compressed, so a look-up decompresses only the blocks it reads
    blocks.arrow   the secondary index: the first line of each batch (one string per block)

A look-up bisects the secondary index (held in memory: ~1/1000 of the lines), then reads the
blocks from the one holding ``start`` until a line reaches ``end``: its cost is the blocks its
answer spans, whatever the size of the run. Lines compare as strings, which is their UTF-8 byte
order, the order ``LC_ALL=C sort`` and pywb's binary search use.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from typing import Iterable, Iterator

import pyarrow as pa

from lib.store import atomic

#: decompressed blocks a process keeps, over all runs (least recently read dropped first): the
#: counterpart of the page cache that keeps pywb's plain CDXJ file in memory; a block's zstd
#: decompression (~170 us for 1000 lines) is most of a cold look-up's cost
CACHE_BYTES = 256 << 20
STEP = 16  # lines a look-up turns into Python strings at a time
BLOCK = 1000  # lines per block (ZipNum's default is 3000; smaller blocks make an exact look-up read less)
LINES = "lines.arrow"
BLOCKS = "blocks.arrow"
SCHEMA = pa.schema([("line", pa.string()), ("src", pa.uint16())])
_WRITE = pa.ipc.IpcWriteOptions(compression="zstd")


def write_run(folder: str, rows: Iterable[tuple[str, int]]) -> int:
    """Write ``rows`` ((line, source index), already sorted by line) as a run in ``folder`` (which
    must not exist yet: a run is immutable); returns the lines written. The folder is assembled
    beside and renamed into place, so it is whole or absent."""
    tmp = folder.rstrip("/") + ".tmp"
    os.makedirs(tmp, exist_ok=True)
    firsts: list[str] = []
    n = 0
    with pa.OSFile(os.path.join(tmp, LINES), "wb") as sink, pa.ipc.new_file(sink, SCHEMA, options=_WRITE) as w:
        lines: list[str] = []
        srcs: list[int] = []
        for line, src in rows:
            lines.append(line)
            srcs.append(src)
            if len(lines) == BLOCK:
                _flush(w, lines, srcs, firsts)
                n += BLOCK
                lines, srcs = [], []
        if lines:
            n += len(lines)
            _flush(w, lines, srcs, firsts)
    with atomic.atomic_path(os.path.join(tmp, BLOCKS)) as p, pa.OSFile(p, "wb") as sink:
        with pa.ipc.new_file(sink, pa.schema([("first", pa.string())])) as w:
            w.write(pa.table({"first": pa.array(firsts, pa.string())}))
    os.rename(tmp, folder)
    return n


def _flush(w: pa.ipc.RecordBatchFileWriter, lines: list[str], srcs: list[int], firsts: list[str]) -> None:
    w.write_batch(pa.record_batch([pa.array(lines, pa.string()), pa.array(srcs, pa.uint16())], schema=SCHEMA))
    firsts.append(lines[0])


class _BlockCache:
    """Decompressed blocks by (run folder, block), least recently read dropped past CACHE_BYTES."""

    def __init__(self, limit: int) -> None:
        self.limit, self.bytes = limit, 0
        self._blocks: OrderedDict[tuple[str, int], pa.RecordBatch] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> pa.RecordBatch | None:
        with self._lock:
            b = self._blocks.get(key)
            if b is not None:
                self._blocks.move_to_end(key)
            return b

    def put(self, key: tuple[str, int], b: pa.RecordBatch) -> None:
        with self._lock:
            if key not in self._blocks:
                self._blocks[key] = b
                self.bytes += b.nbytes
            while self.bytes > self.limit and len(self._blocks) > 1:
                _, old = self._blocks.popitem(last=False)
                self.bytes -= old.nbytes


_BLOCKS = _BlockCache(CACHE_BYTES)


def _bisect(col: pa.StringArray, key: str) -> int:
    """The first position of the sorted ``col`` whose line is not below ``key``."""
    lo, hi = 0, len(col)
    while lo < hi:
        mid = (lo + hi) // 2
        if col[mid].as_py() < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


class Run:
    """A run opened for look-ups: its secondary index in memory, its blocks memory-mapped."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        with pa.memory_map(os.path.join(folder, BLOCKS)) as m:
            self.firsts: list[str] = pa.ipc.open_file(m).read_all().column("first").to_pylist()
        self._map = pa.memory_map(os.path.join(folder, LINES))
        self._reader = pa.ipc.open_file(self._map)
        self._lock = threading.Lock()  # one reader object: its batch reads are not thread-safe

    def _batch(self, i: int) -> pa.RecordBatch:
        b = _BLOCKS.get((self.folder, i))
        if b is None:  # decompressed once while it stays among the recently read blocks
            with self._lock:
                b = self._reader.get_batch(i)
            _BLOCKS.put((self.folder, i), b)
        return b

    def _block(self, i: int) -> tuple[list[str], list[int]]:
        b = self._batch(i)
        return b.column(0).to_pylist(), b.column(1).to_pylist()

    def range(self, start: str, end: str) -> Iterator[tuple[str, int]]:
        """(line, source index) of the lines ``start <= line < end``, in order."""
        i = max(0, bisect.bisect_right(self.firsts, start) - 1)
        j = -1
        while i < len(self.firsts) and self.firsts[i] < end:
            b = self._batch(i)
            col, src = b.column(0), b.column(1)
            # one bisection on the Arrow column, then the lines become Python strings a few at a
            # time: a look-up that stops early (limit=10 of a URL captured every day) converts no more
            j = _bisect(col, start) if j < 0 else 0
            while j < len(col):
                for line, s in zip(col.slice(j, STEP).to_pylist(), src.slice(j, STEP).to_pylist()):
                    if line >= end:
                        return
                    yield line, s
                j += STEP
            i += 1

    def all(self) -> Iterator[tuple[str, int]]:
        """Every (line, source index) of the run, in order (a merge reads runs this way)."""
        for i in range(len(self.firsts)):
            lines, srcs = self._block(i)
            yield from zip(lines, srcs)

    def close(self) -> None:
        self._map.close()
