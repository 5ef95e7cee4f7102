"""S3 access shared by the driver and the executors.

One boto3 client per process (so one per executor), configured only through boto3's
standard chain: credentials from the environment/profile/instance role, the endpoint
from ``AWS_ENDPOINT_URL`` (MinIO, Ceph, a loopback test server). Retries use botocore's
adaptive mode, which backs off on throttling, 5xx and connection timeouts; attempts are
bounded (``S3_MAX_ATTEMPTS`` per call, default 12: with botocore's exponential backoff capped
at 20 s that rides out about a minute of an unreachable server, e.g. a restart) and counted:
:func:`counters` gives this process's API calls, HTTP attempts and retries, which the jobs
report in their summaries (``s3``). ``S3_MAX_CONNECTIONS`` caps the connections one process
(a driver, or one Python worker of an executor) keeps to the server (default 16).

Credentials that outlive a long wait: with ``S3_CREDENTIALS=refreshing`` every client (the
driver's and each executor's) takes its credentials from a provider botocore refreshes before
they expire: ``credential_process`` (with an ``Expiration``) in ``AWS_CONFIG_FILE``, web identity
(``AWS_WEB_IDENTITY_TOKEN_FILE`` + ``AWS_ROLE_ARN``) or container credentials
(``AWS_CONTAINER_CREDENTIALS_FULL_URI``). Static keys in the environment are then ignored (they
would win boto's chain and never change), and credentials that would never refresh are refused
at the first use with :class:`S3CredentialsError` rather than failing hours later with a 403.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import boto3
import botocore.session
from botocore.config import Config
from botocore.credentials import RefreshableCredentials

from lib.errors import DailysliceError

_lock = threading.Lock()
_clients: dict[int, Any] = {}
_counts = {"calls": 0, "requests": 0, "resumes": 0}
DEFAULT_MAX_ATTEMPTS = 12
DEFAULT_MAX_CONNECTIONS = 16  # botocore pools per client; threads beyond it open throwaway connections

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
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "S3_CREDENTIALS",
    "DAILYSLICE_S3_HOLD",
    "S3_MAX_ATTEMPTS",
    "S3_MAX_CONNECTIONS",
    "S3_CONNECT_TIMEOUT",
    "S3_READ_TIMEOUT",
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
                retries={"total_max_attempts": max_attempts(), "mode": "adaptive"},
                connect_timeout=float(os.environ.get("S3_CONNECT_TIMEOUT", "10")),
                read_timeout=float(os.environ.get("S3_READ_TIMEOUT", "60")),
                max_pool_connections=max(1, int(os.environ.get("S3_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS))),
                s3={"addressing_style": os.environ.get("S3_ADDRESSING_STYLE", "path")},
            )
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
            c = session().client("s3", config=cfg, region_name=region)
            c.meta.events.register("before-call.s3", _count_call)
            c.meta.events.register("before-send.s3", _count_request)  # once per HTTP attempt
            if os.environ.get(HOLD_ENV):
                c.meta.events.register("before-call.s3.GetObject", _hold)
            _clients[pid] = c
    return c


class S3CredentialsError(DailysliceError, RuntimeError):
    """Refreshing credentials were asked for (``S3_CREDENTIALS=refreshing``) and none were found."""


def refreshing() -> bool:
    """Whether this process must use refreshing credentials (``S3_CREDENTIALS=refreshing``)."""
    return os.environ.get("S3_CREDENTIALS", "").strip().lower() == "refreshing"


def session() -> boto3.session.Session:
    """A boto3 session on the standard chain; with :func:`refreshing`, without the environment's
    static keys, and only if what the chain finds is refreshed before it expires."""
    if not refreshing():
        return boto3.session.Session()
    core = botocore.session.get_session()
    core.get_component("credential_provider").remove("env")
    creds = core.get_credentials()
    if creds is None:
        raise S3CredentialsError(
            "S3_CREDENTIALS=refreshing, but no credentials found: set AWS_CONFIG_FILE (credential_process), "
            "AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN or AWS_CONTAINER_CREDENTIALS_FULL_URI"
        )
    if not isinstance(creds, RefreshableCredentials):
        raise S3CredentialsError(
            f"S3_CREDENTIALS=refreshing, but the credentials come from {creds.method!r}, which never refreshes "
            "(a credential_process must print an Expiration)"
        )
    return boto3.session.Session(botocore_session=core)


#: Test hook: while the file this names exists, an executor process's object reads (GetObject)
#: after its first wait (each waiting call appends its process id to ``<file>.reached``): an executor is
#: held mid-job with credentials in hand; the key-rotation test rotates keys meanwhile.
HOLD_ENV = "DAILYSLICE_S3_HOLD"
HOLD_MAX_SECONDS = 600
_held: dict[int, int] = {}  # reads per process id (a forked worker starts its own count)


def _hold(**_: Any) -> None:
    path = os.environ.get(HOLD_ENV, "")
    if "pyspark.worker" not in sys.modules:  # executors' Python workers only: the driver reads too (leases)
        return
    pid = os.getpid()
    with _lock:
        _held[pid] = _held.get(pid, 0) + 1
        first = _held[pid] == 1
    if first or not os.path.exists(path):
        return
    with open(path + ".reached", "a") as f:
        f.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + HOLD_MAX_SECONDS
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)


def max_attempts() -> int:
    """HTTP attempts per S3 call before it fails (``S3_MAX_ATTEMPTS``)."""
    return max(1, int(os.environ.get("S3_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS)))


def _count_call(**_: Any) -> None:
    with _lock:
        _counts["calls"] += 1


def _count_request(**_: Any) -> None:
    with _lock:
        _counts["requests"] += 1


def note_resume() -> None:
    """Count a stream resumed with a ranged GET after its connection dropped mid-object."""
    with _lock:
        _counts["resumes"] += 1


def counters() -> dict[str, int]:
    """This process's S3 API calls, HTTP attempts, retries (attempts beyond the first of
    each call: throttling, 5xx, timeouts, refused connections) and stream resumes since it
    started."""
    with _lock:
        calls, requests, resumes = _counts["calls"], _counts["requests"], _counts["resumes"]
    return {"calls": calls, "requests": requests, "retries": max(0, requests - calls), "resumes": resumes}


def counters_since(before: dict[str, int]) -> dict[str, int]:
    """:func:`counters` minus an earlier snapshot (one task's share in a reused worker)."""
    now = counters()
    return {k: now[k] - before.get(k, 0) for k in now}


def add_counters(total: dict[str, int], more: dict[str, int] | None) -> dict[str, int]:
    """``total`` + ``more`` per key (``more`` may be None or lack keys)."""
    for k, v in (more or {}).items():
        total[k] = total.get(k, 0) + int(v)
    return total


def reset() -> None:
    """Forget cached clients (tests that change the endpoint call this)."""
    with _lock:
        _clients.clear()


def s3_env() -> dict[str, str]:
    """The S3-related environment of this process, to forward to executors."""
    return {k: os.environ[k] for k in S3_ENV_VARS if k in os.environ}
