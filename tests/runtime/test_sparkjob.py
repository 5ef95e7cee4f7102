"""The phases every job shares (lib.runtime.sparkjob): timed steps, items mapped over Spark tasks,
the ``--date/--root`` paths; and the catalogue CLI's pointer to the job (lib never imports jobs)."""

from __future__ import annotations

import ast
import datetime as dt
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pytest

from lib.catalogue.__main__ import main as catalogue_cli
from lib.runtime import jvm_cache, localmode, pydaemon
from lib.runtime.localmode import LIGHT_DRIVER_OPTS, light_driver_options
from lib.runtime.maptasks import map_tasks
from lib.runtime.sparkjob import SparkJob
from lib.runtime.steps import Steps
from lib.store import layout

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_steps_record_finished_steps_only():
    steps = Steps()
    with steps("plan"):
        time.sleep(0.01)

    def graph() -> None:  # the index times its graph in another thread, with the same object
        with steps("graph"):
            pass

    t = threading.Thread(target=graph)
    t.start()
    t.join()
    with pytest.raises(RuntimeError):
        with steps("map"):
            raise RuntimeError("boom")
    assert set(steps.seconds) == {"plan", "graph"}  # a failed step is not recorded
    assert steps.seconds["plan"] >= 0.01 and steps.seconds["plan"] == round(steps.seconds["plan"], 3)


def test_each_run_gets_fresh_steps():
    job = SparkJob()
    with job.steps("plan"):
        pass
    assert SparkJob().steps.seconds == {} and job.steps.seconds.keys() == {"plan"}


SCHEMA = pa.schema([("i", pa.int64()), ("square", pa.int64())])


def _squares(batches):
    for batch in batches:
        for i in batch.column(0).to_pylist():
            yield pa.RecordBatch.from_pylist([{"i": i, "square": i * i}], schema=SCHEMA)


def test_map_tasks_collects_one_row_per_item_as_dicts(spark):
    rows = map_tasks(spark, 5, _squares, SCHEMA)
    assert sorted(rows, key=lambda r: r["i"]) == [{"i": i, "square": i * i} for i in range(5)]
    assert sorted(r["i"] for r in map_tasks(spark, 5, _squares, SCHEMA, partitions=2)) == list(range(5))


def test_map_tasks_casts_rows_to_the_schema_and_fails_a_task_whose_rows_do_not_fit(spark):
    narrow = pa.schema([("i", pa.int32()), ("square", pa.int32())])

    def narrow_squares(batches):
        for b in batches:
            yield pa.RecordBatch.from_pylist(
                [{"i": i, "square": i * i} for i in b.column(0).to_pylist()], schema=narrow
            )

    assert sorted(r["square"] for r in map_tasks(spark, 3, narrow_squares, SCHEMA)) == [0, 1, 4]

    def wrong_names(batches):
        for b in batches:
            yield pa.RecordBatch.from_pylist([{"j": 1, "square": 1}])

    with pytest.raises(Exception, match="names"):
        map_tasks(spark, 1, wrong_names, SCHEMA)


def test_a_failed_map_returns_only_after_its_other_running_task_ended(spark, tmp_path):
    """Spark fails a job at its first failed task and lets the others run on; map_tasks
    raises only once they have ended, so the caller's clean-up is not raced by a writer."""
    marker = tmp_path / "written-by-the-slow-task"

    def one_fails_one_writes(batches):
        for b in batches:
            for t in b.column(0).to_pylist():
                if t == 0:
                    time.sleep(0.3)  # the other task is running by now (local[2])
                    raise ValueError("task 0 fails")
                time.sleep(2.0)
                marker.write_text("late")
                yield pa.RecordBatch.from_pylist([{"i": t, "square": t * t}], schema=SCHEMA)

    with pytest.raises(Exception, match="task 0 fails"):
        map_tasks(spark, 2, one_fails_one_writes, SCHEMA)
    assert marker.read_text() == "late"
    assert not spark.sparkContext.getLocalProperty("spark.jobGroup.id")  # the group it set is cleared
    assert sorted(r["i"] for r in map_tasks(spark, 3, _squares, SCHEMA)) == [0, 1, 2]


def test_map_tasks_without_items_runs_no_spark_job():
    assert map_tasks(None, 0, _squares, SCHEMA) == []  # no session needed: nothing is submitted


def test_date_and_root_resolve_to_the_layout_day_path():
    class Job(SparkJob):
        input_kind, output_kind = layout.PREPROCESSED, layout.INDEX

    job = Job()
    args = job.resolve_io(job.options_from_argv(["--date", "2026-01-15", "--root", "s3://bucket/x/"]))
    assert args.input == layout.day_path("s3://bucket/x", layout.PREPROCESSED, dt.date(2026, 1, 15))
    assert args.output == "s3://bucket/x/index/2026-01/15"


def test_catalogue_cli_build_points_to_the_job(capsys):
    assert catalogue_cli(["build", "--date", "2026-01-15", "--root", "."]) == 2
    assert "python jobs/catalogue.py" in capsys.readouterr().err
    tree = ast.parse((ROOT / "lib" / "catalogue" / "__main__.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.split(".")[0] == "jobs" for m in imported)


def test_lib_zip_for_executors_holds_the_whole_package():
    import zipfile

    from lib.runtime.pyfiles import zip_lib

    names = set(zipfile.ZipFile(zip_lib()).namelist())
    for module in (
        "lib/__init__.py",
        "lib/runtime/sparkjob.py",
        "lib/preprocess/tasks.py",
        "lib/index/pipeline.py",
        "lib/catalogue/day_captures.py",
        "lib/warc/records.py",
    ):
        assert module in names, module
    assert not any(n.startswith("jobs/") or "__pycache__" in n for n in names)


def test_light_driver_options_only_for_a_local_jvm_this_process_launches(monkeypatch):
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: False)
    monkeypatch.delenv(localmode.ENV_LIGHT, raising=False)
    assert light_driver_options(None) == light_driver_options("local[2]") == LIGHT_DRIVER_OPTS
    assert light_driver_options("spark://head:7077") is None  # a cluster's driver does JVM work too
    monkeypatch.setenv(localmode.ENV_LIGHT, "off")
    assert light_driver_options("local[2]") is None
    monkeypatch.setenv(localmode.ENV_LIGHT, "on")
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: True)  # spark-submit started it: too late
    assert light_driver_options("local[2]") is None


