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

On an ``s3://`` root, which has neither append nor locks, the same lines are one object each,
``shared/auxiliary/logs/000000000001.csv`` …: a writer lists them, creates the next number only
if it does not exist yet (``If-None-Match: *``, :func:`lib.store.lease.create_exclusive`) and
tries the number after on a conflict, so two writers still never share a ``seq``. :func:`read`
serves both forms alike.
"""

from __future__ import annotations

import csv
import datetime as dt
import fcntl
import io
import os
from dataclasses import asdict, dataclass
from typing import Iterator

from lib.store import layout, storage
from lib.store.lease import create_exclusive
from lib.store.locations import is_s3, local_path

HEADER = ("seq", "time", "kind", "name", "version", "detail")
KINDS = ("day", "subindex", "model", "filter", "plugin", "purge")
_TAIL = 4096  # bytes read back from the end to find the last seq (a line is far shorter)
S3_FOLDER = "logs"  # ROOT/shared/auxiliary/logs/NNNNNNNNNNNN.csv: the lines on S3
_S3_TRIES = 100  # writers racing for the next number: each conflict means another's line got in


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


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def _s3_seqs(root: str) -> list[tuple[int, str]]:
    folder = layout.auxiliary_path(root, S3_FOLDER)
    out = []
    for f in storage.list_files(folder, [".csv"]):
        stem = f.uri.rsplit("/", 1)[-1].removesuffix(".csv")
        if stem.isdigit():
            out.append((int(stem), f.uri))
    return sorted(out)


def _append_s3(root: str, kind: str, name: str, version: str, detail: str) -> Update:
    seqs = _s3_seqs(root)
    seq = seqs[-1][0] if seqs else 0
    for _ in range(_S3_TRIES):
        seq += 1
        upd = Update(seq, _now(), kind, name, version, detail)
        uri = layout.auxiliary_path(root, S3_FOLDER, f"{seq:012d}.csv")
        if create_exclusive(uri, _line(tuple(asdict(upd).values()))):
            return upd
    raise RuntimeError(f"updates: no free seq under {layout.auxiliary_path(root, S3_FOLDER)} after {_S3_TRIES} tries")


def append(root: str, kind: str, name: str, version: str = "", detail: str = "") -> Update:
    """Append one update to ``root``'s log (created with its header); its ``seq`` is the last
    line's plus one, under an exclusive lock that every writer takes (on S3: module doc)."""
    if kind not in KINDS:
        raise ValueError(f"update kind {kind!r} is not one of {KINDS}")
    detail = detail.replace("\n", " ")[:1000]
    if is_s3(root):
        return _append_s3(root, kind, name, version, detail)
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
        upd = Update(seq + 1, _now(), kind, name, version, detail)
        os.write(fd, data + _line(tuple(asdict(upd).values())))  # one write: O_APPEND keeps it whole
        os.fsync(fd)
        return upd
    finally:
        os.close(fd)


def record(root: str | None, kind: str, name: str, version: str = "", detail: str = "") -> Update | None:
    """:func:`append` for a job that has a root (None without one)."""
    return append(root, kind, name, version, detail) if root else None


def _rows(root: str, after: int = 0) -> Iterator[Update]:
    if is_s3(root):
        for seq, uri in _s3_seqs(root):
            if seq > after:
                for row in csv.reader(io.StringIO(storage.read_bytes(uri).decode())):
                    if len(row) == len(HEADER) and row[0].isdigit():
                        yield Update(int(row[0]), *row[1:])
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
    for u in _rows(root, after):
        if u.seq > after:
            out.append(u)
            if limit is not None and len(out) >= limit:
                break
    return out
