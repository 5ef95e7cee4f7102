"""Stage what a day's outputs do not hold but a scratch purge would lose: the URL database
(cross-day state) and each run's logs.

Staged layout below the data center's staging root (docs/orchestration.md, "Staged layout")::

    urldb/_state.json                       the current version only (history trimmed to it)
    urldb/vNNNNNN/part=P/*.parquet          that version's table
    urldb/days/date=YYYY-MM-DD/part=P/...   the edits of every merged day (a replay rebuilds any version)
    urldb/digests/date=YYYY-MM-DD/...       the merged days' captures by payload digest
    logs/YYYY-MM/DD/JOBID/                  run.log, slurm.out, marker.json, summaries/*.json,
                                            _errors.jsonl, spark-events/<app id>, _SUCCESS last

Both are assembled as a folder of symbolic links (and the few files written here) in a
temporary folder, then mirrored with the checksum-verified stagers of :mod:`lib.staging`:
a re-stage of the same state or the same run copies nothing.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from typing import Any

from lib.placement.slice_publish import publish_tree
from lib.staging import StagingError, make_target, stage_snapshot, stage_tree
from lib.store import layout, versioned

log = logging.getLogger("dailyslice.staging")

STATE = "_state.json"  # lib.catalogue.urldb.STATE: its commit point, and the staged copy's
LOGS = "logs"
#: attempts at a consistent snapshot while merges move the database on
SNAPSHOT_ATTEMPTS = 3


def _link_tree(src: str, dest: str, rel: str) -> list[str]:
    """Symlink every file below ``src/rel`` into ``dest/rel``; returns the relative paths."""
    out = []
    base = os.path.join(src, rel)
    for dirpath, dirnames, names in os.walk(base):
        dirnames.sort()
        for name in sorted(names):
            if name.endswith((".tmp", ".crc")) or name.startswith("."):
                continue  # Hadoop's checksum side files and unfinished writes are not data
            full = os.path.join(dirpath, name)
            r = os.path.relpath(full, src)
            os.makedirs(os.path.join(dest, os.path.dirname(r)), exist_ok=True)
            os.symlink(os.path.abspath(full), os.path.join(dest, r))
            out.append(r)
    return out


def _read_state(db: str) -> tuple[bytes, dict[str, Any]]:
    """The database's newest committed state (its pointer, followed along the compare-and-swap
    chain: lib.store.versioned), and that state as bytes to compare with a later read."""
    state = versioned.read(db, {})
    return json.dumps(state, sort_keys=True).encode(), state


def snapshot_urldb(db: str, dest: str) -> dict[str, Any]:
    """Lay out the database's current version, its days' edits and digests, and a state file
    naming only that version in ``dest``; returns the state staged. The kept older versions
    are left out: a replay of the staged edits rebuilds them."""
    raw, state = _read_state(db)
    if not state.get("table"):
        raise StagingError(f"{db}/{STATE} names no table version: nothing merged yet")
    _link_tree(db, dest, state["table"])
    for day in state["days"]:
        for side in ("days", "digests"):
            if os.path.isdir(os.path.join(db, side, f"date={day}")):
                _link_tree(db, dest, os.path.join(side, f"date={day}"))
    current = [h for h in state.get("history", []) if h.get("table") == state["table"]]
    staged = {**state, "history": current}
    with open(os.path.join(dest, STATE), "wb") as f:
        f.write(json.dumps(staged, indent=1, sort_keys=True).encode())
    # the state after the links were made: a merge in between may have replaced a day's edits
    if _read_state(db)[0] != raw:
        raise _Moved(state["version"])
    return staged


class _Moved(StagingError):
    """The database's state changed while a snapshot was taken."""


def stage_urldb(db: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Stage the URL database at ``db`` to ``<target>/urldb`` (module doc); the state file is
    copied after every file it names, and files of versions no longer current are removed
    after it. A merge that moves the database on while the snapshot is taken makes it start
    again (at most ``SNAPSHOT_ATTEMPTS`` times); a file a merge removes mid-copy likewise."""
    if not os.path.isfile(os.path.join(db, STATE)):
        return {"status": "no URL database", "urldb": db}
    for attempt in range(1, SNAPSHOT_ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="urldb-stage-") as tmp:
            try:
                state = snapshot_urldb(db, tmp)
                report = _stage_folder(tmp, spec, layout.URLDB, commit=STATE)
            except (_Moved, FileNotFoundError) as e:
                log.warning("%s changed while staging (attempt %d): %s", db, attempt, e)
                continue
        report.update(version=state["version"], days=len(state["days"]))
        return report
    raise StagingError(f"{db}: merges kept changing the database; not staged after {SNAPSHOT_ATTEMPTS} attempts")


def stage_run_logs(
    run_logs: str | None, files: dict[str, str | None], spec: dict[str, Any], day_suffix: str, job_id: str
) -> dict[str, Any]:
    """Stage a run's log folder (``run_logs``: spark-events/, summaries/, _errors.jsonl) plus
    ``files`` (staged name -> local path; missing ones are left out: a job that died before its
    run log existed) to ``<target>/logs/YYYY-MM/DD/JOBID``, ``_SUCCESS`` last."""
    with tempfile.TemporaryDirectory(prefix="logs-stage-") as tmp:
        if run_logs and os.path.isdir(run_logs):
            _link_tree(run_logs, tmp, "")
        for name, path in sorted(files.items()):
            if path and os.path.isfile(path):
                os.symlink(os.path.abspath(path), os.path.join(tmp, name))
        open(os.path.join(tmp, layout.SUCCESS), "wb").close()
        return _stage_folder(tmp, spec, f"{LOGS}/{day_suffix}/{job_id}")


def _stage_folder(local: str, spec: dict[str, Any], sub: str, commit: str | None = None) -> dict[str, Any]:
    if spec["type"] == "slices":
        if commit:  # the slices take finished folders: the marker stands for the commit point
            open(os.path.join(local, layout.SUCCESS), "wb").close()
        return publish_tree(local, spec["config"], sub)
    target = make_target(spec, sub)
    try:
        report = stage_snapshot(local, target, commit) if commit else stage_tree(local, target)
    finally:
        getattr(target, "close", lambda: None)()
    return report.as_dict()
