"""CPU seconds of a command's whole process tree (driver, JVM, Python daemon and workers), polled
from /proc while it runs: a job's CPU on a machine shared with other work, where its wall time
says more about the neighbours than about the job. Linux only; elsewhere the CPU is None."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, user + system CPU seconds) of ``pid``, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _kind(pid: int) -> str | None:
    """What ``pid`` is, from its command line; None when it has none (gone, or a zombie)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if not argv[0]:
        return None
    if os.path.basename(argv[0]) == b"java":
        return "jvm"
    if b"pyspark.worker" in argv:  # the daemon's command line, which the workers it forks keep
        return "python daemon and workers"
    return "driver"  # the driver, and the launcher scripts that exec java (bash spark-submit, ...)


def run(cmd: list[str], poll: float = 0.05, **popen: Any) -> dict[str, Any]:
    """Run ``cmd`` to its end; returns its exit code, wall seconds, CPU seconds by kind of
    process (``jvm``, ``driver``, ``python daemon and workers``) with their total, and how many
    JVMs it started (``jvms``). A process
    that ends between two polls loses at most ``poll`` seconds of its CPU."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, **popen)
    seen: dict[int, tuple[str, float]] = {}
    if not os.path.isdir("/proc"):
        p.wait()
        return {"returncode": p.returncode, "wall": time.perf_counter() - t0, "cpu": None, "jvms": None}
    while p.poll() is None:
        parents: dict[int, list[int]] = {}
        now: dict[int, float] = {}
        for d in os.listdir("/proc"):
            if d.isdigit() and (s := _stat(int(d))) is not None:
                parents.setdefault(s[0], []).append(int(d))
                now[int(d)] = s[1]
        tree = [p.pid]
        for pid in tree:
            tree.extend(parents.get(pid, []))
        for pid in tree:
            if pid in now:  # the kind again each time: a launcher script execs java in the same process
                seen[pid] = (_kind(pid) or (seen[pid][0] if pid in seen else "driver"), now[pid])
        time.sleep(poll)
    cpu: dict[str, float] = {}
    for kind, seconds in seen.values():
        cpu[kind] = round(cpu.get(kind, 0.0) + seconds, 2)
    return {
        "returncode": p.returncode,
        "wall": time.perf_counter() - t0,
        "cpu": {**cpu, "total": round(sum(cpu.values()), 2)},
        "jvms": sum(kind == "jvm" for kind, _ in seen.values()),
    }
