"""What every staging target shares: the error, the checksum format and the target interface.

Checksums use iRODS's format, ``sha2:`` + base64 of the SHA-256 digest, on every target.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Protocol

from lib.errors import DailysliceError


class StagingError(DailysliceError, RuntimeError):
    """A file could not be staged or failed verification."""


def checksum_file(path: str, chunk: int = 1 << 20) -> str:
    """``sha2:<base64 sha256>`` of a local file (the iRODS checksum format)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return "sha2:" + base64.b64encode(h.digest()).decode()


class Target(Protocol):
    """A place files are staged to; ``rel`` paths use ``/`` and are relative to its root."""

    def list(self) -> set[str]: ...
    def checksum(self, rel: str) -> str | None: ...
    def put(self, local: str, rel: str, checksum: str) -> None: ...
    def delete(self, rel: str) -> None: ...
    def describe(self) -> str: ...
