"""Storage URIs: local paths, ``file://``, ``s3://bucket/prefix`` and, for reading, ``http(s)://``
(a SWAP server's ``/get/COLLECTION/PATH``: :mod:`lib.store.httpread`).

Everything that touches input or output goes through here so that jobs see one API:
list a folder recursively, open a file as a forward-only stream (never read whole),
read a byte range, write/upload, delete. S3 streams resume with a ranged GET from the
current position when a connection drops mid-file.

What each side is built on (``benchmarks/bench_storage.py`` measures both against
``pyarrow.fs``):

- Local files: ``pyarrow.fs.copy_files`` (multi-threaded) copies a finished folder to where it
  is published, in 0.58-0.99 of ``shutil.copytree``'s time for about the same CPU. The rest
  stays on the standard library, which the benchmark found as fast or faster: listing, where
  Arrow's recursive selector also follows symlinked directories (a link loop lists until
  ``ELOOP``) and ``os.walk`` does not; one file's existence or size (a ``stat`` against
  building Arrow's ``FileInfo``); a ranged read (``open``/``seek``/``read`` against opening an
  Arrow file per read); sequential streams, which the WARC readers take as Python file
  objects.
- S3: boto3, not ``pyarrow.fs.S3FileSystem``. Arrow's client gives no count of calls, HTTP
  attempts and retries (:mod:`lib.store.s3` counts them from botocore's events; the summaries
  report them and the fault tests assert them), and its file info has no ETag, the version
  that tells an identical re-upload from a changed input (``_inputs.json``). And its
  ``copy_files`` to S3 returned without an error while every upload had failed (SeaweedFS
  refused Arrow's multipart parts; the error only reached stderr, from a destructor): a
  publish must fail when a file is not there.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from dataclasses import dataclass
from typing import Iterable, Iterator, Protocol

import pyarrow.fs as pafs
from botocore.exceptions import BotoCoreError, ClientError

from lib.store import atomic, httpread, s3
from lib.store.layout import SUCCESS
from lib.store.locations import is_s3, join, local_path, normalize, split_s3  # boto3-free; also storage's API

_LOCAL = pafs.LocalFileSystem()


@dataclass(frozen=True)
class FileInfo:
    uri: str
    size: int
    #: what says the content changed without reading it: the S3 ETag, or a local file's mtime (ns)
    version: str | None = None


def _s3_list(uri: str) -> Iterator[FileInfo]:
    bucket, prefix = split_s3(uri)
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for obj in page.get("Contents", []):
            yield FileInfo(f"s3://{bucket}/{obj['Key']}", int(obj["Size"]), str(obj.get("ETag", "")).strip('"') or None)


def _local_info(path: str) -> FileInfo:
    st = os.stat(path)
    return FileInfo(normalize(path), st.st_size, f"mtime:{st.st_mtime_ns}")


def list_files(uri: str, suffixes: Iterable[str] | None = None) -> list[FileInfo]:
    """All files below ``uri`` (recursive), filtered by name suffix (any case), sorted by URI.

    A missing folder is an empty list, not an error: callers decide what "no input" means.
    """
    suffixes = tuple(suffixes) if suffixes else None
    if is_s3(uri):
        found = list(_s3_list(uri))
    elif httpread.is_http(uri):  # a SWAP collection's folder, through its servers' listing
        found = [FileInfo(f.uri, f.size, f.etag) for f in httpread.list_files(uri)]
    else:
        root = local_path(uri)
        found = []
        if os.path.isfile(root):
            found.append(_local_info(root))
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in filenames:
                found.append(_local_info(os.path.join(dirpath, name)))
    if suffixes:
        lower = tuple(x.lower() for x in suffixes)
        found = [f for f in found if f.uri.lower().endswith(lower)]  # crawlers write .ARC.GZ too
    return sorted(found, key=lambda f: f.uri)


#: bytes a stream may read past where its reader said it would stop (``hint``) within its first
#: request, and the most it reads to the end of a request on close rather than dropping it
TAIL = 1 << 20


class _Body(Protocol):
    """A GET response's body (botocore's StreamingBody), as S3Stream reads it."""

    def read(self, amt: int | None = None) -> bytes: ...

    def close(self) -> None: ...


class S3Stream(io.RawIOBase):
    """Forward-only reader over an S3 object that resumes with a ranged GET on errors.

    ``hint`` (a range's reader stops near it) bounds the first request to ``hint`` + :data:`TAIL`
    bytes and the reading goes on past it with a new request when needed. On close, a request
    with at most :data:`TAIL` bytes left is read to its end, so that its connection goes back to
    the pool: a task's next request reuses it, and a server never sees a dropped request still
    in flight beside the next one (``--s3-max-connections`` is exact as the server counts)."""

    def __init__(self, uri: str, start: int = 0, end: int | None = None, max_resumes: int = 5, hint: int | None = None):
        self.bucket, self.key = split_s3(uri)
        self.uri = uri
        self.pos = start
        self.end = end  # exclusive
        self.max_resumes = max_resumes
        self._body: _Body | None = None
        self._first = None if hint is None else hint + TAIL
        self._req_end: int | None = None  # where the open request's bytes end (None: the object's end)
        self._size: int | None = None  # the object's, once a response said it

    def readable(self) -> bool:
        return True

    def _open(self) -> None:
        stop = self.end
        if self._first is not None and self._first > self.pos:  # a resume within it keeps the bound
            stop = self._first if stop is None else min(stop, self._first)
        rng = f"bytes={self.pos}-" + ("" if stop is None else str(stop - 1))
        resp = s3.client().get_object(Bucket=self.bucket, Key=self.key, Range=rng)
        self._body = resp["Body"]
        total = str(resp.get("ContentRange") or "").rpartition("/")[2]  # "bytes 0-99/1234"
        if total.isdigit():
            self._size = int(total)
        self._req_end = stop if self._size is None or stop is None else min(stop, self._size)

    def readinto(self, b) -> int:
        want = len(b)
        if self.end is not None:
            want = min(want, self.end - self.pos)
        if want <= 0:
            return 0
        attempt = 0
        while True:
            try:
                if self._body is None:
                    if self._size is not None and self.pos >= self._size:
                        return 0
                    self._open()
                body = self._body
                assert body is not None  # _open sets it
                data = body.read(want)
                if data or self._req_end is None or self.pos < self._req_end:
                    break
                body.close()  # the first request's bytes are read: the rest with a new one
                self._body = None
                continue
            except ClientError as e:
                if e.response.get("Error", {}).get("Code") == "InvalidRange":
                    return 0
                if attempt == self.max_resumes:
                    raise
            except (BotoCoreError, OSError):
                if attempt == self.max_resumes:
                    raise
            attempt += 1
            self._body = None
            s3.note_resume()
        n = len(data)
        b[:n] = data
        self.pos += n
        return n

    def close(self) -> None:
        if self._body is not None:
            try:
                if self._req_end is not None and self._req_end - self.pos <= TAIL:
                    while self._body.read(1 << 16):
                        pass
                self._body.close()
            except Exception:
                pass
            self._body = None
        super().close()


def open_raw(uri: str, start: int = 0, hint: int | None = None) -> io.RawIOBase:
    """``uri`` unbuffered from byte ``start``, for reading forward; ``hint``: where the reader
    will stop, about (an S3 stream's first request asks for no more than :data:`TAIL` past it)."""
    if is_s3(uri):
        return S3Stream(uri, start, hint=hint)
    if httpread.is_http(uri):
        return httpread.open_raw(uri, start)  # type: ignore[return-value]  # read forward like a raw stream
    f = open(local_path(uri), "rb", buffering=0)
    if start:
        f.seek(start)
    return f


class Prefixed(io.RawIOBase):
    """``head``, then the rest of ``raw`` (at most ``limit`` bytes of it): bytes a search already
    read from a forward-only stream put back in front of it, or a zstd dictionary frame in front
    of one record. Closing it closes ``raw``."""

    def __init__(self, head: bytes, raw: io.RawIOBase | io.BufferedIOBase, limit: int | None = None):
        self._head = memoryview(head)
        self._raw = raw
        self._left = limit

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        if self._left is None:
            return self._raw.readinto(b) or 0
        if self._left <= 0:
            return 0
        n = self._raw.readinto(memoryview(b)[: self._left]) or 0
        self._left -= n
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_stream(uri: str, buffer_size: int = 1 << 20, start: int = 0) -> io.BufferedReader:
    """Open ``uri`` for sequential reading from byte ``start`` with a bounded buffer."""
    return io.BufferedReader(open_raw(uri, start), buffer_size=buffer_size)


def size(uri: str) -> int:
    if is_s3(uri):
        b, k = split_s3(uri)
        return int(s3.client().head_object(Bucket=b, Key=k)["ContentLength"])
    if httpread.is_http(uri):
        return httpread.size(uri)
    return os.path.getsize(local_path(uri))


def exists(uri: str) -> bool:
    if is_s3(uri):
        b, k = split_s3(uri)
        try:
            s3.client().head_object(Bucket=b, Key=k)
            return True
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise
    if httpread.is_http(uri):
        return httpread.exists(uri)
    return os.path.exists(local_path(uri))


def folder_exists(uri: str) -> bool:
    """Whether a folder (local) or prefix (S3: any object below ``prefix/``) exists, or ``uri``
    is itself a file or object. A mistyped root or date is told apart from an empty day."""
    if is_s3(uri):
        bucket, prefix = split_s3(uri)
        prefix = prefix.rstrip("/")
        resp = s3.client().list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/" if prefix else "", MaxKeys=1)
        return bool(resp.get("KeyCount") or resp.get("Contents")) or (bool(prefix) and exists(uri))
    if httpread.is_http(uri):
        return bool(list_files(uri)) or exists(uri)
    return os.path.exists(local_path(uri))


def read_range(uri: str, offset: int, length: int) -> bytes:
    """Exactly ``length`` bytes at ``offset``, or fewer if the file ends first."""
    if length <= 0:
        return b""
    if is_s3(uri):
        b, k = split_s3(uri)
        try:
            resp = s3.client().get_object(Bucket=b, Key=k, Range=f"bytes={offset}-{offset + length - 1}")
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") == "InvalidRange":
                return b""
            raise
        return resp["Body"].read()
    if httpread.is_http(uri):
        return httpread.read_range(uri, offset, length)
    with open(local_path(uri), "rb") as f:
        f.seek(offset)
        return f.read(length)


def read_bytes(uri: str) -> bytes:
    if is_s3(uri):
        b, k = split_s3(uri)
        return s3.client().get_object(Bucket=b, Key=k)["Body"].read()
    if httpread.is_http(uri):
        return httpread.read_bytes(uri)
    with open(local_path(uri), "rb") as f:
        return f.read()


def write_bytes(uri: str, data: bytes, fsync: bool = False) -> None:
    """Write a whole (small) file. Local writes are atomic (:mod:`lib.store.atomic`, which
    says when to pass ``fsync``); an S3 object appears whole when its upload completes."""
    if is_s3(uri):
        b, k = split_s3(uri)
        s3.client().put_object(Bucket=b, Key=k, Body=data)
        return
    atomic.write_bytes(local_path(uri), data, fsync=fsync)


def file_sha256(path: str) -> str:
    """sha256 (hex) of a local file's bytes, read in 1 MiB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(1 << 20):
            h.update(b)
    return h.hexdigest()


def tree_files(local_dir: str) -> list[str]:
    """Relative ``/`` paths of every file below ``local_dir``: data first, then nested
    ``_SUCCESS`` markers, the top-level ``_SUCCESS`` last (the order to publish in)."""
    out = []
    for dirpath, dirnames, names in os.walk(local_dir):
        dirnames.sort()
        for name in names:
            out.append(os.path.relpath(os.path.join(dirpath, name), local_dir).replace(os.sep, "/"))
    return sorted(out, key=lambda r: (r.rsplit("/", 1)[-1] == SUCCESS, r == SUCCESS, r))


def upload_tree(local_dir: str, dest: str) -> int:
    """Publish a finished local folder to ``dest`` (S3 or local) so that it never looks
    complete half-way: the old ``_SUCCESS`` goes first, stale files are removed, the new
    ``_SUCCESS`` comes last. Returns the number of files copied."""
    files = tree_files(local_dir)
    if not is_s3(dest):
        target = local_path(dest)
        tmp = target.rstrip("/") + ".publishing"
        shutil.rmtree(tmp, ignore_errors=True)
        # Arrow copies files and creates only the folders above them: the root and empty folders first
        for dirpath, _, _ in os.walk(local_dir):
            os.makedirs(os.path.join(tmp, os.path.relpath(dirpath, local_dir)), exist_ok=True)
        pafs.copy_files(
            os.path.abspath(local_dir),
            os.path.abspath(tmp),
            source_filesystem=_LOCAL,
            destination_filesystem=_LOCAL,
            use_threads=True,
        )
        for r in files:  # no marker inside the copy until the folder is in place
            if r.rsplit("/", 1)[-1] == SUCCESS:
                os.remove(os.path.join(tmp, r))
        commit_dir(tmp, target)
        if SUCCESS in files:
            write_bytes(join(target, SUCCESS), read_bytes(os.path.join(local_dir, SUCCESS)), fsync=True)
        return len(files)
    bucket, prefix = split_s3(dest)
    prefix = prefix.rstrip("/")
    c = s3.client()
    c.delete_object(Bucket=bucket, Key=f"{prefix}/{SUCCESS}")
    wanted = {f"{prefix}/{r}" for r in files}
    for old in _s3_list(dest):
        k = split_s3(old.uri)[1]
        if k not in wanted:
            c.delete_object(Bucket=bucket, Key=k)
    for r in files:
        c.upload_file(os.path.join(local_dir, r), bucket, f"{prefix}/{r}")
    return len(files)


def commit_dir(tmp_dir: str, final_dir: str) -> None:
    """Replace ``final_dir`` by ``tmp_dir`` (both local). A crash between the two renames
    leaves ``final_dir`` absent and the previous output in ``final_dir.old``: never a
    folder with ``_SUCCESS`` and partial content."""
    final_dir = final_dir.rstrip("/")
    old = final_dir + ".old"
    shutil.rmtree(old, ignore_errors=True)
    if os.path.exists(final_dir):
        success = os.path.join(final_dir, SUCCESS)
        if os.path.exists(success):
            os.remove(success)
        os.replace(final_dir, old)
    os.makedirs(os.path.dirname(os.path.abspath(final_dir)), exist_ok=True)
    os.replace(tmp_dir, final_dir)
    shutil.rmtree(old, ignore_errors=True)
