"""Orchestration pieces without a cluster: sizing formula, config file, sbatch command
line and output parsing, and the DAG folder importing cleanly (DagBag)."""

from __future__ import annotations

import datetime as dt
import os
import pathlib

import pytest

from lib.orchestration.datacenters import DEFAULTS, ConfigError, load_config
from lib.orchestration.sizing import GIB, size_job, slurm_time
from lib.orchestration.slurm import (
    Runner,
    SlurmError,
    parse_job_id,
    parse_scontrol,
    read_marker,
    sbatch_argv,
    submit_job,
)

# shared session fixtures (one Slurm cluster, one AIRFLOW_HOME per run)
pytest_plugins = ["tests.fixtures_airflow"]
ROOT = pathlib.Path(__file__).resolve().parents[2]
SIZING = DEFAULTS["sizing"]  # 50 GiB/node-hour, 2 h target, 1..16 nodes, 15 min + 1.5x, 30..1440 min


def test_sizing_formula():
    # a published day (~1 TiB): ceil(1024 / (50*2)) = 11 nodes; 15 + 1.5*60*1024/(50*11) = 182.6 -> 183 min
    assert size_job(1024 * GIB, 2000, SIZING) == {"nodes": 11, "minutes": 183, "time": "0-03:03:00"}
    # tiny day: one node, the minimum walltime
    assert size_job(10 << 20, 3, SIZING) == {"nodes": 1, "minutes": 30, "time": "0-00:30:00"}
    # huge day: capped at max_nodes, walltime grows instead, capped at max_minutes
    big = size_job(100 * 1024 * GIB, 10**6, SIZING)
    assert big["nodes"] == 16 and big["minutes"] == 1440 and big["time"] == "1-00:00:00"
    # never more nodes than files; Magpie's master-only node on top
    assert size_job(1024 * GIB, 4, SIZING)["nodes"] == 4
    assert size_job(1024 * GIB, 2000, {**SIZING, "extra_nodes": 1})["nodes"] == 12
    with pytest.raises(ValueError, match="no input files"):
        size_job(0, 0, SIZING)


def test_slurm_time_format():
    assert [slurm_time(m) for m in (5, 61, 1440, 1501)] == ["0-00:05:00", "0-01:01:00", "1-00:00:00", "1-01:01:00"]


def test_config_defaults_and_per_data_center_overrides(tmp_path):
    p = tmp_path / "dc.yaml"
    p.write_text(
        "defaults:\n  output_root: /scratch/{data_center}\n  sizing: {max_nodes: 4}\n"
        "datacenters:\n  x1:\n    s3: {bucket: b1}\n  x2:\n    s3: {bucket: b2, prefix: p}\n    sizing: "
        "{max_nodes: 8}\n"
        "    slurm: {submit: ssh, ssh_host: login}\n"
    )
    cfg = load_config(str(p))
    assert cfg["x1"]["output_root"] == "/scratch/x1" and cfg["x1"]["log_dir"] == "/scratch/x1/logs"
    assert cfg["x1"]["sizing"]["max_nodes"] == 4 and cfg["x2"]["sizing"]["max_nodes"] == 8
    assert cfg["x2"]["sizing"]["gib_per_node_hour"] == SIZING["gib_per_node_hour"]  # deep merge kept the rest
    assert cfg["x2"]["slurm"]["submit"] == "ssh" and cfg["x1"]["slurm"]["submit"] == "local"
    assert cfg["x1"]["schedule"] == "0 3 * * *" and cfg["x1"]["max_active_runs"] == 5
    assert cfg["x1"]["check_days"] == {"window": 7, "max_queue": 5}  # queues at most max_active_runs a check


@pytest.mark.parametrize(
    "text,error",
    [
        ("datacenters: {}\n", "non-empty 'datacenters'"),
        ("datacenters:\n  a: {}\n", "no s3.bucket"),
        ("datacenters:\n  a: {s3: {bucket: b}, slurm: {submit: ssh}}\n", "needs slurm.ssh_host"),
        ("datacenters:\n  a: {s3: {bucket: b}, slurm: {submit: pbs}}\n", "'local' or 'ssh'"),
        ("datacenters:\n  'a b': {s3: {bucket: b}}\n", "letters, digits"),
        ("datacenters:\n  a: {s3: {bucket: b}, check_days: {window: -1}}\n", "check_days.window"),
        ("datacenters:\n  a: {s3: {bucket: b}, check_days: {max_queue: many}}\n", "check_days.max_queue"),
    ],
)
def test_config_errors_name_the_problem(tmp_path, text, error):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=error):
        load_config(str(p))


