r"""Build the on-demand DAG of one data center (docs/ondemand.md, "Orchestration"):

pick -> submit -> wait (deferred) -> check -> stage

pick takes the oldest request folder under ``output_root/on_demand/`` that has no status yet
(none: everything after it is skipped and the run succeeds) and writes its status ``queued``;
submit runs ``sbatch deploy/slurm/ondemand.sbatch`` under the nightly job's name
``dailyslice-<dc>`` with ``--dependency=singleton``, so Slurm runs one job per data center at a
time, nightly or on demand; wait defers to the nightly DAG's trigger; check reads the marker
(on failure the request's status.json reason and the log tail); stage mirrors
``public/<id>/`` to the staging target as a day's output is staged. ``max_active_runs`` 1: one
request at a time per data center.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from typing import Any

from airflow.sdk import DAG, get_current_context, task
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from lib.orchestration import ondemand_requests, slurm
from lib.orchestration.dag_factory import slurm_wait, start_date
from lib.orchestration.runenv import s3_credentials_env, s3_endpoint
from lib.orchestration.stage_outputs import stage_to_holders
from lib.orchestration.trigger import failed_marker_path
from lib.store import layout

log = logging.getLogger("dailyslice.dag")

#: the settings of a data center's ``on_demand`` entry in datacenters.yaml, and their defaults
DEFAULTS = {
    "schedule": "*/15 * * * *",  # how often new request folders are looked for
    "time": "02:00:00",  # the Slurm job's walltime
    "sbatch_script": "deploy/slurm/ondemand.sbatch",  # relative to project_home
    "args": "",  # more options of jobs/ondemand.py (ONDEMAND_ARGS)
}


def settings(cfg: dict[str, Any]) -> dict[str, Any]:
    """The data center's on-demand settings, defaults filled in."""
    return {**DEFAULTS, **(cfg.get("on_demand") or {})}


def build_ondemand_dag(dc: str, cfg: dict[str, Any]) -> DAG:
    """The DAG ``dailyslice-ondemand-<dc>`` for one data center's settings."""
    runner = slurm.Runner.from_config(cfg["slurm"])
    creds = s3_credentials_env(cfg["s3"])
    own = settings(cfg)
    log_dir = cfg.get("log_dir") or f"{cfg['output_root']}/logs"

    with DAG(
        dag_id=f"dailyslice-ondemand-{dc}",
        schedule=own["schedule"],
        start_date=start_date(cfg),
        catchup=False,
        max_active_runs=1,
        default_args={"retries": 0},
        tags=["dailyslice", "on-demand", dc],
        doc_md=__doc__,
    ) as dag:

        @task
        def pick() -> dict[str, Any]:
            folder, seen = ondemand_requests.next_request(runner, cfg["output_root"])
            log.info("requests: %s", seen)
            if folder is None:
                raise AirflowSkipException(f"no new request under {cfg['output_root']}/{ondemand_requests.ON_DEMAND}")
            ondemand_requests.write_queued(runner, folder, get_current_context()["run_id"])
            rid = ondemand_requests.request_id(folder)
            return {
                "request": folder,
                "id": rid,
                "public": f"{cfg['output_root'].rstrip('/')}/{ondemand_requests.PUBLIC}/{rid}",
                "marker_file": f"{cfg['output_root']}/{layout.RUNS}/{dc}/on_demand/{rid}.json",
            }

        @task
        def submit(req: dict[str, Any]) -> dict[str, Any]:
            env = {
                "REQUEST": req["request"],
                "MARKER_FILE": req["marker_file"],
                "DAILYSLICE_HOME": cfg["project_home"],
                "VENV": cfg["venv"],
                **({"ONDEMAND_ARGS": own["args"]} if own["args"] else {}),
                **creds,
                **{k: str(v) for k, v in (cfg.get("job_env") or {}).items()},
            }
            out = f"{log_dir}/slurm-ondemand-{dc}-{req['id']}-%j.out"
            job_id, _ = slurm.submit_job(
                runner,
                cfg,
                own["sbatch_script"],
                env,
                folders=[log_dir, os.path.dirname(req["marker_file"])],
                job_name=f"dailyslice-{dc}",  # the nightly job's name: one job per data center at a time
                nodes=1,
                time=own["time"],
                output=out,
            )
            log.info("submitted Slurm job %s for %s", job_id, req["request"])
            return {**req, "job_id": job_id, "slurm_log": out.replace("%j", job_id)}

        @task
        def check(sub: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
            marker = slurm.read_marker(slurm.read_text(runner, sub["marker_file"]), sub["job_id"])
            if marker and marker.get("ok"):
                return marker
            status = slurm.read_text(runner, f"{sub['request']}/status.json")
            reason = (json.loads(status).get("reason") if status else None) or "no status.json reason"
            lines = int(cfg["slurm"]["log_tail_lines"])
            failed = slurm.read_marker(slurm.read_text(runner, failed_marker_path(sub["marker_file"])), sub["job_id"])
            text = (
                f"request {sub['id']}: Slurm job {sub['job_id']} failed (state {event.get('state')}, "
                f"exit {(failed or {}).get('rc', event.get('exit_code'))}): {reason}\n"
                f"--- last {lines} lines of {sub['slurm_log']} ---\n{slurm.log_tail(runner, sub['slurm_log'], lines)}"
            )
            log.error("%s", text)
            raise AirflowFailException(text.splitlines()[0])

        @task
        def stage(marker: dict[str, Any], sub: dict[str, Any]) -> dict[str, Any]:
            # to every data center holding a copy of public/ (replication), each with its endpoint
            held = stage_to_holders(
                marker["outputs"]["public"],
                cfg,
                dc,
                "public",
                f"{ondemand_requests.PUBLIC}/{sub['id']}",
                lambda spec: s3_endpoint(spec.get("endpoint"), creds),
            )
            log.info("staged %s -> %s", marker["outputs"]["public"], held)
            out = {"request": sub["id"], "staged": held["own"], "at": dt.datetime.now(dt.timezone.utc).isoformat()}
            return {**out, "replicas": held["replicas"]} if held["replicas"] else out

        req = pick()
        sub = submit(req)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        waited = slurm_wait(sub, runner, cfg)
        marker = check(sub, waited.output)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
        stage(marker, sub)  # type: ignore[arg-type]  # airflow stub: a @task takes XComArgs
    return dag
