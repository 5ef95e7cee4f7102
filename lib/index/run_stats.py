"""The index job's results as typed records: a shard's and a group's row (:class:`ShardStats`,
:class:`GroupStats`), the day's totals (:class:`IndexTotals`), the page signals' counts
(:class:`SignalCounts`), the day's ``_stats.json`` (:class:`DayIndexStats`) and the run summary
(:class:`IndexRunSummary`).

The shards' tasks report :data:`lib.index.invert.STATS_SCHEMA` rows; the driver reads them once
into these records, so a counter is named once. ``to_dict`` gives the JSON the job wrote before
the records existed, key for key (``_stats.json`` and the summary are written with sorted keys).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol


class Group(Protocol):
    """What a shard's row takes from its group (a :class:`lib.index.shards.Group`)."""

    @property
    def tld(self) -> str: ...

    @property
    def lang(self) -> str: ...

    @property
    def k(self) -> int: ...


@dataclass
class ShardCounts:
    """The counters summed from the shards into the day's totals."""

    docs: int = 0
    duplicates: int = 0
    terms: int = 0
    postings: int = 0
    total_terms: int = 0
    ciff_bytes: int = 0
    metadata_bytes: int = 0


@dataclass
class ShardStats:
    """One shard's ``_stats.json`` entry: where it is, its counters (:class:`ShardCounts`'s), its
    files' sha256 (the day's manifest, checked by the search service)."""

    tld: str
    lang: str
    shard: int  # its number in the group
    k: int  # the group's shards
    docs: int
    duplicates: int
    terms: int
    postings: int
    total_terms: int
    ciff_bytes: int
    metadata_bytes: int
    ciff_sha256: str
    metadata_sha256: str

    @classmethod
    def of(cls, group: Group, shard: int, row: dict[str, Any]) -> ShardStats:
        """The entry of shard ``shard`` of ``group`` from its task's row (``pidx`` dropped; a
        key this release does not know is a bug, not ignored)."""
        return cls(group.tld, group.lang, shard, group.k, **{n: v for n, v in row.items() if n != "pidx"})


@dataclass
class GroupStats:
    """One TLD/LANG group's ``_stats.json`` entry."""

    tld: str
    lang: str
    docs: int
    k: int  # its shards
    files: int  # shards written (a shard without pages writes none)
    analyzer: str


@dataclass
class IndexTotals(ShardCounts):
    """The day's totals: the shards' counters summed, groups, shards and the pages read."""

    groups: int = 0
    shards: int = 0
    pages_in: int = 0

    @classmethod
    def of(cls, shards: list[ShardStats], groups: int, pages_in: int) -> IndexTotals:
        """The totals of ``shards``; raises RuntimeError when documents and repeated records do
        not add up to ``pages_in`` (a page lost or counted twice)."""
        sums = {f.name: sum(getattr(s, f.name) for s in shards) for f in dataclasses.fields(ShardCounts)}
        out = cls(**sums, groups=groups, shards=len(shards), pages_in=pages_in)
        if out.docs + out.duplicates != out.pages_in:
            raise RuntimeError(
                f"indexed {out.docs} documents and {out.duplicates} repeated records of {out.pages_in} pages"
            )
        return out


@dataclass
class SignalCounts:
    """What the page signals (lib.index.indexable) left out of the index, and why."""

    rows: int  # the day's pages
    noindex: int
    robots_txt_disallowed: int
    robots_txt_allowed: int
    robots_txt_origins: int
    captures_unreadable: list[str]  # captures files that could not be read
    left_out: int
    honoured: bool
    robots_txt_agents: list[str]


@dataclass
class ExcludedCounts:
    """What an exclusion list removed from the day (counted, never silent)."""

    rules: int
    pages: int
    edges: int


@dataclass
class AnchorCounts:
    """The anchor-text CIFFs written beside the shards."""

    files: int
    docs_with_anchors: int


@dataclass
class DayIndexStats:
    """``_stats.json`` of an index day. :func:`lib.index.pipeline.build_index` fills the shards,
    groups, graph and totals; the job adds the signals, near-duplicates, its options and what
    it excluded and wrote besides."""

    groups: list[GroupStats]
    shards: list[ShardStats]
    docs_per_shard: int
    min_group_docs: int
    graph: dict[str, int] | None  # None: --no-graph
    seconds: dict[str, float]
    totals: IndexTotals
    signals: SignalCounts | None = None
    dedup: dict[str, Any] | None = None  # lib.neardup.day_clusters.day_clusters, across_days (lib.neardup.crossday)
    args: dict[str, Any] | None = None  # the options that shape the day (jobs/index.py IndexOptions.record)
    excluded: ExcludedCounts | None = None  # None: no exclusion list in force
    anchors: AnchorCounts | None = None  # None: no anchor texts written

    def to_dict(self) -> dict[str, Any]:
        """The ``_stats.json`` content; the parts a run did not fill are absent (``graph`` is
        null instead, as before)."""
        out = dataclasses.asdict(self)
        for part in ("signals", "dedup", "args", "excluded", "anchors"):
            if out[part] is None:
                del out[part]
        return out


@dataclass
class IndexRunSummary:
    """What an index run prints and writes (``--summary``) before ``SparkJob`` adds job, s3, ok,
    seconds, output."""

    totals: IndexTotals
    groups: int
    steps: dict[str, float]
    excluded: ExcludedCounts | None
    signals: SignalCounts | None
    dedup: dict[str, Any] | None

    @classmethod
    def of(cls, stats: DayIndexStats) -> IndexRunSummary:
        return cls(stats.totals, len(stats.groups), stats.seconds, stats.excluded, stats.signals, stats.dedup)

    def to_dict(self) -> dict[str, Any]:
        """The summary's keys and values, ``excluded`` null when nothing was excluded."""
        return {
            "totals": dataclasses.asdict(self.totals),
            "groups": self.groups,
            "steps": self.steps,
            "excluded": None if self.excluded is None else dataclasses.asdict(self.excluded),
            "signals": None if self.signals is None else dataclasses.asdict(self.signals),
            "dedup": self.dedup,
        }
