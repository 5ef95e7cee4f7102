"""How the preprocess job groups a day's archives into tasks: by bytes, as Spark groups files.

A day of many small archives planned one task per archive pays a task's start, a Python
worker's turn and one Parquet file per language for every few pages (a real day of 732
small archives wrote about one Parquet file per page and took 4x the time of the same
records in one archive). Spark's file sources plan their read by bytes instead
(``FilePartition.maxSplitBytes`` and ``getFilePartitions``, settings
``spark.sql.files.maxPartitionBytes`` and ``spark.sql.files.openCostInBytes``); :func:`pack`
does the same for archives, so a task's cost follows its bytes, not its file count.
"""

from __future__ import annotations

import hashlib
import heapq
from typing import Sequence

from lib.runtime.packing import TASK_BYTES, split_bytes  # Spark's maxPartitionBytes and maxSplitBytes

#: Spark's ``openCostInBytes`` is 4 MiB; opening an archive costs us an S3 request's first byte
#: (tens of ms) and a reader's setup, a few hundred KB of our per-core throughput. With 4 MiB a
#: day of small archives was cut into tasks of at most 32 files, 1.24x the large cut's time
#: against 1.11x at 512 KiB (docs/benchmarks.md, "Preprocess: a day's cut").
OPEN_COST_BYTES = 512 << 10


def pack(files: Sequence[tuple[str, int]], task_bytes: int = TASK_BYTES, open_cost: int = OPEN_COST_BYTES,
         slots: int = 1) -> list[list[int]]:
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


def task_name(names: Sequence[str]) -> str:
    """The output name stem of a task reading archives ``names``: a hash of the sorted names,
    so a retried or speculative attempt of the same task writes the same files (and no other
    task does). NUL, which no path holds, parts the names."""
    return hashlib.sha1("\0".join(sorted(names)).encode("utf-8")).hexdigest()[:20]
