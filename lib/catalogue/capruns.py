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

CACHED_BLOCKS = 64  # decompressed blocks a run keeps (a few MB): hot keys are not decompressed again
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
        self._cache: OrderedDict[int, pa.RecordBatch] = OrderedDict()

    def _batch(self, i: int) -> pa.RecordBatch:
        with self._lock:
            b = self._cache.get(i)
            if b is None:  # decompressed once while it stays among the recently read blocks
                b = self._cache[i] = self._reader.get_batch(i)
                if len(self._cache) > CACHED_BLOCKS:
                    del self._cache[next(iter(self._cache))]
            else:
                self._cache.move_to_end(i)
        return b

    def _block(self, i: int) -> tuple[list[str], list[int]]:
        b = self._batch(i)
        return b.column(0).to_pylist(), b.column(1).to_pylist()

    def range(self, start: str, end: str) -> Iterator[tuple[str, int]]:
        """(line, source index) of the lines ``start <= line < end``, in order."""
        i = max(0, bisect.bisect_right(self.firsts, start) - 1)
        while i < len(self.firsts) and self.firsts[i] < end:
            b = self._batch(i)
            col = b.column(0)
            # bisected on the Arrow column: only the answer's lines become Python strings
            lo, hi = _bisect(col, start), _bisect(col, end)
            yield from zip(col.slice(lo, hi - lo).to_pylist(), b.column(1).slice(lo, hi - lo).to_pylist())
            if hi < len(col):
                return
            i += 1

    def all(self) -> Iterator[tuple[str, int]]:
        """Every (line, source index) of the run, in order (a merge reads runs this way)."""
        for i in range(len(self.firsts)):
            lines, srcs = self._block(i)
            yield from zip(lines, srcs)

    def close(self) -> None:
        self._map.close()
