"""deploy/common/run-day.sh hands the take-down list at the output root to all three jobs (the
nightly path: Slurm's job script, spark-submit in local mode here): the host on the list is in
no published folder, and each job's summary in the marker counts what it left out."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from lib.catalogue.keys import surt_key
from lib.store import layout
from lib.warc.sample import HOSTS, write_sample_crawl

ROOT = pathlib.Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 1, 15)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _urls(folder: pathlib.Path, pattern: str) -> set[str]:
    return {u for p in folder.rglob(pattern) for u in pq.read_table(p, columns=["url"]).column("url").to_pylist()}


def test_the_nightly_script_applies_the_root_exclusion_list(tmp_path) -> None:
    bucket, out = tmp_path / "bucket", tmp_path / "out"
    write_sample_crawl(str(bucket), DAY, files=1, pages_per_file=12)
    host = HOSTS["eng"][0]
    out.mkdir()
    (out / layout.EXCLUSIONS).write_text(json.dumps({"host": host, "date": "2026-01-14", "reason": "owner request"}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}
    env.update(DATE=DAY.isoformat(), INPUT_ROOT=str(bucket), OUTPUT_ROOT=str(out), DATA_CENTER="dc1",
               VENV=os.path.dirname(os.path.dirname(sys.executable)), SPARK_MASTER_NODE="127.0.0.1",
               SPARK_SUBMIT_ARGS="--master local[1]", SCRATCH_DIR=str(tmp_path / "scratch"),
               INDEX_ARGS="--min-group-docs 1", SPARK_DRIVER_MEMORY="768m")
    proc = subprocess.run(["bash", str(ROOT / "deploy/common/run-day.sh")], env=env, capture_output=True,
                          text=True, timeout=540)
    log = next((out / "logs").glob("dailyslice-dc1-*.log")).read_text()
    assert proc.returncode == 0, log[-4000:]
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
