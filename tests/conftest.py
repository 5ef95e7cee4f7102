"""Shared fixtures: one loopback S3 server and one Spark session per test run.

The S3 server starts before Spark so that the Python workers Spark forks inherit the
endpoint and credentials, exactly as executors of a real run would.
"""

from __future__ import annotations

import logging
import os
import pathlib
import shutil
import subprocess
import sys
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the shared data beside the checkout (../shared), or where $DAILYSLICE_SHARED says (a worktree elsewhere)
SHARED = pathlib.Path(os.environ.get("DAILYSLICE_SHARED") or ROOT.parent / "shared")
SHARED_CORPUS = SHARED / "corpus"

pytest_plugins: list[str] = []

# Jobs started in subprocesses (spark-submit, Slurm, Airflow tests) would each write a ~190 MB
# JVM class archive into the user's cache on their first run; tests/runtime/test_jvm_cache.py turns
# it on where it is the subject.
os.environ["DAILYSLICE_JVM_CACHE"] = "off"


def pytest_report_header(config) -> str:
    """The system packages' versions (the Python ones are requirements/lock.txt's), at the run's start."""
    from tests.helpers_sysdeps import system_versions

    return "system packages: " + ", ".join(f"{k} {v}" for k, v in system_versions().items())


# py4j logs at INFO from a destructor at interpreter exit, after pytest closed its streams
logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def corpus() -> pathlib.Path:
    """The real crawl samples beside the project (skip when absent: not part of the project)."""
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"real crawl samples not found at {SHARED_CORPUS}")
    return SHARED_CORPUS


# what the archive below is written by: a job's own session (its driver JVM options) running a
# small SQL query, so that the classes of Spark SQL's planner and code generator are archived too
_ARCHIVE_RUN = """
from jobs.catalogue import CatalogueJob, CatalogueOptions
from lib.runtime import localmode
job = CatalogueJob()
spark = job.session(CatalogueOptions(master="local[1]"))
spark.range(100).selectExpr("id % 7 AS k").groupBy("k").count().collect()
localmode.stop(spark, job._archive)
"""


@pytest.fixture(scope="session")
def job_jvm_archive(tmp_path_factory):
    """The driver JVM's class archive (lib/runtime/jvm_cache.py) for the jobs tests start as
    processes (``python jobs/X.py``), written once per run into a folder of the run's own,
    removed at its end (never the user's cache). ``DAILYSLICE_CACHE_DIR`` names the folder for
    the session; a process started with ``DAILYSLICE_JVM_CACHE=on`` maps Spark's classes from
    it and reaches its first task seconds sooner (docs/runtime.md, "JVM start-up")."""
    folder = tmp_path_factory.mktemp("jvm-archive")
    saved = os.environ.get("DAILYSLICE_CACHE_DIR")
    os.environ["DAILYSLICE_CACHE_DIR"] = str(folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_"))}
    env.update(DAILYSLICE_JVM_CACHE="on", PYTHONPATH=str(ROOT), PYSPARK_PYTHON=sys.executable)
    subprocess.run([sys.executable, "-c", _ARCHIVE_RUN], cwd=ROOT, env=env, check=True, capture_output=True)
    assert list(folder.glob("*.jsa")), "no class archive written"
    yield {"DAILYSLICE_JVM_CACHE": "on", "DAILYSLICE_CACHE_DIR": str(folder)}
    if saved is None:
        os.environ.pop("DAILYSLICE_CACHE_DIR", None)
    else:
        os.environ["DAILYSLICE_CACHE_DIR"] = saved
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def submit_jvm_archive(job_jvm_archive) -> dict[str, str]:
    """The environment that has ``spark-submit``'s driver JVM (deploy/common/run-day.sh, Slurm and
    Magpie runs) map the same class archive, and run C1 only: ``SPARK_SUBMIT_OPTS`` reaches that JVM
    only, not a standalone master's, worker's or executor's (a JVM that cannot map it loads classes as
    usual)."""
    from lib.runtime.localmode import LIGHT_DRIVER_OPTS

    (archive,) = pathlib.Path(job_jvm_archive["DAILYSLICE_CACHE_DIR"]).glob("*.jsa")
    # the drivers of these runs work on days of a few dozen pages: C1 only, as a small day's local
    # driver runs (LIGHT_DRIVER_OPTS); C2's compiler threads would only take the 2 cores from them
    return {"SPARK_SUBMIT_OPTS": f"-XX:SharedArchiveFile={archive} {LIGHT_DRIVER_OPTS}"}


@pytest.fixture(scope="session")
def s3_server():
    """moto's standalone S3 server on 127.0.0.1; the pipeline only sees AWS_ENDPOINT_URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://127.0.0.1:{port}"
    saved = {
        k: os.environ.get(k)
        for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")
    }
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
    )
    from lib.store import s3

    s3.reset()
    yield endpoint
    server.stop()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    s3.reset()


@pytest.fixture
def s3_bucket(s3_server) -> str:
    """A fresh, empty bucket; returns its name."""
    from lib.store import s3

    name = f"test-{uuid.uuid4().hex[:12]}"
    s3.client().create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="session")
def spark(s3_server, tmp_path_factory):
    """One local Spark session for the whole run (2 cores, like CI)."""
    from pyspark.sql import SparkSession

    from lib.runtime import pydaemon
    from lib.runtime.session import use_this_python

    use_this_python()  # CI runs .venv/bin/python without activating the venv
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("dailyslice-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.memory", "2g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
        .config("spark.python.worker.reuse", "true")
        .config(pydaemon.CONF, pydaemon.MODULE)  # workers import pyspark compiled (lib/runtime/pydaemon.py)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# two days of real archives, built once per run (tests/fixtures_days.py)
from tests.fixtures_days import corpus_days  # noqa: E402,F401

# a published demo day (sample crawl -> preprocess -> index -> catalogue), once per run: the service's
# tests and the SWAP network's (tests/placement/test_swap_read.py, the day published into a collection)
from tests.serve.fixtures_http import published_root  # noqa: E402,F401
