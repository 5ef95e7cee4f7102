"""iRODS staging target on python-irodsclient.

Uploads register the server-side checksum (``REG_CHKSUM_KW``); the server then re-reads
the stored replica and verifies it against the registered checksum (``VERIFY_CHKSUM_KW``),
and the registered value must equal the local file's. A data object that is already
there with the local file's checksum is skipped, so re-runs transfer nothing.
"""

from __future__ import annotations

import os
import posixpath
from typing import Any

from lib.staging.base import StagingError


def open_session(env_file: str | None = None) -> Any:
    """An ``iRODSSession`` from an irods_environment.json (default: ``IRODS_ENVIRONMENT_FILE``
    or ``~/.irods/irods_environment.json``), authenticated as ``iinit`` left it."""
    from irods.session import iRODSSession

    path = os.path.expanduser(env_file or os.environ.get("IRODS_ENVIRONMENT_FILE") or "~/.irods/irods_environment.json")
    if not os.path.isfile(path):
        raise StagingError(f"iRODS environment file not found: {path} (run iinit or set IRODS_ENVIRONMENT_FILE)")
    return iRODSSession(irods_env_file=path)


class IrodsTarget:
    """A collection; ``session`` is an ``iRODSSession`` (or anything with its interface)."""

    def __init__(self, session: Any, collection: str):
        self.session = session
        self.collection = collection.rstrip("/")

    def describe(self) -> str:
        return f"irods://{self.collection}"

    def _path(self, rel: str) -> str:
        return posixpath.join(self.collection, rel)

    def list(self) -> set[str]:
        if not self.session.collections.exists(self.collection):
            return set()
        out = set()
        for coll, _, objs in self.session.collections.get(self.collection).walk():
            for obj in objs:
                out.add(posixpath.relpath(posixpath.join(coll.path, obj.name), self.collection))
        return out

    def checksum(self, rel: str) -> str | None:
        path = self._path(rel)
        if not self.session.data_objects.exists(path):
            return None
        registered = self.session.data_objects.get(path).checksum
        # an object put without a checksum gets one computed (and registered) now
        return registered or self.session.data_objects.chksum(path) or None

    def put(self, local: str, rel: str, checksum: str) -> None:
        from irods.keywords import FORCE_FLAG_KW, REG_CHKSUM_KW, VERIFY_CHKSUM_KW

        path = self._path(rel)
        parent = posixpath.dirname(path)
        if not self.session.collections.exists(parent):
            self.session.collections.create(parent, recurse=True)
        self.session.data_objects.put(local, path, **{REG_CHKSUM_KW: "", FORCE_FLAG_KW: ""})
        try:
            self.session.data_objects.chksum(path, **{VERIFY_CHKSUM_KW: ""})
        except Exception as e:  # the server raises when the replica does not match
            raise StagingError(f"irods {path}: server-side checksum verification failed: {e}") from e
        registered = self.session.data_objects.get(path).checksum
        if registered and not registered.startswith("sha2:"):
            raise StagingError(
                f"irods {path}: the server registered {registered!r}, not a SHA-256 checksum; "
                "set the server's default_hash_scheme to SHA256 (the iRODS default)"
            )
        if registered != checksum:
            raise StagingError(f"irods {path}: registered checksum {registered} != local {checksum}")

    def close(self) -> None:
        """Release the session's connections."""
        self.session.cleanup()

    def delete(self, rel: str) -> None:
        path = self._path(rel)
        if self.session.data_objects.exists(path):
            self.session.data_objects.unlink(path, force=True)
