"""What an Airflow task of the DAGs sets up around its work: the day a run stands for and the S3
settings (endpoint, refreshing credentials, the data center's connection caps). No Airflow import."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from typing import Any, Iterator

from lib.store import s3


def day_of(context: dict[str, Any]) -> dt.date:
    """The day a run processes: ``params.date`` if given, else the day before the run's
    logical date (the 03:00 run of the 16th processes the 15th)."""
    given = (context.get("params") or {}).get("date")
    if given:
        return dt.date.fromisoformat(str(given))
    when = context.get("logical_date") or context["dag_run"].run_after
    return (when - dt.timedelta(days=1)).date()


def nightly_day(context: dict[str, Any]) -> dt.date:
    """The night a run stands for whatever day it processes: the day before its logical date
    (or, without one, the day before it was queued to run)."""
    when = context.get("logical_date") or context["dag_run"].run_after
    return (when - dt.timedelta(days=1)).date()


@contextlib.contextmanager
def s3_endpoint(endpoint: str | None, env: dict[str, str] | None = None) -> Iterator[None]:
    """Point lib.store.s3 at ``endpoint`` (None: leave the environment's) with ``env`` (the
    credentials settings of :func:`s3_credentials_env`) for the block; the clients made in it
    are dropped at its end, so each task builds its own and none outlives its credentials."""
    settings = {**({"AWS_ENDPOINT_URL": endpoint} if endpoint else {}), **(env or {})}
    if not settings:
        yield
        return
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    s3.reset()
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        s3.reset()


def s3_credentials_env(s3cfg: dict[str, Any]) -> dict[str, str]:
    """The environment that makes the job (driver and executors) and the Airflow side's own S3
    clients take refreshing credentials (``s3.credentials``: an AWS config file and profile
    whose provider refreshes, :mod:`lib.store.s3`); empty when not configured."""
    creds = s3cfg.get("credentials") or {}
    if not creds:
        return {}
    env = {"S3_CREDENTIALS": "refreshing"}
    if creds.get("config_file"):
        env["AWS_CONFIG_FILE"] = str(creds["config_file"])
    if creds.get("profile"):
        env["AWS_PROFILE"] = str(creds["profile"])
    return env


def s3_pressure_env(s3cfg: dict[str, Any]) -> dict[str, str]:
    """The job environment that enforces a data center's S3 caps: the preprocess job's
    concurrent archive reads, Spark executors of at most that many cores (one S3 stream per
    task), connections per process. ``job_env`` settings come after and win."""
    env = {}
    if s3cfg.get("max_connections_per_job"):
        env["DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB"] = str(s3cfg["max_connections_per_job"])
    if s3cfg.get("max_connections_per_executor"):
        env["SPARK_EXECUTOR_CORES"] = str(s3cfg["max_connections_per_executor"])
    if s3cfg.get("max_connections_per_process"):
        env["S3_MAX_CONNECTIONS"] = str(s3cfg["max_connections_per_process"])
    return env
