"""A job's output, assembled in a private folder and published in one step (:class:`WorkDir`)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
import uuid
from typing import Any

from lib.store import atomic, layout, storage


class WorkDir:
    """A job's output, assembled in a private folder and published in one step.

    Local or cluster-filesystem output is built in a sibling ``OUT.tmp-XXXXXXXX`` (same
    filesystem, so publishing is a rename; leftovers of crashed earlier runs are removed
    first). Output bound for S3 is built under ``staging`` (which must be a filesystem all
    executors share when they are not local) and uploaded with ``_SUCCESS`` last. Used as a
    context manager, an exception discards the folder, so a failed run publishes nothing.
    """

    def __init__(self, output: str, staging: str | None = None, *, cluster: bool = False, name: str = "job"):
        self.output = output
        self.to_s3 = storage.is_s3(output)
        if self.to_s3:
            if cluster and not staging:
                raise ValueError(
                    f"{name}: S3 output on a cluster needs --staging DIR on a file system all executors share"
                )
            base = staging or tempfile.mkdtemp(prefix=f"{name}-staging-")
            self.path = os.path.join(base, f"run-{uuid.uuid4().hex[:8]}")
        else:
            self.final = storage.local_path(output).rstrip("/")
            for stale in glob.glob(self.final + ".tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
            self.path = f"{self.final}.tmp-{uuid.uuid4().hex[:8]}"
        os.makedirs(self.path)

    def __enter__(self) -> "WorkDir":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.discard()

    def publish(self, marker: Any = "") -> None:
        """Write ``_SUCCESS`` (``marker`` as text, or JSON) last, then swap in or upload."""
        text = marker if isinstance(marker, str) else json.dumps(marker, sort_keys=True, default=str)
        atomic.write_bytes(os.path.join(self.path, layout.SUCCESS), text.encode(), fsync=True)
        if self.to_s3:
            storage.upload_tree(self.path, self.output)
        else:
            storage.commit_dir(self.path, self.final)

    def discard(self) -> None:
        """Remove the folder (a no-op after a local publish, which moved it into place)."""
        shutil.rmtree(self.path, ignore_errors=True)
