"""Python work as Spark tasks: :func:`map_tasks` runs a function over task indexes on a plain
RDD and collects its small result rows; a failed job returns only once its running tasks
have ended (:func:`collect_settled`), so the caller's clean-up is not raced by a writer."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any, Callable, Iterator

import pyarrow as pa

log = logging.getLogger("dailyslice")


def task_order(count: int, slots: int) -> list[int]:
    """Task indexes dealt round-robin into ``slots`` contiguous runs: run ``r`` holds
    ``r, r + slots, ...``, so with the biggest inputs first each run gets a fair share."""
    return [i for r in range(slots) for i in range(r, count, slots)]


def map_tasks(
    spark: Any,
    count: int,
    fn: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
    schema: pa.Schema,
    partitions: int = 0,
    max_concurrent: int = 0,
) -> list[dict[str, Any]]:
    """Run ``fn`` over the task indexes ``0..count-1`` and collect its result rows as dicts.

    ``fn`` takes batches of one ``id`` column (the indexes of its task, one per partition
    unless ``partitions`` says otherwise) and yields rows of ``schema`` (cast to it; an
    incompatible batch fails the task), which must be small: they all come back to the
    driver. It runs on a plain Python RDD, not ``DataFrame.mapInArrow``: with no SQL plan and
    no Arrow stream through the JVM, a job's first task starts ~1 s sooner and later tasks
    ~0.4 s sooner (docs/benchmarks.md, "Indexing"). No tasks, no Spark job: returns ``[]``.

    ``max_concurrent`` (> 0) caps how many indexes are worked on at once in the whole job,
    however many cores it has: the indexes go into that many partitions (round-robin,
    :func:`task_order`), each worked through in turn. The preprocess job caps its S3 streams
    this way (one per archive being read).
    """
    if count <= 0:
        return []

    def task(ids: Iterator[int]) -> Iterator[dict[str, Any]]:  # pickled by value: workers import nothing of ours
        batch = pa.record_batch([pa.array(list(ids), pa.int64())], names=["id"])
        for b in fn(iter([batch])):
            yield from pa.Table.from_batches([b]).cast(schema).to_pylist()

    sc = spark.sparkContext
    if 0 < max_concurrent < (partitions or count):
        rdd = sc.parallelize(task_order(count, max_concurrent), max_concurrent)
    else:
        rdd = sc.parallelize(range(count), partitions or count)
    return collect_settled(sc, rdd.mapPartitions(task))


#: how long a failed job's caller waits for its tasks still running (collect_settled)
SETTLE_SECONDS = 300.0


def collect_settled(sc: Any, rdd: Any, settle_seconds: float = SETTLE_SECONDS) -> list[Any]:
    """``rdd.collect()``; when the job fails, return (raise) only once its tasks still running
    have ended, for at most ``settle_seconds``. Spark fails a job at its first failed task and
    lets the others run on: a caller that removes its work folder at once would see a task
    still writing put it back (a disk that fills up fails one task of two)."""
    callers = sc.getLocalProperty("spark.jobGroup.id")  # a group the caller set: waited on, kept
    group = callers or f"dailyslice-{uuid.uuid4().hex[:12]}"
    if not callers:
        sc.setJobGroup(group, "dailyslice map_tasks")
    try:
        return rdd.collect()
    except Exception:  # not on Ctrl-C: the user wants out, and stopping the session ends the tasks
        _wait_for_running_tasks(sc, group, settle_seconds)
        raise
    finally:
        if not callers:
            sc._jsc.clearJobGroup()


def _wait_for_running_tasks(sc: Any, group: str, seconds: float) -> None:
    tracker = sc.statusTracker()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        running = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info else []:
                st = tracker.getStageInfo(stage)
                running += st.numActiveTasks if st else 0
        if not running:
            return
        time.sleep(0.05)
    log.warning("a failed Spark job's tasks still run after %.0f s: its clean-up goes ahead", seconds)
