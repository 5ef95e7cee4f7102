"""Batches within a day: the archives that arrived since the last batch, published under the day.

A batch of day ``D`` is published as ``OUT/preprocessed/YYYY-MM/DD/batch=N/`` (and the index's
``OUT/index/YYYY-MM/DD/batch=N/``), assembled aside and swapped in, ``_SUCCESS`` last, like a
day (:class:`lib.store.publish.WorkDir`). Its ``_inputs.json`` (:mod:`lib.preprocess.input_manifest`)
names the archives it read, so the input manifests of the published batches say which archives
are taken: the next batch is every archive of the day's input folder that none of them names
(:func:`next_batch`), numbered one past the highest published batch.

Faults: a batch killed halfway leaves no ``batch=N/`` with a ``_SUCCESS`` (a local run leaves a
``batch=N.tmp-*`` folder, which is not a batch; an S3 upload cut short leaves no ``_SUCCESS``):
it is not published, its archives are not taken, and the next tick plans the same batch again,
with the same number. An archive still being written is not taken: a crawler's open file
(``.warc.gz.open``, ``.tmp``, ``.part``) does not end in an archive suffix, and a local file
modified less than ``settle`` seconds ago may still grow, so it waits for a later batch (an S3
object is listed only once its upload completed).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from lib.store import layout, locations, storage
from lib.store.storage import FileInfo
from lib.warc.records import ARCHIVE_SUFFIXES

PREFIX = "batch="
#: a folder of a published (or half-published) batch: ``batch=N``, nothing after it
_BATCH = re.compile(r"batch=([1-9][0-9]*)")
#: seconds since its last change before a local archive is taken into a batch (it may still grow)
SETTLE_SECONDS = 60.0


def batch_path(day_output: str, number: int) -> str:
    """The folder of batch ``number`` under a day's output folder."""
    return storage.join(day_output, f"{PREFIX}{number}")


def batch_number(path: str) -> int | None:
    """The number of a batch folder (``.../batch=N``), None for any other folder."""
    m = _BATCH.fullmatch(path.rstrip("/").rsplit("/", 1)[-1])
    return int(m.group(1)) if m else None


def published_batches(day_output: str) -> dict[int, dict[str, Any]]:
    """Number -> the parsed ``_inputs.json`` of every batch of the day that is complete (its
    ``_SUCCESS`` there); half-written ones and work folders are left out."""
    out: dict[int, dict[str, Any]] = {}
    base = storage.normalize(day_output).rstrip("/")  # listed URIs are normalized (file://...)
    for f in storage.list_files(day_output):
        rel = f.uri[len(base) + 1 :]
        parts = rel.split("/")
        if len(parts) != 2 or parts[1] != layout.SUCCESS or (n := batch_number(parts[0])) is None:
            continue
        inputs = storage.join(batch_path(day_output, n), layout.INPUTS)
        if not storage.exists(inputs):
            raise FileNotFoundError(f"{batch_path(day_output, n)}: a published batch without its {layout.INPUTS}")
        out[n] = json.loads(storage.read_bytes(inputs))
    return out


def _settled(f: FileInfo, now_ns: int, settle: float) -> bool:
    """Whether an archive is done being written: an S3 object always (listed once complete), a
    local file once its modification time (its ``version``, ``mtime:NS``) is ``settle`` seconds old."""
    if storage.is_s3(f.uri) or not (f.version or "").startswith("mtime:"):
        return True
    return now_ns - int(f.version.removeprefix("mtime:")) >= settle * 1e9  # type: ignore[union-attr]


@dataclass(frozen=True)
class Batch:
    """The next batch of a day: its number and archives (``files``, sorted by URI), and the
    archives left for a later batch because they may still be written (``waiting``, names)."""

    number: int
    files: list[FileInfo]
    waiting: list[str] = field(default_factory=list)
    taken_before: int = 0  # archives of the day in published batches

    def names(self, input_uri: str) -> list[str]:
        """The batch's archives by name below the day's input folder (what ``--only`` takes)."""
        return [locations.archive_name(f.uri, input_uri) for f in self.files]


def next_batch(
    input_uri: str, day_output: str, settle: float = SETTLE_SECONDS, now: float | None = None
) -> Batch | None:
    """The day's next batch: the archives under ``input_uri`` that no published batch under
    ``day_output`` (the day's preprocessed folder) names, without the ones still being written;
    None when there are none yet, or when the day is closed (its own ``_SUCCESS``: then a late
    archive makes check-days queue the day again, lib.orchestration.days)."""
    if storage.exists(storage.join(day_output, layout.SUCCESS)):
        return None  # the day is closed (consolidated or run whole): a late archive is the day's re-run's
    done = published_batches(day_output)
    taken = {f["name"] for record in done.values() for f in record.get("files", [])}
    now_ns = int((time.time() if now is None else now) * 1e9)
    new = [
        f
        for f in storage.list_files(input_uri, ARCHIVE_SUFFIXES)
        if locations.archive_name(f.uri, input_uri) not in taken
    ]
    ready = [f for f in new if _settled(f, now_ns, settle)]
    waiting = [locations.archive_name(f.uri, input_uri) for f in new if not _settled(f, now_ns, settle)]
    if not ready:
        return None
    return Batch(max(done, default=0) + 1, ready, waiting, len(taken))


def unindexed(preprocessed_day: str, index_day: str) -> list[int]:
    """The published batches of a day whose index is not (``batch=N/_SUCCESS`` under ``index_day``
    missing): a batch killed between its two steps. Its archives are taken, so no later batch would
    index its pages: the next tick indexes it first (jobs/day.py)."""
    if storage.exists(storage.join(preprocessed_day, layout.SUCCESS)):
        return []  # closed: the day's own index covers it
    return [
        n
        for n in sorted(published_batches(preprocessed_day))
        if not storage.exists(storage.join(batch_path(index_day, n), layout.SUCCESS))
    ]


def only_list(names: list[str]) -> str:
    """The ``--only`` value of a batch's archives: their names, as JSON."""
    return json.dumps(sorted(names))


def read_only(value: str | None) -> set[str] | None:
    """The names ``--only`` gives (a JSON list, or ``@FILE`` holding one); None when not given."""
    if value is None:
        return None
    text = value
    if value.startswith("@"):
        with open(os.path.expanduser(value[1:])) as f:
            text = f.read()
    names = json.loads(text)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"--only must be a JSON list of archive names, got {value[:80]!r}")
    return set(names)
