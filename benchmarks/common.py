"""What every benchmark shares: the machine, the load, timing, and writing a result as data.

A run's result is one JSON file, ``benchmarks/results/<bench>/<UTC timestamp>.json``, written by
:func:`write_result` in one call; ``python -m benchmarks.report`` turns the latest file of each
(bench, variant) into docs/benchmarks.md's table and every earlier one into
docs/benchmarks-history.md. A new file per run (rather than one file rewritten) keeps the history
readable without git: the folder of a benchmark is its history.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

#: where results are written and benchmarks.report reads them: benchmarks/results, or the folder in
#: $DAILYSLICE_BENCH_RESULTS (benchmarks/smoke.py's small runs write theirs beside their work)
RESULTS = pathlib.Path(
    os.environ.get("DAILYSLICE_BENCH_RESULTS") or pathlib.Path(__file__).resolve().parent / "results"
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            kib = next(int(ln.split()[1]) for ln in f if ln.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        return None
    return round(kib / 2**20, 1)


def machine() -> dict[str, Any]:
    """The machine a run is on: host, CPU model, cores, memory, Python and kernel."""
    return {
        "host": platform.node(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


def machine_text(m: dict[str, Any] | None = None) -> str:
    """:func:`machine` as one line of prose (what the scripts print)."""
    m = m or machine()
    mem = f", {m['memory_gib']:g} GiB" if m.get("memory_gib") else ""
    return f"{m['cpu']}, {m['cores']} cores{mem}, Python {m['python']}, {m['system']}"


def load() -> list[float]:
    """The 1, 5 and 15-minute load averages (a shared machine's figures are read against it)."""
    return [round(x, 2) for x in os.getloadavg()]


class Timed(NamedTuple):
    """Median wall and CPU seconds (of this process) over the repeats; the last call's result."""

    wall: float
    cpu: float
    result: Any


def timed(fn: Callable[[], Any], repeat: int = 1) -> Timed:
    """Call ``fn`` ``repeat`` times; the median wall and CPU seconds and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return Timed(statistics.median(walls), statistics.median(cpus), out)


def timed_cmd(cmd: list[str], stdin_text: str | None = None, **kw) -> tuple[subprocess.CompletedProcess, float, int]:
    """Run ``cmd``; (result, wall seconds, peak RSS bytes of its process tree, sampled every 0.2 s).
    ``stdin_text`` is written to its standard input (text mode)."""
    import psutil

    if stdin_text is not None:
        kw.update(stdin=subprocess.PIPE, text=True)
    t0 = time.time()
    proc = subprocess.Popen(cmd, **kw)
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        try:
            root = psutil.Process(proc.pid)
        except psutil.Error:
            return
        while not done.wait(0.2):
            total = 0
            try:
                for p in [root, *root.children(recursive=True)]:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                return
            peak[0] = max(peak[0], total)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = proc.communicate(stdin_text)
    wall = time.time() - t0
    done.set()
    th.join()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), wall, peak[0]


#: a UTC time as utc_now() writes it
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def checkout_commit(root: pathlib.Path | None = None) -> str | None:
    """The commit the checkout is at (short hash), with ``+changes`` when tracked files differ from
    it: what a figure measured. None outside a git checkout."""
    root = root or pathlib.Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return f"{head}+changes" if dirty else head


def utc_now() -> str:
    """Now, UTC, to the second: ``2026-11-28T18:30:05Z``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def result_name(when: str, variant: str = "") -> str:
    """A result's file name: its UTC time, compact (sorts by time), then the variant as a slug."""
    slug = re.sub(r"[^a-z0-9]+", "-", variant.lower()).strip("-")
    return f"{when.replace(':', '').replace('-', '')}{'-' + slug if slug else ''}.json"


def write_result(
    bench: str,
    figures: dict[str, Any],
    *,
    what: str,
    peer: str | None = None,
    peers: dict[str, Any] | None = None,
    ratio: dict[str, Any] | None = None,
    shape: dict[str, Any] | None = None,
    variant: str = "",
    started: str | None = None,
    load_before: list[float] | None = None,
    command: str | None = None,
    notes: str | None = None,
    details: dict[str, Any] | None = None,
    results: pathlib.Path | None = None,
    **recorded: Any,
) -> pathlib.Path:
    """Write one run's result as ``<results>/<bench>/<UTC timestamp>.json``; its path.

    ``figures``: our numbers (name -> value, units in the name: ``wall_s``, ``pages_per_s``);
    ``peers``: the peers' numbers, ``ratio``: ours against theirs (the name says which way it
    divides); ``shape``: the day's shape (archives, sizes, pages, links, distinct targets per
    link...); ``details``: whatever else the run measured (kept in the file, not shown in the
    table, which shows ``figures``); ``variant``: which row of the benchmark this is when it has several (a cut, a day).
    The machine, the end time, the load at the end and the checkout's commit are taken here; ``started`` and
    ``load_before`` are the caller's (taken before the run), if it has them.

    A run measured elsewhere (another branch, another machine) is recorded with the same call and
    what it said in ``recorded``: ``when``, ``machine``, ``load`` (text or this function's forms),
    ``label``, ``source`` (who measured it) and ``commit`` replace what this machine would give. The file is
    named by ``when`` if it is a UTC time as :func:`utc_now` writes it, else by ``started`` (give
    one of the two: the newest file of a (bench, variant) is its current row)."""
    ended = utc_now()
    doc = {
        "bench": bench,
        "variant": variant,
        "what": what,
        "peer": peer,
        "started": started,
        "ended": ended,
        "machine": machine(),
        "load": {"before": load_before, "after": load()},
        "shape": shape or {},
        "figures": figures,
        "peers": peers or {},
        "ratio": ratio or {},
        "command": command,
        "notes": notes,
        "details": details or {},
        "source": "run",
        "commit": checkout_commit(),
    }
    unknown = set(recorded) - {"when", "machine", "load", "label", "source", "commit"}
    if unknown:
        raise TypeError(f"write_result: unknown fields {sorted(unknown)}")
    doc.update(
        {k: ({"text": v} if isinstance(v, str) and k in ("machine", "load") else v) for k, v in recorded.items()}
    )
    folder = (results or RESULTS) / bench
    folder.mkdir(parents=True, exist_ok=True)
    if "when" in recorded:  # measured elsewhere: it ended then, not now
        doc.update(ended=None, recorded=ended)
    iso = [w for w in (recorded.get("when"), started) if isinstance(w, str) and ISO.fullmatch(w)]
    stamp = iso[0] if iso else ended
    path = folder / result_name(stamp, variant)
    n = 1
    while path.exists():  # two results in one second: neither replaces the other
        n += 1
        path = folder / result_name(stamp, f"{variant}-{n}")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    tmp.replace(path)  # a crashed run never leaves a half-written result the report would read
    return path


def report(lines: list[str], bench: str, figures: dict[str, Any], **result: Any) -> None:
    """Print a run as Markdown and write its result (:func:`write_result`)."""
    print("\n".join(lines))
    print(f"result: {write_result(bench, figures, **result)}")


def median_run(runs: list[dict[str, Any]], key: str = "wall") -> dict[str, Any]:
    """The run with the median ``key`` (wall time): the lower middle one for an even count."""
    return sorted(runs, key=lambda r: r[key])[(len(runs) - 1) // 2]
