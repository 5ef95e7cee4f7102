"""One run at a time per output: a lease object beside a job's output folder.

A job that publishes ``OUT`` first creates ``OUT.lock`` (an S3 object written with
``If-None-Match: *``, or a local file opened with ``O_EXCL``): of two runs of the same day
started at once exactly one gets it; the other waits (``--wait-lock SECONDS``) or refuses,
so their writes never interleave. The lease names its holder (host, pid, job) and an expiry
that a heartbeat thread pushes forward every third of the TTL while the job runs; it is
deleted when the job ends. A lease whose holder died (SIGKILL, a node lost) is taken over
once it expires, or at once when its holder was a process of this host that no longer
exists. Taking over is itself a conditional create (``OUT.lock.takeover-OWNER``): of the runs
that find the same stale lease one deletes it, after reading it again, and all of them then
compete for the lease with the same condition, so they still leave one holder.

The same lease guards shared state that is not a day's output (the URL database, the purge):
:class:`Lease` takes the sentence a refused run prints (``busy``) and logs once that it waits.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import Any

from botocore.exceptions import ClientError

from lib.errors import DailysliceError
from lib.store import s3, storage

log = logging.getLogger("dailyslice.lease")
DEFAULT_TTL = 120.0  # seconds; DAILYSLICE_LOCK_TTL overrides
SUFFIX = ".lock"


class Busy(DailysliceError, RuntimeError):
    """Another run holds the output's lease."""


def lock_uri(output: str) -> str:
    return output.rstrip("/") + SUFFIX


def _ttl() -> float:
    return float(os.environ.get("DAILYSLICE_LOCK_TTL", DEFAULT_TTL))


def create_exclusive(uri: str, data: bytes, fsync: bool = False) -> bool:
    """Create ``uri`` only if it does not exist (S3 ``If-None-Match: *``, local ``O_EXCL``);
    False when it does. Never overwrites: the building block of leases and of versioned state."""
    if storage.is_s3(uri):
        b, k = storage.split_s3(uri)
        try:
            s3.client().put_object(Bucket=b, Key=k, Body=data, IfNoneMatch="*")
            return True
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return False
            raise
    path = storage.local_path(uri)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        if fsync:
            f.flush()
            os.fsync(f.fileno())
    return True


def read_json(uri: str) -> dict[str, Any] | None:
    """The JSON object at ``uri``; None when it is absent or not JSON (torn)."""
    try:
        return json.loads(storage.read_bytes(uri))
    except (FileNotFoundError, ValueError):
        return None
    except ClientError as e:
        if e.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
            return None
        raise


def _delete(uri: str) -> None:
    if storage.is_s3(uri):
        b, k = storage.split_s3(uri)
        s3.client().delete_object(Bucket=b, Key=k)
    else:
        try:
            os.remove(storage.local_path(uri))
        except FileNotFoundError:
            pass


def _dead(holder: dict[str, Any]) -> bool:
    """Whether a lease's holder is gone: expired, or a vanished process of this host."""
    if time.time() > float(holder.get("expires", 0)):
        return True
    if holder.get("host") == socket.gethostname():
        try:
            os.kill(int(holder.get("pid", 0)), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, ValueError):
            return False
    return False


def describe(holder: dict[str, Any]) -> str:
    """A lease holder in one phrase: job, process, host and since when."""
    since = time.strftime("%H:%M:%S", time.gmtime(float(holder.get("started", 0))))
    return f"{holder.get('job')} (pid {holder.get('pid')} on {holder.get('host')}, since {since} UTC)"


class Lease:
    """``with Lease(output, job, wait=0): ...``: hold ``output``'s lease for the block (module doc)."""

    def __init__(
        self,
        output: str,
        job: str,
        wait: float = 0.0,
        ttl: float | None = None,
        busy: str = "another run of this day is publishing; not interleaving with it",
    ):
        self.uri = lock_uri(output)
        self.job = job
        self.wait = wait
        self.busy = busy
        self.ttl = ttl or _ttl()
        self.owner = uuid.uuid4().hex
        self.waited = 0.0
        self.started = time.time()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def _doc(self) -> bytes:
        return json.dumps(
            {
                "owner": self.owner,
                "job": self.job,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "started": self.started,
                "expires": time.time() + self.ttl,
            }
        ).encode()

    def acquire(self) -> "Lease":
        t0 = time.monotonic()
        logged = False
        while True:
            if create_exclusive(self.uri, self._doc()):
                break
            holder = read_json(self.uri)
            if holder is None:
                continue  # released between our attempt and the read: try again
            if _dead(holder):
                self._take_over(holder)
                continue
            if time.monotonic() - t0 >= self.wait:
                waited = f", waited {time.monotonic() - t0:.0f} s" if self.wait else ""
                raise Busy(f"{self.uri} is held by {describe(holder)}{waited}: {self.busy}")
            if not logged:
                log.warning("%s is held by %s: waiting up to %.0f s", self.uri, describe(holder), self.wait)
                logged = True
            time.sleep(min(2.0, max(0.2, self.wait / 20)))
        self.waited = round(time.monotonic() - t0, 1)
        self._beat = threading.Thread(target=self._heartbeat, name="lease-heartbeat", daemon=True)
        self._beat.start()
        return self

    def _take_over(self, holder: dict[str, Any]) -> None:
        """Delete ``holder``'s stale lease, unless another run is already doing so (module doc)."""
        mark = f"{self.uri}.takeover-{holder.get('owner')}"
        if not create_exclusive(mark, self._doc()):
            other = read_json(mark)
            if other is not None and _dead(other):  # a taker that died while taking over
                _delete(mark)
            return
        try:
            again = read_json(self.uri)
            if again and again.get("owner") == holder.get("owner"):
                log.warning("%s: taking over the stale lease of %s", self.uri, describe(holder))
                _delete(self.uri)
        finally:
            _delete(mark)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                holder = read_json(self.uri)
                if not holder or holder.get("owner") != self.owner:
                    log.error("%s: lease lost to %s", self.uri, (holder or {}).get("job"))
                    return
                storage.write_bytes(self.uri, self._doc())
            except Exception as e:  # a missed beat is not fatal: the lease lasts a TTL
                log.warning("%s: lease heartbeat failed: %s", self.uri, e)

    def release(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(5)
        try:
            holder = read_json(self.uri)
            if holder and holder.get("owner") == self.owner:
                _delete(self.uri)
        except Exception as e:  # the lease then expires by itself
            log.warning("%s: could not release the lease: %s", self.uri, e)

    def __enter__(self) -> "Lease":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()
