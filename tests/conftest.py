"""Shared fixtures: one loopback S3 server and one Spark session per test run.

The S3 server starts before Spark so that the Python workers Spark forks inherit the
endpoint and credentials, exactly as executors of a real run would.
"""

from __future__ import annotations

import logging
import os
import pathlib
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

# py4j logs at INFO from a destructor at interpreter exit, after pytest closed its streams
logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture(scope="session")
def corpus() -> pathlib.Path:
    """The real crawl samples beside the project (skip when absent: not part of the project)."""
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"real crawl samples not found at {SHARED_CORPUS}")
    return SHARED_CORPUS


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
