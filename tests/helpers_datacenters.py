"""A data center's datacenters.yaml entry for the nightly DAG's tests (tests/orchestration)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import sys
from typing import Any, Iterator

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: a job_env running spark-submit in local mode inside the allocation (SPARK_MASTER_NODE: run-day
#: starts no cluster; the later --master wins): the lightest real run of run-day.sh's jobs
LOCAL_SPARK = {"SPARK_MASTER_NODE": "127.0.0.1", "SPARK_SUBMIT_ARGS": "--master local[1]"}
#: a new URL database of 2 key-space partitions, not 16: the days here have a few dozen pages
#: (partitioning is tests/catalogue's subject)
SMALL_URLDB = "--url-partitions 2"


def datacenter_entry(base: pathlib.Path, s3_endpoint: str, bucket: str, prefix: str, nodes: int, job_env: dict) -> dict:
    """A data center's datacenters.yaml entry for the DAG tests: this checkout and venv, outputs, scratch and
    staging below ``base``, the day's archives in ``bucket``/``prefix``, a local sbatch on ``nodes`` nodes;
    ``job_env`` adds to (or overrides) a small driver on loopback, an index of groups of any size and a
    small URL database."""
    job_env = {
        "SPARK_DRIVER_MEMORY": "768m",
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SCRATCH_DIR": str(base / "scratch"),
        "INDEX_ARGS": "--min-group-docs 1",
        "CATALOGUE_ARGS": SMALL_URLDB,
    } | job_env
    return {
        "project_home": str(ROOT),
        "venv": sys.prefix,
        "output_root": str(base / "out" / "{data_center}"),
        "retries": 0,
        "s3": {"endpoint": s3_endpoint, "bucket": bucket, "prefix": prefix},
        "slurm": {"submit": "local", "poll_seconds": 2, "timeout_hours": 0.2, "log_tail_lines": 20},
        "sizing": {"min_nodes": nodes, "max_nodes": nodes, "min_minutes": 10, "overhead_minutes": 5},
        "job_env": job_env,
        "staging": {"type": "filesystem", "path": str(base / "archive" / "{data_center}")},
    }


@contextlib.contextmanager
def datacenters_file(path: pathlib.Path) -> Iterator[None]:
    """``$DAILYSLICE_DATACENTERS`` at ``path`` for the block (``dag.test()`` runs the DAG the DAG folder
    builds from it), restored after."""
    saved = os.environ.get("DAILYSLICE_DATACENTERS")
    os.environ["DAILYSLICE_DATACENTERS"] = str(path)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DAILYSLICE_DATACENTERS", None)
        else:
            os.environ["DAILYSLICE_DATACENTERS"] = saved


def task_states(dr: Any) -> dict[str, str]:
    """The states of a DAG run's task instances by task id."""
    from airflow.utils.session import create_session

    with create_session() as session:
        return {ti.task_id: str(ti.state) for ti in dr.get_task_instances(session=session)}
