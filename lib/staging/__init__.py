"""Stage a finished output folder to its long-term home: a filesystem, S3 or iRODS.

Every target answers "what is the checksum of the file already there?" so a re-run
copies only what changed (a second staging of the same day copies nothing). The folder
never looks complete half-way: an old ``_SUCCESS`` is removed before anything changes,
stale files (from an earlier, different run) are removed, and ``_SUCCESS`` comes last.
Checksums use iRODS's format, ``sha2:`` + base64 of the SHA-256 digest, on every target.

``base`` (the error, the checksum, the target interface), ``targets`` (filesystem and S3),
``irods`` (iRODS), ``urldb_and_logs`` (what a scratch purge would lose: the URL database, run logs).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from lib.staging.base import StagingError, Target, checksum_file
from lib.staging.irods import IrodsTarget, open_session
from lib.staging.targets import FilesystemTarget, S3Target
from lib.store.layout import SUCCESS
from lib.store.storage import tree_files

log = logging.getLogger("dailyslice.staging")


@dataclass
class StageReport:
    target: str
    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    bytes_copied: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "copied": len(self.copied),
            "skipped": len(self.skipped),
            "deleted": len(self.deleted),
            "bytes_copied": self.bytes_copied,
            "files": sorted(self.copied),
        }


local_files = tree_files  # data first, _SUCCESS last


def stage_tree(local_dir: str, target: Target, require_success: bool = True) -> StageReport:
    """Mirror ``local_dir`` into ``target``, copying only files whose checksum differs.

    With ``require_success`` a folder without ``_SUCCESS`` (an unfinished job's output)
    is refused rather than published.
    """
    files = local_files(local_dir)
    if not files:
        raise StagingError(f"nothing to stage: {local_dir} is empty or missing")
    if require_success and files[-1] != SUCCESS:
        raise StagingError(f"{local_dir} has no {SUCCESS}: the job that wrote it did not finish")
    report = StageReport(target=target.describe())
    local_sums, changed, stale, present = _compare(local_dir, files, target)
    if not changed and not stale:
        report.skipped = files
        log.info("%s: all %d files already staged", report.target, len(files))
        return report
    if SUCCESS in present:
        target.delete(SUCCESS)  # from here until the end the folder is visibly incomplete
        if SUCCESS not in changed:
            changed.append(SUCCESS)
    for rel in sorted(changed, key=lambda r: (r == SUCCESS, r)):
        if rel == SUCCESS:
            for old in stale:
                target.delete(old)
                report.deleted.append(old)
        path = os.path.join(local_dir, rel)
        target.put(path, rel, local_sums[rel])
        report.copied.append(rel)
        report.bytes_copied += os.path.getsize(path)
    if SUCCESS not in changed:  # require_success=False and no marker: still drop stale files
        for old in stale:
            target.delete(old)
            report.deleted.append(old)
    report.skipped = [r for r in files if r not in report.copied]
    log.info(
        "%s: copied %d, skipped %d, deleted %d",
        report.target,
        len(report.copied),
        len(report.skipped),
        len(report.deleted),
    )
    return report


def _compare(local_dir: str, files: list[str], target: Target) -> tuple[dict[str, str], list[str], list[str], set[str]]:
    """Local checksums, the files whose copy at ``target`` is missing or differs, the
    target's files that are not local (stale) and all the target's files."""
    present = target.list()
    local_sums = {r: checksum_file(os.path.join(local_dir, r)) for r in files}
    changed = [r for r in files if r not in present or target.checksum(r) != local_sums[r]]
    return local_sums, changed, sorted(present - set(files)), present


def stage_snapshot(local_dir: str, target: Target, commit: str) -> StageReport:
    """Mirror ``local_dir`` into ``target`` where ``commit`` (a state file naming the other
    files) is the commit point: changed data first, then ``commit``, then the target's files
    that are no longer local are deleted, so the staged state never names a missing file."""
    files = local_files(local_dir)
    if commit not in files:
        raise StagingError(f"{local_dir} has no {commit}: nothing to commit")
    report = StageReport(target=target.describe())
    local_sums, changed, stale, _ = _compare(local_dir, files, target)
    for rel in sorted(changed, key=lambda r: (r == commit, r)):
        path = os.path.join(local_dir, rel)
        target.put(path, rel, local_sums[rel])
        report.copied.append(rel)
        report.bytes_copied += os.path.getsize(path)
    for old in stale:
        target.delete(old)
        report.deleted.append(old)
    report.skipped = [r for r in files if r not in report.copied]
    log.info(
        "%s: copied %d, skipped %d, deleted %d", report.target, len(report.copied), len(report.skipped), len(stale)
    )
    return report


def make_target(spec: dict[str, Any], subpath: str = "") -> Target:
    """Build a target from a config entry (``type``: filesystem, s3 or irods), rooted at
    its base location joined with ``subpath``."""
    kind = spec.get("type")
    if kind == "filesystem":
        return FilesystemTarget(os.path.join(spec["path"], subpath))
    if kind == "s3":
        return S3Target(spec["uri"].rstrip("/") + ("/" + subpath.strip("/") if subpath else ""))
    if kind == "irods":
        coll = spec["collection"].rstrip("/") + ("/" + subpath.strip("/") if subpath else "")
        return IrodsTarget(open_session(spec.get("env_file")), coll)
    raise ValueError(f"unknown staging target type {kind!r} (filesystem, s3 or irods)")
