"""Start-up tricks for a local driver JVM: what ``python jobs/....py`` on one machine gains,
and what a cluster run (``spark-submit``, a non-local ``--master``) never gets.

:func:`lib.runtime.session.start_session` calls :func:`prepare` before it builds a session and
``SparkJob`` calls :func:`stop` after a session it started; both do nothing unless this process is about to
launch its own driver JVM. Three tricks, each with its own switch, and one without (the
driver imports what PySpark will ask for while its JVM boots, :func:`warm_imports`):

* the class-data-sharing archive of :mod:`lib.runtime.jvm_cache` (``DAILYSLICE_JVM_CACHE=off``):
  ~3-4 s sooner to the first task; the first run on a machine writes it, 10-20 s once (with
  any master: it is the driver's JVM);
* :data:`LIGHT_DRIVER_OPTS` for jobs whose JVM only schedules Python tasks
  (``DAILYSLICE_LIGHT_DRIVER=off``): C1 only and the serial collector, whose threads otherwise
  take CPU from the Python workers on a small machine;
* the Python worker daemon of :mod:`lib.runtime.pydaemon` (``DAILYSLICE_PY_DAEMON=off``): workers
  import pyspark compiled instead of from Spark's zip of its sources.

:func:`stop_session` also stops a session without waiting out PySpark's accumulator server.
Measured in docs/benchmarks.md ("Indexing", "JVM start-up").
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from lib.runtime import jvm_cache, pydaemon
from lib.runtime.jvm_cache import ArchivePlan

#: Driver JVM options of a local run whose JVM only schedules Python tasks and collects small
#: rows (``SparkJob.light_driver``): the C2 compiler's and the parallel collector's threads
#: compete with the Python workers for the cores and pay off only in long JVM-side work. On
#: 2 cores they cost ~3 s of a short run (docs/benchmarks.md, "Indexing"). Options the user
#: gives in ``spark.driver.extraJavaOptions`` come after these, so they win.
LIGHT_DRIVER_OPTS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
ENV_LIGHT = "DAILYSLICE_LIGHT_DRIVER"  # "off" keeps the JVM's default compilers and collector
ENV_DAEMON = "DAILYSLICE_PY_DAEMON"  # "off" keeps Spark's daemon (pyspark compiled from its zip)
#: imported in a thread while the driver waits for its JVM: PySpark imports them (pandas
#: with them) the first time py4j converts an argument, in the SparkContext's start after
#: the JVM is up (pyspark.sql.types' NumpyArrayConverter), ~0.25 s of one core otherwise idle
WARM_MODULES = ("pyspark.testing.utils",)


def _launching_local_jvm(switch: str, master: str | None) -> bool:
    """Whether this process is about to launch a local driver JVM (no JVM yet, the master
    ``local[...]`` or unset) and the environment switch ``switch`` does not say ``off``."""
    return jvm_cache.switch_on(switch) and not jvm_cache.jvm_running() and (master or "local").startswith("local")


def light_driver_options(master: str | None) -> str | None:
    """:data:`LIGHT_DRIVER_OPTS` when this process is about to launch a local driver JVM and
    :data:`ENV_LIGHT` does not say ``off``."""
    return LIGHT_DRIVER_OPTS if _launching_local_jvm(ENV_LIGHT, master) else None


def daemon_module(master: str | None) -> str | None:
    """:mod:`lib.runtime.pydaemon` when this process is about to launch a local driver JVM (its
    workers import pyspark compiled), unless :data:`ENV_DAEMON` says ``off``. Not on a
    cluster: its executors' Python may not see ``lib`` before the job ships it."""
    return pydaemon.MODULE if _launching_local_jvm(ENV_DAEMON, master) else None


def stop_session(spark: Any) -> None:
    """``spark.stop()`` without waiting for PySpark's accumulator server, whose handler polls
    once a second: stopping it costs up to 1 s of every run. These jobs use no accumulators;
    the server's thread (a daemon) is told to stop and ends with the process."""
    sc = spark.sparkContext
    server = getattr(sc, "_accumulatorServer", None)
    if server is not None:
        sc._accumulatorServer = None
    spark.stop()
    if server is not None:
        threading.Thread(target=server.shutdown, name="accumulator-server-stop", daemon=True).start()


def _import_quietly(names: tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # the SparkContext's start imports it again and reports what fails
            pass


def warm_imports(names: tuple[str, ...] = WARM_MODULES) -> threading.Thread:
    """Import ``names`` in a daemon thread (the caller is about to wait for a JVM); returns it."""
    t = threading.Thread(target=_import_quietly, args=(names,), name="warm-imports", daemon=True)
    t.start()
    return t


def prepare(conf: dict[str, str], master: str | None, light: bool) -> ArchivePlan | None:
    """Add the local tricks to the session settings ``conf`` (the user's own settings win);
    returns the class archive plan for :func:`stop` (None: none). Nothing when the driver JVM
    already runs (``spark-submit``); the light options and the daemon also need a local master,
    the class archive only a driver JVM this process launches."""
    if jvm_cache.jvm_running():
        return None
    warm_imports()
    opts = jvm_cache.DRIVER_OPTS
    options = light_driver_options(master) if light else None
    if options:  # ours first: the user's options come after them and win
        conf[opts] = jvm_cache.merge_option(options, conf.get(opts) or "")
    daemon = daemon_module(master)
    if daemon:
        conf.setdefault(pydaemon.CONF, daemon)
    archive = jvm_cache.plan(conf.get("spark.driver.memory"))
    if archive is not None:
        conf[opts] = jvm_cache.merge_option(conf.get(opts), archive.java_option)
    return archive


def stop(spark: Any, archive: ArchivePlan | None) -> None:
    """Stop a session this process started (:func:`stop_session`), then let the class archive
    of a first run be written (:func:`lib.runtime.jvm_cache.finish`)."""
    stop_session(spark)
    jvm_cache.finish(archive)
