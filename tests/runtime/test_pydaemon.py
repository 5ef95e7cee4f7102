"""lib.runtime.pydaemon: Spark's Python workers import the installed pyspark, not its source zip."""

from __future__ import annotations

import os
import sys
import zipfile

import pyspark

from lib.runtime.pydaemon import compiled_first

HOME = os.path.dirname(os.path.realpath(pyspark.__file__))  # a pip install: SPARK_HOME is the package


def _spark_path(home: str) -> list[str]:
    """The head of PYTHONPATH that Spark gives its Python daemon (PythonUtils.sparkPythonPath)."""
    lib = os.path.join(home, "python", "lib")
    zips = sorted(os.path.join(lib, n) for n in os.listdir(lib) if n.endswith(".zip"))
    jars = sorted(os.path.join(home, "jars", n) for n in os.listdir(os.path.join(home, "jars")) if n.startswith("spark-core"))
    return zips + jars[:1]


def test_the_pip_install_gives_workers_a_zip_of_pyspark_sources_and_no_bytecode():
    head = _spark_path(HOME)
    assert any(p.endswith("pyspark.zip") for p in head)
    names = zipfile.ZipFile(next(p for p in head if p.endswith("pyspark.zip"))).namelist()
    assert "pyspark/daemon.py" in names and not any(n.endswith(".pyc") for n in names)


def test_archives_under_spark_home_move_behind_the_installed_packages():
    head = _spark_path(HOME)
    rest = [p for p in sys.path if p and p not in head]
    moved = compiled_first(head + rest, HOME)
    assert moved == rest + head  # same entries, the archives last and in their order


def test_nothing_moves_when_spark_home_is_not_the_installed_pyspark(tmp_path):
    # a Spark distribution: its pyspark lives only in its zip, which must stay first
    lib = tmp_path / "python" / "lib"
    lib.mkdir(parents=True)
    zipped = lib / "pyspark.zip"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("pyspark/__init__.py", "")
    path = [str(zipped), *[p for p in sys.path if p]]
    assert compiled_first(path, str(tmp_path)) is path
    assert compiled_first(path, None) is path
    assert compiled_first([p for p in sys.path if p], HOME) == [p for p in sys.path if p]  # no archives


def test_the_shared_session_workers_import_the_installed_pyspark(spark):
    origin = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__).collect()[0]
    assert origin == pyspark.__file__
