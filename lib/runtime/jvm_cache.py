"""A class-data-sharing (AppCDS) archive for the driver JVM that PySpark starts.

A Spark driver loads ~15,000 classes before its first task runs; parsing and verifying them
is most of the 4-6 s a short job spends before doing work (docs/benchmarks.md, "Indexing").
The JVM can map already-parsed classes from an archive instead (JEP 350, dynamic archiving,
JDK 13+). The first run on a machine writes the archive when its JVM exits (10-20 s more,
once: 39.5 s against ~27 s for the index benchmark's day; ~190 MB); later runs map it and reach
their first task ~3-4 s sooner. :mod:`lib.runtime.localmode` applies it.

The archive lives in ``$DAILYSLICE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/dailyslice`` or
``~/.cache/dailyslice``), named by a key of everything that makes an archive unusable: the
``java`` binary, the Spark jars and the driver heap setting. Set ``DAILYSLICE_JVM_CACHE=off``
to disable it. It only applies when PySpark launches the driver JVM itself (``python
jobs/...``); under ``spark-submit`` the JVM already runs. A bad or stale archive is never
fatal: the JVM then loads classes as usual (``-Xshare:auto``).

Archives are written to a temporary name and renamed (:func:`lib.store.atomic.replace`) only
after the JVM exited cleanly, so a crashed run never leaves a half-written archive under the
final name. The temporary name is ``NAME.<pid>.tmp`` (the JVM writes it; stale ones are found
by that pattern), not :func:`lib.store.atomic.temp_path`'s.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import time
from dataclasses import dataclass
from typing import Any

import pyspark
from pyspark import SparkContext

from lib.store import atomic

log = logging.getLogger("dailyslice")

ENV_SWITCH = "DAILYSLICE_JVM_CACHE"
ENV_DIR = "DAILYSLICE_CACHE_DIR"
DRIVER_OPTS = "spark.driver.extraJavaOptions"
STALE_TMP_SECONDS = 3600


@dataclass
class ArchivePlan:
    """What to pass to the driver JVM, and where a new archive goes once the JVM has exited."""

    java_option: str
    path: str
    creating: bool
    tmp: str | None = None


def cache_dir() -> str:
    base = os.environ.get(ENV_DIR)
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "dailyslice")
    return base


def switch_on(name: str) -> bool:
    """Whether the on/off environment switch ``name`` is on (unset: on; ``0``, ``off``,
    ``false``, ``no``: off)."""
    return os.environ.get(name, "on").strip().lower() not in ("0", "off", "false", "no")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(java) if java and os.path.exists(java) else None


def _spark_jars() -> list[str]:
    home = os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
    return sorted(glob.glob(os.path.join(home, "jars", "*.jar")))


_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def big_heap(driver_memory: str | None) -> bool:
    """Whether ``spark.driver.memory`` (``6g``, ``40000m``; MiB without a unit, as Spark
    reads it) is 32 GiB or more: the JVM then drops compressed pointers, and an
    archive written with them cannot be mapped."""
    text = (driver_memory or "1g").strip().lower().rstrip("b")
    try:
        n = float(text[:-1]) * _UNITS[text[-1]] if text[-1:] in _UNITS else float(text) * _UNITS["m"]
    except ValueError:
        return False
    return n >= 32 << 30


def archive_key(java: str, jars: list[str], driver_memory: str | None) -> str:
    """Hex key of what the archive depends on: the JVM build, the class path and whether
    the heap is past compressed pointers' reach (:func:`big_heap`)."""
    h = hashlib.sha256()
    for path in [java, *jars]:
        st = os.stat(path)
        h.update(f"{path}\0{st.st_size}\0{int(st.st_mtime)}\n".encode())
    h.update(f"big_heap={big_heap(driver_memory)}".encode())
    return h.hexdigest()[:20]


def jvm_running() -> bool:
    """Whether this process already has a driver JVM (or runs under ``spark-submit``): then
    options for a new one come too late."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT")) or SparkContext._gateway is not None


def plan(driver_memory: str | None = None) -> ArchivePlan | None:
    """The archive option for a driver JVM about to be launched, or ``None`` (disabled, no
    ``java`` found, a driver JVM already running, or a cache folder we cannot write)."""
    if not switch_on(ENV_SWITCH) or jvm_running():
        return None
    java = _java()
    if java is None:
        return None
    try:
        folder = cache_dir()
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"spark-driver-{archive_key(java, _spark_jars(), driver_memory)}.jsa")
    except OSError as e:
        log.debug("no JVM class archive: %s", e)
        return None
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        return ArchivePlan(f"-XX:SharedArchiveFile={path}", path, creating=False)
    _drop_stale(folder)
    tmp = f"{path}.{os.getpid()}.tmp"
    log.info("first run with this JVM and Spark: writing a class archive at exit (once, ~10-20 s): %s", path)
    # the dump lists every class it cannot archive as a warning: hundreds of lines of noise
    return ArchivePlan(f"-XX:ArchiveClassesAtExit={tmp} -Xlog:cds*=off", path, creating=True, tmp=tmp)


def _drop_stale(folder: str) -> None:
    """Temporary archives of runs that died before renaming theirs."""
    now = time.time()
    for f in glob.glob(os.path.join(folder, "*.jsa.*.tmp")):
        try:
            if now - os.path.getmtime(f) > STALE_TMP_SECONDS:
                os.remove(f)
        except OSError:
            pass


def merge_option(current: str | None, option: str) -> str:
    """``spark.driver.extraJavaOptions`` with ``option`` added to what the user gave."""
    return f"{current} {option}".strip() if current else option


def finish(p: ArchivePlan | None, timeout: float = 120.0) -> bool:
    """After ``spark.stop()``: when this run was creating the archive, end the driver JVM
    (it writes the archive on exit) and move a complete archive to its final name. Returns
    whether an archive was published."""
    if p is None or not p.creating or p.tmp is None:
        return False
    gateway = SparkContext._gateway
    proc: Any = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return False
    try:
        gateway.shutdown()
    except Exception:  # the JVM may already be gone; what matters is how it exited
        pass
    SparkContext._gateway = None  # a later session in this process starts a fresh JVM
    SparkContext._jvm = None
    if proc.stdin is not None:
        proc.stdin.close()  # PySpark's driver JVM exits when its stdin closes
    try:
        rc = proc.wait(timeout=timeout)
    except Exception:
        log.warning("driver JVM did not exit within %.0f s; no class archive written", timeout)
        return False
    if rc == 0 and os.path.isfile(p.tmp) and os.path.getsize(p.tmp) > 0:
        atomic.replace(p.tmp, p.path)  # a cache: a lost or broken archive is only ignored (-Xshare:auto)
        log.info("JVM class archive written: %s (%.0f MB)", p.path, os.path.getsize(p.path) / 1e6)
        return True
    atomic.discard(p.tmp)
    return False
