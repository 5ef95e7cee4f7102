"""The preprocess job's counters as typed records: one archive's (or range's) result
(:class:`FileResult`) and the day's totals (:class:`DayTotals`).

A task sends its results to the driver as JSON strings (``RESULT_SCHEMA``'s ``stats``: one
small row per archive, whatever Spark's Arrow path does with nested types); both ends read
and write them through these classes, so a counter is named once. ``as_dict`` gives the
``_stats.json`` entries, key for key as before the records existed.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from lib.preprocess import enrich as enrichment
from lib.store import s3

#: the counts by reason, added up key by key
BY_REASON = ("skipped_by_reason", "failed_by_reason", "warnings_by_reason", "pages_by_directive")


@dataclass
class Counts:
    """What adds up from archives to a split file to the day (:meth:`add`)."""

    bytes: int = 0
    read: int = 0
    kept: int = 0
    html_seen: int = 0  # parsed 2xx HTML responses with a non-empty payload
    empty_text: int = 0  # kept pages whose main text is empty although their <body> has text
    skipped: int = 0
    failed: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    failed_by_reason: dict[str, int] = field(default_factory=dict)
    warnings_by_reason: dict[str, int] = field(default_factory=dict)
    pages_by_directive: dict[str, int] = field(default_factory=dict)
    s3: dict[str, int] | None = None  # S3 calls of the tasks (lib.store.s3.counters)
    enrich: dict[str, Any] | None = None  # per enrichment plugin (lib.preprocess.enrich.merge_reports)

    def add(self, other: Counts, *, with_bytes: bool = True) -> None:
        """Add ``other``'s counters, counts by reason and reports to this one's."""
        if with_bytes:
            self.bytes += other.bytes
        self.read += other.read
        self.kept += other.kept
        self.html_seen += other.html_seen
        self.empty_text += other.empty_text
        self.skipped += other.skipped
        self.failed += other.failed
        for name in BY_REASON:
            into: dict[str, int] = getattr(self, name)
            for reason, n in getattr(other, name).items():
                into[reason] = into.get(reason, 0) + n
        if other.s3 is not None:
            self.s3 = s3.add_counters(self.s3 or {}, other.s3)
        if other.enrich is not None:
            self.enrich = enrichment.merge_reports(self.enrich or {}, other.enrich)

    def as_dict(self) -> dict[str, Any]:
        """The ``_stats.json`` entry: every counter, the reports only where there are some."""
        out = dataclasses.asdict(self)
        for optional in ("s3", "enrich", "html_extraction"):
            if out.get(optional, "") is None:
                del out[optional]
        return out


@dataclass
class FileResult(Counts):
    """One archive's (or one range's) result, as a task reports it."""

    file: str = ""
    seconds: float = 0.0
    errors_not_reported: int = 0  # report lines past lib.preprocess.archive_pages.MAX_REPORTED_PER_FILE
    html_extraction: str | None = None  # which HTML path ran on the executor (lib.html.walk.status)

    def to_json(self) -> str:
        return json.dumps(self.as_dict())

    @classmethod
    def from_json(cls, text: str) -> FileResult:
        """A result sent by a task; keys this release does not know are a bug, not ignored."""
        return cls(**json.loads(text))

    def merged(self, ranges: list[FileResult], size: int) -> FileResult:
        """This (the first range's) result with ``ranges`` (all of the file's, this one included)
        added up: counters and seconds summed, ``bytes`` the file's ``size``."""
        out = dataclasses.replace(self, s3=None, enrich=None, bytes=size, errors_not_reported=0)
        out.read = out.kept = out.html_seen = out.empty_text = out.skipped = out.failed = 0
        for name in BY_REASON:
            setattr(out, name, {})
        for r in ranges:
            out.add(r, with_bytes=False)
            out.errors_not_reported += r.errors_not_reported
        out.seconds = round(sum(r.seconds for r in ranges), 3)
        return out


@dataclass
class DayTotals(Counts):
    """The day's totals (``_stats.json``'s ``totals``)."""

    files: int = 0
    html_extraction: list[str] | None = None  # the HTML paths the day's executors ran, in first-seen order

    def add_file(self, f: FileResult) -> None:
        self.add(f)
        if f.html_extraction is not None:
            paths = self.html_extraction if self.html_extraction is not None else []
            if f.html_extraction not in paths:
                paths.append(f.html_extraction)
            self.html_extraction = paths


@dataclass
class DayStats:
    """``_stats.json``: the day's totals, its health block (lib.preprocess.health.assess) and
    every archive's entry in input order."""

    totals: DayTotals
    health: dict[str, Any]
    files: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {"totals": self.totals.as_dict(), "health": self.health, "files": self.files}

    @property
    def ok(self) -> bool:
        """The health block's verdict: no threshold breached."""
        return bool(self.health["ok"])

    @property
    def unreadable_files(self) -> int:
        """Input files with a file-level failure (the health block's count)."""
        return int(self.health["counts"]["unreadable_files"])


@dataclass
class RunSummary:
    """What a preprocess run prints and writes (``--summary``) before ``SparkJob`` adds job, s3,
    ok, seconds: the day's totals under the names operators read, the run's shape and timing.
    :meth:`to_dict` gives the keys in this order, the values as plain JSON types."""

    input: str | None
    output: str | None
    files: int
    tasks: int
    ranges: int  # the archives, a split one counting its ranges
    bytes: int
    records_read: int
    pages_kept: int
    skipped: int
    failed: int
    failed_by_reason: dict[str, int]
    warnings_by_reason: dict[str, int]
    excluded: int
    exclusion_rules: int
    html_seen: int
    empty_text: int
    pages_by_directive: dict[str, int]
    robots_agents: list[str]
    unreadable_files: int
    error_report_lines: int
    health: dict[str, Any]
    steps: dict[str, float]
    html_extraction: list[str]
    s3_executors: dict[str, int]  # the tasks' share of "s3" (driver and tasks together)
    enrich: dict[str, Any]  # per plugin: pages, seconds, failed (by reason), samples
    task_timing: dict[str, Any]  # lib.preprocess.tasktime.summarize (docs/preprocess.md)

    @classmethod
    def of(
        cls,
        stats: DayStats,
        *,
        input: str | None,
        output: str | None,
        tasks: int,
        ranges: int,
        exclusion_rules: int,
        robots_agents: list[str],
        error_report_lines: int,
        steps: dict[str, float],
        task_timing: dict[str, Any],
    ) -> RunSummary:
        """The summary of a run whose day came out as ``stats``; the rest is the run's shape."""
        t = stats.totals
        return cls(
            input=input,
            output=output,
            files=t.files,
            tasks=tasks,
            ranges=ranges,
            bytes=t.bytes,
            records_read=t.read,
            pages_kept=t.kept,
            skipped=t.skipped,
            failed=t.failed,
            failed_by_reason=t.failed_by_reason,
            warnings_by_reason=t.warnings_by_reason,
            excluded=t.skipped_by_reason.get("excluded", 0),
            exclusion_rules=exclusion_rules,
            html_seen=t.html_seen,
            empty_text=t.empty_text,
            pages_by_directive=t.pages_by_directive,
            robots_agents=robots_agents,
            unreadable_files=stats.unreadable_files,
            error_report_lines=error_report_lines,
            health=stats.health,
            steps=steps,
            html_extraction=t.html_extraction or [],
            s3_executors=t.s3 or {},
            enrich=t.enrich or {},
            task_timing=task_timing,
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary as the job's result carries it (shallow: the values are the records' own)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