def test_sbatch_command_line():
    argv = sbatch_argv(
        "/opt/ds/deploy/slurm/dailyslice.sbatch",
        "dailyslice-dc1",
        3,
        "0-02:00:00",
        "/logs/slurm-%j.out",
        {"DATE": "2026-01-15", "OUTPUT_ROOT": "/scratch/x"},
        partition="batch",
        account="ows",
        extra=["--qos=low"],
    )
    assert argv == [
        "sbatch",
        "--parsable",
        "--job-name=dailyslice-dc1",
        "--dependency=singleton",
        "--nodes=3",
        "--time=0-02:00:00",
        "--output=/logs/slurm-%j.out",
        "--partition=batch",
        "--account=ows",
        "--qos=low",
        "--export=ALL,DATE=2026-01-15,OUTPUT_ROOT=/scratch/x",
        "/opt/ds/deploy/slurm/dailyslice.sbatch",
    ]
    with pytest.raises(SlurmError, match="no commas"):
        sbatch_argv("s", "j", 1, "1", "o", {"X": "a,b"})


def test_parsing_slurm_output():
    assert parse_job_id("4242\n") == "4242" and parse_job_id("17;cluster2\n") == "17"
    with pytest.raises(SlurmError, match="unexpected sbatch output"):
        parse_job_id("sbatch: error: Batch job submission failed\n")
    info = parse_scontrol(
        "JobId=5 JobName=dailyslice-a JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 Comment='a b'"
    )
    assert info["JobState"] == "FAILED" and info["ExitCode"] == "3:0" and info["Comment"] == "a b"
    assert read_marker('{"ok": true, "job_id": "5"}', "5") == {"ok": True, "job_id": "5"}
    assert read_marker('{"ok": true, "job_id": "4"}', "5") is None and read_marker("{trunc", None) is None
    assert Runner().argv(["squeue"]) == ["squeue"]


def test_the_day_a_run_processes(airflow_home):  # dag_factory imports Airflow
    from types import SimpleNamespace

    from lib.orchestration.runenv import day_of

    at3 = dt.datetime(2026, 1, 16, 3, 0, tzinfo=dt.timezone.utc)
    assert day_of({"params": {"date": None}, "logical_date": at3}) == dt.date(2026, 1, 15)
    assert day_of({"params": {"date": "2026-01-02"}, "logical_date": at3}) == dt.date(2026, 1, 2)
    assert day_of({"params": {}, "logical_date": None, "dag_run": SimpleNamespace(run_after=at3)}) == dt.date(
        2026, 1, 15
    )


def test_dag_folder_imports_cleanly(airflow_home, monkeypatch):
    from airflow.dag_processing.dagbag import DagBag

    from lib.orchestration.dag_factory import SlurmJobSensor

    monkeypatch.delenv("DAILYSLICE_DATACENTERS", raising=False)  # the shipped datacenters.yaml
    bag = DagBag(dag_folder=str(ROOT / "airflow" / "dags"))
    assert bag.import_errors == {}
    assert sorted(bag.dags) == [
        "dailyslice-batch-dc-a",  # dc-a only: batch_minutes
        "dailyslice-dc-a",
        "dailyslice-dc-b",
        "dailyslice-ondemand-dc-a",
        "dailyslice-ondemand-dc-b",
    ]
    od = bag.dags["dailyslice-ondemand-dc-a"]  # one request at a time per data center
    assert od.max_active_runs == 1 and isinstance(od.get_task("wait"), SlurmJobSensor)
    assert {t.task_id: sorted(t.upstream_task_ids) for t in od.tasks} == {
        "pick": [],
        "submit": ["pick"],
        "wait": ["submit"],
        "check": ["submit", "wait"],
        "stage": ["check", "submit"],
    }
    dag = bag.dags["dailyslice-dc-a"]
    assert dag.max_active_runs == 5 and dag.schedule == "0 3 * * *"
    assert type(dag.timetable).__name__ == "CronTriggerTimetable"  # logical date = the 03:00 run time
    assert {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks} == {
        "estimate": [],
        "size": ["estimate"],
        "submit": ["estimate", "size"],
        "wait": ["submit"],
        "check": ["submit", "wait"],
        "exchange": ["check", "estimate"],
        "stage": ["check", "estimate", "exchange"],
        "logs": ["check", "estimate", "submit"],
        "summary": ["catch_up", "check", "estimate", "logs", "size", "stage", "submit"],
        "catch_up": [],
    }
    assert dag.get_task("logs").trigger_rule == "none_skipped"  # also after a failed check
    assert isinstance(dag.get_task("wait"), SlurmJobSensor)
    assert dag.get_task("submit").max_active_tis_per_dag == 1
    assert bag.dags["dailyslice-dc-b"].get_task("wait").runner["submit"] == "ssh"


