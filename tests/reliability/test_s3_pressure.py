"""S3 pressure: behind a throttling server (the fault proxy adds 100 ms to every answer and
answers 15% of requests ``503 SlowDown``) the preprocess job slows down instead of failing;
its retries are bounded (``S3_MAX_ATTEMPTS`` per call) and counted in its summary, exactly
the throttled requests; ``--s3-max-connections`` caps the archives it reads at once, tasks of
several archives (the default plan) included: a task reads one archive at a time."""

from __future__ import annotations

import json
import os
import time

import pytest

from tests.faultproxy import FaultProxy
from tests.reliability import pipeline

pytest_plugins = ["tests.fixtures_seaweed"]
pytestmark = pytest.mark.slow


def test_throttled_job_slows_down_and_counts_its_retries(seaweed, seaweed_bucket, corpus, tmp_path) -> None:
    c = seaweed.client()
    root = pipeline.upload_day(c, seaweed_bucket, corpus)
    host, port = seaweed.endpoint.rsplit("//", 1)[1].split(":")
    with FaultProxy(host, int(port)) as proxy:
        env = pipeline.job_env({**seaweed.env(), "AWS_ENDPOINT_URL": proxy.endpoint})
        proxy.set(latency=0.1)  # a slow server: the two task slots' reads overlap
        # one archive a task (not the default packing by bytes, which gives this small day 3 tasks): the
        # slots open many streams each, so that two requests in flight at once are seen for sure
        free = pipeline.run_job("preprocess", root, tmp_path / "free", env, "--task-bytes", "1")
        assert free.rc == 0, free.tail()
        assert free.summary["s3"]["retries"] == 0 and proxy.stats["max_in_flight"] == 2  # two task slots read at once
        before = proxy.stats
        # 15%: every client's adaptive retry mode throttles itself (17 retries here); at 30% each
        # one sat at botocore's floor of 0.5 requests/s and the run took twice as long, no more proven
        proxy.set(error_share=0.15, error_statuses=(503,))
        proxy.faults.stats["max_in_flight"] = 0
        t0 = time.monotonic()
        slow = pipeline.run_job("preprocess", root, tmp_path / "slow", env, "--s3-max-connections", "1")
        seconds = time.monotonic() - t0
        stats = proxy.stats
    assert slow.rc == 0, slow.tail()
    s3 = slow.summary["s3"]
    throttled = stats["errors"] - before["errors"]
    assert throttled >= 5 and s3["retries"] == throttled  # every 503 retried, and counted
    assert s3["retries"] <= s3["calls"] * (int(os.environ.get("S3_MAX_ATTEMPTS", "12")) - 1)
    assert stats["max_in_flight"] == 1  # one archive read at a time under the cap
    assert slow.summary["pages_kept"] == free.summary["pages_kept"] and slow.summary["failed"] == free.summary["failed"]
    print(
        "PRESSURE "
        + json.dumps(
            {
                "free_seconds": free.seconds,
                "throttled_seconds": round(seconds, 1),
                "retries": s3["retries"],
                "calls": s3["calls"],
                "requests": s3["requests"],
            }
        )
    )
