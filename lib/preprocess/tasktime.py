"""Where a preprocess run's time goes inside its tasks: one timing record per task, and the
run's summary of them (the job summary's ``task_timing``).

A task measures itself (wall and CPU seconds of the whole task, and the CPU of its Arrow
conversion and Parquet writing); the driver adds up the records. Times are epoch seconds, so
a caller that knows when the job's process started can split the run into its fixed start
(JVM, session, Python daemon and worker start: launch to the first task's start), the tasks'
span, and its end (last task's end to exit). The rate of the span is what the job's cores
give once started: docs/preprocess.md, "Where the job's time goes".
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Iterable

_started = 0  # tasks begun in this process: a reused Python worker keeps its modules and its count


class Clock:
    """Wall and CPU seconds of one task, with named CPU parts added by the task."""

    def __init__(self) -> None:
        global _started
        _started += 1
        self.nth = _started  # 1: the worker's first task, which pays the imports and the language model
        self.start = time.time()
        self.cpu0 = time.process_time()
        self.parts: dict[str, float] = {}

    def add(self, part: str, cpu_seconds: float) -> None:
        self.parts[part] = self.parts.get(part, 0.0) + cpu_seconds

    def record(self, name: str, files: int, pages: int) -> str:
        """The task's timing record (JSON text, for the task's first result row)."""
        end = time.time()
        return json.dumps(
            {
                "task": name,
                "pid": os.getpid(),
                "files": files,
                "pages": pages,
                "start": round(self.start, 3),
                "end": round(end, 3),
                "wall": round(end - self.start, 3),
                "cpu": round(time.process_time() - self.cpu0, 3),
                "worker_task": self.nth,
                **{f"{k}_cpu": round(v, 3) for k, v in sorted(self.parts.items())},
            }
        )


def summarize(records: Iterable[str | None]) -> dict[str, Any]:
    """The run's task timing: every task's record (in start order) and their totals; ``span`` is
    from the first task's start to the last one's end, ``pages_per_span_second`` the rate of
    the cores while tasks ran, ``pages_per_task_cpu_second`` per core-second of task CPU."""
    tasks = sorted((json.loads(r) for r in records if r), key=lambda t: t["start"])
    if not tasks:
        return {"tasks": []}
    first, last = tasks[0]["start"], max(t["end"] for t in tasks)
    pages = sum(t["pages"] for t in tasks)
    cpu = sum(t["cpu"] for t in tasks)
    span = last - first
    out: dict[str, Any] = {
        "first_start": first,
        "last_end": last,
        "span": round(span, 3),
        "pages": pages,
        "task_wall": round(sum(t["wall"] for t in tasks), 3),
        "task_cpu": round(cpu, 3),
        "workers": len({t["pid"] for t in tasks}),
        "pages_per_span_second": round(pages / span, 1) if span > 0 else None,
        "pages_per_task_cpu_second": round(pages / cpu, 1) if cpu > 0 else None,
    }
    for part in sorted({k for t in tasks for k in t if k.endswith("_cpu") and k != "cpu"}):
        out[part] = round(sum(t.get(part, 0.0) for t in tasks), 3)
    out["tasks"] = [{**t, "start": round(t["start"] - first, 3), "end": round(t["end"] - first, 3)} for t in tasks]
    return out
