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

import contextlib
import datetime as dt
import json
import logging
import os
from typing import Any, Iterator

import pendulum
from airflow.sdk import DAG, BaseOperator, Param, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from lib.orchestration import days as daycheck
from lib.orchestration import slurm
from lib.orchestration.exchange_task import exchange_outputs
from lib.orchestration.outputs import stage_day, stage_logs
from lib.orchestration.sizing import size_job
from lib.orchestration.trigger import SlurmJobTrigger, failed_marker_path
from lib.preprocess.health import describe
from lib.preprocess.input_manifest import compare
from lib.store import layout, s3, storage
from lib.warc.records import ARCHIVE_SUFFIXES

log = logging.getLogger("dailyslice.dag")


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


def input_root(cfg: dict[str, Any]) -> str:
    prefix = str(cfg["s3"].get("prefix") or "").strip("/")
    return f"s3://{cfg['s3']['bucket']}" + (f"/{prefix}" if prefix else "")


def marker_path(cfg: dict[str, Any], dc: str, day: str) -> str:
    return f"{cfg['output_root']}/{layout.RUNS}/{dc}/{day}.json"


def input_changes(
    runner: Any,
    preprocessed: str | None,
    input_uri: str,
    endpoint: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, list[str]] | None:
    """What changed in the day's input folder since the published day recorded its inputs
    (``_inputs.json``, read where the job wrote it); None when nothing did, or when the day
    has no record (published by an older release: it is taken as it is)."""
    text = slurm.read_text(runner, f"{preprocessed}/{layout.INPUTS}") if preprocessed else None
    if not text:
        return None
    with s3_endpoint(endpoint, env):
        files = storage.list_files(input_uri, suffixes=ARCHIVE_SUFFIXES)
    diff = compare(json.loads(text), input_uri, files)
    return diff if any(diff.values()) else None


def existing_run(ti: Any, dag_id: str, run_id: str) -> str | None:
    """The state of the run ``run_id`` of ``dag_id``, None when there is none (through the
    task's execution API, as ExternalTaskSensor asks)."""
    if not ti.get_dr_count(dag_id=dag_id, run_ids=[run_id]):
        return None
    state = ti.get_dagrun_state(dag_id=dag_id, run_id=run_id)
    return str(getattr(state, "value", state))  # a DagRunState: "queued", "running", "success", "failed"


