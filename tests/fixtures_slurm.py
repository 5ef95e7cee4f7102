"""The orchestration tests' session fixture: a real two-node Slurm cluster (:mod:`devtools.slurm`).

Register with ``pytest_plugins = ["tests.fixtures_slurm"]``.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from devtools.slurm import start_cluster, stop_cluster


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running two-node Slurm cluster; ``SLURM_CONF`` points at it for the session."""
    root = tempfile.mkdtemp(prefix="dsslurm-", dir="/tmp")  # short path: munge's socket
    cluster = start_cluster(root)
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = cluster.conf
    try:
        yield cluster
    finally:
        stop_cluster(cluster)
        if saved is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = saved
        shutil.rmtree(root, ignore_errors=True)
