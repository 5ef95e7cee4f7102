"""A real one-host Slurm cluster with two nodes for the orchestration tests and bench_orchestration.

Debian's ``slurm-wlm`` and ``munge`` daemons are started by :func:`start_cluster` itself
(CI runs as root without systemd), configured in a folder of the caller's, and stopped by
:func:`stop_cluster`. The tests' session fixture is ``slurm_cluster`` in ``tests/fixtures_slurm.py``.

The settings are the ones known to work in a container without cgroups or systemd:
proctrack/linuxproc, task/none, no accounting, select/cons_tres, SlurmUser=root and two
``slurmd -N name`` on their own ports and spool folders.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field

DAEMONS = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel", "srun")
NODES = ("dsn1", "dsn2")
PARTITION = "dstest"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _which(name: str) -> str | None:
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)), None
    )


def _tail(path: str, lines: int = 30) -> str:
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return f"(no {path})"


@dataclass
class SlurmCluster:
    """Handle on the running test cluster."""

    root: str
    conf: str
    partition: str = PARTITION
    nodes: tuple[str, ...] = NODES
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        """Environment for Slurm client commands (sbatch, squeue, ...)."""
        return {**os.environ, "SLURM_CONF": self.conf}

    def run(self, *cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, check=check, timeout=timeout)

    def node_states(self) -> dict[str, str]:
        out = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def logs(self) -> str:
        parts = [
            f"--- {n} ---\n{_tail(os.path.join(self.root, 'log', n))}"
            for n in sorted(os.listdir(os.path.join(self.root, "log")))
        ]
        return "\n".join(parts)

    def wait_idle(self, timeout: float = 90) -> None:
        """Block until every node is idle (nodes come up 'unknown', then 'idle')."""
        deadline = time.monotonic() + timeout
        states: dict[str, str] = {}
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"Slurm daemon {p.args[0]} exited with {p.returncode}\n{self.logs()}")
            states = self.node_states()
            if states and all(states.get(n, "").rstrip("*~#") == "idle" for n in self.nodes):
                return
            time.sleep(0.5)
        raise RuntimeError(f"Slurm nodes not idle after {timeout}s: {states}\n{self.logs()}")

    def cancel_all(self) -> None:
        self.run("scancel", "--partition", self.partition, check=False)


def write_config(root: str, host: str, cpus: int = 2) -> str:
    """Write munge key and slurm.conf under ``root``; return the slurm.conf path."""
    for d in ("state", "spool", "log", "run"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    key = os.path.join(root, "munge.key")
    with open(key, "wb") as f:
        f.write(os.urandom(1024))
    os.chmod(key, 0o600)
    ctld_port, p1, p2 = _free_port(), _free_port(), _free_port()
    node_lines = "\n".join(
        f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={p} CPUs={cpus} RealMemory=4000 State=UNKNOWN"
        for n, p in zip(NODES, (p1, p2))
    )
    conf = f"""\
ClusterName=dailyslice
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge.sock
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmdTimeout=60
{node_lines}
PartitionName={PARTITION} Nodes={",".join(NODES)} Default=YES MaxTime=INFINITE State=UP
"""
    path = os.path.join(root, "slurm.conf")
    with open(path, "w") as f:
        f.write(conf)
    return path


def start_cluster(root: str) -> SlurmCluster:
    """Start munged, slurmctld and two slurmd under ``root``; wait until the nodes are idle."""
    missing = [d for d in DAEMONS if _which(d) is None]
    if missing:
        raise RuntimeError(
            f"Slurm/munge programs not found: {', '.join(missing)}. "
            "Install Debian's slurm-wlm and munge: bash scripts/install-system-deps.sh (as root)"
        )
    # munged insists that its socket folder be world-executable
    os.chmod(root, 0o755)
    host = socket.gethostname().split(".")[0]
    conf = write_config(root, host)
    cluster = SlurmCluster(root=root, conf=conf)
    log = os.path.join(root, "log")
    env = {**os.environ, "SLURM_CONF": conf}

    def spawn(name: str, *cmd: str) -> subprocess.Popen:
        out = open(os.path.join(log, f"{name}.out"), "ab")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        cluster.procs.append(p)
        return p

    try:
        spawn(
            "munged",
            _which("munged"),
            "-F",
            "-S",
            f"{root}/munge.sock",
            f"--key-file={root}/munge.key",
            f"--log-file={log}/munged.log",
            f"--pid-file={root}/run/munged.pid",
            f"--seed-file={root}/munged.seed",
        )
        deadline = time.monotonic() + 20
        while not os.path.exists(f"{root}/munge.sock"):
            if time.monotonic() > deadline or cluster.procs[0].poll() is not None:
                raise RuntimeError(f"munged did not start\n{cluster.logs()}")
            time.sleep(0.1)
        spawn("slurmctld", _which("slurmctld"), "-D", "-i", "-f", conf)
        for n in NODES:
            spawn(f"slurmd-{n}", _which("slurmd"), "-D", "-N", n, "-f", conf)
        cluster.wait_idle()
    except BaseException:
        stop_cluster(cluster)
        raise
    return cluster


def stop_cluster(cluster: SlurmCluster) -> None:
    """Cancel jobs, then stop the daemons started by :func:`start_cluster` (by pid)."""
    if any(p.poll() is None for p in cluster.procs[1:]):
        try:
            cluster.cancel_all()
            time.sleep(1)
        except Exception:
            pass
    for p in reversed(cluster.procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in reversed(cluster.procs):
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
