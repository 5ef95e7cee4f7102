"""Filesystem and S3 staging targets (see :mod:`lib.staging`)."""

from __future__ import annotations

import os
import shutil

from botocore.exceptions import ClientError

from lib.store import atomic, s3, storage
from lib.staging.base import StagingError, checksum_file

#: S3 user metadata key holding the ``sha2:`` checksum of an object we uploaded.
S3_META_KEY = "sha256"


class FilesystemTarget:
    """A folder on a (shared) filesystem; copies are written to a temp name (:mod:`lib.store.atomic`),
    re-read and checked, synced and renamed."""

    def __init__(self, root: str):
        self.root = storage.local_path(root)

    def describe(self) -> str:
        return f"file://{os.path.abspath(self.root)}"

    def _path(self, rel: str) -> str:
        return os.path.join(self.root, *rel.split("/"))

    def list(self) -> set[str]:
        out = set()
        for dirpath, _, names in os.walk(self.root):
            for n in names:
                if not atomic.is_temp(n):  # an unfinished copy
                    out.add(os.path.relpath(os.path.join(dirpath, n), self.root).replace(os.sep, "/"))
        return out

    def checksum(self, rel: str) -> str | None:
        p = self._path(rel)
        return checksum_file(p) if os.path.isfile(p) else None

    def put(self, local: str, rel: str, checksum: str) -> None:
        dest = self._path(rel)
        # the long-term home, its marker copied last: synced so no copy looks complete but is not
        with atomic.atomic_path(dest, fsync=True) as tmp:
            shutil.copyfile(local, tmp)
            got = checksum_file(tmp)
            if got != checksum:
                raise StagingError(f"{dest}: checksum after copy {got} != source {checksum}")

    def delete(self, rel: str) -> None:
        p = self._path(rel)
        if os.path.exists(p):
            os.remove(p)


class S3Target:
    """An ``s3://bucket/prefix``; the checksum travels as object metadata and is checked
    against the uploaded size and metadata after each upload."""

    def __init__(self, uri: str):
        self.bucket, self.prefix = storage.split_s3(uri)
        self.prefix = self.prefix.strip("/")

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def list(self) -> set[str]:
        base = self.describe()
        return {f.uri[len(base) + 1 :] for f in storage.list_files(base)}

    def _head(self, rel: str) -> dict | None:
        try:
            return s3.client().head_object(Bucket=self.bucket, Key=self._key(rel))
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def checksum(self, rel: str) -> str | None:
        head = self._head(rel)
        return None if head is None else head.get("Metadata", {}).get(S3_META_KEY)

    def put(self, local: str, rel: str, checksum: str) -> None:
        s3.client().upload_file(local, self.bucket, self._key(rel), ExtraArgs={"Metadata": {S3_META_KEY: checksum}})
        head = self._head(rel)
        size = os.path.getsize(local)
        if head is None or int(head["ContentLength"]) != size or head.get("Metadata", {}).get(S3_META_KEY) != checksum:
            raise StagingError(f"s3://{self.bucket}/{self._key(rel)}: upload not verified (size {size})")

    def delete(self, rel: str) -> None:
        s3.client().delete_object(Bucket=self.bucket, Key=self._key(rel))
