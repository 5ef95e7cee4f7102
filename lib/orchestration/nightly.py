"""The nightly DAG's tasks as plain functions (:mod:`lib.orchestration.dag_factory` wires them).

Each step takes the data center's :class:`Night` (its name, config, Slurm runner and S3
credentials settings) and what the steps before it returned; the ones that read the run (its
day, ``params.force``, its id) take the task's Airflow context as ``ctx``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from dataclasses import dataclass
from typing import Any

from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from lib.orchestration import chain, slurm
from lib.orchestration import days as daycheck
from lib.orchestration.exchange_task import exchange_outputs
from lib.orchestration.marker import Marker, failed_path
from lib.orchestration.replication import exchange_partners
from lib.orchestration.runenv import day_of, nightly_day, s3_endpoint, s3_pressure_env
from lib.orchestration.sizing import size_job
from lib.orchestration.stage_outputs import stage_logs, stage_replicated
from lib.preprocess.health import describe
from lib.preprocess.input_manifest import compare
from lib.store import layout, storage
from lib.warc.records import ARCHIVE_SUFFIXES

log = logging.getLogger("dailyslice.dag")


@dataclass(frozen=True)
class Night:
    """One data center's nightly DAG: what every step of it reads."""

    dc: str
    cfg: dict[str, Any]
    runner: slurm.Runner
    creds: dict[str, str]  # the S3 credentials settings (runenv.s3_credentials_env)
    dag_id: str


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


def estimate_day(n: Night, ctx: Any) -> dict[str, Any]:
    """The day's WARC files in S3, counted and sized (none: the run skips the rest)."""
    cfg, creds = n.cfg, n.creds
    day = day_of(ctx)
    uri = layout.day_path(input_root(cfg), layout.WARC, day)
    with s3_endpoint(cfg["s3"].get("endpoint"), creds):
        files = storage.list_files(uri, suffixes=ARCHIVE_SUFFIXES)
    if not files:
        raise AirflowSkipException(f"no WARC files under {uri}: nothing to do for {day}")
    total = sum(f.size for f in files)
    log.info("%s: %d WARC files, %d bytes under %s", day, len(files), total, uri)
    return {"date": day.isoformat(), "input": uri, "files": len(files), "bytes": total}


def size_day(n: Night, est: dict[str, Any]) -> dict[str, Any]:
    """Nodes and walltime for the day's job, from its volume (:mod:`lib.orchestration.sizing`)."""
    cfg = n.cfg
    sized = size_job(est["bytes"], est["files"], cfg["sizing"], cfg["s3"].get("max_connections_per_job"))
    log.info("%s: %d files, %d bytes -> %s", est["date"], est["files"], est["bytes"], sized)
    return sized


def job_env(n: Night, day: str, marker: str) -> dict[str, str]:
    """The environment the day's Slurm job runs in (deploy/common/run-day.sh reads it)."""
    cfg, dc, creds = n.cfg, n.dc, n.creds
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
    return env


def submit_day(n: Night, ctx: Any, est: dict[str, Any], sized: dict[str, Any]) -> dict[str, Any]:
    """Submit the day's Slurm job, unless a published day with unchanged input makes it needless."""
    cfg, dc, runner, creds = n.cfg, n.dc, n.runner, n.creds
    day = est["date"]
    marker = marker_path(cfg, dc, day)
    force = bool(ctx["params"].get("force"))
    done = Marker.parse(slurm.read_text(runner, marker))
    changed = None
    if (
        done
        and done.ok
        and not force
        and all(runner.run(["test", "-f", f"{p}/{layout.SUCCESS}"]).returncode == 0 for p in done.outputs.values())
    ):
        changed = input_changes(
            runner, done.outputs.get(layout.PREPROCESSED), est["input"], cfg["s3"].get("endpoint"), creds
        )
        if not changed:
            log.info(
                "%s already processed by job %s: not resubmitting (params.force recomputes)",
                day,
                done.job_id,
            )
            return {"job_id": None, "reused_job_id": done.job_id, "marker_file": marker}
        log.warning(
            "%s: the input changed since job %s published the day (%s): running it again",
            day,
            done.job_id,
            "; ".join(f"{k}: {', '.join(v)}" for k, v in changed.items() if v),
        )
    out = f"{cfg['log_dir']}/slurm-dailyslice-{dc}-{day}-%j.out"
    job_id, argv = slurm.submit_job(
        runner,
        cfg,
        cfg["slurm"]["sbatch_script"],
        job_env(n, day, marker),
        folders=[cfg["log_dir"], os.path.dirname(marker)],
        job_name=f"dailyslice-{dc}",
        nodes=sized["nodes"],
        time=sized["time"],
        output=out,
    )
    log.info("submitted Slurm job %s: %s", job_id, " ".join(argv))
    return {
        "job_id": job_id,
        "marker_file": marker,
        "nodes": sized["nodes"],
        "time": sized["time"],
        "rerun_because": changed,
        "replaces_job_id": done.job_id if changed and done else None,
        "run_log": f"{cfg['log_dir']}/dailyslice-{dc}-{day}-{job_id}.log",
        "run_logs": f"{cfg['log_dir']}/dailyslice-{dc}-{day}-{job_id}",
        "slurm_log": out.replace("%j", job_id),
    }


