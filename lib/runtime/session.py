"""A job's environment: its log lines, the Python its workers run, and its Spark session.

:func:`start_session` builds the session a job's options ask for (an existing one in tests,
``local[*]`` under plain ``python``, whatever ``spark-submit`` configured otherwise), forwards
the S3 settings to executors and ships ``lib`` to a cluster. What only a local driver JVM gains
(class archive, light JVM options, the compiled worker daemon) is in :mod:`lib.runtime.localmode`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from lib.runtime import localmode
from lib.runtime.options import JobOptions
from lib.runtime.pyfiles import zip_lib
from lib.store import s3


def setup_logging() -> None:
    """The jobs' log lines on stderr (INFO and up; py4j's only from WARNING): for commands."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # its shutdown chatter, not ours


def use_this_python() -> None:
    """Make Spark's Python workers run this interpreter (the venv's), unless told otherwise.

    Without it PySpark starts workers with whatever ``python3`` is first on PATH, which on a
    machine where the venv is not activated lacks pyarrow and everything else."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def on_cluster(spark: Any) -> bool:
    """Whether executors run outside this process (anything but a ``local[...]`` master)."""
    return not spark.sparkContext.master.startswith("local")


class ContextOnly:
    """What a job whose work is Python RDD tasks uses of a SparkSession: its ``sparkContext``
    (and ``stop``). Such a job (``SparkJob.context_only``) starts no SQL session of its own:
    building one costs ~0.5 s of the JVM before the first task can be asked for
    (docs/preprocess.md, "Where the job's time goes"). A caller's own SparkSession serves too."""

    def __init__(self, sc: SparkContext) -> None:
        self.sparkContext = sc

    def stop(self) -> None:
        self.sparkContext.stop()


def start_session(
    name: str, args: JobOptions, *, light: bool, context_only: bool
) -> tuple[Any, localmode.ArchivePlan | None]:
    """A Spark session for job ``name`` and its options (``master``, ``conf``, ``log_level``), a
    :class:`ContextOnly` when ``context_only``; and the driver JVM's class archive plan (local
    runs only; :func:`localmode.stop` takes it back when the session stops)."""
    use_this_python()
    settings = {
        "spark.app.name": f"dailyslice-{name}",
        "spark.ui.showConsoleProgress": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
        "spark.sql.sources.partitionOverwriteMode": "static",
    }
    if args.master:
        settings["spark.master"] = args.master
    settings.update({f"spark.executorEnv.{k}": v for k, v in s3.s3_env().items()})
    conf = dict(kv.partition("=")[::2] for kv in args.conf)
    archive = localmode.prepare(conf, args.master, light)  # local runs only
    settings.update(conf)
    if context_only:
        spark: Any = ContextOnly(SparkContext.getOrCreate(SparkConf().setAll(list(settings.items()))))
    else:
        b = SparkSession.builder
        for k, v in settings.items():
            b = b.config(k, v)
        spark = b.getOrCreate()
    spark.sparkContext.setLogLevel(args.log_level)
    if on_cluster(spark):
        spark.sparkContext.addPyFile(zip_lib())
    return spark, archive


class SharedSession:
    """One Spark application for several jobs run one after another (``dailyslice day``: the
    whole night's chain): started by the first job that gets past its input check and its
    lease, so a night that refuses at once starts no JVM, and stopped by its owner (:meth:`stop`)
    once the last job is done. ``SparkJob.call(options, shared)`` takes it where a session goes.
    ``light``: the JVM only schedules Python tasks (``SparkJob.light_driver`` of every job)."""

    def __init__(self, name: str, args: JobOptions, *, light: bool) -> None:
        self.name, self.args, self.light = name, args, light
        self.spark: Any = None
        self._archive: localmode.ArchivePlan | None = None
        self.starts = 0  # how many times a session was started (one, once any job ran)

    def get(self) -> Any:
        """The application's session, started on the first call."""
        if self.spark is None:
            self.spark, self._archive = start_session(self.name, self.args, light=self.light, context_only=False)
            self.starts += 1
        return self.spark

    def stop(self) -> None:
        """Stop the session if one was started (a local run then writes its class archive)."""
        if self.spark is not None:
            localmode.stop(self.spark, self._archive)
            self.spark = None
