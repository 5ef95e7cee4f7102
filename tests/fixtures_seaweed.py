"""A real S3 server (SeaweedFS, :mod:`devtools.seaweed`) for the end-to-end tests, beside moto's
mock (``s3_server`` in conftest.py, kept for fast unit tests).

Register with ``pytest_plugins = ["tests.fixtures_seaweed"]``. The in-process ``spark``
session's workers keep moto's endpoint (they inherit it at start), so jobs that must reach
this server run as subprocesses with :meth:`SeaweedS3.env` in their environment
(:mod:`tests.reliability.pipeline`).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from devtools.seaweed import SeaweedS3
from tests.reliability import pipeline


@pytest.fixture(scope="session")
def seaweed(tmp_path_factory, job_jvm_archive):
    """One SeaweedFS server on loopback for the session; stopped with a deadline. The jobs the
    tests start against it map the session's JVM class archive (``job_jvm_archive``)."""
    server = SeaweedS3(str(tmp_path_factory.mktemp("seaweedfs")))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def seaweed_bucket(seaweed) -> str:
    """A fresh bucket on the SeaweedFS server (S3 naming rules: lowercase, 3-63 characters)."""
    name = f"day-{uuid.uuid4().hex[:12]}"
    seaweed.client().create_bucket(Bucket=name)
    return name


@dataclass
class CleanDay:
    """The small real day run once, fault-free, through the day's chain (:mod:`tests.reliability.pipeline`)."""

    client: Any
    bucket: str
    root: str
    env: dict[str, str]
    runs: list[pipeline.JobRun]
    seconds: float
    published: pipeline.Published


@pytest.fixture(scope="session")
def clean_day(seaweed, corpus, tmp_path_factory) -> CleanDay:
    """The day's clean run, shared: the fault matrix holds every case against it, the end-to-end
    test checks it and runs the day again into its bucket (one day's run less a use)."""
    work = tmp_path_factory.mktemp("clean")
    bucket = f"clean-{uuid.uuid4().hex[:8]}"
    c = seaweed.client()
    c.create_bucket(Bucket=bucket)
    root = pipeline.upload_day(c, bucket, corpus)
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    runs = pipeline.run_day(root, work / "run", env)
    seconds = time.monotonic() - t0
    assert [r.rc for r in runs] == [0, 0, 0], runs[-1].tail()
    return CleanDay(c, bucket, root, env, runs, seconds, pipeline.published(c, bucket, work / "out"))
