"""The fault matrix: a small real day through preprocess -> index -> catalogue (``dailyslice day``,
the chain in one process, as the nightly job runs it) against a real S3 server (SeaweedFS), with
one fault injected per case, held against a clean run of the same day. A fault aimed at preprocess
fires while the day's log names preprocess as the running step; a case about one job alone (the
full staging disk, two runs of preprocess at once) starts that job as its own process.

Every case ends in one of two states, and the test says which it expects:

- **Complete**: every job exits 0, every output has ``_SUCCESS``, and the pages, captures,
  CIFF shards (decompressed bytes), metadata, web graph and CDXJ equal the clean run's;
- **Failed loudly**: a non-zero exit, a summary with ``ok: false`` and the reason, no
  ``_SUCCESS`` over partial output; the next run of the day completes, equal to the clean run.

Each case prints one ``MATRIX`` line (outcome, seconds, faults injected, retries seen); with
``DAILYSLICE_MATRIX_LOG=FILE`` the lines are also appended there (docs/reliability.md holds
the figures).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import threading
import time
import uuid
from typing import Any

import psutil
import pytest

from tests.faultproxy import FaultProxy
from tests.reliability import pipeline

pytest_plugins = ["tests.fixtures_seaweed"]
pytestmark = pytest.mark.slow


def record(case: str, outcome: str, seconds: float, **figures: Any) -> None:
    line = json.dumps({"case": case, "outcome": outcome, "seconds": round(seconds, 1), **figures}, sort_keys=True)
    print(f"MATRIX {line}")
    if os.environ.get("DAILYSLICE_MATRIX_LOG"):
        with open(os.environ["DAILYSLICE_MATRIX_LOG"], "a") as f:
            f.write(line + "\n")


@pytest.fixture(scope="module")
def clean(clean_day) -> pipeline.Published:
    """The clean run every case is held against (shared with the end-to-end test)."""
    record("clean", "complete", clean_day.seconds, jobs={r.stage: r.seconds for r in clean_day.runs})
    out = clean_day.published
    assert out.complete() and out.content["pages"] and out.content["ciff"] and out.content["graph"]["edges"]
    return out


@pytest.fixture
def day(seaweed, corpus):
    """A fresh bucket holding the day's archives; returns (client, bucket, root)."""
    c = seaweed.client()
    bucket = f"case-{uuid.uuid4().hex[:10]}"
    c.create_bucket(Bucket=bucket)
    return c, bucket, pipeline.upload_day(c, bucket, corpus)


@pytest.fixture
def proxy(seaweed):
    host, port = seaweed.endpoint.rsplit("//", 1)[1].split(":")
    with FaultProxy(host, int(port)) as p:
        yield p


def assert_complete(c, bucket: str, work: pathlib.Path, clean: pipeline.Published, runs) -> pipeline.Published:
    assert [r.rc for r in runs] == [0, 0, 0], runs[-1].tail()
    got = pipeline.published(c, bucket, work / "published")
    assert got.complete(), got.success
    assert pipeline.differences(clean, got) == []
    return got


def assert_no_partial_success(c, bucket: str, work: pathlib.Path, clean: pipeline.Published) -> pipeline.Published:
    """After a failure: an output holds ``_SUCCESS`` only when its content equals the clean
    run's (an earlier job of the day may have published before the failure)."""
    got = pipeline.published(c, bucket, work / "after-failure")
    parts = {
        "preprocessed": ("pages", "captures", "page_files"),
        "index": ("ciff", "metadata", "graph"),
        "catalogue": ("cdxj",),
    }
    for kind, ok in got.success.items():
        if ok:
            assert all(got.content[k] == clean.content[k] for k in parts[kind]), f"{kind}: _SUCCESS over other content"
    return got


def retries_of(runs) -> dict[str, int]:
    """The S3 retries and stream resumes the jobs' summaries counted, over the day."""
    return {k: sum(int((r.summary or {}).get("s3", {}).get(k, 0)) for r in runs) for k in ("retries", "resumes")}


# ---------------------------------------------------------------- (a) cuts
def test_a_connections_cut_mid_object_and_mid_upload(seaweed, day, proxy, clean, tmp_path) -> None:
    """Reads of the WARCs cut after 200 KB (the stream resumes with a ranged GET), uploads of
    the published files cut after 20 KB (botocore retries the PUT): the day completes."""
    c, bucket, root = day
    proxy.set(cut_response_after=200_000, cut_response_count=6, cut_request_after=20_000, cut_request_count=4)
    t0 = time.monotonic()
    runs = pipeline.run_day(root, tmp_path, pipeline.job_env({**seaweed.env(), "AWS_ENDPOINT_URL": proxy.endpoint}))
    assert_complete(c, bucket, tmp_path, clean, runs)
    stats = proxy.stats
    assert stats["cut_responses"] == 6 and stats["cut_requests"] == 4
    record("a", "complete", time.monotonic() - t0, faults=stats, s3=retries_of(runs))


