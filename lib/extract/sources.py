"""Reading byte ranges of one archive file, local, on S3 or behind an HTTP server (SWAP).

A task opens each archive once, learns its size (a range past the end is a truncated
download, refused before any byte is copied) and reads its ranges in offset order.
Ranges that follow each other (adjacent, or on S3 separated by a small gap) form one
*run*, read with one request: one ranged GET on S3, one sequential pass locally.
"""

from __future__ import annotations

import io
import os
import stat
from typing import BinaryIO, Iterable

from botocore.exceptions import BotoCoreError, ClientError

from lib.extract.lines import ExtractError, Item, check_real_path
from lib.store import httpread, s3, storage

#: On S3 a gap up to this size is read and discarded rather than starting a new GET.
S3_MAX_GAP = 256 * 1024


def plan_runs(items: Iterable[Item], max_gap: int = 0) -> list[list[Item]]:
    """Group offset-sorted ``items`` into runs read with one request each.

    A new run starts where the next range overlaps the previous one (a stream cannot go
    back) or begins more than ``max_gap`` bytes after its end.
    """
    runs: list[list[Item]] = []
    end = -1
    for it in items:
        if not runs or it.offset < end or it.offset - end > max_gap:
            runs.append([it])
        else:
            runs[-1].append(it)
        end = it.end
    return runs


class _LocalRun:
    """Sequential reader over ``[start, end)`` of an open file descriptor (no shared seek)."""

    def __init__(self, fd: int, start: int, end: int):
        self.fd, self.pos, self.end = fd, start, end

    def read(self, n: int) -> bytes:
        n = min(n, self.end - self.pos)
        if n <= 0:
            return b""
        data = os.pread(self.fd, n, self.pos)
        self.pos += len(data)
        return data

    def close(self) -> None:
        pass


class LocalSource:
    """An archive on a local or cluster file system."""

    is_local = True

    def __init__(self, path: str, real_root: str | tuple[str, ...] | None):
        self.uri = path
        check_real_path(path, real_root)
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise ExtractError("missing-file", f"{path}: no such file") from None
        except IsADirectoryError:
            raise ExtractError("missing-file", f"{path}: is a directory") from None
        except OSError as e:
            raise ExtractError("read-error", f"{path}: {e.strerror or e}") from None
        st = os.fstat(self.fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(self.fd)
            raise ExtractError("missing-file", f"{path}: not a regular file")
        self.size = st.st_size

    def head(self, offset: int, n: int) -> bytes:
        return os.pread(self.fd, n, offset)

    def open_run(self, start: int, end: int) -> _LocalRun:
        return _LocalRun(self.fd, start, end)

    def close(self) -> None:
        os.close(self.fd)


class S3Source:
    """An archive object on S3: one HEAD for its size, one ranged GET per run."""

    is_local = False

    def __init__(self, uri: str):
        self.uri = uri
        bucket, key = storage.split_s3(uri)
        try:
            self.size = int(s3.client().head_object(Bucket=bucket, Key=key)["ContentLength"])
        except ClientError as e:
            code = e.response.get("Error", {}).get("Code")
            if code in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
                raise ExtractError("missing-file", f"{uri}: no such object") from None
            raise ExtractError("read-error", f"{uri}: {code or e}") from None
        except BotoCoreError as e:
            raise ExtractError("read-error", f"{uri}: {e}") from None

    def head(self, offset: int, n: int) -> bytes:
        return storage.read_range(self.uri, offset, n)

    def open_run(self, start: int, end: int) -> BinaryIO:
        # S3Stream resumes with a new ranged GET from the current position if the
        # connection drops, so a long run survives transient network errors.
        return io.BufferedReader(storage.S3Stream(self.uri, start, end), buffer_size=1 << 20)

    def close(self) -> None:
        pass


class HttpSource:
    """An archive behind an HTTP server that honours ``Range`` (a SWAP server: any server of the
    network, redirects to the holder followed): one HEAD for its size, one ranged GET per run."""

    is_local = False

    def __init__(self, uri: str):
        self.uri = uri
        try:
            self.size = httpread.size(uri)
        except FileNotFoundError:
            raise ExtractError("missing-file", f"{uri}: no such file (HTTP 404)") from None
        except OSError as e:
            raise ExtractError("read-error", f"{uri}: {e}") from None

    def head(self, offset: int, n: int) -> bytes:
        return httpread.read_range(self.uri, offset, n)

    def open_run(self, start: int, end: int) -> BinaryIO:
        return io.BufferedReader(storage.Prefixed(b"", httpread.open_raw(self.uri, start), end - start), 1 << 20)

    def close(self) -> None:
        pass


def open_source(uri: str, real_root: str | tuple[str, ...] | None) -> LocalSource | S3Source | HttpSource:
    """Open the archive at ``uri`` (absolute path, ``s3://`` or ``http(s)://``); errors are
    :class:`ExtractError`."""
    if storage.is_s3(uri):
        return S3Source(uri)
    if httpread.is_http(uri):
        return HttpSource(uri)
    return LocalSource(uri, real_root)
