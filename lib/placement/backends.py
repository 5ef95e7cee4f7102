"""Slice roots: a local folder or an S3 prefix, seen through one small interface.

Paths inside a root are collection-relative with ``/`` separators. Writes never leave a
partial file under its final name: local files are written to a hidden temp name in the
same folder (``.NAME.swaptmp``), synced and renamed (:func:`lib.store.atomic.atomic_file`);
S3 uploads appear atomically on completion.
Temp names are never listed, so a crash mid-write cannot add a file to the collection.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from abc import ABC, abstractmethod
from typing import BinaryIO, Iterator

from lib.store import atomic, s3, storage

TMP_SUFFIX = ".swaptmp"
CHUNK = 1 << 20

FILE = "file"
DIR = "dir"


def is_temp(name: str) -> bool:
    """True for the hidden temp names of unfinished local writes."""
    return name.startswith(".") and name.endswith(TMP_SUFFIX)


def md5_stream(f: BinaryIO) -> str:
    h = hashlib.md5()
    for chunk in iter(lambda: f.read(CHUNK), b""):
        h.update(chunk)
    return h.hexdigest()


class Root(ABC):
    """One slice's storage root."""

    uri: str

    @abstractmethod
    def walk(self, prefix: str = "") -> Iterator[tuple[str, int]]:
        """``(relative path, size)`` of every file below ``prefix`` ("" = all), any order."""

    @abstractmethod
    def kind(self, rel: str) -> str | None:
        """``"file"``, ``"dir"`` (something is stored below it) or ``None``."""

    @abstractmethod
    def children(self, rel_dir: str) -> dict[str, str]:
        """Immediate entries of a directory ("" = the root): name -> ``"file"``/``"dir"``."""

    @abstractmethod
    def open(self, rel: str) -> BinaryIO:
        """A forward-only binary stream of the file."""

    @abstractmethod
    def write_stream(self, rel: str, src: BinaryIO) -> None:
        """Create or replace ``rel`` from a stream, atomically."""

    @abstractmethod
    def delete(self, rel: str) -> None:
        """Remove the file (missing is fine)."""

    def leftovers(self) -> list[str]:
        """Temp files of unfinished writes (only local roots have them)."""
        return []

    def uri_of(self, rel: str) -> str:
        return storage.join(self.uri, rel) if rel else self.uri

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.write_stream(rel, io.BytesIO(data))

    def read_bytes(self, rel: str) -> bytes:
        with self.open(rel) as f:
            return f.read()

    def digest(self, rel: str) -> str:
        """MD5 hex digest of the file's bytes (streamed)."""
        with self.open(rel) as f:
            return md5_stream(f)

    def copy_from(self, other: "Root", rel: str) -> None:
        """Copy ``rel`` from ``other`` to the same relative path here."""
        with other.open(rel) as f:
            self.write_stream(rel, f)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"


class LocalRoot(Root):
    def __init__(self, uri: str):
        self.uri = uri.rstrip("/") or "/"
        self.path = os.path.abspath(storage.local_path(uri))

    def _p(self, rel: str) -> str:
        return os.path.join(self.path, *rel.split("/")) if rel else self.path

    def walk(self, prefix: str = "") -> Iterator[tuple[str, int]]:
        top = self._p(prefix)
        if os.path.isfile(top):
            yield prefix, os.path.getsize(top)
            return
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, self.path).replace(os.sep, "/")
            for name in sorted(filenames):
                if is_temp(name):
                    continue
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                yield rel, os.path.getsize(os.path.join(dirpath, name))

    def leftovers(self) -> list[str]:
        found = []
        for dirpath, _, names in os.walk(self.path):
            rel_dir = os.path.relpath(dirpath, self.path).replace(os.sep, "/")
            found += [n if rel_dir == "." else f"{rel_dir}/{n}" for n in names if is_temp(n)]
        return sorted(found)

    def kind(self, rel: str) -> str | None:
        p = self._p(rel)
        if os.path.isfile(p):
            return FILE
        if os.path.isdir(p):
            return DIR
        return None

    def children(self, rel_dir: str) -> dict[str, str]:
        out: dict[str, str] = {}
        try:
            it = os.scandir(self._p(rel_dir))
        except (FileNotFoundError, NotADirectoryError):
            return out
        with it:
            for e in it:
                if not is_temp(e.name):
                    out[e.name] = DIR if e.is_dir() else FILE
        return out

    def open(self, rel: str) -> BinaryIO:
        return open(self._p(rel), "rb", buffering=CHUNK)

    def write_stream(self, rel: str, src: BinaryIO) -> None:
        final = self._p(rel)
        folder, name = os.path.split(final)
        # a fixed temp name: a re-run after a crash overwrites the leftover instead of adding one
        with atomic.atomic_file(final, fsync=True, tmp=os.path.join(folder, f".{name}{TMP_SUFFIX}")) as out:
            shutil.copyfileobj(src, out, CHUNK)

    def copy_from(self, other: Root, rel: str) -> None:
        if isinstance(other, LocalRoot):
            with open(other._p(rel), "rb") as f:
                self.write_stream(rel, f)
            return
        super().copy_from(other, rel)

    def delete(self, rel: str) -> None:
        p = self._p(rel)
        try:
            os.remove(p)
        except FileNotFoundError:
            pass
        # empty folders left behind would read as directories in the collision check
        d = os.path.dirname(p)
        while d != self.path and d.startswith(self.path + os.sep):
            try:
                os.rmdir(d)
            except OSError:
                break
            d = os.path.dirname(d)