def test_trigger_gives_up_when_slurm_cannot_be_reached(airflow_home, monkeypatch):
    import asyncio

    from lib.orchestration import trigger as trigger_mod

    monkeypatch.setenv("PATH", "/nonexistent")  # no scontrol where the triggerer runs
    monkeypatch.setattr(trigger_mod, "MAX_ERRORS", 3)

    async def first():
        t = trigger_mod.SlurmJobTrigger("7", "/nonexistent/m.json", Runner().as_dict(), poll_seconds=0.01)
        async for event in t.run():
            return event.payload

    event = asyncio.run(first())
    assert event["state"] == "UNKNOWN" and event["marker_ok"] is False
    assert "cannot run scontrol" in event["error"]


def test_sizing_under_an_s3_connection_cap():
    """A cap of concurrent S3 reads per job bounds the nodes worth asking for and stretches
    the walltime to the pace the cap allows."""
    free = size_job(1024 * GIB, 2000, SIZING)
    assert size_job(1024 * GIB, 2000, {**SIZING, "cores_per_node": 32}, s3_cap=None) == free
    assert size_job(1024 * GIB, 2000, {**SIZING, "cores_per_node": 32}, s3_cap=1000) == free  # the cap is above need
    capped = size_job(1024 * GIB, 2000, {**SIZING, "cores_per_node": 32}, s3_cap=64)
    # 64 reads keep 2 nodes of 32 cores busy: 15 + 1.5 * 60 * 1024 / (50 * 2) = 936.6 -> 937 min
    assert capped == {"nodes": 2, "minutes": 937, "time": "0-15:37:00", "s3_limited": True}
    half = size_job(1024 * GIB, 2000, {**SIZING, "cores_per_node": 32}, s3_cap=16)  # half a node's cores
    assert half["nodes"] == 1 and half["minutes"] == 1440  # 15 + 1.5 * 60 * 1024 / 25 > the 24 h ceiling
    assert size_job(1024 * GIB, 2000, SIZING, s3_cap=64) == free  # cores per node unknown: nothing to bound


def test_s3_pressure_config_reaches_the_job_environment(tmp_path):
    from lib.orchestration.datacenters import ConfigError, load_config
    from lib.orchestration.runenv import s3_pressure_env

    cfg_file = tmp_path / "dc.json"
    cfg_file.write_text(
        '{"datacenters": {"dc1": {"s3": {"bucket": "b", "max_connections_per_job": 48, '
        '"max_connections_per_executor": 8}}}}'
    )
    s3cfg = load_config(str(cfg_file))["dc1"]["s3"]
    assert s3_pressure_env(s3cfg) == {"DAILYSLICE_S3_MAX_CONNECTIONS_PER_JOB": "48", "SPARK_EXECUTOR_CORES": "8"}
    assert s3_pressure_env({**s3cfg, "max_connections_per_process": 2})["S3_MAX_CONNECTIONS"] == "2"
    cfg_file.write_text('{"datacenters": {"dc1": {"s3": {"bucket": "b", "max_connections_per_job": 0}}}}')
    with pytest.raises(ConfigError, match="max_connections_per_job"):
        load_config(str(cfg_file))


