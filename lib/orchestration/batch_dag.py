r"""Build the batch DAG of one data center (docs/orchestration.md, "The batch DAG"):

find -> submit -> wait (deferred) -> check

A run (a *tick*) every ``batch_minutes`` of datacenters.yaml (absent or null: no batch DAG) runs the
next batch of today (UTC; ``params.date`` names another day): the archives that arrived since the last
batch, published under the day as ``batch=N/`` (``dailyslice day --batch``, jobs/day.py). find lists
the day's archives in S3 (none: everything after it is skipped and the tick succeeds); submit runs
the nightly job's sbatch script with ``BATCH=1`` under the nightly job's name ``dailyslice-<dc>`` and
``--dependency=singleton``, so a batch and the night (which consolidates the day's batches) never run
at once; wait defers to the nightly DAG's trigger; check reads the tick's marker
(``_runs/<dc>/<date>.tick.json``, this job's id): a published batch, or ``nothing_new`` (the job found
no archive no batch took: the tick succeeds with "nothing to do"), else the nightly check's failure
report. ``max_active_runs`` 1: one tick at a time; a tick that fails is not retried, the next one plans
the same batch again (lib/preprocess/batches.py).

Ticks take today only: the previous day's archives that arrived after its last tick are the closing
night's last batch, and a tick after the night closed a day would find it closed anyway.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from airflow.sdk import DAG, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowSkipException

from lib.orchestration import nightly, slurm
from lib.orchestration.dag_factory import slurm_wait, start_date
from lib.orchestration.marker import tick_path
from lib.orchestration.nightly import Night
from lib.orchestration.runenv import s3_credentials_env, s3_endpoint
from lib.store import layout, storage
from lib.warc.records import ARCHIVE_SUFFIXES

log = logging.getLogger("dailyslice.dag")


def tick_day(context: dict[str, Any]) -> dt.date:
    """The day a tick runs a batch of: ``params.date`` if given, else the UTC day it was queued to run."""
    given = (context.get("params") or {}).get("date")
    if given:
        return dt.date.fromisoformat(str(given))
    run = context.get("dag_run")
    when = getattr(run, "run_after", None) or context["logical_date"]
    return when.astimezone(dt.timezone.utc).date()


def find_day(n: Night, ctx: dict[str, Any]) -> dict[str, Any]:
    """The tick's day and its archives in S3 (none: the tick skips the rest and succeeds)."""
    day = tick_day(ctx)
    uri = layout.day_path(nightly.input_root(n.cfg), layout.WARC, day)
    with s3_endpoint(n.cfg["s3"].get("endpoint"), n.creds):
        files = storage.list_files(uri, suffixes=ARCHIVE_SUFFIXES)
    if not files:
        raise AirflowSkipException(f"no archives under {uri}: no batch of {day}")
    return {"date": day.isoformat(), "input": uri, "files": len(files), "bytes": sum(f.size for f in files)}


def submit_tick(n: Night, found: dict[str, Any]) -> dict[str, Any]:
    """Submit the tick's Slurm job (run-day.sh with ``BATCH=1``) under the data center's singleton name."""
    cfg, dc, day, own = n.cfg, n.dc, found["date"], n.cfg["batch_job"]
    marker = tick_path(cfg["output_root"], dc, day)
    env = {**nightly.job_env(n, day, marker), "BATCH": "1", "BATCH_SETTLE": str(own.get("settle_seconds", 60))}
    out = f"{cfg['log_dir']}/slurm-dailyslice-batch-{dc}-{day}-%j.out"
    job_id, argv = slurm.submit_job(
        n.runner,
        cfg,
        cfg["slurm"]["sbatch_script"],
        env,
        folders=[cfg["log_dir"], marker.rsplit("/", 1)[0]],
        job_name=f"dailyslice-{dc}",  # the night's name: singleton keeps a batch and the night apart
        nodes=int(own["nodes"]),
        time=str(own["time"]),
        output=out,
    )
    log.info("submitted Slurm job %s: %s", job_id, " ".join(argv))
    return {
        "job_id": job_id,
        "marker_file": marker,
        "run_log": f"{cfg['log_dir']}/dailyslice-{dc}-{day}-{job_id}.log",
        "slurm_log": out.replace("%j", job_id),
    }


def check_tick(n: Night, sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The tick's marker with a ``status``: the batch published, or nothing to do; a failed job fails
    the task with the nightly check's report (exit codes, health, the logs' tails)."""
    marker = nightly.check_day(n, sub, event)
    if marker.get("nothing_new"):
        status = "nothing to do: no archive of the day that no batch took"
    else:
        status = f"batch {marker.get('batch')} published: {', '.join(sorted(marker['outputs'].values()))}"
    log.info("%s %s: %s", n.dc, marker.get("date"), status)
    return {**marker, "status": status}


def build_batch_dag(dc: str, cfg: dict[str, Any]) -> DAG | None:
    """The DAG ``dailyslice-batch-<dc>``, a tick every ``batch_minutes``; None when the option is not set."""
    minutes = cfg.get("batch_minutes")
    if not minutes:
        return None
    runner = slurm.Runner.from_config(cfg["slurm"])
    with DAG(
        dag_id=f"dailyslice-batch-{dc}",
        schedule=dt.timedelta(minutes=int(minutes)),
        start_date=start_date(cfg),
        catchup=False,
        max_active_runs=1,
        default_args={"retries": 0},  # the next tick plans the same batch again
        params={"date": Param(None, type=["null", "string"], description="day to batch (YYYY-MM-DD); default: today")},
        tags=["dailyslice", "batch", dc],
        doc_md=__doc__,
    ) as dag:
        night = Night(dc, cfg, runner, s3_credentials_env(cfg["s3"]), dag.dag_id)

        @task
        def find() -> dict[str, Any]:
            return find_day(night, get_current_context())  # type: ignore[arg-type]  # a Context is a mapping

        @task
        def submit(found: dict[str, Any]) -> dict[str, Any]:
            return submit_tick(night, found)

        @task
        def check(sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
            return check_tick(night, sub, event)

        sub = submit(find())  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        waited = slurm_wait(sub, runner, cfg)
        check(sub, waited.output)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
    return dag