def test_daemon_module_only_for_a_local_jvm_this_process_launches(monkeypatch):
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: False)
    monkeypatch.delenv(localmode.ENV_DAEMON, raising=False)
    assert (
        localmode.daemon_module(None)
        == localmode.daemon_module("local[2]")
        == pydaemon.MODULE
        == "lib.runtime.pydaemon"
    )
    assert localmode.daemon_module("spark://head:7077") is None
    monkeypatch.setenv(localmode.ENV_DAEMON, "off")
    assert localmode.daemon_module("local[2]") is None
    monkeypatch.setenv(localmode.ENV_DAEMON, "on")
    monkeypatch.setattr(jvm_cache, "jvm_running", lambda: True)
    assert localmode.daemon_module("local[2]") is None


_PROBE = """
import json, sys, threading
from lib.runtime.localmode import stop_session
from lib.runtime.sparkjob import SparkJob

class Job(SparkJob):
    light_driver = True

job = Job()
args = job.options_from_argv(["--master", "local[1]", "--input", "i", "--output", "o",
                              "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=4 -Dmine=1"])
spark = job.session(args)
jvm_args = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
sc = spark.sparkContext
import pyspark
worker_pyspark = sc.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__).collect()[0]
daemon = sc.getConf().get("spark.python.daemon.module")
server = sc._accumulatorServer
stop_session(spark)
from pyspark import SparkContext
stopped = SparkContext._active_spark_context is None
for t in threading.enumerate():
    if t.name == "accumulator-server-stop":
        t.join(10)
print(json.dumps({"jvm_args": jvm_args, "stopped": stopped, "server_stopped": server.server_shutdown,
                  "worker_pyspark": worker_pyspark, "driver_pyspark": pyspark.__file__, "daemon": daemon}))
"""


def test_a_light_job_launches_its_driver_jvm_with_the_light_options_and_user_options_win(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYSPARK_PYTHON": sys.executable,
        jvm_cache.ENV_SWITCH: "off",
        localmode.ENV_LIGHT: "on",
        localmode.ENV_DAEMON: "on",
    }
    p = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    args = out["jvm_args"]
    for opt in LIGHT_DRIVER_OPTS.split():
        assert opt in args
    # the user's options come after ours: the JVM takes the last -XX value given
    assert args.index("-XX:TieredStopAtLevel=4") > args.index("-XX:TieredStopAtLevel=1") and "-Dmine=1" in args
    assert out["stopped"] and out["server_stopped"]  # the accumulator server stops in the background
    # the session's daemon gave its workers the installed (compiled) pyspark, not the source zip
    assert out["daemon"] == pydaemon.MODULE
    assert out["worker_pyspark"] == out["driver_pyspark"] and ".zip" not in out["worker_pyspark"]


_CONTEXT_PROBE = """
import json, sys
from lib.runtime.localmode import stop_session
from lib.runtime.maptasks import map_tasks
from lib.runtime.session import ContextOnly
from lib.runtime.sparkjob import SparkJob
import pyarrow as pa

class Job(SparkJob):
    context_only = True

job = Job()
args = job.options_from_argv(["--master", "local[2]", "--input", "i", "--output", "o", "--conf", "spark.mine=7"])
spark = job.session(args)
sc = spark.sparkContext
jvm_session = sc._jvm.org.apache.spark.sql.SparkSession.getDefaultSession().isDefined()
def fn(batches):
    for b in batches:
        yield pa.record_batch([pa.array([i * 10 for i in b.column(0).to_pylist()], pa.int64())], names=["x"])
rows = map_tasks(spark, 3, fn, pa.schema([("x", pa.int64())]))
out = {"kind": type(spark).__name__, "jvm_session": jvm_session, "rows": sorted(r["x"] for r in rows),
       "conf": {k: sc.getConf().get(k) for k in ("spark.mine", "spark.app.name", "spark.master",
                                                  "spark.ui.showConsoleProgress")}}
stop_session(spark)
from pyspark import SparkContext
out["stopped"] = SparkContext._active_spark_context is None
print(json.dumps(out))
"""


def test_a_context_only_job_starts_a_spark_context_with_its_settings_and_no_sql_session(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable, jvm_cache.ENV_SWITCH: "off"}
    p = subprocess.run(
        [sys.executable, "-c", _CONTEXT_PROBE], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["kind"] == "ContextOnly" and out["jvm_session"] is False  # the JVM built no SQL session
    assert out["rows"] == [0, 10, 20]
    # the job's own settings and the user's --conf reach the context as they reach a session
    assert out["conf"] == {
        "spark.mine": "7",
        "spark.app.name": "dailyslice-job",
        "spark.master": "local[2]",
        "spark.ui.showConsoleProgress": "true",
    }
    assert out["stopped"]


def test_warm_imports_import_in_the_background_and_swallow_what_fails():
    import importlib.util

    assert importlib.util.find_spec("no_such_module_here") is None
    sys.modules.pop("colorsys", None)
    t = localmode.warm_imports(("no_such_module_here", "colorsys"))
    t.join(30)
    assert not t.is_alive() and t.daemon and "colorsys" in sys.modules
