"""Slurm access for the DAGs: submit with sbatch, read job state, read small files.

Commands run locally or on a login node over SSH (``ssh -o BatchMode=yes HOST -- CMD``);
everything the DAG needs from the cluster (job state, the marker file, log tails) goes
through the same runner, so an Airflow worker without the cluster filesystem mounted can
still follow the job. No accounting database is assumed: job state comes from
``scontrol``/``squeue`` while Slurm remembers the job (``MinJobAge``), and from the
marker files the job script writes after that.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from typing import Any

from lib.errors import DailysliceError

#: Slurm job states after which the job will not run again.
TERMINAL = {
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
}


class SlurmError(DailysliceError, RuntimeError):
    pass


#: ssh's own exit code: it could not connect or authenticate (the remote command never ran)
SSH_FAILED = 255


@dataclass
class Runner:
    """Runs commands locally (``submit: local``) or over SSH (``submit: ssh``).

    Every command is its own connection: no session is held across a night's hours of waiting.
    When ssh itself fails (exit 255: the login node refused or was unreachable, e.g. an
    expired SSH certificate or Kerberos ticket), ``renew`` (``slurm.renew_command``, e.g.
    ``["kinit", "-R"]`` or a certificate fetch) runs on this host and the command is tried once
    more on a fresh connection."""

    submit: str = "local"
    ssh_host: str | None = None
    ssh_options: list[str] = field(default_factory=list)
    renew: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, slurm: dict[str, Any]) -> "Runner":
        return cls(
            slurm.get("submit", "local"),
            slurm.get("ssh_host"),
            list(slurm.get("ssh_options") or []),
            list(slurm.get("renew_command") or []),
        )

    def as_dict(self) -> dict[str, Any]:
        return {"submit": self.submit, "ssh_host": self.ssh_host, "ssh_options": self.ssh_options, "renew": self.renew}

    def argv(self, cmd: list[str]) -> list[str]:
        if self.submit == "ssh":
            return ["ssh", "-o", "BatchMode=yes", *self.ssh_options, str(self.ssh_host), "--", shlex.join(cmd)]
        return list(cmd)

    def _should_renew(self, rc: int) -> bool:
        return self.submit == "ssh" and rc == SSH_FAILED and bool(self.renew)

    def run(self, cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
        r = subprocess.run(self.argv(cmd), capture_output=True, text=True, timeout=timeout)
        if self._should_renew(r.returncode):
            subprocess.run(self.renew, capture_output=True, timeout=timeout)
            r = subprocess.run(self.argv(cmd), capture_output=True, text=True, timeout=timeout)
        return r

    async def arun(self, cmd: list[str], timeout: float = 120) -> tuple[int, str, str]:
        rc, out, err = await self._arun(self.argv(cmd), timeout)
        if self._should_renew(rc):
            await self._arun(self.renew, timeout)
            rc, out, err = await self._arun(self.argv(cmd), timeout)
        return rc, out, err

    @staticmethod
    async def _arun(argv: list[str], timeout: float) -> tuple[int, str, str]:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
        except OSError as e:  # e.g. scontrol not installed where the triggerer runs
            return 127, "", f"cannot run {argv[0]}: {e}"
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            return 124, "", f"timed out after {timeout}s: {argv[0]}"
        return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")


def sbatch_argv(
    script: str,
    job_name: str,
    nodes: int,
    time: str,
    output: str,
    env: dict[str, str],
    partition: str | None = None,
    account: str | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    """The sbatch command line; ``env`` goes through ``--export=ALL,K=V,...``."""
    for k, v in env.items():
        if "," in str(v) or "=" in k:
            raise SlurmError(f"cannot pass {k}={v!r} through sbatch --export (no commas allowed)")
    argv = [
        "sbatch",
        "--parsable",
        f"--job-name={job_name}",
        "--dependency=singleton",
        f"--nodes={nodes}",
        f"--time={time}",
        f"--output={output}",
    ]
    if partition:
        argv.append(f"--partition={partition}")
    if account:
        argv.append(f"--account={account}")
    argv += list(extra or [])
    argv.append("--export=" + ",".join(["ALL"] + [f"{k}={v}" for k, v in env.items()]))
    argv.append(script)
    return argv


def submit_job(
    runner: Runner,
    cfg: dict[str, Any],
    script: str,
    env: dict[str, str],
    *,
    folders: list[str],
    job_name: str,
    nodes: int,
    time: str,
    output: str,
) -> tuple[str, list[str]]:
    """Create ``folders`` (the log folder first, then where the job writes its marker), submit
    ``script`` (relative to ``cfg["project_home"]``) with the site's partition, account and
    extra arguments (``cfg["slurm"]``); returns the job id and the sbatch command line. The
    nightly and the on-demand DAG submit through it."""
    r = runner.run(["mkdir", "-p", *folders])
    if r.returncode != 0:
        raise SlurmError(f"cannot create {folders[0]}: {r.stderr.strip()}")
    site = cfg["slurm"]
    argv = sbatch_argv(
        os.path.join(cfg["project_home"], script),
        job_name,
        nodes,
        time,
        output,
        env,
        site.get("partition"),
        site.get("account"),
        site.get("extra_args"),
    )
    return submit(runner, argv), argv


def parse_job_id(stdout: str) -> str:
    """``sbatch --parsable`` prints ``jobid`` or ``jobid;cluster``."""
    line = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    job_id = line.split(";", 1)[0].strip()
    if not job_id.isdigit():
        raise SlurmError(f"unexpected sbatch output: {stdout!r}")
    return job_id


def submit(runner: Runner, argv: list[str]) -> str:
    r = runner.run(argv)
    if r.returncode != 0:
        raise SlurmError(f"sbatch failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
    return parse_job_id(r.stdout)


def parse_scontrol(text: str) -> dict[str, str]:
    """``scontrol show job -o`` (one line of ``Key=Value``) -> dict."""
    out = {}
    for tok in shlex.split(text.strip()):
        k, sep, v = tok.partition("=")
        if sep:
            out[k] = v
    return out


async def job_state(runner: Runner, job_id: str) -> dict[str, str] | None:
    """``{"state", "exit_code", "reason"}`` while Slurm knows the job, else None."""
    rc, out, err = await runner.arun(["scontrol", "show", "job", "-o", job_id])
    if rc != 0:
        if "Invalid job id" in err or "Invalid job id" in out:
            return None
        raise SlurmError(f"scontrol show job {job_id} failed ({rc}): {err.strip()}")
    info = parse_scontrol(out)
    state = info.get("JobState", "UNKNOWN").split()[0]
    return {"state": state, "exit_code": info.get("ExitCode", ""), "reason": info.get("Reason", "")}


def read_text(runner: Runner, path: str) -> str | None:
    r = runner.run(["cat", path])
    return r.stdout if r.returncode == 0 else None


async def aread_text(runner: Runner, path: str) -> str | None:
    rc, out, _ = await runner.arun(["cat", path])
    return out if rc == 0 else None


def read_marker(text: str | None, job_id: str | None) -> dict[str, Any] | None:
    """The marker's JSON if it belongs to ``job_id`` (None: to any job)."""
    if not text:
        return None
    try:
        marker = json.loads(text)
    except ValueError:
        return None
    if job_id is not None and str(marker.get("job_id")) != str(job_id):
        return None
    return marker


def log_tail(runner: Runner, path: str, lines: int) -> str:
    r = runner.run(["tail", "-n", str(lines), path])
    return r.stdout if r.returncode == 0 else f"(cannot read {path}: {r.stderr.strip()})"
