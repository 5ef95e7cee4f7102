"""The Slurm side on the real two-node test cluster: steps on both nodes, singleton
serialisation per data center, the deferrable wait trigger (including jobs Slurm has
already forgotten), and submission over SSH (a stand-in ssh that runs the remote command
locally, so the quoting is exercised against the real sbatch)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time

import pytest

# shared session fixtures (one Slurm cluster, one AIRFLOW_HOME per run)
pytest_plugins = ["tests.fixtures_airflow", "tests.fixtures_slurm"]
pytestmark = pytest.mark.timeout(180)


def _script(path, body: str) -> str:
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)
    return str(path)


def _wait_gone(cluster, job_ids, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        q = cluster.run("squeue", "-h", "-o", "%i").stdout.split()
        if not set(job_ids) & set(q):
            return
        time.sleep(0.5)
    raise AssertionError(f"jobs {job_ids} still queued: {cluster.run('squeue').stdout}")


def _show(cluster, job_id) -> dict:
    from lib.orchestration.slurm import parse_scontrol

    return parse_scontrol(cluster.run("scontrol", "show", "job", "-o", job_id).stdout)


def test_batch_job_runs_a_step_on_each_node(slurm_cluster, tmp_path):
    out = tmp_path / "out.txt"
    script = _script(
        tmp_path / "j.sh", "srun --overlap -N2 -n2 bash -c 'echo step $SLURM_PROCID on $SLURMD_NODENAME'\n"
    )
    job = slurm_cluster.run("sbatch", "--parsable", "-N2", f"--output={out}", script).stdout.strip()
    _wait_gone(slurm_cluster, [job])
    lines = sorted(out.read_text().split("\n"))
    assert "step 0 on dsn1" in lines and "step 1 on dsn2" in lines


def test_singleton_runs_one_job_per_data_center_at_a_time(slurm_cluster, tmp_path):
    from lib.orchestration.slurm import parse_job_id

    script = _script(tmp_path / "s.sh", "sleep 5\n")

    def sub(name):
        r = slurm_cluster.run(
            "sbatch",
            "--parsable",
            "-N1",
            f"--job-name={name}",
            "--dependency=singleton",
            f"--output={tmp_path}/%j.out",
            script,
        )
        return parse_job_id(r.stdout)

    a1, a2, b1 = sub("dailyslice-dca"), sub("dailyslice-dca"), sub("dailyslice-dcb")
    seen = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not {"a1 RUNNING", "b1 RUNNING"} <= seen:
        states = {n: _show(slurm_cluster, j) for n, j in (("a1", a1), ("a2", a2), ("b1", b1))}
        seen |= {f"{n} {s['JobState']}" for n, s in states.items()}
        if states["a1"]["JobState"] == "RUNNING":
            # while dca's first job runs, its second one waits on the singleton dependency
            assert states["a2"]["JobState"] == "PENDING" and states["a2"]["Reason"] == "Dependency", states["a2"]
        time.sleep(0.3)
    assert {"a1 RUNNING", "b1 RUNNING"} <= seen, seen  # another data center is not held back
    _wait_gone(slurm_cluster, [a1, a2, b1])
    a1s, a2s, b1s = (_show(slurm_cluster, j) for j in (a1, a2, b1))
    assert a2s["JobState"] == "COMPLETED" and a2s["StartTime"] >= a1s["EndTime"]
    assert b1s["StartTime"] < a1s["EndTime"]  # ran alongside dca's first job


async def _first_event(trigger):
    async for event in trigger.run():
        return event.payload


def test_trigger_reports_success_from_the_marker(slurm_cluster, airflow_home, tmp_path):
    from lib.orchestration.slurm import Runner, parse_job_id
    from lib.orchestration.trigger import SlurmJobTrigger

    marker = tmp_path / "m.json"
    script = _script(
        tmp_path / "ok.sh", f'sleep 1; echo \'{{"ok": true, "job_id": "\'$SLURM_JOB_ID\'"}}\' > {marker}\n'
    )
    job = parse_job_id(slurm_cluster.run("sbatch", "--parsable", f"--output={tmp_path}/%j.out", script).stdout)
    trigger = SlurmJobTrigger(job, str(marker), Runner().as_dict(), poll_seconds=0.5)
    classpath, kwargs = trigger.serialize()
    assert classpath == "lib.orchestration.trigger.SlurmJobTrigger"
    event = asyncio.run(_first_event(SlurmJobTrigger(**kwargs)))
    assert event["state"] == "COMPLETED" and event["marker_ok"] is True and event["exit_code"] == "0:0"


def test_trigger_reports_a_failed_job(slurm_cluster, airflow_home, tmp_path):
    from lib.orchestration.slurm import Runner, parse_job_id
    from lib.orchestration.trigger import SlurmJobTrigger

    marker = tmp_path / "m.json"
    failed = tmp_path / "m.failed.json"
    script = _script(
        tmp_path / "bad.sh",
        f'echo \'{{"ok": false, "job_id": "\'$SLURM_JOB_ID\'", "preprocess_rc": 1}}\' > {failed}; exit 3\n',
    )
    job = parse_job_id(slurm_cluster.run("sbatch", "--parsable", f"--output={tmp_path}/%j.out", script).stdout)
    event = asyncio.run(_first_event(SlurmJobTrigger(job, str(marker), Runner().as_dict(), poll_seconds=0.5)))
    assert event["state"] == "FAILED" and event["exit_code"] == "3:0" and event["marker_ok"] is False
    assert event["failed_marker"]["preprocess_rc"] == 1


def test_trigger_on_a_job_slurm_has_forgotten_reads_the_marker(slurm_cluster, airflow_home, tmp_path):
    from lib.orchestration.slurm import Runner
    from lib.orchestration.trigger import SlurmJobTrigger

    # after MinJobAge scontrol answers "Invalid job id": only the marker can tell
    marker = tmp_path / "m.json"
    marker.write_text(json.dumps({"ok": True, "job_id": "987654"}))
    event = asyncio.run(_first_event(SlurmJobTrigger("987654", str(marker), Runner().as_dict(), poll_seconds=0.5)))
    assert event == {
        "job_id": "987654",
        "state": "GONE",
        "exit_code": None,
        "reason": None,
        "marker_ok": True,
        "failed_marker": None,
    }
    # a marker of another job (an earlier run of the same day) does not count
    event = asyncio.run(_first_event(SlurmJobTrigger("987655", str(marker), Runner().as_dict(), poll_seconds=0.5)))
    assert event["state"] == "GONE" and event["marker_ok"] is False


def test_submit_over_ssh_quotes_the_command(slurm_cluster, tmp_path, monkeypatch):
    from lib.orchestration.slurm import Runner, sbatch_argv, submit

    # stand-in ssh: drop the options and host, run the remote command line with a shell,
    # as sshd would on the login node
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "ssh-calls"
    (bindir / "ssh").write_text(
        f'#!/bin/bash\nwhile [ "$1" != "--" ]; do shift; done; shift\necho "$@" >> {calls}\nexec bash -c "$1"\n'
    )
    (bindir / "ssh").chmod(0o755 | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    runner = Runner("ssh", "login.example", ["-i", "/key"])
    assert runner.argv(["squeue", "-j", "1"])[:6] == ["ssh", "-o", "BatchMode=yes", "-i", "/key", "login.example"]

    got = tmp_path / "got.txt"
    script = _script(tmp_path / "env.sh", f'printf "%s|%s" "$DATE" "$ODD" > {got}\n')
    argv = sbatch_argv(
        script,
        "dailyslice-ssh",
        1,
        "0-00:05:00",
        f"{tmp_path}/%j.out",
        {"DATE": "2026-01-15", "ODD": "two words; $(not run)"},
    )
    job = submit(runner, argv)
    _wait_gone(slurm_cluster, [job])
    assert got.read_text() == "2026-01-15|two words; $(not run)"
    assert "sbatch --parsable" in calls.read_text()
