"""``ROOT/shared/auxiliary/logs.csv``: one line per update of a root, for subscribers to poll.

The design's "log file of updates. Potentially useful for notification". Every writer appends
a line when it changes what a root holds: a day published (``day``), a sub-index published
(``subindex``), a model or filter added (``model``, ``filter``), a plugin evaluated
(``plugin``), a purge (``purge``). Columns::

    seq,time,kind,name,version,detail

``seq`` counts from 1 and never repeats: a subscriber remembers the last one it saw and asks
for the lines after it (the service's ``GET /feed?after=N``). Appending is atomic between
processes: the writer holds an exclusive ``flock`` on the file while it reads the last
``seq`` and appends its line with one ``write`` (``O_APPEND``), then syncs; a reader that
catches a line half-written (no newline yet) leaves it out, as :func:`read` does.

Local roots only: S3 has neither append nor locks, so on an ``s3://`` root :func:`record`
logs a warning and writes nothing (the nightly run's stage-out copies the local root's file).
"""

from __future__ import annotations

import csv
import datetime as dt
import fcntl
import io
import logging
import os
from dataclasses import asdict, dataclass
from typing import Iterator

from lib.store import layout
from lib.store.locations import is_s3, local_path

log = logging.getLogger("dailyslice.updates")

HEADER = ("seq", "time", "kind", "name", "version", "detail")
KINDS = ("day", "subindex", "model", "filter", "plugin", "purge")
_TAIL = 4096  # bytes read back from the end to find the last seq (a line is far shorter)


@dataclass(frozen=True)
class Update:
    """One line of ``logs.csv``."""

    seq: int
    time: str
    kind: str
    name: str
    version: str = ""
    detail: str = ""

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def path(root: str) -> str:
    """``ROOT/shared/auxiliary/logs.csv``."""
    return layout.auxiliary_path(root, layout.LOGS_CSV)


def _line(fields: tuple[object, ...]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(fields)
    return buf.getvalue().encode()


def _last_seq(fd: int) -> int:
    end = os.lseek(fd, 0, os.SEEK_END)
    if end == 0:
        return 0
    start = max(0, end - _TAIL)
    tail = os.pread(fd, end - start, start).decode("utf-8", "replace")
    lines = [ln for ln in tail.split("\n") if ln.strip()]
    if not lines or not tail.endswith("\n"):  # a torn last line (a writer killed mid-write): it never counted
        lines = lines[:-1] if lines else lines
    for ln in reversed(lines):
        head = ln.split(",", 1)[0]
        if head.isdigit():
            return int(head)
    return 0


def append(root: str, kind: str, name: str, version: str = "", detail: str = "") -> Update:
    """Append one update to the local ``root``'s log (created with its header); its ``seq`` is
    the last line's plus one, under an exclusive lock that every writer takes."""
    if kind not in KINDS:
        raise ValueError(f"update kind {kind!r} is not one of {KINDS}")
    p = local_path(path(root))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by close; a killed writer's lock goes with it
        seq = _last_seq(fd)
        data = b""
        if seq == 0 and os.lseek(fd, 0, os.SEEK_END) == 0:
            data = _line(HEADER)
        elif os.pread(fd, 1, os.lseek(fd, 0, os.SEEK_END) - 1) != b"\n":
            data = b"\n"  # end a torn line left by a killed writer, so ours stands alone
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        upd = Update(seq + 1, now, kind, name, version, detail.replace("\n", " ")[:1000])
        os.write(fd, data + _line(tuple(asdict(upd).values())))  # one write: O_APPEND keeps it whole
        os.fsync(fd)
        return upd
    finally:
        os.close(fd)


def record(root: str | None, kind: str, name: str, version: str = "", detail: str = "") -> Update | None:
    """:func:`append` for a job that has a root; None (and a warning on S3) when it cannot."""
    if not root:
        return None
    if is_s3(root):
        log.warning("updates: %s is on S3, which cannot append: %s %s not logged", root, kind, name)
        return None
    return append(root, kind, name, version, detail)


def _rows(root: str) -> Iterator[Update]:
    if is_s3(root):
        return
    p = local_path(path(root))
    try:
        with open(p, newline="") as f:
            text = f.read()
    except FileNotFoundError:
        return
    if not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # a line being written: not yet an update
    for row in csv.reader(io.StringIO(text)):
        if len(row) == len(HEADER) and row[0].isdigit():
            yield Update(int(row[0]), *row[1:])


def read(root: str, after: int = 0, limit: int | None = None) -> list[Update]:
    """The updates with ``seq`` greater than ``after``, oldest first, at most ``limit``."""
    out = []
    for u in _rows(root):
        if u.seq > after:
            out.append(u)
            if limit is not None and len(out) >= limit:
                break
    return out
