"""Run a real day through preprocess -> index -> catalogue as the nightly job does (each job its
own ``python jobs/X.py`` process, its own Spark driver and workers) against an S3 server, and
fingerprint what it published, for the end-to-end and fault tests.

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
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq

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


def start_job(stage: str, root: str, work: pathlib.Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    """Start one job; its output goes to ``work/<stage>.log``."""
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{stage}.json").unlink(missing_ok=True)
    log = open(work / f"{stage}.log", "w")
    try:
        return subprocess.Popen(
            job_argv(stage, root, work, *extra),
            env=env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    finally:
        log.close()


def finish_job(stage: str, proc: subprocess.Popen, work: pathlib.Path, t0: float, timeout: float = 600) -> JobRun:
    rc = proc.wait(timeout)
    summary_file = work / f"{stage}.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else None
    return JobRun(stage, rc, round(time.monotonic() - t0, 1), summary, (work / f"{stage}.log").read_text())


def run_job(stage: str, root: str, work: pathlib.Path, env: dict[str, str], *extra: str) -> JobRun:
    t0 = time.monotonic()
    return finish_job(stage, start_job(stage, root, work, env, *extra), work, t0)


def run_day(
    root: str, work: pathlib.Path, env: dict[str, str], extra: dict[str, list[str]] | None = None
) -> list[JobRun]:
    """The three jobs in order, each only after the one before it exited 0 (as run-day.sh)."""
    runs = []
    for stage in STAGES:
        r = run_job(stage, root, work, env, *(extra or {}).get(stage, []))
        runs.append(r)
        if r.rc != 0:
            break
    return runs


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
