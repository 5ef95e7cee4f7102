"""S3 access shared by the driver and the executors.

One boto3 client per process (so one per executor), configured only through boto3's
standard chain: credentials from the environment/profile/instance role, the endpoint
from ``AWS_ENDPOINT_URL`` (MinIO, Ceph, a loopback test server). Retries use botocore's
adaptive mode, which backs off on throttling, 5xx and connection timeouts.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import boto3
from botocore.config import Config

_lock = threading.Lock()
_clients: dict[int, Any] = {}

#: Environment variables that must reach executors for S3 to work there.
S3_ENV_VARS = (
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_PROFILE",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CA_BUNDLE",
)


def client() -> Any:
    """Return this process's S3 client, creating it on first use."""
    pid = os.getpid()  # a forked Python worker must not reuse its parent's connections
    c = _clients.get(pid)
    if c is not None:
        return c
    with _lock:
        c = _clients.get(pid)
        if c is None:
            cfg = Config(
                retries={"max_attempts": int(os.environ.get("S3_MAX_ATTEMPTS", "8")), "mode": "adaptive"},
                connect_timeout=float(os.environ.get("S3_CONNECT_TIMEOUT", "10")),
                read_timeout=float(os.environ.get("S3_READ_TIMEOUT", "60")),
                max_pool_connections=16,
                s3={"addressing_style": os.environ.get("S3_ADDRESSING_STYLE", "path")},
            )
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
            c = boto3.session.Session().client("s3", config=cfg, region_name=region)
            _clients[pid] = c
    return c


def reset() -> None:
    """Forget cached clients (tests that change the endpoint call this)."""
    with _lock:
        _clients.clear()


def s3_env() -> dict[str, str]:
    """The S3-related environment of this process, to forward to executors."""
    return {k: os.environ[k] for k in S3_ENV_VARS if k in os.environ}
