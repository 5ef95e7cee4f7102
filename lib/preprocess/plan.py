"""How the preprocess job groups a day's archives into tasks: by bytes, as Spark groups files.

A day of many small archives planned one task per archive pays a task's start, a Python
worker's turn and one Parquet file per language for every few pages (a real day of 732
small archives wrote about one Parquet file per page and took 4x the time of the same
records in one archive). Spark's file sources plan their read by bytes instead
(``FilePartition.maxSplitBytes`` and ``getFilePartitions``, settings
``spark.sql.files.maxPartitionBytes`` and ``spark.sql.files.openCostInBytes``); :func:`pack`
does the same for archives, so a task's cost follows its bytes, not its file count.

Spark also splits a big file into ranges of ``maxSplitBytes``; :func:`split` does so for a
multi-member gzip WARC (``.warc.gz``): each range reads from the first member at or after its
start that begins a record, up to the first such member at or after its end
(:mod:`lib.warc.split`), so one large archive keeps every core busy. ARC, plain, zstd and LZ4
archives are read whole.
"""

from __future__ import annotations

import hashlib
import heapq
import json
from typing import NamedTuple, Sequence

from lib.runtime.packing import TASK_BYTES, split_bytes  # Spark's maxPartitionBytes and maxSplitBytes

#: Spark's ``openCostInBytes`` is 4 MiB; opening an archive costs us an S3 request's first byte
#: (tens of ms) and a reader's setup, a few hundred KB of our per-core throughput. With 4 MiB a
#: day of small archives was cut into tasks of at most 32 files, 1.24x the large cut's time
#: against 1.11x at 512 KiB (docs/benchmarks.md, "Preprocess: a day's cut").
OPEN_COST_BYTES = 512 << 10
#: the archives read by byte range (any case): one gzip member a record, as every mature writer makes them
SPLITTABLE = ".warc.gz"
#: the smallest range: a range costs a scan for its first member and a result row, and one
#: smaller than a few records mostly finds none (a tiny --task-bytes must not cut a file in millions)
MIN_RANGE_BYTES = 64 << 10


class Piece(NamedTuple):
    """What a task reads of one archive: bytes ``start`` to ``end`` (None: to the end) of a
    file of ``size`` bytes; the whole file by default."""

    uri: str
    size: int
    start: int = 0
    end: int | None = None

    @property
    def length(self) -> int:
        return (self.size if self.end is None else self.end) - self.start

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end is None


def split(files: Sequence[tuple[str, int]], limit: int, slots: int = 1) -> list[Piece]:
    """``files`` ((name, size) pairs, in order) as pieces: a ``.warc.gz`` larger than ``limit``
    (at least :data:`MIN_RANGE_BYTES`) cut into equal ranges of at most ``limit`` bytes (the last
    to the end of the file), any other file whole. A file's count of ranges is rounded up to a
    multiple of ``slots`` while that keeps its ranges at least half the limit: 5 ranges of a day's
    one big archive on 2 slots left one slot idle for a fifth of the run (the real-shaped day's
    large cut, docs/preprocess.md, "task balance"); 6 keep both busy to the end."""
    limit = max(limit, MIN_RANGE_BYTES)
    slots = max(1, slots)
    out: list[Piece] = []
    for uri, size in files:
        if not uri.lower().endswith(SPLITTABLE) or size <= limit:
            out.append(Piece(uri, size))
            continue
        n = -(-size // limit)
        rounded = -(-n // slots) * slots
        if size // rounded >= max(limit // 2, MIN_RANGE_BYTES):
            n = rounded
        step = -(-size // n)
        out += [Piece(uri, size, k * step, (k + 1) * step if k < n - 1 else None) for k in range(n)]
    return out


def plan(
    files: Sequence[tuple[str, int]],
    task_bytes: int = TASK_BYTES,
    open_cost: int = OPEN_COST_BYTES,
    slots: int = 1,
    split_limit: int = 0,
) -> tuple[list[Piece], list[list[int]]]:
    """The day's pieces (:func:`split` at ``split_limit``, 0: the limit :func:`pack` uses) and its
    tasks, each a list of indexes into the pieces (:func:`pack`; a file's ranges in order)."""
    limit = split_limit or split_bytes([s for _, s in files], task_bytes, open_cost, slots)
    pieces = split(files, limit, slots)
    return pieces, pack([(_sort_key(p), p.length) for p in pieces], task_bytes, open_cost, slots)


def _sort_key(p: Piece) -> str:
    """A piece's name for :func:`pack`: the file's name, then its start (NUL sorts first, so the
    file's order among the others stays its name's)."""
    return p.uri if p.whole else f"{p.uri}\0{p.start:020d}"


def pack(
    files: Sequence[tuple[str, int]], task_bytes: int = TASK_BYTES, open_cost: int = OPEN_COST_BYTES, slots: int = 1
) -> list[list[int]]:
    """Indexes into ``files`` ((name, size) pairs) grouped into tasks, biggest task first.

    Each file costs its size plus ``open_cost`` (so a task of tiny files still ends), and no task
    of several files costs more than :func:`lib.runtime.packing.split_bytes`, Spark's limit. Unlike
    Spark's next fit, the tasks are balanced over the slots: as many tasks as the limit needs,
    rounded up to a multiple of ``slots``, filled largest file first into the least-loaded task
    (a day of 8 files of 36 MB made 3 tasks of next fit for 2 slots, one slot idle a third of the
    run); more tasks, a multiple of the slots again, while one is over the limit. Ties go by name,
    so the same listing always gives the same tasks. Within a task the indexes are in name order:
    the order its pages are written in.
    """
    if not files:
        return []
    slots = max(1, slots)
    costs = [s + open_cost for _, s in files]
    limit = split_bytes([s for _, s in files], task_bytes, open_cost, slots)
    order = sorted(range(len(files)), key=lambda i: (-files[i][1], files[i][0]))
    n = min(len(files), -(-max(1, -(-sum(costs) // limit)) // slots) * slots)
    while True:
        bins: list[list[int]] = [[] for _ in range(n)]
        heap = [(0, 0, b) for b in range(n)]  # (cost so far, files, task): the least-loaded task first
        for i in order:
            used, count, b = heapq.heappop(heap)
            bins[b].append(i)
            heapq.heappush(heap, (used + costs[i], count + 1, b))
        over = any(len(b) > 1 and sum(costs[i] for i in b) > limit for b in bins)
        if not over or n >= len(files):
            break
        n = min(len(files), n + slots)
    tasks = [sorted(b, key=lambda i: files[i][0]) for b in bins if b]
    return sorted(tasks, key=lambda t: (-max(files[i][1] for i in t), files[t[0]][0]))


def task_name(names: Sequence[str | tuple[str, int, int | None]]) -> str:
    """The output name stem of a task reading archives ``names`` (a name, or a (name, start,
    end) range of one): a hash of them sorted, so a retried or speculative attempt of the same
    task writes the same files (and no other task does). NUL, which no path holds, parts the
    names of whole archives; a task holding ranges hashes their JSON list."""
    whole = [n for n in names if isinstance(n, str)]
    if len(whole) == len(names):
        text = "\0".join(sorted(whole))
    else:
        items = [(n, 0, -1) if isinstance(n, str) else (n[0], n[1], -1 if n[2] is None else n[2]) for n in names]
        text = json.dumps(sorted(items))  # -1: to the end of the file
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:20]
