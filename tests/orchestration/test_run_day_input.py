"""deploy/common/run-day.sh over a day whose input folder does not exist: preprocess exits 2
before any Spark connects, nothing is indexed or published, the failure marker says
``"input": "missing"`` and the script exits 2 (the DAG's check names it)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_missing_input_day_fails_with_its_own_code(tmp_path) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}
    env.update(
        DATE="2026-01-15",
        INPUT_ROOT=str(tmp_path / "no-such-bucket"),
        OUTPUT_ROOT=str(out),
        VENV=os.path.dirname(os.path.dirname(sys.executable)),
        SPARK_MASTER_NODE="127.0.0.1",
        SPARK_MASTER_PORT="1",
        DATA_CENTER="dc1",
        SCRATCH_DIR=str(tmp_path / "scratch"),
    )
    proc = subprocess.run(
        ["bash", str(ROOT / "deploy/common/run-day.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    log = next((out / "logs").glob("dailyslice-dc1-2026-01-15-*.log")).read_text()
    assert proc.returncode == 2, log[-3000:]
    marker = json.loads((out / "_runs/dc1/2026-01-15.failed.json").read_text())
    assert marker["ok"] is False and marker["input"] == "missing" and marker["preprocess_rc"] == 2
    assert marker["index_rc"] is None and marker["catalogue_rc"] is None
    assert "does not exist" in log and "index exit not run" in log
    assert not (out / "preprocessed").exists() and not (out / "_runs/dc1/2026-01-15.json").exists()


def test_refreshing_credentials_that_do_not_refresh_stop_the_job_before_spark(tmp_path) -> None:
    """S3_CREDENTIALS=refreshing with only static keys (exported, and in the config file): the
    job drops the exported ones, finds nothing that refreshes and exits 2 naming why."""
    out = tmp_path / "out"
    (tmp_path / "aws-config").write_text("[default]\naws_access_key_id = a\naws_secret_access_key = b\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}
    env.update(
        DATE="2026-01-15",
        INPUT_ROOT=str(tmp_path / "bucket"),
        OUTPUT_ROOT=str(out),
        VENV=os.path.dirname(os.path.dirname(sys.executable)),
        SPARK_MASTER_NODE="127.0.0.1",
        DATA_CENTER="dc1",
        SCRATCH_DIR=str(tmp_path / "scratch"),
        S3_CREDENTIALS="refreshing",
        AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_ACCESS_KEY_ID="exported-once",
        AWS_SECRET_ACCESS_KEY="secret",
    )
    proc = subprocess.run(
        ["bash", str(ROOT / "deploy/common/run-day.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    log = next((out / "logs").glob("dailyslice-dc1-2026-01-15-*.log")).read_text()
    assert proc.returncode == 2, log[-3000:]
    assert "credentials come from 'config-file', which never refreshes" in log
    assert "S3_CREDENTIALS=refreshing, but no refreshing S3 credentials" in proc.stderr + log
    assert "spark-submit" not in log and not list((out / "_runs").rglob("*.json"))  # no marker: nothing ran
