"""deploy/common/run-day.sh hands the take-down list at the output root to all three jobs (the
nightly path: Slurm's job script, spark-submit in local mode here): the host on the list is in
no published folder, and each job's summary in the marker counts what it left out. The same run
leaves its logs (Spark event logs, summaries, _errors.jsonl) beside the run log, and those and
the URL database it merged into are staged to iRODS (the recording fake) with their checksums."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

import pyarrow.parquet as pq
import pytest

from lib.catalogue.keys import surt_key
from lib.store import layout
from lib.warc.sample import HOSTS, write_sample_crawl
from tests.helpers_datacenters import SMALL_URLDB

ROOT = pathlib.Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 1, 15)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _urls(folder: pathlib.Path, pattern: str) -> set[str]:
    files = [p for p in folder.rglob(pattern) if not p.name.startswith("_")]  # side tables (_hosts.parquet)
    return {u for p in files for u in pq.read_table(p, columns=["url"]).column("url").to_pylist()}


@pytest.fixture(scope="module")
def nightly(tmp_path_factory, submit_jvm_archive) -> dict:
    """One run of the nightly script over a sample day with a take-down list at the root."""
    tmp_path = tmp_path_factory.mktemp("nightly")
    bucket, out = tmp_path / "bucket", tmp_path / "out"
    write_sample_crawl(str(bucket), DAY, files=1, pages_per_file=12)
    host = HOSTS["eng"][0]
    out.mkdir()
    (out / layout.EXCLUSIONS).write_text(
        json.dumps({"host": host, "date": "2026-01-14", "reason": "owner request"}) + "\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}
    env.update(
        DATE=DAY.isoformat(),
        INPUT_ROOT=str(bucket),
        OUTPUT_ROOT=str(out),
        DATA_CENTER="dc1",
        VENV=os.path.dirname(os.path.dirname(sys.executable)),
        SPARK_MASTER_NODE="127.0.0.1",
        SPARK_SUBMIT_ARGS="--master local[1]",
        SCRATCH_DIR=str(tmp_path / "scratch"),
        INDEX_ARGS="--min-group-docs 1",
        CATALOGUE_ARGS=SMALL_URLDB,
        SPARK_DRIVER_MEMORY="768m",
        **submit_jvm_archive,
    )
    proc = subprocess.run(
        ["bash", str(ROOT / "deploy/common/run-day.sh")], env=env, capture_output=True, text=True, timeout=540
    )
    log = next((out / "logs").glob("dailyslice-dc1-*.log")).read_text()
    assert proc.returncode == 0, log[-4000:]
    return {"out": out, "log": log, "host": host}


def test_the_nightly_script_applies_the_root_exclusion_list(nightly) -> None:
    out, log, host = nightly["out"], nightly["log"], nightly["host"]
    assert f"exclusion list {out / layout.EXCLUSIONS}" in log
    marker = json.loads((out / "_runs/dc1/2026-01-15.json").read_text())
    s = marker["summaries"]
    assert s["preprocess"]["excluded"] >= 2 and s["preprocess"]["exclusion_rules"] == 1
    assert s["index"]["excluded"] == {"rules": 1, "pages": 0, "edges": s["index"]["excluded"]["edges"]}
    assert s["catalogue"]["excluded"] == {"rules": 1, "captures": 0}
    pre, idx = out / "preprocessed/2026-01/15", out / "index/2026-01/15"
    kept = _urls(pre, "*.parquet") | _urls(idx, "metadata-*.parquet")
    assert kept and not any(f"//{host}/" in u for u in kept)
    cdxj = (out / "catalogue/2026-01/15/index.cdxj").read_text()
    assert cdxj and surt_key(f"https://{host}/").split(")")[0] + ")" not in cdxj
    edges = pq.read_table(idx / "graph" / "edges").to_pylist()
    assert edges and not any(f"//{host}/" in e["dst_url"] or f"//{host}/" in e["src_url"] for e in edges)


def _events(folder: pathlib.Path) -> list[dict]:
    """The events of one rolling event log folder (Spark 4's default: ``eventlog_v2_<app>/``
    with ``events_N_<app>.zstd`` parts and an ``appstatus_<app>`` file)."""
    import zstandard

    out = []
    for part in sorted(folder.glob("events_*"), key=lambda p: int(p.name.split("_")[1])):
        data = part.read_bytes()
        if part.suffix == ".zstd":
            data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
        out += [json.loads(line) for line in data.decode().splitlines()]
    return out


def _history_server(log_dir: pathlib.Path, tmp: pathlib.Path) -> list[dict]:
    """The applications Spark's own history server lists from ``log_dir``."""
    import pyspark

    port = _free_port()
    spark_class = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}
    env["SPARK_HISTORY_OPTS"] = (
        f"-Dspark.history.fs.logDirectory=file://{log_dir} -Dspark.history.ui.port={port} "
        "-Dspark.history.fs.update.interval=1s"
    )
    with open(tmp / "history.log", "wb") as out:
        proc = subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.history.HistoryServer"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp / "history.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/applications", timeout=5) as r:
                    apps = json.load(r)
                if apps:
                    return apps
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"the history server listed no applications: {(tmp / 'history.log').read_text()[-3000:]}")
    finally:
        proc.terminate()
        proc.wait(30)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_run_leaves_its_logs_and_they_and_the_url_database_stage_with_checksums(
    nightly, monkeypatch, tmp_path
) -> None:
    from lib.orchestration.stage_outputs import stage_day, stage_logs
    from tests.staging.fake_irods import FakeIrods, sha2

    out = nightly["out"]
    marker = json.loads((out / "_runs/dc1/2026-01-15.json").read_text())
    logs = pathlib.Path(marker["run_logs"])
    assert logs == pathlib.Path(marker["log"][: -len(".log")]) and logs.is_dir()
    # one event log for the night (one Spark application runs its three jobs), complete (its
    # status file is no longer .inprogress)
    apps = {}
    for folder in sorted((logs / "spark-events").iterdir()):
        app_id = folder.name.removeprefix("eventlog_v2_")
        assert (folder / f"appstatus_{app_id}").is_file()
        ev = _events(folder)
        assert ev[0]["Event"] == "SparkListenerLogStart" and ev[-1]["Event"] == "SparkListenerApplicationEnd"
        start = next(e for e in ev if e["Event"] == "SparkListenerApplicationStart")
        assert start["App ID"] == app_id
        apps[start["App Name"]] = folder.name
    assert set(apps) == {"dailyslice-day"}
    for job in ("preprocess", "index", "catalogue"):
        assert json.loads((logs / "summaries" / f"{job}.json").read_text()) == marker["summaries"][job]
    pre = pathlib.Path(marker["outputs"]["preprocessed"])
    assert (logs / "_errors.jsonl").read_bytes() == (pre / "_errors.jsonl").read_bytes()

    fake = FakeIrods()
    monkeypatch.setattr("lib.staging.open_session", lambda env_file=None: fake)
    spec = {"type": "irods", "collection": "/zone/dc1"}
    sub = {"job_id": marker["job_id"], "slurm_log": None}
    staged = {**stage_day(marker, spec, DAY), "logs": stage_logs(marker, sub, spec, DAY)}
    objects = {p: o for p, o in fake.objects.items()}
    prefix = f"/zone/dc1/logs/2026-01/15/{marker['job_id']}/"
    names = {p[len(prefix) :] for p in objects if p.startswith(prefix)}
    assert {"run.log", "marker.json", "_SUCCESS"} <= names
    assert {n.split("/")[1] for n in names if n.startswith("spark-events/")} == set(apps.values())
    assert {"summaries/preprocess.json", "_errors.jsonl"} <= names
    state = json.loads(objects["/zone/dc1/urldb/_state.json"]["data"])
    assert (
        state["days"] == [DAY.isoformat()]
        and state["table"] == json.loads((out / "urldb/_state.json").read_text())["table"]
    )
    table = {p for p in objects if p.startswith(f"/zone/dc1/urldb/{state['table']}/") and p.endswith(".parquet")}
    local = {str(p.relative_to(out / "urldb")) for p in (out / "urldb" / state["table"]).rglob("*.parquet")}
    assert table == {f"/zone/dc1/urldb/{r}" for r in local} and local
    # every staged object carries the server-registered checksum of the local file it came from
    for path, obj in objects.items():
        assert obj["checksum"] == sha2(obj["data"])
    for rel in local:
        assert objects[f"/zone/dc1/urldb/{rel}"]["data"] == (out / "urldb" / rel).read_bytes()
    assert objects[prefix + "run.log"]["data"] == pathlib.Path(marker["log"]).read_bytes()

    # a re-stage transfers nothing and leaves the same checksums
    fake.calls.clear()
    again = {**stage_day(marker, spec, DAY), "logs": stage_logs(marker, sub, spec, DAY)}
    assert [c for c in fake.calls if c[0] in ("put", "unlink")] == []
    assert all(r["copied"] == 0 for r in again.values()) and all(r["copied"] > 0 for r in staged.values())
    assert {p: o["checksum"] for p, o in fake.objects.items()} == {p: o["checksum"] for p, o in objects.items()}

    # Spark's history server replays the staged event logs (copied back out of the store)
    events = tmp_path / "restored-events"
    for path, obj in objects.items():
        if path.startswith(prefix + "spark-events/"):
            dest = events / path[len(prefix + "spark-events/") :]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(obj["data"])
    listed = _history_server(events, tmp_path)
    assert {a["name"] for a in listed} == set(apps)
    assert all(a["attempts"][0]["completed"] for a in listed)
