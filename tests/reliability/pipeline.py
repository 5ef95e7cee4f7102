"""Run a real day through preprocess -> index -> catalogue as the nightly job does (``python
jobs/day.py``, the chain in one process and one Spark application, :mod:`lib.orchestration.chain`)
against an S3 server, and fingerprint what it published, for the end-to-end and fault tests.
A fault aimed at one step watches the day's log for the step's name (:func:`step_running`); a
test of one job alone still starts it as its own process (:func:`run_job`).

The jobs get the server through their environment (``AWS_ENDPOINT_URL`` and keys), which
their Spark workers inherit; the test process's own S3 client (moto's endpoint) is not used.
The fingerprint reads the published objects with a client of its own: page and capture rows
(without ``warc_file``, which names where the archives were read), every CIFF shard's
decompressed bytes, the metadata rows, the web graph's rows and the CDXJ text.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq

from lib.orchestration.marker import Marker, failed_path
from lib.store import layout

REPO = pathlib.Path(__file__).resolve().parents[2]
DATE = dt.date(2026, 1, 15)
DAY = layout.day_suffix(DATE)
PREFIX = "crawl"
STAGES = ("preprocess", "index", "catalogue")
#: a small real day: an ARC file (ids derived), WARCs of four crawlers (tests/../shared/corpus)
DAY_FILES = (
    "aut/example.arc.gz",
    "ipwb/sample-1.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "resiliparse/warcfile.warc.gz",
)


def upload_day(client: Any, bucket: str, corpus: pathlib.Path, files: tuple[str, ...] = DAY_FILES) -> str:
    """Put the day's archives under ``s3://bucket/crawl/warc/YYYY-MM/DD/``; returns the root."""
    for rel in files:
        client.upload_file(str(corpus / rel), bucket, f"{PREFIX}/{layout.WARC}/{DAY}/{rel}")
    return f"s3://{bucket}/{PREFIX}"


