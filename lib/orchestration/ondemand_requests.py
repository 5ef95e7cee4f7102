"""On-demand requests as the Airflow side sees them: which request folder runs next, its status
written ``queued``, its Slurm job's settings, its staging (docs/ondemand.md, "Orchestration").

The request folders live under ``output_root/on_demand/`` on the cluster filesystem, read
through the same :class:`~lib.orchestration.slurm.Runner` the nightly DAG reads markers with
(locally or over SSH on the login node)."""

from __future__ import annotations

import datetime as dt
import json
import shlex
from typing import Any

from lib.orchestration import slurm
from lib.orchestration.stage_outputs import stage_to_holders

ON_DEMAND = "on_demand"
PUBLIC = "public"
#: states after which a request is not picked again (an operator removes status.json to re-run one)
FINAL = ("running", "done", "failed")


def request_folders(runner: slurm.Runner, root: str) -> list[str]:
    """Every ``root/on_demand/<id>`` holding a ``config.json``, oldest config first (then by name)."""
    base = f"{root.rstrip('/')}/{ON_DEMAND}"
    r = runner.run(["find", base, "-mindepth", "2", "-maxdepth", "2", "-name", "config.json", "-printf", "%T@ %h\n"])
    if r.returncode != 0:  # no on_demand folder yet: nothing asked
        return []
    rows = [line.split(" ", 1) for line in r.stdout.splitlines() if " " in line]
    return [folder for _, folder in sorted(rows, key=lambda t: (float(t[0]), t[1]))]


def next_request(runner: slurm.Runner, root: str) -> tuple[str | None, list[dict[str, Any]]]:
    """The request to run next (None: none waits) and what was seen: each folder with its state
    (``new`` without a status.json). A ``queued`` request is picked again: the run that queued it
    died before its job started."""
    seen = []
    for folder in request_folders(runner, root):
        text = slurm.read_text(runner, f"{folder}/status.json")
        try:
            state = json.loads(text)["state"] if text else "new"
        except (ValueError, KeyError, TypeError):
            state = "unreadable status.json"
        seen.append({"request": folder, "state": state})
    todo = [s["request"] for s in seen if s["state"] in ("new", "queued")]
    return (todo[0] if todo else None), seen


def write_queued(runner: slurm.Runner, folder: str, run_id: str) -> None:
    """``folder/status.json`` = queued (written whole: a temp file renamed over it)."""
    status = {
        "state": "queued",
        "updated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "airflow_run": run_id,
    }
    path, tmp = f"{folder}/status.json", f"{folder}/.status.json.queued"
    q = shlex.quote
    cmd = f"printf %s {q(json.dumps(status, sort_keys=True))} > {q(tmp)} && mv {q(tmp)} {q(path)}"
    r = runner.run(["sh", "-c", cmd])
    if r.returncode != 0:
        raise slurm.SlurmError(f"cannot write {path}: {r.stderr.strip()}")


def request_id(folder: str) -> str:
    return folder.rstrip("/").rsplit("/", 1)[-1]


def stage_request(public: str, spec: dict[str, Any], rid: str) -> dict[str, Any]:
    """Mirror the published ``public/<id>/`` to ``<target>/public/<id>`` as a day's output is
    staged (checksum-verified, only what changed; or spread over the SWAP slices)."""
    return stage_to_holders(public, {"staging": spec}, "own", PUBLIC, f"{PUBLIC}/{rid}")["own"]
