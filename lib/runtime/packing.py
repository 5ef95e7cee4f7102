"""Tasks planned by bytes, not by files: many small input files share one task.

Spark's file sources do this with ``spark.sql.files.maxPartitionBytes`` and
``openCostInBytes``: each file costs its size plus a fixed cost of opening it, and a task takes
files until its cost would pass a limit, which shrinks for a small day so that every core still
gets work (``maxSplitBytes``). A day cut into thousands of small files (web-archive collections,
archives rotated by size or time, days written by older versions of preprocess) then costs what
its bytes cost, not one task per file.

:func:`pack_in_order` keeps the files' order and cuts it into runs: a task reads consecutive
files, so whatever is numbered in file order (the index's docids) is numbered the same
whichever way the day is cut into tasks. No file is ever split.
"""

from __future__ import annotations

from typing import Protocol, Sequence

#: Spark's default ``maxPartitionBytes``: the most a task takes
TASK_BYTES = 128 << 20
#: what opening one file costs, in bytes of reading: far below Spark's 4 MB default, which
#: assumes a remote filesystem; a local or cluster Parquet file opens in about a millisecond,
#: while a task costs ~0.1 s to schedule (docs/benchmarks.md, "Tasks by bytes")
OPEN_COST_BYTES = 64 << 10


def split_bytes(
    sizes: Sequence[int], task_bytes: int = TASK_BYTES, open_cost: int = OPEN_COST_BYTES, slots: int = 1
) -> int:
    """The most cost (sizes plus one ``open_cost`` a file) one task takes: ``task_bytes``, or
    less when the day is small, so it still makes at least ``slots`` tasks (Spark's
    ``maxSplitBytes``: ``min(maxPartitionBytes, max(openCost, total / minPartitions))``)."""
    total = sum(s + open_cost for s in sizes)
    per_slot = total // max(1, slots)  # floored, as Spark: with files no bigger than this, >= slots tasks
    return max(1, min(task_bytes, max(open_cost, per_slot)))


def pack_in_order(
    sizes: Sequence[int], task_bytes: int = TASK_BYTES, open_cost: int = OPEN_COST_BYTES, slots: int = 1
) -> list[range]:
    """The indexes ``0..len(sizes)-1`` cut into consecutive runs, one a task: a run takes the
    next file while its cost stays within :func:`split_bytes` (a file bigger than that alone
    makes a run of its own). Deterministic: the same sizes always give the same runs."""
    limit = split_bytes(sizes, task_bytes, open_cost, slots)
    runs: list[range] = []
    start, used = 0, 0
    for i, s in enumerate(sizes):
        cost = s + open_cost
        if i > start and used + cost > limit:
            runs.append(range(start, i))
            start, used = i, 0
        used += cost
    if start < len(sizes):
        runs.append(range(start, len(sizes)))
    return runs


class _Conf(Protocol):
    def set(self, key: str, value: str) -> None: ...


class _Session(Protocol):
    """What :func:`plan_spark_reads_by_bytes` uses of a SparkSession."""

    @property
    def conf(self) -> _Conf: ...


def plan_spark_reads_by_bytes(spark: _Session) -> None:
    """Have the session's Parquet reads pack files by :data:`OPEN_COST_BYTES` (Spark's own
    planning, ``spark.sql.files.openCostInBytes``): with Spark's 4 MB, a day of thousands of
    small files is read by dozens of tasks where its bytes need one or two a core."""
    spark.conf.set("spark.sql.files.openCostInBytes", str(OPEN_COST_BYTES))