class S3Root(Root):
    def __init__(self, uri: str):
        self.bucket, prefix = storage.split_s3(uri)
        self.prefix = prefix.strip("/")
        self.uri = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    def _key(self, rel: str) -> str:
        if not self.prefix:
            return rel
        return f"{self.prefix}/{rel}" if rel else self.prefix

    def _dir_prefix(self, rel_dir: str) -> str:
        k = self._key(rel_dir)
        return f"{k}/" if k else ""

    def _rel(self, key: str) -> str:
        return key[len(self.prefix) + 1 :] if self.prefix else key

    def walk(self, prefix: str = "") -> Iterator[tuple[str, int]]:
        if prefix and self.kind(prefix) == FILE:
            yield prefix, int(s3.client().head_object(Bucket=self.bucket, Key=self._key(prefix))["ContentLength"])
            return
        pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self._dir_prefix(prefix))
        for page in pages:
            for obj in page.get("Contents", []):
                if not obj["Key"].endswith("/"):  # console "folder" markers are not files
                    yield self._rel(obj["Key"]), int(obj["Size"])

    def kind(self, rel: str) -> str | None:
        c = s3.client()
        if storage.exists(f"s3://{self.bucket}/{self._key(rel)}"):
            return FILE
        resp = c.list_objects_v2(Bucket=self.bucket, Prefix=self._dir_prefix(rel), MaxKeys=1)
        return DIR if resp.get("KeyCount", 0) else None

    def children(self, rel_dir: str) -> dict[str, str]:
        base = self._dir_prefix(rel_dir)
        out: dict[str, str] = {}
        pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=base, Delimiter="/")
        for page in pages:
            for cp in page.get("CommonPrefixes", []):
                out[cp["Prefix"][len(base) :].rstrip("/")] = DIR
            for obj in page.get("Contents", []):
                name = obj["Key"][len(base) :]
                if name:
                    out[name] = FILE
        return out

    def open(self, rel: str) -> BinaryIO:
        return storage.open_stream(f"s3://{self.bucket}/{self._key(rel)}", buffer_size=CHUNK)

    def write_stream(self, rel: str, src: BinaryIO) -> None:
        s3.client().upload_fileobj(src, self.bucket, self._key(rel))

    def copy_from(self, other: Root, rel: str) -> None:
        if isinstance(other, S3Root):
            # server-side copy: the bytes never pass through this process
            s3.client().copy({"Bucket": other.bucket, "Key": other._key(rel)}, self.bucket, self._key(rel))
            return
        if isinstance(other, LocalRoot):
            s3.client().upload_file(other._p(rel), self.bucket, self._key(rel))
            return
        super().copy_from(other, rel)

    def delete(self, rel: str) -> None:
        s3.client().delete_object(Bucket=self.bucket, Key=self._key(rel))


def open_root(uri: str) -> Root:
    """The root for a local path, ``file://`` URI or ``s3://bucket/prefix``."""
    if storage.is_s3(uri):
        return S3Root(uri)
    return LocalRoot(uri)