def job_env(s3_env: dict[str, str], extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a job subprocess, with the S3 server's settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK_", "AWS_"))}
    # the driver JVM maps Spark's classes from the run's archive once the session has one
    # (tests/conftest.py job_jvm_archive, which names its folder in DAILYSLICE_CACHE_DIR)
    jvm_cache = "on" if os.environ.get("DAILYSLICE_CACHE_DIR") else "off"
    env.update(PYSPARK_PYTHON=sys.executable, DAILYSLICE_JVM_CACHE=jvm_cache, PYTHONUNBUFFERED="1", **s3_env)
    env["PYTHONPATH"] = str(REPO)  # this checkout's lib/, in the driver and its workers (not the venv's install)
    env.update(extra or {})
    return env


@dataclass
class JobRun:
    stage: str
    rc: int
    seconds: float
    summary: dict[str, Any] | None
    log: str

    def tail(self, n: int = 4000) -> str:
        return f"{self.stage} exit {self.rc}:\n{self.log[-n:]}"


def job_argv(stage: str, root: str, work: pathlib.Path, *extra: str) -> list[str]:
    argv = [
        sys.executable,
        str(REPO / "jobs" / f"{stage}.py"),
        "--date",
        DATE.isoformat(),
        "--root",
        root,
        "--master",
        "local[2]",
        "--staging",
        str(work / f"stage-{stage}"),
        "--summary",
        str(work / f"{stage}.json"),
    ]
    if stage == "catalogue":
        # a new URL database per run: 2 key-space partitions, not 16, for a day of ~440 captures
        # (tasks of a few rows each; partitioning is tests/catalogue's subject, not these tests')
        argv += ["--urldb", str(work / "urldb"), "--url-partitions", "2"]
    return argv + list(extra)


def _start(argv: list[str], env: dict[str, str], log_file: pathlib.Path) -> subprocess.Popen:
    """``argv`` in its own session (a test kills its process group), its output to ``log_file``."""
    with open(log_file, "w") as log:
        return subprocess.Popen(argv, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def start_job(stage: str, root: str, work: pathlib.Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    """Start one job; its output goes to ``work/<stage>.log``."""
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{stage}.json").unlink(missing_ok=True)
    return _start(job_argv(stage, root, work, *extra), env, work / f"{stage}.log")


def finish_job(stage: str, proc: subprocess.Popen, work: pathlib.Path, t0: float, timeout: float = 600) -> JobRun:
    rc = proc.wait(timeout)
    summary_file = work / f"{stage}.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else None
    return JobRun(stage, rc, round(time.monotonic() - t0, 1), summary, (work / f"{stage}.log").read_text())


def run_job(stage: str, root: str, work: pathlib.Path, env: dict[str, str], *extra: str) -> JobRun:
    t0 = time.monotonic()
    return finish_job(stage, start_job(stage, root, work, env, *extra), work, t0)


#: each step's flags beside the chain's own: the same settings run_job gives each job
STEP_FLAGS = {
    # no matching across days, as a job given an S3 --root alone (where no signature store can live):
    # one day is these tests' subject
    "index": ["--dup-days", "0"],
    # 2 key-space partitions, not 16 (run_job's reason)
    "catalogue": ["--url-partitions", "2"],
}


def day_argv(
    root: str, work: pathlib.Path, extra: dict[str, list[str]] | None = None, day_flags: tuple[str, ...] = ()
) -> list[str]:
    """``jobs/day.py`` over the day at ``root`` (read from and published to it), its marker, logs and
    summaries under ``work``; ``extra`` adds flags to a step by its name (``--STEP-args``), ``day_flags``
    to the day's own (``--master``: the one Spark application's, given last, so it wins)."""
    argv = [
        sys.executable,
        str(REPO / "jobs" / "day.py"),
        "--date",
        DATE.isoformat(),
        "--input-root",
        root,
        "--output-root",
        root,
        "--master",
        "local[2]",
        "--marker",
        str(work / "marker.json"),
        "--run-logs",
        str(work),
        "--urldb",
        str(work / "urldb"),
        # the day names OUTPUT_ROOT/signatures (on S3 here, which the index refuses); unused with --dup-days 0
        "--signatures",
        str(work / "signatures"),
        # the catalogue as the job alone runs it: the link database's night is test_chain_links.py's subject
        # (and would have to live on the cluster filesystem, not under this S3 root)
        "--no-links",
    ]
    for stage in STAGES:
        flags = ["--staging", str(work / f"stage-{stage}"), *STEP_FLAGS.get(stage, []), *(extra or {}).get(stage, [])]
        argv.append(f"--{stage}-args={shlex.join(flags)}")
    return argv + list(day_flags)


def start_day(
    root: str,
    work: pathlib.Path,
    env: dict[str, str],
    extra: dict[str, list[str]] | None = None,
    day_flags: tuple[str, ...] = (),
) -> subprocess.Popen:
    """Start the day's chain (:func:`day_argv`); its output goes to ``work/day.log``."""
    work.mkdir(parents=True, exist_ok=True)
    for old in (work / "marker.json", pathlib.Path(failed_path(str(work / "marker.json")))):
        old.unlink(missing_ok=True)
    return _start(day_argv(root, work, extra, day_flags), env, work / "day.log")


def step_running(work: pathlib.Path) -> str | None:
    """The step the day started last (its ``day: TIME STEP`` line in ``work/day.log``), or None."""
    try:
        text = (work / "day.log").read_text(errors="replace")
    except FileNotFoundError:
        return None
    started = re.findall(r"^day: \S+Z (\w+)$", text, re.M)
    return started[-1] if started else None


def finish_day(proc: subprocess.Popen, work: pathlib.Path, t0: float, timeout: float = 600) -> list[JobRun]:
    """Wait for the day; one run per step that ran, in order, as :func:`run_day` returns them: each
    with its exit code (the marker's), its summary and the day's whole log. A day killed before it
    wrote a marker is one run named ``day`` with the process's exit code and no summary."""
    rc = proc.wait(timeout)
    seconds = round(time.monotonic() - t0, 1)
    log = (work / "day.log").read_text(errors="replace")
    marker_file = next(
        (p for p in (work / "marker.json", pathlib.Path(failed_path(str(work / "marker.json")))) if p.exists()), None
    )
    if marker_file is None:
        return [JobRun("day", rc, seconds, None, log)]
    marker = Marker.from_dict(json.loads(marker_file.read_text()))
    runs = []
    for stage in STAGES:
        code = getattr(marker, f"{stage}_rc")
        if code is None:
            break
        summary_file = work / "summaries" / f"{stage}.json"
        summary = json.loads(summary_file.read_text()) if summary_file.exists() else None
        runs.append(JobRun(stage, code, round(float((summary or {}).get("seconds", seconds)), 1), summary, log))
    return runs


def run_day(
    root: str, work: pathlib.Path, env: dict[str, str], extra: dict[str, list[str]] | None = None
) -> list[JobRun]:
    """The day's chain in one process (``dailyslice day``): each step only after the one before it
    exited 0, as the night runs them; the runs of the steps that ran (:func:`finish_day`)."""
    t0 = time.monotonic()
    return finish_day(start_day(root, work, env, extra), work, t0)


def _download(client: Any, bucket: str, prefix: str, dest: pathlib.Path) -> list[str]:
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix) + 1 :]
            keys.append(rel)
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(client.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read())
    return sorted(keys)


def _rows(paths: list[pathlib.Path], drop: tuple[str, ...] = ("warc_file",)) -> list[str]:
    out = []
    for p in paths:
        t = pq.read_table(p)
        t = t.drop_columns([c for c in drop if c in t.column_names])
        out += [json.dumps(r, sort_keys=True, default=str) for r in t.to_pylist()]
    return sorted(out)


@dataclass
class Published:
    """What one day published on S3 (module doc)."""

    keys: dict[str, list[str]]
    success: dict[str, bool]
    content: dict[str, Any] = field(default_factory=dict)

    def complete(self) -> bool:
        return all(self.success.get(s) for s in ("preprocessed", "index", "catalogue"))


def published(client: Any, bucket: str, dest: pathlib.Path) -> Published:
    kinds = (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE)
    keys = {k: _download(client, bucket, f"{PREFIX}/{k}/{DAY}", dest / k) for k in kinds}
    success = {k: layout.SUCCESS in keys[k] for k in kinds}
    pre, idx, cat = (dest / k for k in kinds)
    content: dict[str, Any] = {
        "pages": _rows(sorted(pre.glob("language=*/*.parquet"))),
        "captures": _rows(sorted(pre.glob(f"{layout.CAPTURES}/*.parquet"))),
        "page_files": sorted(str(p.relative_to(pre)) for p in pre.rglob("*.parquet")),
        "metadata": {str(p.relative_to(idx)): _rows([p]) for p in sorted(idx.rglob(layout.METADATA_GLOB))},
        "graph": {
            d.name: _rows(sorted(d.rglob("*.parquet")), ()) for d in sorted((idx / "graph").glob("*")) if d.is_dir()
        },
        "cdxj": (cat / "index.cdxj").read_text() if (cat / "index.cdxj").exists() else None,
    }
    ciff = {}
    for p in sorted(idx.rglob(layout.INDEX_GLOB)):
        with gzip.open(p, "rb") as f:
            ciff[str(p.relative_to(idx))] = hashlib.sha256(f.read()).hexdigest()
    content["ciff"] = ciff
    return Published(keys, success, content)


def differences(a: Published, b: Published) -> list[str]:
    """Which parts of two complete days differ (empty: the same day)."""
    return [k for k in a.content if a.content[k] != b.content[k]]


def summary_retries(run: JobRun) -> dict[str, Any]:
    """The S3 retry counters a job's summary reports (empty when it reports none)."""
    return dict((run.summary or {}).get("s3", {}))


def read_json(data: bytes) -> Any:
    return json.load(io.BytesIO(data))