# ---------------------------------------------------------------- (b) 503/500
def test_b_a_fifth_of_requests_fail_for_a_while(seaweed, day, proxy, clean, tmp_path) -> None:
    """20% of all S3 requests answered 503 SlowDown or 500 for the first 40 s of the day:
    adaptive retries absorb them and the day completes."""
    c, bucket, root = day
    proxy.set(error_share=0.2)
    timer = threading.Timer(40, proxy.clear)
    timer.start()
    t0 = time.monotonic()
    try:
        runs = pipeline.run_day(root, tmp_path, pipeline.job_env({**seaweed.env(), "AWS_ENDPOINT_URL": proxy.endpoint}))
    finally:
        timer.cancel()
    assert_complete(c, bucket, tmp_path, clean, runs)
    stats = proxy.stats
    assert stats["errors"] >= 3, stats  # the fault did fire
    record("b", "complete", time.monotonic() - t0, faults=stats, s3=retries_of(runs))


# ---------------------------------------------------------------- (d) worker killed
def _workers(proc: subprocess.Popen) -> list[psutil.Process]:
    """Spark's forked Python workers under a job process (children of the Python daemon)."""
    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    daemons = {p.pid for p in kids if _is_daemon(p)}
    return [p for p in kids if _is_daemon(p) and p.ppid() in daemons]


def _is_daemon(p: psutil.Process) -> bool:
    try:
        cmd = " ".join(p.cmdline())
    except psutil.Error:
        return False
    return "pydaemon" in cmd or "pyspark.daemon" in cmd


def test_d_python_worker_killed_mid_task(seaweed, day, clean, tmp_path) -> None:
    """A Python worker is SIGKILLed while preprocess tasks run; Spark re-runs the lost task
    (local mode with 3 attempts per task) and the day completes."""
    c, bucket, root = day
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    proc = pipeline.start_day(root, tmp_path, env, day_flags=("--master", "local[2,3]"))
    killed = 0
    deadline = time.monotonic() + 240
    while proc.poll() is None and not killed and time.monotonic() < deadline:
        busy = [w for w in _workers(proc) if w.cpu_times().user > 0.3]
        if busy and pipeline.step_running(tmp_path) == "preprocess":
            busy[0].kill()
            killed += 1
        time.sleep(0.1)
    runs = pipeline.finish_day(proc, tmp_path, t0)
    pre = runs[0]
    assert killed == 1, "no busy Python worker seen while preprocess ran: the fault did not fire"
    assert pre.stage == "preprocess" and pre.rc == 0, pre.tail()
    assert "Lost task" in pre.log  # Spark saw the task fail and ran it again
    assert_complete(c, bucket, tmp_path, clean, runs)
    record("d", "complete", time.monotonic() - t0, workers_killed=killed, s3=retries_of(runs))


# ---------------------------------------------------------------- (e) driver killed
def test_e_driver_killed_mid_day_then_next_attempt(seaweed, day, clean, tmp_path) -> None:
    """The preprocess driver (and its workers) SIGKILLed while tasks run, as when Slurm kills
    the job: exit non-zero, nothing published; the next attempt completes."""
    c, bucket, root = day
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    proc = pipeline.start_day(root, tmp_path / "attempt1", env)
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:
        if _workers(proc) and pipeline.step_running(tmp_path / "attempt1") == "preprocess":
            break
        time.sleep(0.1)
    assert proc.poll() is None, "the day ended before it could be killed"
    assert pipeline.step_running(tmp_path / "attempt1") == "preprocess", "killed after preprocess"
    os.killpg(proc.pid, signal.SIGKILL)
    (first,) = pipeline.finish_day(proc, tmp_path / "attempt1", t0)
    assert first.rc != 0 and first.summary is None
    after = assert_no_partial_success(c, bucket, tmp_path / "attempt1", clean)
    assert not any(after.keys.values()), after.keys  # nothing was published
    runs = pipeline.run_day(root, tmp_path / "attempt2", env)
    assert_complete(c, bucket, tmp_path / "attempt2", clean, runs)
    record("e", "failed loudly, next attempt complete", time.monotonic() - t0, first_exit=first.rc, s3=retries_of(runs))


