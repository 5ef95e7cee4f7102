r"""Build the nightly DAG of one data center:

estimate -> size -> submit -> wait (deferred) -> check -> exchange -> stage -> summary
                                                    \-> logs ------------------^
catch_up -------------------------------------------------------------------------^

estimate counts and sizes the day's WARC files in S3 (none: everything after it is
skipped and the run succeeds); size turns the volume into nodes and walltime
(:mod:`lib.orchestration.sizing`); submit runs ``sbatch --parsable`` (job name
``dailyslice-<dc>`` + ``--dependency=singleton``: one job per data center at a time);
wait defers to :class:`~lib.orchestration.trigger.SlurmJobTrigger`; check reads the marker
and, on failure, copies the tails of the job's logs into the task log (for a day preprocess
published but found unhealthy, exit 3, the health text first: shares, breached thresholds,
top reasons, sample offsets, also in the exception); exchange merges the partner data
centers' links into the day's index (:mod:`lib.orchestration.exchange_task`); stage mirrors the
output and the URL database to the staging target (filesystem, S3, iRODS or placement
slices); logs (after check, whether it failed or not) stages the job's logs; summary writes
the run summary JSON.

catch_up runs beside that chain (no upstream, so it runs on a night whose own day is empty
or fails too): check-days (:mod:`lib.orchestration.days`) over the ``check_days.window``
days ending the night before the run, the bucket against the published days (read with
``cat`` where the jobs write, as submit reads them). Every ``changed`` or ``missing`` day but
the run's own is logged as a WARNING and triggered as a run of this DAG with
``conf={"date": day}`` and the run id ``catchup__<day>__<fingerprint of its state>``: a
second check finds that run and reports it ``already queued`` instead of queueing the day
again. At most ``check_days.max_queue`` (default ``max_active_runs``) are triggered per
check, oldest first; the rest are reported ``deferred`` and come up at the next check. The
scheduler runs at most ``max_active_runs`` of them at a time and keeps the rest queued.
Runs catch_up queued, and backfill runs, do not check again. Its report (days by state,
queued, already queued, deferred) is the task's return value and the summary's
``catch_up``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pendulum
from airflow.sdk import DAG, BaseOperator, Param, get_current_context, task

from lib.orchestration import nightly, slurm
from lib.orchestration.nightly import Night
from lib.orchestration.runenv import s3_credentials_env
from lib.orchestration.trigger import SlurmJobTrigger


def start_date(cfg: dict[str, Any]) -> dt.datetime:
    """The config's ``start_date`` (YYYY-MM-DD or an ISO date-time) as a UTC date-time."""
    start = pendulum.parse(str(cfg["start_date"]), tz="UTC")
    if not isinstance(start, pendulum.DateTime):  # a time of day or a duration parses too
        raise ValueError(f"start_date must be a date or date-time, got {cfg['start_date']!r}")
    return start


class SlurmJobSensor(BaseOperator):
    """Wait for the job ``submission`` describes, deferred to the triggerer."""

    template_fields = ("submission",)

    def __init__(self, *, submission: Any, runner: dict[str, Any], poll_seconds: float, timeout_hours: float, **kw):
        super().__init__(**kw)
        self.submission = submission
        self.runner = runner
        self.poll_seconds = poll_seconds
        self.timeout_hours = timeout_hours

    def execute(self, context: Any) -> dict[str, Any]:
        sub = self.submission
        if sub.get("job_id") is None:
            return {"state": "REUSED", "marker_ok": True}
        self.defer(
            trigger=SlurmJobTrigger(sub["job_id"], sub["marker_file"], self.runner, self.poll_seconds),
            method_name="execute_complete",
            timeout=dt.timedelta(hours=self.timeout_hours),
        )

    def execute_complete(self, context: Any, event: dict[str, Any]) -> dict[str, Any]:
        return event


def slurm_wait(submission: Any, runner: slurm.Runner, cfg: dict[str, Any], **kw: Any) -> SlurmJobSensor:
    """The ``wait`` task of a DAG on the job ``submission`` describes, polled as the data center's
    ``slurm`` settings say."""
    return SlurmJobSensor(
        task_id="wait",
        submission=submission,
        runner=runner.as_dict(),
        poll_seconds=float(cfg["slurm"]["poll_seconds"]),
        timeout_hours=float(cfg["slurm"]["timeout_hours"]),
        **kw,
    )


def build_dag(dc: str, cfg: dict[str, Any]) -> DAG:
    """The DAG ``dailyslice-<dc>`` for one data center's settings (see config.py)."""
    runner = slurm.Runner.from_config(cfg["slurm"])
    creds = s3_credentials_env(cfg["s3"])
    default_args = {
        "retries": int(cfg.get("retries", 2)),
        "retry_delay": dt.timedelta(minutes=float(cfg.get("retry_minutes", 5))),
    }

    with DAG(
        dag_id=f"dailyslice-{dc}",
        schedule=cfg["schedule"],
        start_date=start_date(cfg),
        catchup=False,
        max_active_runs=int(cfg["max_active_runs"]),
        default_args=default_args,
        params={
            "date": Param(
                None,
                type=["null", "string"],
                description="day to process (YYYY-MM-DD); default: the day before the run",
            ),
            "force": Param(False, type="boolean", description="recompute even if the day's marker says it is done"),
        },
        tags=["dailyslice", dc],
        doc_md=__doc__,
    ) as dag:
        night = Night(dc, cfg, runner, creds, dag.dag_id)

        @task
        def estimate() -> dict[str, Any]:
            return nightly.estimate_day(night, get_current_context())

        @task
        def size(est: dict[str, Any]) -> dict[str, Any]:
            return nightly.size_day(night, est)

        @task(max_active_tis_per_dag=1, retries=0)
        def submit(est: dict[str, Any], sized: dict[str, Any]) -> dict[str, Any]:
            return nightly.submit_day(night, get_current_context(), est, sized)

        @task(retries=0)
        def check(sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
            return nightly.check_day(night, sub, event)

        @task
        def exchange(marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            return nightly.exchange_day(night, marker, est)

        @task
        def stage(marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            return nightly.stage_outputs(night, marker, est)

        @task(trigger_rule="none_skipped")
        def logs(sub: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            return nightly.stage_run_logs(night, sub, est)

        @task
        def catch_up() -> dict[str, Any]:
            return nightly.catch_up_days(night, get_current_context())

        @task
        def summary(
            est: dict[str, Any],
            sized: dict[str, Any],
            sub: dict[str, Any],
            marker: dict[str, Any],
            staged: dict[str, Any],
            caught: dict[str, Any],
            logged: dict[str, Any] | None,
        ) -> str:
            return nightly.write_summary(night, get_current_context(), est, sized, sub, marker, staged, caught, logged)

        est = estimate()
        sized = size(est)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        sub = submit(est, sized)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        waited = slurm_wait(sub, runner, cfg, retries=0)
        marker = check(sub, waited.output)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        staged = stage(marker, est)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        # after check, also when it failed: the record of why
        logged = logs(sub, est)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        marker >> logged
        # the staged day carries the merged graph
        exchange(marker, est) >> staged  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        summary(est, sized, sub, marker, staged, catch_up(), logged)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
    return dag


def build_dags(config: dict[str, dict[str, Any]]) -> dict[str, DAG]:
    return {d.dag_id: d for d in (build_dag(dc, cfg) for dc, cfg in config.items())}