def trigger_run(dag_id: str, run_id: str, conf: dict[str, Any]) -> bool:
    """Queue a run of ``dag_id`` from inside a running task: True when it was created, False
    when a run with that id exists already. This is the request TriggerDagRunOperator's
    task runner sends (Airflow 3: through the supervisor to the execution API, which creates
    the run as ``queued``); one task sends several of them here. The run has no logical date:
    the day is ``conf["date"]``."""
    from airflow.sdk.exceptions import ErrorType
    from airflow.sdk.execution_time.comms import ErrorResponse, TriggerDagRun
    from airflow.sdk.execution_time.task_runner import SUPERVISOR_COMMS

    resp = SUPERVISOR_COMMS.send(
        TriggerDagRun(dag_id=dag_id, run_id=run_id, conf=conf, run_after=dt.datetime.now(dt.timezone.utc))
    )
    if isinstance(resp, ErrorResponse):
        if resp.error == ErrorType.DAGRUN_ALREADY_EXISTS:
            return False
        raise RuntimeError(f"cannot trigger {dag_id} run {run_id}: {resp.error} {resp.detail}")
    if not getattr(resp, "ok", False):  # an in-process supervisor answers a failed request with nothing
        raise RuntimeError(f"cannot trigger {dag_id} run {run_id}: no confirmation ({resp!r})")
    return True


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
        start_date=pendulum.parse(str(cfg["start_date"]), tz="UTC"),
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

        @task
        def estimate() -> dict[str, Any]:
            day = day_of(get_current_context())
            uri = layout.day_path(input_root(cfg), layout.WARC, day)
            with s3_endpoint(cfg["s3"].get("endpoint"), creds):
                files = storage.list_files(uri, suffixes=ARCHIVE_SUFFIXES)
            if not files:
                raise AirflowSkipException(f"no WARC files under {uri}: nothing to do for {day}")
            total = sum(f.size for f in files)
            log.info("%s: %d WARC files, %d bytes under %s", day, len(files), total, uri)
            return {"date": day.isoformat(), "input": uri, "files": len(files), "bytes": total}

        @task
        def size(est: dict[str, Any]) -> dict[str, Any]:
            sized = size_job(est["bytes"], est["files"], cfg["sizing"], cfg["s3"].get("max_connections_per_job"))
            log.info("%s: %d files, %d bytes -> %s", est["date"], est["files"], est["bytes"], sized)
            return sized

        @task(max_active_tis_per_dag=1, retries=0)
        def submit(est: dict[str, Any], sized: dict[str, Any]) -> dict[str, Any]:
            day = est["date"]
            marker = marker_path(cfg, dc, day)
            force = bool(get_current_context()["params"].get("force"))
            done = slurm.read_marker(slurm.read_text(runner, marker), None)
            changed = None
            if (
                done
                and done.get("ok")
                and not force
                and all(
                    runner.run(["test", "-f", f"{p}/{layout.SUCCESS}"]).returncode == 0
                    for p in done["outputs"].values()
                )
            ):
                changed = input_changes(
                    runner, done["outputs"].get("preprocessed"), est["input"], cfg["s3"].get("endpoint"), creds
                )
                if not changed:
                    log.info(
                        "%s already processed by job %s: not resubmitting (params.force recomputes)",
                        day,
                        done["job_id"],
                    )
                    return {"job_id": None, "reused_job_id": done["job_id"], "marker_file": marker}
                log.warning(
                    "%s: the input changed since job %s published the day (%s): running it again",
                    day,
                    done["job_id"],
                    "; ".join(f"{k}: {', '.join(v)}" for k, v in changed.items() if v),
                )
            r = runner.run(["mkdir", "-p", cfg["log_dir"], os.path.dirname(marker)])
            if r.returncode != 0:
                raise slurm.SlurmError(f"cannot create {cfg['log_dir']}: {r.stderr.strip()}")
            env = {
                "DATE": day,
                "DATA_CENTER": dc,
                "INPUT_ROOT": input_root(cfg),
                "OUTPUT_ROOT": cfg["output_root"],
                "DAILYSLICE_HOME": cfg["project_home"],
                "VENV": cfg["venv"],
                "LOG_DIR": cfg["log_dir"],
                "MARKER_FILE": marker,
            }
            if cfg["s3"].get("endpoint"):
                env["AWS_ENDPOINT_URL"] = cfg["s3"]["endpoint"]
            if cfg.get("exclusions"):
                env["EXCLUSIONS"] = cfg["exclusions"]
            env.update(s3_pressure_env(cfg["s3"]))
            env.update(creds)  # the job's own clients refresh; run-day.sh drops static keys for them
            env.update({k: str(v) for k, v in (cfg.get("job_env") or {}).items()})
            out = f"{cfg['log_dir']}/slurm-dailyslice-{dc}-{day}-%j.out"
            argv = slurm.sbatch_argv(
                os.path.join(cfg["project_home"], cfg["slurm"]["sbatch_script"]),
                f"dailyslice-{dc}",
                sized["nodes"],
                sized["time"],
                out,
                env,
                cfg["slurm"].get("partition"),
                cfg["slurm"].get("account"),
                cfg["slurm"].get("extra_args"),
            )
            job_id = slurm.submit(runner, argv)
            log.info("submitted Slurm job %s: %s", job_id, " ".join(argv))
            return {
                "job_id": job_id,
                "marker_file": marker,
                "nodes": sized["nodes"],
                "time": sized["time"],
                "rerun_because": changed,
                "replaces_job_id": done.get("job_id") if changed else None,
                "run_log": f"{cfg['log_dir']}/dailyslice-{dc}-{day}-{job_id}.log",
                "run_logs": f"{cfg['log_dir']}/dailyslice-{dc}-{day}-{job_id}",
                "slurm_log": out.replace("%j", job_id),
            }

        @task(retries=0)
        def check(sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
            marker = slurm.read_marker(
                slurm.read_text(runner, sub["marker_file"]), sub.get("job_id") or sub.get("reused_job_id")
            )
            if marker and marker.get("ok"):
                return marker
            failed = event.get("failed_marker") or slurm.read_marker(
                slurm.read_text(runner, failed_marker_path(sub["marker_file"])), sub["job_id"]
            )
            lines = int(cfg["slurm"]["log_tail_lines"])
            report = [
                f"Slurm job {sub['job_id']} failed: state {event.get('state')}, exit code {event.get('exit_code')}"
            ]
            unhealthy = (
                failed.get("health") if failed and failed.get("health") and not failed["health"].get("ok") else None
            )
            if failed:
                report.append(
                    f"preprocess exit {failed.get('preprocess_rc')}, index exit {failed.get('index_rc')}, "
                    f"catalogue exit {failed.get('catalogue_rc')}"
                )
            if failed and failed.get("input") in ("missing", "empty"):  # the day vanished or emptied after estimate
                report[0] = (
                    f"{dc} {failed.get('date')}: the day's input is {failed['input']} "
                    f"(preprocess exit {failed.get('preprocess_rc')}): nothing published"
                )
            if unhealthy:  # published and indexed, but the day lost pages: say how, not only where the logs are
                report[0] = f"{dc} {failed.get('date')}: {describe(unhealthy)}"
                report.insert(
                    1,
                    f"Slurm job {sub['job_id']}: state {event.get('state')}, exit code {event.get('exit_code')}; "
                    f"outputs (published, not staged): {failed.get('outputs')}",
                )
            for path in (sub["run_log"], sub["slurm_log"]):
                report.append(f"--- last {lines} lines of {path} ---\n{slurm.log_tail(runner, path, lines)}")
            text = "\n".join(report)
            log.error("%s", text)
            print(text, flush=True)
            raise AirflowFailException(report[0] + f" (logs: {sub['run_log']}, {sub['slurm_log']})")

        @task
        def exchange(marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            spec = cfg.get("exchange") or {}
            with s3_endpoint(spec.get("endpoint"), creds):
                return exchange_outputs(spec, marker["outputs"], est["date"], cfg.get("exclusions"))

        @task
        def stage(marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            spec = cfg["staging"]
            with s3_endpoint(spec.get("endpoint"), creds):
                return stage_day(marker, spec, dt.date.fromisoformat(est["date"]))

        @task(trigger_rule="none_skipped")
        def logs(sub: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
            if sub.get("job_id") is None:  # its logs were staged by the run that ran it
                return {"status": f"no job ran: the day was done by job {sub.get('reused_job_id')}"}
            marker = slurm.read_marker(slurm.read_text(runner, sub["marker_file"]), sub["job_id"])
            marker = marker or slurm.read_marker(
                slurm.read_text(runner, failed_marker_path(sub["marker_file"])), sub["job_id"]
            )
            spec = cfg["staging"]
            with s3_endpoint(spec.get("endpoint"), creds):
                return stage_logs(marker, sub, spec, dt.date.fromisoformat(est["date"]))

        @task
        def catch_up() -> dict[str, Any]:
            ctx = get_current_context()
            spec = cfg.get("check_days") or {}
            window, limit = int(spec.get("window", 7)), spec.get("max_queue")
            limit = int(cfg["max_active_runs"] if limit is None else limit)
            run = ctx["dag_run"]
            if window < 1:
                return {"status": "disabled"}
            if ctx["run_id"].startswith(daycheck.CATCH_UP_PREFIX) or "backfill" in str(run.run_type).lower():
                log.info("run %s (%s) is a catch-up or backfill run: no check", ctx["run_id"], run.run_type)
                return {"status": "not checked: catch-up or backfill run"}
            own, end = day_of(ctx).isoformat(), nightly_day(ctx)
            with s3_endpoint(cfg["s3"].get("endpoint"), creds):
                rows = daycheck.check_days(
                    input_root(cfg), cfg["output_root"], end, window, read=lambda p: slurm.read_text(runner, p)
                )
            ti = ctx["ti"]
            plan = daycheck.plan_catch_up(rows, own, limit, lambda rid: existing_run(ti, dag.dag_id, rid))
            queued = []
            for item in plan.pop("to_queue"):
                if trigger_run(dag.dag_id, item["run_id"], {"date": item["day"]}):
                    queued.append(item)
                else:  # queued by another check since existing_run looked
                    plan["already_queued"].append({**item, "run_state": "exists"})
            plan.update(status="checked", queued=queued)
            byday = {r["day"]: r for r in rows}
            for what, items in (
                ("queued as run", queued),
                ("already queued as run", plan["already_queued"]),
                ("deferred to the next check (max_queue reached): run", plan["deferred"]),
            ):
                for item in items:
                    state = f" ({item['run_state']})" if "run_state" in item else ""
                    log.warning(
                        "catch-up: %s: %s %s%s", daycheck.describe(byday[item["day"]]), what, item["run_id"], state
                    )
            if byday.get(own, {}).get("state") in daycheck.NEEDS_RUN:
                log.warning("catch-up: %s: this run's own day", daycheck.describe(byday[own]))
            log.info(
                "catch-up %s..%s: %s; queued %d, already queued %d, deferred %d",
                *plan["window"],
                ", ".join(f"{k} {len(v)}" for k, v in sorted(plan["states"].items())),
                len(queued),
                len(plan["already_queued"]),
                len(plan["deferred"]),
            )
            return plan

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
            ctx = get_current_context()
            doc = {
                "data_center": dc,
                "date": est["date"],
                "run_id": ctx["run_id"],
                "input": est,
                "sizing": sized,
                "job": {k: v for k, v in sub.items()},
                "preprocess_rc": marker.get("preprocess_rc"),
                "index_rc": marker.get("index_rc"),
                "catalogue_rc": marker.get("catalogue_rc"),
                "outputs": marker.get("outputs"),
                "job_summaries": marker.get("summaries"),
                "staging": {**staged, "logs": logged},
                "catch_up": caught,
                "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            }
            uri = (cfg.get("summary_uri") or f"{cfg['output_root']}/{layout.RUNS}/{dc}/{{date}}.summary.json").replace(
                "{date}", est["date"]
            )
            storage.write_bytes(uri, json.dumps(doc, indent=2, sort_keys=True, default=str).encode())
            log.info("run summary: %s", uri)
            return uri

        est = estimate()
        sized = size(est)
        sub = submit(est, sized)
        waited = SlurmJobSensor(
            task_id="wait",
            submission=sub,
            runner=runner.as_dict(),
            retries=0,
            poll_seconds=float(cfg["slurm"]["poll_seconds"]),
            timeout_hours=float(cfg["slurm"]["timeout_hours"]),
        )
        marker = check(sub, waited.output)
        staged = stage(marker, est)
        logged = logs(sub, est)  # after check, also when it failed: the record of why
        marker >> logged
        exchange(marker, est) >> staged  # the staged day carries the merged graph
        summary(est, sized, sub, marker, staged, catch_up(), logged)
    return dag


def build_dags(config: dict[str, dict[str, Any]]) -> dict[str, DAG]:
    return {d.dag_id: d for d in (build_dag(dc, cfg) for dc, cfg in config.items())}
