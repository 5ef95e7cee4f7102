"""Spark's Python daemon (``spark.python.daemon.module``), importing pyspark compiled.

Spark starts the daemon that forks its Python workers with a ``PYTHONPATH`` that begins with
``$SPARK_HOME/python/lib/pyspark.zip``, the py4j source zip and the spark-core jar. Python
caches no bytecode for a zip of sources, so the daemon and every worker compile pyspark's
modules again on each run: ``import pyspark.daemon`` takes ~0.8 s from the zip against ~0.2 s
from the installed package, serially before a run's first Python task (docs/benchmarks.md,
"Indexing").

When ``SPARK_HOME`` *is* the installed pyspark package (a pip install, whose zip holds the
same sources), this module moves those archives behind the other entries of ``sys.path``,
then runs pyspark's own daemon; the workers it forks inherit the path. Anything else (a Spark
distribution whose pyspark lives only in its zip, no ``SPARK_HOME``) runs unchanged.
The module imports nothing but the standard library before pyspark, and prints nothing: the
daemon's standard output is its protocol with the JVM.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys

#: the Spark setting that names this module (local runs, lib.runtime.session)
CONF = "spark.python.daemon.module"
MODULE = "lib.runtime.pydaemon"


def _under(path: str, home: str) -> bool:
    return os.path.realpath(path).startswith(home + os.sep)


def compiled_first(path: list[str], spark_home: str | None) -> list[str]:
    """``path`` with the archives (files: zips, jars) under ``spark_home`` moved to its end, in
    their order; ``path`` itself when there are none or the installed pyspark is not the
    package ``spark_home`` names (then the zip's pyspark is the only one)."""
    if not spark_home:
        return path
    home = os.path.realpath(spark_home)
    archives = [p for p in path if p and os.path.isfile(p) and _under(p, home)]
    if not archives:
        return path
    moved = [p for p in path if p not in archives] + archives
    spec = importlib.machinery.PathFinder.find_spec("pyspark", moved)
    if spec is None or not spec.origin or os.path.realpath(os.path.dirname(spec.origin)) != home:
        return path
    return moved


if __name__ == "__main__":  # the daemon process: the path first, then pyspark
    sys.path[:] = compiled_first(sys.path, os.environ.get("SPARK_HOME"))
    from pyspark import daemon

    daemon.manager()  # sys.argv[1] (the worker module) is read as under ``-m pyspark.daemon``
