"""A real S3 server (SeaweedFS, :mod:`devtools.seaweed`) for the end-to-end tests, beside moto's
mock (``s3_server`` in conftest.py, kept for fast unit tests).

Register with ``pytest_plugins = ["tests.fixtures_seaweed"]``. The in-process ``spark``
session's workers keep moto's endpoint (they inherit it at start), so jobs that must reach
this server run as subprocesses with :meth:`SeaweedS3.env` in their environment
(:mod:`tests.reliability.pipeline`).
"""

from __future__ import annotations

import uuid

import pytest

from devtools.seaweed import SeaweedS3


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