# ---------------------------------------------------------------- (f) disk full
@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (root only): the staging disk that fills up."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_f_staging_disk_full(seaweed, day, clean, tmp_path, small_disk) -> None:
    """Preprocess stages its output on a disk that fills up: it fails loudly (exit 1, the
    reason in its summary), publishes nothing; the next run, with room, completes."""
    c, bucket, root = day
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    first = pipeline.run_job("preprocess", root, tmp_path / "full", env, "--staging", str(small_disk))
    assert first.rc == 1, first.tail()
    assert first.summary["ok"] is False and "No space left on device" in first.log
    after = assert_no_partial_success(c, bucket, tmp_path / "full", clean)
    assert not any(after.keys.values()), after.keys
    assert not os.listdir(small_disk)  # the failed run cleaned its staging folder
    runs = pipeline.run_day(root, tmp_path / "room", env)
    assert_complete(c, bucket, tmp_path / "room", clean, runs)
    record(
        "f",
        "failed loudly, next run complete",
        time.monotonic() - t0,
        error=first.summary.get("error", "")[:80],
        s3=retries_of(runs),
    )


# ---------------------------------------------------------------- (c) server restarted
def test_c_s3_server_restarted_mid_day(seaweed, day, clean, tmp_path) -> None:
    """The S3 server is killed (SIGKILL) while preprocess reads the archives and started again
    on the same data 2 s later (it answers again ~3-10 s after that): botocore's retries and
    the stream's ranged resumes carry the jobs over the gap, and the day completes."""
    c, bucket, root = day
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    proc = pipeline.start_day(root, tmp_path, env)
    deadline = time.monotonic() + 240
    while proc.poll() is None and not _workers(proc) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the day ended before the restart"
    assert pipeline.step_running(tmp_path) == "preprocess", "restarted after preprocess"
    down = time.monotonic()
    seaweed.restart(down_seconds=2, crash=True)
    gap = time.monotonic() - down
    runs = pipeline.finish_day(proc, tmp_path, t0)
    pre = runs[0]
    assert_complete(seaweed.client(), bucket, tmp_path, clean, runs)
    record(
        "c",
        "complete",
        time.monotonic() - t0,
        server_gap_seconds=round(gap, 1),
        read_errors=pre.summary["failed_by_reason"].get("read_error", 0),
        s3=retries_of(runs),
    )


# ---------------------------------------------------------------- (g) two runs at once
def test_g_two_runs_of_the_same_day_at_once(seaweed, day, clean, tmp_path) -> None:
    """Two runs of the day started together: each output has one lease, so the second
    preprocess refuses (exit 5, "another run of this day is publishing") and the first
    completes alone; a second run told to wait (``--wait-lock``) starts after the first ends
    and republishes the same day. Writes never interleave."""
    c, bucket, root = day
    env = pipeline.job_env(seaweed.env())
    t0 = time.monotonic()
    a = pipeline.start_day(root, tmp_path / "a", env)  # the whole day: its preprocess step holds the lease
    deadline = time.monotonic() + 60
    while not _holds_lease(c, bucket) and a.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    b = pipeline.run_job("preprocess", root, tmp_path / "b", env)
    runs = pipeline.finish_day(a, tmp_path / "a", t0)
    first = runs[0]
    assert first.stage == "preprocess" and first.rc == 0, first.tail()
    assert b.rc == 5 and b.summary["busy"] is True and "another run of this day is publishing" in b.log
    assert_complete(c, bucket, tmp_path / "a", clean, runs)

    # both at once again, the second waiting for the first: two complete runs in turn
    a2 = pipeline.start_job("preprocess", root, tmp_path / "a2", env)
    while not _holds_lease(c, bucket) and a2.poll() is None and time.monotonic() < deadline + 120:
        time.sleep(0.05)
    b2 = pipeline.run_job("preprocess", root, tmp_path / "b2", env, "--wait-lock", "300")
    r_a2 = pipeline.finish_job("preprocess", a2, tmp_path / "a2", t0)
    assert r_a2.rc == 0 and b2.rc == 0, b2.tail()
    assert b2.summary["waited_for_lock_seconds"] > 0
    got = pipeline.published(c, bucket, tmp_path / "after-both")
    assert got.success["preprocessed"] and got.content["pages"] == clean.content["pages"]
    assert got.content["captures"] == clean.content["captures"]
    record(
        "g",
        "second refused (exit 5) / waited; first complete",
        time.monotonic() - t0,
        waited_seconds=b2.summary["waited_for_lock_seconds"],
    )


def _holds_lease(c, bucket: str) -> bool:
    resp = c.list_objects_v2(Bucket=bucket, Prefix=f"{pipeline.PREFIX}/preprocessed/")
    return any(o["Key"].endswith(".lock") for o in resp.get("Contents", []))