def check_day(n: Night, sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """The job's marker when it succeeded; else fail the task with what went wrong and the logs' tails."""
    cfg, dc, runner = n.cfg, n.dc, n.runner
    marker = Marker.parse(slurm.read_text(runner, sub["marker_file"]), sub.get("job_id") or sub.get("reused_job_id"))
    if marker and marker.ok:
        return marker.to_dict()  # the task's return value (XCom) is the marker's JSON
    given = event.get("failed_marker")
    failed = (
        Marker.from_dict(given)
        if given
        else Marker.parse(slurm.read_text(runner, failed_path(sub["marker_file"])), sub["job_id"])
    )
    lines = int(cfg["slurm"]["log_tail_lines"])
    report = [f"Slurm job {sub['job_id']} failed: state {event.get('state')}, exit code {event.get('exit_code')}"]
    unhealthy = failed.health if failed and failed.health and not failed.health.get("ok") else None
    if failed:
        report.append(chain.describe(failed.codes))
    if failed and failed.input in ("missing", "empty"):  # the day vanished or emptied after estimate
        report[0] = (
            f"{dc} {failed.date}: the day's input is {failed.input} "
            f"(preprocess exit {failed.preprocess_rc}): nothing published"
        )
    if unhealthy and failed:  # published and indexed, but the day lost pages: say how, not only where the logs are
        report[0] = f"{dc} {failed.date}: {describe(unhealthy)}"
        report.insert(
            1,
            f"Slurm job {sub['job_id']}: state {event.get('state')}, exit code {event.get('exit_code')}; "
            f"outputs (published, not staged): {failed.outputs}",
        )
    for path in (sub["run_log"], sub["slurm_log"]):
        report.append(f"--- last {lines} lines of {path} ---\n{slurm.log_tail(runner, path, lines)}")
    text = "\n".join(report)
    log.error("%s", text)
    print(text, flush=True)
    raise AirflowFailException(report[0] + f" (logs: {sub['run_log']}, {sub['slurm_log']})")


def exchange_day(n: Night, marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
    """Merge partner data centers' links into the day's index."""
    cfg, creds = n.cfg, n.creds
    # a partner whose index this data center holds a copy of is read from that copy (replication)
    spec = {**(cfg.get("exchange") or {}), "partners": exchange_partners(cfg, n.dc)}
    with s3_endpoint(spec.get("endpoint"), creds):
        return exchange_outputs(spec, marker["outputs"], est["date"], cfg.get("exclusions"))


def stage_outputs(n: Night, marker: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
    """Mirror the day's outputs and the URL database to the staging target, and to every other
    data center that holds a copy of their kind (``replication``: lib/orchestration/replication.py)."""
    cfg, creds = n.cfg, n.creds
    return stage_replicated(
        marker, cfg, n.dc, dt.date.fromisoformat(est["date"]), lambda spec: s3_endpoint(spec.get("endpoint"), creds)
    )


def stage_run_logs(n: Night, sub: dict[str, Any], est: dict[str, Any]) -> dict[str, Any]:
    """Stage the job's logs (after check, also when it failed: the record of why)."""
    cfg, runner, creds = n.cfg, n.runner, n.creds
    if sub.get("job_id") is None:  # its logs were staged by the run that ran it
        return {"status": f"no job ran: the day was done by job {sub.get('reused_job_id')}"}
    marker = Marker.parse(slurm.read_text(runner, sub["marker_file"]), sub["job_id"])
    marker = marker or Marker.parse(slurm.read_text(runner, failed_path(sub["marker_file"])), sub["job_id"])
    spec = cfg["staging"]
    with s3_endpoint(spec.get("endpoint"), creds):
        return stage_logs(marker.to_dict() if marker else None, sub, spec, dt.date.fromisoformat(est["date"]))


def catch_up_days(n: Night, ctx: Any) -> dict[str, Any]:
    """check-days over the window before the run; runs queued for its changed or missing days."""
    cfg, runner, creds = n.cfg, n.runner, n.creds
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
    plan = daycheck.plan_catch_up(rows, own, limit, lambda rid: existing_run(ti, n.dag_id, rid))
    queued = []
    for item in plan.pop("to_queue"):
        if trigger_run(n.dag_id, item["run_id"], {"date": item["day"]}):
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
            log.warning("catch-up: %s: %s %s%s", daycheck.describe(byday[item["day"]]), what, item["run_id"], state)
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


def write_summary(
    n: Night,
    ctx: Any,
    est: dict[str, Any],
    sized: dict[str, Any],
    sub: dict[str, Any],
    marker: dict[str, Any],
    staged: dict[str, Any],
    caught: dict[str, Any],
    logged: dict[str, Any] | None,
) -> str:
    """Write the run summary JSON; its URI."""
    cfg, dc = n.cfg, n.dc
    night = Marker.from_dict(marker)  # check's return value: the marker's JSON
    doc = {
        "data_center": dc,
        "date": est["date"],
        "run_id": ctx["run_id"],
        "input": est,
        "sizing": sized,
        "job": {k: v for k, v in sub.items()},
        "preprocess_rc": night.preprocess_rc,
        "index_rc": night.index_rc,
        "catalogue_rc": night.catalogue_rc,
        "outputs": night.outputs,
        "job_summaries": night.summaries,
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
