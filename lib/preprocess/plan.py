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
from typing import Sequence

from lib.core.packing import TASK_BYTES, split_bytes  # Spark's maxPartitionBytes and maxSplitBytes

#: Spark's ``openCostInBytes`` is 4 MiB; opening an archive costs us an S3 request's first byte
#: (tens of ms) and a reader's setup, a few hundred KB of our per-core throughput. With 4 MiB a
#: day of small archives was cut into tasks of at most 32 files, 1.24x the large cut's time
#: against 1.11x at 512 KiB (docs/benchmarks.md, "Preprocess: a day's cut").
OPEN_COST_BYTES = 512 << 10


def pack(files: Sequence[tuple[str, int]], task_bytes: int = TASK_BYTES, open_cost: int = OPEN_COST_BYTES,
         slots: int = 1) -> list[list[int]]:
    """Indexes into ``files`` ((name, size) pairs) grouped into tasks, biggest task first.

    Files go biggest first (ties by name, so the same listing always gives the same tasks)
    into the current task until the next one would take it over
    :func:`lib.core.packing.split_bytes`; a file
    that big alone gets a task of its own. Each file costs its size plus ``open_cost``, so a
    task of tiny files still ends (Spark's ``getFilePartitions``, "next fit decreasing").
    Within a task the indexes are in name order: the order its pages are written in.
    """
    limit = split_bytes([s for _, s in files], task_bytes, open_cost, slots)
    order = sorted(range(len(files)), key=lambda i: (-files[i][1], files[i][0]))
    bins: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i in order:
        cost = files[i][1] + open_cost
        if current and used + cost > limit:
            bins.append(current)
            current, used = [], 0
        current.append(i)
        used += cost
    if current:
        bins.append(current)
    return [sorted(b, key=lambda i: files[i][0]) for b in bins]


def task_name(names: Sequence[str]) -> str:
    """The output name stem of a task reading archives ``names``: a hash of the sorted names,
    so a retried or speculative attempt of the same task writes the same files (and no other
    task does). NUL, which no path holds, parts the names."""
    return hashlib.sha1("\0".join(sorted(names)).encode("utf-8")).hexdigest()[:20]
