"""A small JSON state that is replaced by compare-and-swap: a version is never overwritten.

The state of a folder (``FOLDER/_state.json``, e.g. the URL database's) carries an integer
``version``. Replacing it is a commit *after* the version that was read::

    FOLDER/_state/after-v000007.json    the state that replaced version 7 (created once, never rewritten)
    FOLDER/_state.json                  a pointer to a recent state: where readers start

A commit creates ``after-vN.json`` only if it does not exist (S3 ``If-None-Match: *``, a local
``O_EXCL`` open, :func:`lib.store.lease.create_exclusive`): of two runs that both read version
N, exactly one commits; the other gets :class:`Conflict` and has changed nothing a reader
sees. Nothing relies on a rename being atomic on S3. The pointer is then rewritten; it may lag
(a crash right after the commit, or a slow writer), so :func:`read` follows the chain of
``after-`` files from it to the newest state. The chain files are small and kept: deleting
one would let a run that read its version long ago commit after it a second time.
"""

from __future__ import annotations

import json
import os
from typing import Any

from lib.errors import DailysliceError
from lib.store import storage
from lib.store.lease import create_exclusive, read_json

POINTER = "_state.json"
CHAIN = "_state"


class Conflict(DailysliceError, RuntimeError):
    """Another run committed after the version this run read: nothing was committed."""


def _after(folder: str, version: int) -> str:
    return storage.join(folder, CHAIN, f"after-v{version:06d}.json")


def read(folder: str, empty: dict[str, Any]) -> dict[str, Any]:
    """The newest committed state of ``folder`` (``empty``, version 0, before the first commit)."""
    state = read_json(storage.join(folder, POINTER)) or dict(empty, version=0)
    while (nxt := read_json(_after(folder, int(state["version"])))) is not None:
        state = nxt
    return state


def superseded(folder: str, version: int) -> bool:
    """Whether a state followed ``version`` (one existence check: a reader holding that state
    knows it is still the newest without reading it again)."""
    return storage.exists(_after(folder, version))


def commit(folder: str, read_version: int, state: dict[str, Any]) -> None:
    """Make ``state`` (whose ``version`` is above ``read_version``) the state that follows
    ``read_version``; :class:`Conflict` when another run already committed after it."""
    if int(state["version"]) <= read_version:
        raise ValueError(f"state version {state['version']} does not follow {read_version}")
    data = json.dumps(state, indent=1, sort_keys=True).encode()
    if not storage.is_s3(folder):
        os.makedirs(os.path.join(storage.local_path(folder), CHAIN), exist_ok=True)
    if not create_exclusive(_after(folder, read_version), data, fsync=True):
        winner = read_json(_after(folder, read_version)) or {}
        raise Conflict(
            f"{folder}: version {read_version} was already followed by version {winner.get('version')} "
            "(another run committed first; this run's result was not committed)"
        )
    storage.write_bytes(storage.join(folder, POINTER), data, fsync=True)
