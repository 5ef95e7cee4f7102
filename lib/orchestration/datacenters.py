"""The data-center config file (``datacenters.yaml``): one DAG per entry.

``defaults`` are merged (deeply) under every data center's own settings; ``replication`` (top level)
says which data centers hold a copy of each kind of folder (:mod:`lib.orchestration.replication`). The file is
``$DAILYSLICE_DATACENTERS`` if set, else ``airflow/dags/datacenters.yaml`` of this checkout.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

from lib.errors import ConfigError
from lib.orchestration.replication import attach, parse_rules

PROJECT_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAGS_DIR = os.path.join(PROJECT_HOME, "airflow", "dags")

DEFAULTS: dict[str, Any] = {
    "schedule": "0 3 * * *",  # 03:00 every day; the run processes the previous day
    "start_date": "2026-01-01",
    "max_active_runs": 5,
    "project_home": PROJECT_HOME,  # checkout with jobs/, lib/, deploy/ (on the cluster)
    "venv": None,  # default: <project_home>/.venv
    "output_root": "/scratch/dailyslice/{data_center}",  # shared cluster filesystem
    "log_dir": None,  # default: <output_root>/logs
    "summary_uri": None,  # default: <output_root>/_runs/<dc>/<date>.summary.json
    # the take-down list the jobs apply (lib/pages/exclusions.py): a path or s3:// URI that must
    # exist (one list shared by data centers, say); default <output_root>/_exclusions.jsonl if present
    "exclusions": None,
    # S3 pressure caps (None: no cap): archives read at once by the whole preprocess job, and
    # Python workers (one stream each) per Spark executor; connections each process keeps
    "s3": {
        "endpoint": None,
        "bucket": None,
        "prefix": "",
        "max_connections_per_job": None,
        "max_connections_per_executor": None,
        "max_connections_per_process": None,
        # refreshing credentials for the job and the Airflow side (docs/orchestration.md): an AWS
        # config file whose profile has a credential_process (or web identity, container credentials)
        "credentials": None,  # e.g. {"config_file": "/opt/dailyslice/aws-config", "profile": "dc-a"}
    },
    "slurm": {
        "submit": "local",  # or "ssh": run sbatch/squeue/scontrol on ssh_host
        "ssh_host": None,
        "ssh_options": [],
        "renew_command": [],  # run when ssh cannot connect (exit 255), then the command once more
        "sbatch_script": "deploy/slurm/dailyslice.sbatch",  # relative to project_home
        "partition": None,
        "account": None,
        "extra_args": [],
        "poll_seconds": 60,
        "timeout_hours": 48,
        "log_tail_lines": 60,
    },
    "sizing": {
        "gib_per_node_hour": 50.0,
        "target_hours": 2.0,
        "min_nodes": 1,
        "max_nodes": 16,
        "extra_nodes": 0,  # Magpie: 1 (its rank 0 runs only the master)
        "cores_per_node": None,  # with s3.max_connections_per_job: no more nodes than the cap keeps busy
        "overhead_minutes": 15,
        "safety_factor": 1.5,
        "min_minutes": 30,
        "max_minutes": 1440,
    },
    "job_env": {},  # extra variables for run-day.sh (SPARK_WORKER_MEMORY, SCRATCH_DIR, ...)
    "staging": {"type": "filesystem", "path": "/archive/dailyslice/{data_center}"},
    # the web graph across data centers: {DC: ROOT} of the partners (their days at ROOT/index/YYYY-MM/DD)
    # wait_lock: seconds the task waits for another run changing the index day (then fails, retried)
    "exchange": {
        "enabled": False,
        "partners": {},
        "lookback_days": 7,
        "endpoint": None,
        "work_dir": None,
        "wait_lock": 3600,
    },
    # the catch_up task: the days of this window (ending the night before the run) are checked
    # against their published days (check-days); changed and missing ones are triggered as runs
    # of this DAG, at most max_queue per check (None: max_active_runs; 0: report only); window 0: off
    "check_days": {"window": 7, "max_queue": None},
    # batches within a day (docs/orchestration.md, "The batch DAG"): a tick of the DAG dailyslice-batch-<dc>
    # every batch_minutes runs the day's next batch (None: no batch DAG; the night is then the whole day)
    "batch_minutes": None,
    "batch_job": {"nodes": 1, "time": "01:00:00", "settle_seconds": 60},
}


def merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def _fill(value: Any, dc: str) -> Any:
    if isinstance(value, str):
        return value.replace("{data_center}", dc)
    if isinstance(value, dict):
        return {k: _fill(v, dc) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, dc) for v in value]
    return value


def config_path() -> str:
    return os.environ.get("DAILYSLICE_DATACENTERS") or os.path.join(DAGS_DIR, "datacenters.yaml")


def load_config(path: str | None = None) -> dict[str, dict[str, Any]]:
    """``{data_center: settings}`` with defaults applied and ``{data_center}`` filled in."""
    path = path or config_path()
    with open(path) as f:
        if path.endswith(".json"):
            raw = json.load(f)
        else:
            import yaml

            raw = yaml.safe_load(f)
    if not isinstance(raw, dict) or not isinstance(raw.get("datacenters"), dict) or not raw["datacenters"]:
        raise ConfigError(f"{path}: needs a non-empty 'datacenters' mapping")
    base = merge(DEFAULTS, raw.get("defaults") or {})
    out = {}
    for name, own in raw["datacenters"].items():
        if not str(name).replace("-", "").replace("_", "").isalnum():
            raise ConfigError(f"{path}: data center name {name!r} must be letters, digits, - or _")
        cfg = _fill(merge(base, own or {}), str(name))
        if not cfg["s3"].get("bucket"):
            raise ConfigError(f"{path}: data center {name!r} has no s3.bucket")
        if cfg["slurm"]["submit"] not in ("local", "ssh"):
            raise ConfigError(f"{path}: {name}: slurm.submit must be 'local' or 'ssh'")
        if cfg["slurm"]["submit"] == "ssh" and not cfg["slurm"].get("ssh_host"):
            raise ConfigError(f"{path}: {name}: slurm.submit=ssh needs slurm.ssh_host")
        for k in ("max_connections_per_job", "max_connections_per_executor", "max_connections_per_process"):
            v = cfg["s3"].get(k)
            if v is not None and (not isinstance(v, int) or v < 1):
                raise ConfigError(f"{path}: {name}: s3.{k} must be a positive integer or null, got {v!r}")
        for k in ("window", "max_queue"):
            v = cfg["check_days"].get(k)
            if (v is not None or k == "window") and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ConfigError(f"{path}: {name}: check_days.{k} must be a non-negative integer, got {v!r}")
        v = cfg["batch_minutes"]
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1440):
            raise ConfigError(f"{path}: {name}: batch_minutes must be minutes from 1 to 1440 or null, got {v!r}")
        if cfg["check_days"]["max_queue"] is None:
            cfg["check_days"]["max_queue"] = int(cfg["max_active_runs"])
        cfg["venv"] = cfg["venv"] or os.path.join(cfg["project_home"], ".venv")
        cfg["log_dir"] = cfg["log_dir"] or os.path.join(cfg["output_root"], "logs")
        out[str(name)] = cfg
    # replication per folder (lib/orchestration/replication.py): a rule naming an unknown data center,
    # or a target that cannot hold copies, fails the load here, before any DAG is built
    attach(out, parse_rules(raw.get("replication"), list(out), path), path)
    return out
