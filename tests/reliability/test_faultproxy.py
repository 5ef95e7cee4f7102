"""The fault-injecting proxy (tests/faultproxy.py) in front of the real S3 server: it forwards
requests unchanged and injects each fault it promises, counted."""

from __future__ import annotations

import io
import os
import time

import botocore.exceptions
import pytest

from lib.store import s3, storage
from tests.faultproxy import FaultProxy

pytest_plugins = ["tests.fixtures_seaweed"]
DATA = bytes(range(256)) * 4096  # 1 MiB


@pytest.fixture
def proxied(seaweed, seaweed_bucket, monkeypatch):
    seaweed.client().put_object(Bucket=seaweed_bucket, Key="obj", Body=DATA)
    host, port = seaweed.endpoint.rsplit("//", 1)[1].split(":")
    with FaultProxy(host, int(port)) as proxy:
        for k, v in seaweed.env().items():
            monkeypatch.setenv(k, v)
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        s3.reset()
        yield proxy, seaweed_bucket, seaweed
    s3.reset()


def _client(seaweed, proxy, attempts: int = 1, read_timeout: float = 10):
    return seaweed.client(
        proxy.endpoint, retries={"total_max_attempts": attempts, "mode": "standard"}, read_timeout=read_timeout
    )


def test_forwards_unchanged(proxied) -> None:
    proxy, bucket, seaweed = proxied
    c = _client(seaweed, proxy)
    c.put_object(Bucket=bucket, Key="dir/a", Body=b"hello")
    assert c.get_object(Bucket=bucket, Key="obj", Range="bytes=10-19")["Body"].read() == DATA[10:20]
    assert c.head_object(Bucket=bucket, Key="obj")["ContentLength"] == len(DATA)
    assert [o["Key"] for o in c.list_objects_v2(Bucket=bucket, Prefix="dir/")["Contents"]] == ["dir/a"]
    assert proxy.stats["forwarded"] == proxy.stats["requests"] == 4


def test_errors_are_s3_errors(proxied) -> None:
    proxy, bucket, seaweed = proxied
    proxy.set(error_share=1.0, error_statuses=(503,))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        _client(seaweed, proxy).get_object(Bucket=bucket, Key="obj")
    assert e.value.response["Error"]["Code"] == "SlowDown" and proxy.stats["errors"] == 1
    proxy.set(error_statuses=(500,))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        _client(seaweed, proxy).head_object(Bucket=bucket, Key="obj")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_cut_response_mid_object_resumes_in_our_stream(proxied) -> None:
    proxy, bucket, _ = proxied
    proxy.set(cut_response_after=300_000, cut_response_count=2)
    with storage.open_stream(f"s3://{bucket}/obj") as f:
        assert f.read() == DATA  # two cuts, two ranged resumes
    assert proxy.stats["cut_responses"] == 2


def test_range_streams_end_their_requests_and_reuse_one_connection(proxied) -> None:
    """A range's reader stops near its end: the stream asks for no more than TAIL past it and
    reads what is left of that request on close, so the next range's request goes out on the
    same connection (a dropped request would still be in flight at the server beside it)."""
    proxy, bucket, seaweed = proxied
    big = os.urandom(3 * storage.TAIL)
    seaweed.client().put_object(Bucket=bucket, Key="big", Body=big)
    uri = f"s3://{bucket}/big"
    before = proxy.stats
    for start, stop in ((0, 100_000), (storage.TAIL + 5, storage.TAIL + 300_000)):
        with io.BufferedReader(storage.S3Stream(uri, start, hint=stop), buffer_size=64 << 10) as f:
            assert f.read(stop - start) == big[start:stop]
    mid = proxy.stats
    assert mid["requests"] - before["requests"] == 2 and mid["connections"] - before["connections"] == 1
    with io.BufferedReader(storage.S3Stream(uri, 10, hint=1000), buffer_size=64 << 10) as f:
        assert f.read() == big[10:]  # past the first request's end: a second request goes on
    assert proxy.stats["requests"] - mid["requests"] == 2
    # a response cut inside the first request: the resume keeps its bound, and is read to its end
    mid = proxy.stats
    proxy.set(cut_response_after=50_000, cut_response_count=1)
    for start, stop in ((0, 100_000), (200_000, 300_000)):
        with io.BufferedReader(storage.S3Stream(uri, start, hint=stop), buffer_size=64 << 10) as f:
            assert f.read(stop - start) == big[start:stop]
    after = proxy.stats
    assert after["cut_responses"] == 1 and after["requests"] - mid["requests"] == 3
    # the pooled connection is cut; one new connection serves the resume and the next range
    assert after["connections"] - mid["connections"] == 1


def test_cut_upload_is_retried(proxied) -> None:
    proxy, bucket, seaweed = proxied
    proxy.set(cut_request_after=100_000, cut_request_count=1)
    _client(seaweed, proxy, attempts=3).put_object(Bucket=bucket, Key="up", Body=DATA)
    assert proxy.stats["cut_requests"] == 1
    assert seaweed.client().get_object(Bucket=bucket, Key="up")["Body"].read() == DATA


def test_latency_and_stall(proxied) -> None:
    proxy, bucket, seaweed = proxied
    proxy.set(latency=0.3)
    t0 = time.monotonic()
    _client(seaweed, proxy).head_object(Bucket=bucket, Key="obj")
    assert time.monotonic() - t0 >= 0.3
    proxy.set(latency=0.0, stall_count=1, stall_seconds=3)
    with pytest.raises(
        (
            botocore.exceptions.ReadTimeoutError,
            botocore.exceptions.ResponseStreamingError,
            botocore.exceptions.IncompleteReadError,
        )
    ):
        _client(seaweed, proxy, read_timeout=1).get_object(Bucket=bucket, Key="obj")["Body"].read()
    assert proxy.stats["stalls"] == 1
    assert os.environ["AWS_ENDPOINT_URL"] == proxy.endpoint
