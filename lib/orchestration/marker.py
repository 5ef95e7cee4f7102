"""The night's marker: what a run of a day's chain (``dailyslice day``) leaves for the DAG to read.

``_runs/DC/DATE.json`` is written only when every step of the chain exited 0; otherwise
``DATE.failed.json`` (:func:`failed_path`) is, with the same fields. A batch tick (``dailyslice day
--batch``) writes its marker to ``DATE.tick.json`` (:func:`tick_path`), whatever it did, and a batch it
published also to ``DATE.batch=N.json``. Both carry the Slurm job id,
so a marker of an earlier run of the day vouches for nothing (:meth:`Marker.parse` with a job
id). The JSON is this record's fields, nothing else: :meth:`Marker.to_dict` writes it and
:meth:`Marker.from_dict` reads it back, a marker of an older release (fields missing) included.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from lib.store import layout

#: the ``input`` field: why preprocess found nothing to work on (its exit code -> the word)
INPUT_STATES = {2: "missing", 4: "empty"}


def failed_path(marker: str) -> str:
    """Where the failure marker of ``marker`` (``DATE.json``) goes: ``DATE.failed.json``."""
    return (marker[: -len(".json")] if marker.endswith(".json") else marker) + ".failed.json"


@dataclass(frozen=True)
class Marker:
    """One run of a day's chain, as its marker file records it.

    ``*_rc`` are the steps' exit codes (None: the step did not run); ``outputs`` the published
    folders by kind (preprocessed, index, catalogue); ``summaries`` each step's run summary by
    step name (None: no summary); ``health`` preprocess's health block; ``input`` "missing" or
    "empty" when preprocess found no input folder or no archives in it; ``busy`` when another run
    of the day held its lease."""

    ok: bool
    date: str
    data_center: str
    job_id: str
    preprocess_rc: int | None
    index_rc: int | None = None
    catalogue_rc: int | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    summaries: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    health: dict[str, Any] | None = None
    input: str | None = None
    busy: bool = False
    log: str | None = None
    run_logs: str | None = None
    urldb: str | None = None
    finished: str | None = None
    batch: int | None = None  # a batch of the day (batch=N/ under it), None for the whole night
    #: the index update published for mirrors after the index step: {"id", "target"}, {"unchanged": target},
    #: {"error": why, "target"}; None when the root publishes none (lib.orchestration.chain.publishes_updates)
    mirror_update: dict[str, Any] | None = None
    #: a batch tick that found no new archive (and no batch left unindexed): ok, no step ran, nothing published;
    #: the batch DAG's check tells it from a failure by this (lib/orchestration/batch_dag.py)
    nothing_new: bool = False

    @property
    def codes(self) -> dict[str, int | None]:
        """The steps' exit codes by step name (None: not run)."""
        return {"preprocess": self.preprocess_rc, "index": self.index_rc, "catalogue": self.catalogue_rc}

    def to_dict(self) -> dict[str, Any]:
        """The marker's JSON object (what the file holds, and what an Airflow task returns)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> "Marker":
        """A marker from its JSON object; fields it lacks take their defaults, unknown ones are left out."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in doc.items() if k in known}
        values.setdefault("ok", False)
        values.setdefault("date", "")
        values.setdefault("data_center", "")
        values.setdefault("job_id", "")
        values.setdefault("preprocess_rc", None)
        if values["job_id"] is not None:
            values["job_id"] = str(values["job_id"])
        return cls(**values)

    @classmethod
    def parse(cls, text: str | None, job_id: str | None = None) -> "Marker | None":
        """The marker in ``text`` when it belongs to ``job_id`` (None: to any job); None when there
        is no text, it is cut short (being written) or it is another job's."""
        if not text:
            return None
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        if not isinstance(doc, dict):
            return None
        marker = cls.from_dict(doc)
        if job_id is not None and marker.job_id != str(job_id):
            return None
        return marker

    def target(self, marker_file: str) -> str:
        """The file this marker goes to: ``marker_file`` when ok, else its :func:`failed_path`."""
        return marker_file if self.ok else failed_path(marker_file)

    def write(self, marker_file: str) -> str:
        """Write the marker where it belongs (:meth:`target`) in one step (a reader never sees half
        of it); returns that path."""
        path = self.target(marker_file)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True, default=str)
        os.replace(tmp, path)
        return path


def tick_path(output_root: str, data_center: str, date: str) -> str:
    """The marker of a day's latest batch tick: what a caller that cannot know the batch's number waits on."""
    return os.path.join(output_root, layout.RUNS, data_center, f"{date}.tick.json")


def remove_markers(marker_file: str) -> None:
    """Remove a day's markers of an earlier run: they must not vouch for the run starting now."""
    for path in (marker_file, failed_path(marker_file)):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def read_marker_file(path: str, job_id: str | None = None) -> Marker | None:
    """The marker in the local file ``path`` (None: no file, or :meth:`Marker.parse` says none)."""
    try:
        with open(path) as f:
            return Marker.parse(f.read(), job_id)
    except FileNotFoundError:
        return None
