"""Preprocess -> index -> catalogue end to end against a real S3 server (SeaweedFS on
loopback, not moto's mock), the chain in one ``dailyslice day`` process as the nightly job runs
it, on a small real day; a second run of the day publishes the same content (idempotent). The first run is the
session's clean run of the day (``clean_day``, which the fault matrix holds its cases against)."""

from __future__ import annotations

import pytest

from tests.reliability import pipeline

pytest_plugins = ["tests.fixtures_seaweed"]


@pytest.mark.slow
def test_day_end_to_end_on_seaweedfs(clean_day, tmp_path) -> None:
    c, bucket, root, env, runs = clean_day.client, clean_day.bucket, clean_day.root, clean_day.env, clean_day.runs
    assert [r.rc for r in runs] == [0, 0, 0], runs[-1].tail()
    first = clean_day.published
    assert first.complete()
    pre = runs[0].summary
    assert pre["files"] == len(pipeline.DAY_FILES) and pre["pages_kept"] == len(first.content["pages"]) > 100
    assert first.content["ciff"] and len(first.content["cdxj"].splitlines()) > 300
    assert first.content["graph"]["edges"] and first.content["graph"]["hosts"]
    assert all(k.startswith("language=") or k.startswith("_") for k in first.keys["preprocessed"])
    assert first.keys["preprocessed"][-1] == "_stats.json" or "_SUCCESS" in first.keys["preprocessed"]

    again = pipeline.run_day(root, tmp_path / "run2", env)
    assert [r.rc for r in again] == [0, 0, 0], again[-1].tail()
    second = pipeline.published(c, bucket, tmp_path / "out2")
    assert second.complete() and pipeline.differences(first, second) == []
    # nothing left over, nothing doubled (Spark names the graph's part files anew each run)
    assert {k: len(v) for k, v in second.keys.items()} == {k: len(v) for k, v in first.keys.items()}
    assert second.keys["preprocessed"] == first.keys["preprocessed"]
