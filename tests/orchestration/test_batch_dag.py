"""The batch DAG (lib/orchestration/batch_dag.py, issue 57 pt 2): its structure from datacenters.yaml's
``batch_minutes``, the tick's marker of ``dailyslice day --batch`` when there is nothing to do, and two
real ticks through ``dag.test()`` on the session's Slurm cluster: the first publishes batch=1 of a day
with one archive, the second finds nothing new and succeeds without a batch=2."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib

import pytest
import yaml

from lib.errors import ConfigError
from tests.helpers_datacenters import LOCAL_SPARK, datacenter_entry, datacenters_file, task_states

pytest_plugins = ["tests.fixtures_airflow", "tests.fixtures_slurm"]
DAY = dt.date(2026, 1, 15)


def _config(tmp_path: pathlib.Path, **own) -> dict:
    from lib.orchestration.datacenters import load_config

    path = tmp_path / "datacenters.yaml"
    path.write_text(yaml.safe_dump({"datacenters": {"x1": {"s3": {"bucket": "b"}, **own}}}))
    return load_config(str(path))["x1"]


def test_batch_dag_structure_follows_batch_minutes(airflow_home, tmp_path):
    from lib.orchestration.batch_dag import build_batch_dag
    from lib.orchestration.dag_factory import SlurmJobSensor

    assert build_batch_dag("x1", _config(tmp_path)) is None  # no batch_minutes: no batch DAG
    for minutes in (20, 180):
        dag = build_batch_dag("x1", _config(tmp_path, batch_minutes=minutes))
        assert dag is not None and dag.dag_id == "dailyslice-batch-x1"
        assert dag.schedule == dt.timedelta(minutes=minutes)
        assert type(dag.timetable).__name__ == "DeltaTriggerTimetable"  # a tick's run time is its logical date
        assert dag.max_active_runs == 1 and not dag.catchup  # one tick at a time, no catch-up of missed ticks
        assert {t.task_id: sorted(t.upstream_task_ids) for t in dag.tasks} == {
            "find": [],
            "submit": ["find"],
            "wait": ["submit"],
            "check": ["submit", "wait"],
        }
        assert isinstance(dag.get_task("wait"), SlurmJobSensor)
        assert all(t.retries == 0 for t in dag.tasks)  # a failed tick: the next one plans the same batch


@pytest.mark.parametrize("bad", [0, -5, "hourly", 1441, True])
def test_a_bad_batch_minutes_is_refused_naming_it(tmp_path, bad):
    with pytest.raises(ConfigError, match=r"x1: batch_minutes must be minutes from 1 to 1440"):
        _config(tmp_path, batch_minutes=bad)


def test_the_day_a_tick_batches(airflow_home):
    from types import SimpleNamespace

    from lib.orchestration.batch_dag import tick_day

    late = dt.datetime(2026, 1, 15, 23, 30, tzinfo=dt.timezone(dt.timedelta(hours=-2)))  # 01:30 UTC on the 16th
    assert tick_day({"params": {}, "dag_run": SimpleNamespace(run_after=late)}) == dt.date(2026, 1, 16)
    assert tick_day({"params": {"date": "2026-01-02"}, "dag_run": SimpleNamespace(run_after=late)}) == dt.date(
        2026, 1, 2
    )


def test_a_tick_with_nothing_new_writes_a_nothing_new_marker(tmp_path):
    from jobs import day
    from lib.orchestration.marker import read_marker_file
    from lib.store import layout

    (pathlib.Path(layout.day_path(str(tmp_path), layout.WARC, DAY)) / "c1").mkdir(parents=True)
    (pathlib.Path(layout.day_path(str(tmp_path), layout.WARC, DAY)) / "c1" / "a.warc.gz.open").write_bytes(b"x")
    tick = tmp_path / "_runs" / "dc" / f"{DAY}.tick.json"
    tick.parent.mkdir(parents=True)
    tick.with_name(f"{DAY}.tick.failed.json").write_text("{}")  # an earlier tick's: must not stay
    argv = ["--date", str(DAY), "--input-root", str(tmp_path), "--output-root", str(tmp_path), "--batch"]
    lines: list[str] = []
    args = day.parser().parse_args(argv + ["--data-center", "dc", "--job-id", "77"])
    assert day.night(args, lines.append) == 0  # no Spark: the tick returns before a session starts
    m = read_marker_file(str(tick), "77")
    assert m is not None and m.ok and m.nothing_new and m.batch is None and m.preprocess_rc is None
    assert not tick.with_name(f"{DAY}.tick.failed.json").exists()
    assert any("nothing to do" in x for x in lines)
    assert not (tmp_path / layout.PREPROCESSED).exists()  # nothing published


def test_plan_only_says_whether_a_tick_has_work_and_writes_nothing_then(tmp_path):
    from jobs import day
    from lib.errors import UsageError
    from lib.store import layout
    from lib.warc.sample import write_sample_crawl

    (archive,) = write_sample_crawl(str(tmp_path), DAY, 1, 3)
    os.utime(archive, (1, 1))  # closed long ago: settled
    argv = ["--date", str(DAY), "--input-root", str(tmp_path), "--output-root", str(tmp_path), "--plan-only"]
    with pytest.raises(UsageError, match="--plan-only plans a batch tick"):
        day.night(day.parser().parse_args(argv), lambda line: None)
    lines: list[str] = []
    assert day.night(day.parser().parse_args([*argv, "--batch"]), lines.append) == day.EXIT_WORK
    assert any("batch 1 of 2026-01-15: 1 archive(s) new" in x for x in lines)
    assert not (tmp_path / layout.RUNS).exists() and not (tmp_path / layout.PREPROCESSED).exists()


@pytest.fixture(scope="module")
def batch_dc(slurm_cluster, airflow_home, s3_server, submit_jvm_archive, tmp_path_factory):
    """A data center with batch_minutes whose bucket holds DAY with one small archive."""
    from lib.store import s3
    from lib.warc.sample import write_sample_crawl

    base = tmp_path_factory.mktemp("batch-dag")
    s3.client().create_bucket(Bucket="crawl-batch")
    for p in write_sample_crawl(str(base / "crawl"), DAY, files=1, pages_per_file=6):
        s3.client().upload_file(p, "crawl-batch", "dc1/" + os.path.relpath(p, base / "crawl").replace(os.sep, "/"))
    job_env = {**LOCAL_SPARK, **submit_jvm_archive, "INDEX_ARGS": "--min-group-docs 1 --no-graph"}
    cfg = datacenter_entry(base, s3_server, "crawl-batch", "dc1", 1, job_env)
    cfg.update(output_root=str(base / "out"), log_dir=str(base / "logs"), batch_minutes=30)
    path = base / "datacenters.json"
    path.write_text(json.dumps({"datacenters": {"dc1": cfg}}))
    from lib.orchestration.datacenters import load_config

    with datacenters_file(path):  # dag.test() runs the DAG the DAG folder builds from it
        yield base, load_config(str(path))["dc1"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ticks_publish_a_batch_then_find_nothing_to_do(batch_dc):
    from lib.orchestration.batch_dag import build_batch_dag
    from lib.orchestration.marker import read_marker_file
    from lib.preprocess import batches
    from lib.store import layout

    base, cfg = batch_dc
    dag = build_batch_dag("dc1", cfg)
    assert dag is not None
    out = base / "out"
    pre, idx = (pathlib.Path(layout.day_path(str(out), k, DAY)) for k in (layout.PREPROCESSED, layout.INDEX))
    tick = out / layout.RUNS / "dc1" / f"{DAY}.tick.json"

    dr = dag.test(run_conf={"date": DAY.isoformat()})
    logs = "\n".join(p.read_text()[-3000:] for p in sorted((base / "logs").glob("*.*")) if p.is_file())
    assert str(dr.state) == "success", f"{task_states(dr)}\n{logs}"
    assert set(task_states(dr).values()) == {"success"}
    first = read_marker_file(str(tick))
    assert first is not None and first.ok and first.batch == 1 and not first.nothing_new
    assert (pre / "batch=1" / layout.SUCCESS).is_file() and (idx / "batch=1" / layout.SUCCESS).is_file()
    taken = batches.published_batches(str(pre))[1]["files"]
    assert len(taken) == 1 and taken[0]["name"].endswith(".warc.gz")  # the day's one archive
    assert first.summaries["index"]["totals"]["docs"] > 0
    assert read_marker_file(str(out / layout.RUNS / "dc1" / f"{DAY}.batch=1.json"), first.job_id) == first
    assert not (pre / layout.SUCCESS).exists()  # a batch, not the day: the night closes it

    dr = dag.test(run_conf={"date": DAY.isoformat()})
    assert str(dr.state) == "success", task_states(dr)
    second = read_marker_file(str(tick))
    assert second is not None and second.ok and second.nothing_new and second.job_id != first.job_id
    assert second.batch is None and second.outputs == {}
    # run-day.sh asked first (--plan-only): the tick ended before any Spark started
    assert "nothing to do" in pathlib.Path(second.log).read_text()
    assert "spark-submit dailyslice day" not in pathlib.Path(second.log).read_text()
    assert "spark-submit dailyslice day" in pathlib.Path(first.log).read_text()
    assert sorted(p.name for p in pre.iterdir() if p.name.startswith("batch=")) == ["batch=1"]
    assert not (idx / "batch=2").exists() and not (out / layout.RUNS / "dc1" / f"{DAY}.batch=2.json").exists()