def test_ssh_that_cannot_connect_renews_access_and_tries_once_more(tmp_path, monkeypatch):
    """No session is held: each command is its own ssh, and when ssh itself fails (exit 255, an
    expired certificate or ticket) the configured renew command runs and the command is retried."""
    import asyncio
    import stat

    bindir, ticket = tmp_path / "bin", tmp_path / "ticket"
    bindir.mkdir()
    # stand-in ssh: refuses (255) without a valid ticket, else runs the remote command line
    (bindir / "ssh").write_text(
        f'#!/bin/sh\n[ -f "{ticket}" ] || {{ echo "Permission denied (publickey)" >&2; exit 255; }}\n'
        'while [ "$1" != "--" ]; do shift; done; shift; echo "$*" >> "' + str(tmp_path / "calls") + '"; sh -c "$*"\n'
    )
    (bindir / "ssh").chmod(0o755 | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    cfg = {"submit": "ssh", "ssh_host": "login", "renew_command": ["touch", str(ticket)]}
    runner = Runner.from_config(cfg)
    r = runner.run(["echo", "job 42 RUNNING"])
    assert r.returncode == 0 and r.stdout == "job 42 RUNNING\n" and ticket.exists()
    ticket.unlink()  # expired again while the trigger waits
    rc, out, _ = asyncio.run(Runner(**runner.as_dict()).arun(["echo", "later"]))
    assert (rc, out) == (0, "later\n")
    assert (tmp_path / "calls").read_text().splitlines() == ["echo 'job 42 RUNNING'", "echo later"]
    # without a renew command the failure is reported as it is (the trigger counts it)
    ticket.unlink()
    assert Runner("ssh", "login").run(["true"]).returncode == 255


def test_refreshing_credentials_reach_the_job_and_the_airflow_side(tmp_path, monkeypatch):
    import os

    from lib.orchestration.runenv import s3_credentials_env, s3_endpoint

    cfg_file = tmp_path / "dc.json"
    cfg_file.write_text(
        '{"datacenters": {"dc1": {"s3": {"bucket": "b", '
        '"credentials": {"config_file": "/opt/ds/aws-config", "profile": "dc1"}}}}}'
    )
    env = s3_credentials_env(load_config(str(cfg_file))["dc1"]["s3"])
    assert env == {"S3_CREDENTIALS": "refreshing", "AWS_CONFIG_FILE": "/opt/ds/aws-config", "AWS_PROFILE": "dc1"}
    assert s3_credentials_env(DEFAULTS["s3"]) == {}
    monkeypatch.delenv("S3_CREDENTIALS", raising=False)
    monkeypatch.setenv("AWS_PROFILE", "before")
    with s3_endpoint("http://s3.example:9000", env):
        assert os.environ["S3_CREDENTIALS"] == "refreshing" and os.environ["AWS_PROFILE"] == "dc1"
        assert os.environ["AWS_ENDPOINT_URL"] == "http://s3.example:9000"
    assert "S3_CREDENTIALS" not in os.environ and os.environ["AWS_PROFILE"] == "before"


def test_submit_job_makes_the_folders_and_adds_the_sites_arguments(tmp_path, monkeypatch):
    """The nightly and the on-demand DAG submit through it: folders first, then sbatch with the
    site's partition, account and extra arguments (a stand-in sbatch records its command line)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/argv\necho "4242;cluster"\n')
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    cfg = {"project_home": "/opt/ds", "slurm": {"partition": "batch", "account": "ows", "extra_args": ["--qos=low"]}}
    logs, marks = tmp_path / "logs", tmp_path / "markers" / "dc1"
    job_id, argv = submit_job(
        Runner(),
        cfg,
        "deploy/slurm/x.sbatch",
        {"DATE": "2026-01-15"},
        folders=[str(logs), str(marks)],
        job_name="dailyslice-dc1",
        nodes=2,
        time="1:00:00",
        output=f"{logs}/slurm-%j.out",
    )
    assert job_id == "4242" and logs.is_dir() and marks.is_dir()
    assert (tmp_path / "argv").read_text().split("\n")[:-1] == argv[1:]
    assert argv[-4:] == ["--account=ows", "--qos=low", "--export=ALL,DATE=2026-01-15", "/opt/ds/deploy/slurm/x.sbatch"]
    assert "--partition=batch" in argv and "--nodes=2" in argv
    (tmp_path / "file").write_text("")
    with pytest.raises(SlurmError, match=f"cannot create {tmp_path}/file/logs"):
        submit_job(
            Runner(),
            cfg,
            "x",
            {},
            folders=[str(tmp_path / "file" / "logs")],
            job_name="j",
            nodes=1,
            time="1",
            output="o",
        )
