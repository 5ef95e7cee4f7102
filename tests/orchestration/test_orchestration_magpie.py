"""The Magpie path of the shared job script: Magpie (not installable here) starts Spark
and exports SPARK_MASTER_NODE/SPARK_MASTER_PORT before running MAGPIE_JOB_SCRIPT. This
test plays Magpie: it starts a Spark standalone master and worker itself, runs
deploy/common/run-day.sh with Magpie's variables, and checks that the script used that
cluster (without starting or stopping one), wrote the outputs and the success marker."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import pytest

from tests.helpers_datacenters import SMALL_URLDB

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy" / "common" / "run-day.sh"
DAY = dt.date(2026, 2, 3)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, log: pathlib.Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"Spark master exited:\n{log.read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"Spark master not listening on {port}:\n{log.read_text()[-3000:]}")


@pytest.fixture
def magpie_spark(tmp_path):
    """A standalone master + one worker, as Magpie would have started them."""
    import pyspark

    spark_class = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(tmp_path / "work")}
    port = _free_port()
    master_log, worker_log = tmp_path / "master.log", tmp_path / "worker.log"
    procs = []
    with open(master_log, "wb") as out:
        procs.append(
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    "0",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        )
    try:
        _wait_port(port, procs[0], master_log)
        with open(worker_log, "wb") as out:
            procs.append(
                subprocess.Popen(
                    [
                        spark_class,
                        "org.apache.spark.deploy.worker.Worker",
                        "--cores",
                        "2",
                        "--memory",
                        "1g",
                        "--webui-port",
                        "0",
                        f"spark://127.0.0.1:{port}",
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            )
        yield {"port": port, "master_log": master_log, "procs": procs}
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def test_run_day_uses_the_cluster_magpie_started(magpie_spark, tmp_path, submit_jvm_archive):
    from lib.warc.sample import write_sample_crawl

    crawl = tmp_path / "bucket"
    write_sample_crawl(str(crawl), DAY, files=1, pages_per_file=8)
    out = tmp_path / "scratch-fs"
    env = {
        **os.environ,
        # what Magpie exports to a MAGPIE_JOB_TYPE=script job
        "MAGPIE_JOB_TYPE": "script",
        "SPARK_MASTER_NODE": "127.0.0.1",
        "SPARK_MASTER_PORT": str(magpie_spark["port"]),
        "SLURM_JOB_ID": "4242",
        # ours
        "DATE": DAY.isoformat(),
        "DATA_CENTER": "dcm",
        "INPUT_ROOT": str(crawl),
        "OUTPUT_ROOT": str(out),
        "DAILYSLICE_HOME": str(ROOT),
        "VENV": sys.prefix,
        "SCRATCH_DIR": str(tmp_path / "node-scratch"),
        "SPARK_EXECUTOR_MEMORY": "512m",
        "SPARK_DRIVER_MEMORY": "768m",
        "SPARK_LOCAL_IP": "127.0.0.1",
        "INDEX_ARGS": "--min-group-docs 1",
        "CATALOGUE_ARGS": SMALL_URLDB,
        **submit_jvm_archive,
    }
    env.pop("SPARK_HOME", None)
    r = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=540)
    log_file = out / "logs" / f"dailyslice-dcm-{DAY}-4242.log"
    log = log_file.read_text()
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n{log[-4000:]}"
    assert f"log in {log_file}" in r.stdout

    assert f"using the running Spark master spark://127.0.0.1:{magpie_spark['port']}" in log
    assert "starting Spark master" not in log  # it started no cluster of its own ...
    assert all(p.poll() is None for p in magpie_spark["procs"])  # ... and stopped none of Magpie's
    master_log = magpie_spark["master_log"].read_text()
    # the night's three jobs ran as one application (dailyslice day), not one each
    assert master_log.count("Registering app ") == 1 and "Registering app dailyslice-day" in master_log

    marker = json.loads((out / "_runs" / "dcm" / f"{DAY}.json").read_text())
    assert marker["ok"] is True and marker["job_id"] == "4242"
    assert marker["preprocess_rc"] == 0 and marker["index_rc"] == 0 and marker["catalogue_rc"] == 0
    pre = marker["summaries"]["preprocess"]
    assert pre["files"] == 1 and pre["pages_kept"] > 0
    assert marker["summaries"]["index"]["totals"]["docs"] > 0
    for kind in ("preprocessed", "index", "catalogue"):
        assert (out / kind / "2026-02" / "03" / "_SUCCESS").is_file()
        assert marker["outputs"][kind] == str(out / kind / "2026-02" / "03")
    # the catalogue's CDXJ names the archives relative to INPUT_ROOT/warc
    cdxj = (out / "catalogue" / "2026-02" / "03" / "index.cdxj").read_text().splitlines()
    assert len(cdxj) == marker["summaries"]["catalogue"]["cdxj_lines"] >= pre["pages_kept"]
    assert all('"filename":"2026-02/03/' in line for line in cdxj)
    assert not (tmp_path / "node-scratch").exists()  # scratch cleaned up
