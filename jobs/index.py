"""Index a preprocessed day: per TLD/language CIFF shards, metadata store and web graph.

    python jobs/index.py --date 2026-01-15 --root /data/bucket
    python jobs/index.py --input DAY/preprocessed --output DAY/index [--docs-per-shard N]

Reads ``ROOT/preprocessed/YYYY-MM/DD/language=*/`` and writes ``ROOT/index/YYYY-MM/DD/``:
``{TLD}/{LANG}/index-{n}.ciff.gz`` + ``metadata-{n}.parquet`` (+ ``anchors-{n}.ciff.gz``, the
in-link anchor texts, with the graph), ``graph/{edges,inlinks,hosts}/``,
``_stats.json`` and ``_SUCCESS`` (last). See docs/index.md for the layout and the rules.

Exit codes: 0 published; 1 failed (an incomplete input day included), nothing published; 2 usage
(an input that does not exist included); 4 the preprocessed day holds no pages: nothing
published unless ``--allow-empty``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import asdict, dataclass, fields
from typing import Any

from lib.errors import UsageError
from lib.index import graph, indexable
from lib.index.anchors import write_day_anchors
from lib.index.page_files import input_files, local_copy, page_files
from lib.index.pipeline import build_index, plan_day
from lib.index.run_stats import AnchorCounts, ExcludedCounts, IndexRunSummary
from lib.neardup import crossday, day_clusters, sigstore
from lib.pages import exclusions
from lib.pages.exclude import filter_day
from lib.runtime.options import DayJobOptions, byte_text, opt
from lib.runtime.result import JobResult, empty_input, log
from lib.runtime.sparkjob import SparkJob, resolved
from lib.store import layout, storage
from lib.text import analysis, stoplists
from lib.text.stoplists import Ref


@dataclass(frozen=True)
class ShapeOptions:
    """The settings that shape an index day: what ``_stats.json`` records (``args``) and a
    rebuild of the day (the purge command) repeats, so it numbers the day the same way."""

    docs_per_shard: int = opt(100_000, "target documents per shard; shards per group = next power of two", type=int)
    min_group_docs: int = opt(1000, "TLD/LANG groups with fewer pages go to other/LANG", type=int)
    gzip_level: int = opt(
        2,
        "zlib level of the .ciff.gz files (docs/index.md has the speed/size trade)",
        type=int,
        choices=range(1, 10),
        metavar="1-9",
    )
    graph: bool = opt(
        True,
        "write the CIFF shards and metadata only, no web graph (graph/ absent)",
        flag="--no-graph",
        action="store_false",
    )
    anchors: bool = opt(
        True,
        "write the web graph but not the anchor-text CIFFs (anchors-{n}.ciff.gz)",
        flag="--no-anchors",
        action="store_false",
    )
    honour_robots: bool = opt(
        True,
        "index every page, also those that say noindex or that the day's robots.txt disallows "
        "(research use; recorded in _stats.json; docs/robots.md)",
        flag="--ignore-robots",
        action="store_false",
    )
    robots_txt_agents: tuple[str, ...] = opt(
        (),
        "the robots.txt product tokens a page must be allowed for (add the crawler's own name): a page any of "
        "them is disallowed is left out",
        shown="*",
        action="append",
        metavar="NAME[,NAME]",
    )
    dup_bands: int = opt(
        day_clusters.Settings.bands,
        "LSH bands of the near-duplicate clusters (dup_cluster); the pages' signatures must split into N bands "
        "(docs/dedup.md)",
        type=int,
        metavar="N",
    )
    dup_threshold: float = opt(
        day_clusters.Settings.threshold,
        "estimated Jaccard (share of equal signature slots) a candidate pair must reach to join a cluster",
        type=float,
        metavar="J",
    )
    dup_days: int = opt(
        sigstore.DEFAULT_DAYS,
        "keep the signatures of the last N days in the signature store and point a page that repeats one of them "
        "to it (dup_of); 0: no matching across days (docs/dedup.md)",
        type=int,
        metavar="N",
    )


@dataclass(frozen=True)
class IndexOptions(DayJobOptions, ShapeOptions):
    """The index job's options: the common ones and the day's shape."""

    #: not recorded: both plans write the same rows
    graph_single_task_bytes: int = opt(
        graph.SINGLE_TASK_BYTES,
        "a day of at most this many bytes of page files gets its graph in one task, larger days in two stages; "
        "0: always two",
        render=byte_text,
        type=int,
        metavar="BYTES",
    )
    #: the signature store (lib.neardup.sigstore); not recorded: where, not what
    dup_store: str | None = opt(
        None,
        "the signature store, a local/cluster folder (beside ROOT/urldb)",
        shown="ROOT/signatures",
        metavar="DIR",
    )

    def record(self) -> dict[str, Any]:
        """The options that shape the day, as ``_stats.json`` records them (``args``)."""
        shape = asdict(ShapeOptions(**{f.name: getattr(self, f.name) for f in fields(ShapeOptions)}))
        return {k: list(v) if isinstance(v, (tuple, list)) else v for k, v in shape.items()}  # as JSON reads it

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "IndexOptions":
        """The options a day was built with, from its ``_stats.json`` ``args`` (a setting the
        record lacks, e.g. a day built before it existed, is the default)."""
        values: dict[str, Any] = {
            f.name: tuple(record[f.name]) if isinstance(record[f.name], list) else record[f.name]
            for f in fields(ShapeOptions)
            if f.name in record
        }
        return cls(**values)


class IndexJob(SparkJob):
    name = "index"
    description = "Preprocessed day (Parquet) -> CIFF index shards per TLD/language, metadata, web graph"
    input_kind = layout.PREPROCESSED
    output_kind = layout.INDEX
    light_driver = True  # the JVM schedules Python tasks; the work is in Python
    checks_input = True  # a missing input folder: exit 2; a day without pages: exit 4 (--allow-empty)
    options_class = IndexOptions

    def __init__(self, stoplists: tuple[Ref, ...] | None = None) -> None:
        """``stoplists``: the shared stop-word lists to build with (a purge's rebuild gives its
        day's, from its _stats.json); None: the root's current ones (lib.text.stoplists)."""
        super().__init__()
        self.stoplists = stoplists

    def run(self, spark: Any, options: IndexOptions) -> JobResult:
        source = resolved(options.input, "input")
        if not storage.exists(storage.join(source, layout.SUCCESS)):
            raise FileNotFoundError(f"input day is not complete (no {layout.SUCCESS}): {source}")
        if not page_files(source) and (empty := empty_input(self.name, options, "no preprocessed pages")) is not None:
            return empty
        store, day_key = self._store(options)
        if options.dup_bands < 1 or not 0.0 < options.dup_threshold <= 1.0:
            raise UsageError(
                f"--dup-bands must be >= 1 and --dup-threshold in (0, 1]: {options.dup_bands}, {options.dup_threshold}"
            )
        excl = exclusions.for_job(options.root, options.exclusions)
        # pinned and checked here, before anything is written; the tasks load these versions
        lists = stoplists.resolve(self._shared_root(options)) if self.stoplists is None else self.stoplists
        stoplists.load(lists)
        with self.work_dir(spark, options) as wd:
            copy = wd.path + ".input"  # an S3 day, copied where Spark can read it
            kept = wd.path + ".kept"  # the day without its excluded pages, when a list is in force
            indexed = wd.path + ".indexed"  # the day without the pages that ask not to be indexed
            dups = wd.path + ".dedup"  # the near-duplicate stages' spill (lib.neardup.day_clusters)
            try:
                inp = local_copy(source, copy) if storage.is_s3(source) else source
                excluded = None
                if excl:
                    with self.steps("exclude"):
                        excluded = filter_day(storage.local_path(inp), kept, excl, how="symlink", captures=False)
                    inp = kept
                with self.steps("signals"):
                    policy = indexable.Policy(options.honour_robots, indexable.agents_option(options.robots_txt_agents))
                    signals = indexable.filter_day(spark, storage.local_path(inp), indexed, policy)
                    graph_files = input_files(inp)  # pages that say noindex still link
                with self.steps("plan"):
                    day = plan_day(indexed, options.docs_per_shard, options.min_group_docs)
                langs = {analysis.get_analyzer(g.lang).lang for g in day.groups}
                lists = tuple(r for r in lists if r.lang in langs)  # the day's languages' lists only
                parts = crossday.store_parts(store) if store else 0
                dup_settings = day_clusters.Settings(options.dup_bands, options.dup_threshold, store_parts=parts)
                across: dict[str, Any] | None = None
                with self.steps("dedup"):  # over the pages indexed: a noindex page is no one's copy here
                    clusters = day_clusters.day_clusters(spark, day.files, dups, dup_settings)
                    if store:
                        across = crossday.lookup_day(spark, dups, store, day_key, dup_settings)
                mapping = clusters.pop("mapping")
                stats = build_index(
                    spark,
                    day,
                    wd.path,
                    self.steps,
                    gzip_level=options.gzip_level,
                    with_graph=options.graph,
                    date=options.date,
                    exclusions=excl,
                    graph_single_task_bytes=options.graph_single_task_bytes,
                    graph_files=graph_files,
                    dup_cluster=mapping,
                    dup_of=across["mapping"] if across else "",
                    stoplists=lists,
                )
                if store and across:  # the day's representatives kept for the days after it
                    with self.steps("dup_store"):
                        across.update(
                            crossday.store_day(
                                spark, dups, store, day_key, dup_settings, mapping, across.pop("mapping")
                            )
                        )
                    stats.seconds["dup_store"] = self.steps.seconds["dup_store"]
            finally:
                shutil.rmtree(copy, ignore_errors=True)
                shutil.rmtree(kept, ignore_errors=True)
                shutil.rmtree(indexed, ignore_errors=True)
                shutil.rmtree(dups, ignore_errors=True)
            stats.signals = signals.counts
            stats.dedup = clusters
            clusters["across_days"] = across  # None: no store (the summary's log says why)
            left = signals.counts.left_out
            if signals.counts.rows - left != stats.totals.pages_in:  # nothing lost on the way
                raise RuntimeError(f"{stats.totals.pages_in} pages indexed + {left} left out != the day's pages")
            indexable.write_left_out(signals.left_out, wd.path)
            # what a rebuild of this day (the purge command) must repeat to number it the same way
            stats.args = options.record()
            if excluded is not None:  # counted, never silent; the URLs stay out of the published stats
                stats.excluded = ExcludedCounts(
                    rules=len(excl),
                    pages=excluded["pages"]["excluded"],
                    edges=(stats.graph or {}).get("excluded_edges", 0),
                )
            if (
                options.graph and options.anchors
            ):  # the in-link anchor texts of every shard's pages, as a CIFF beside it
                with self.steps("anchors"):
                    files = write_day_anchors(
                        spark, wd.path, os.path.join(wd.path, "graph", "inlinks"), stats.to_dict(), lists
                    )
                stats.seconds["anchors"] = self.steps.seconds["anchors"]
                stats.anchors = AnchorCounts(
                    files=len(files), docs_with_anchors=sum(f["docs_with_anchors"] for f in files.values())
                )
            # what built the day: the analyzers' data (the packaged, and each shared stop-word list
            # used, by item name), the take-down list, with versions and sha256
            built_with = {
                "models": {"analyzers": analysis.data_record(), **stoplists.records(lists)},
                "filters": {exclusions.TAKEDOWN: exclusions.identity(options.root, options.exclusions)},
            }
            doc = stats.to_dict() | {"built_with": built_with}
            storage.write_bytes(os.path.join(wd.path, layout.STATS), json.dumps(doc, indent=1, sort_keys=True).encode())
            wd.publish()
        return JobResult(ok=True, summary=IndexRunSummary.of(stats).to_dict(), output=options.output)

    @staticmethod
    def _shared_root(options: IndexOptions) -> str | None:
        """Whose ``shared/auxiliary`` the stop-word lists come from: ``--root``, else the root of a
        ``--output`` day folder (the night's chain gives the folders, as for preprocess's plugins)."""
        if options.root:
            return options.root
        out = options.output or ""
        return layout.root_of(out) if layout.day_of(out) else None

    def _store(self, options: IndexOptions) -> tuple[crossday.Store | None, str]:
        """The signature store and the day's date for dup_of, or (None, "") with a warning when
        the run cannot match across days (no store, no date, --dup-days 0)."""
        day = options.date or layout.day_of(options.output or "") or layout.day_of(options.input or "")
        path = options.dup_store or (storage.join(options.root, sigstore.FOLDER) if options.root else None)
        if options.dup_store and storage.is_s3(options.dup_store):
            raise UsageError(f"--dup-store must be a local/cluster folder, got {options.dup_store}")
        if options.dup_days <= 0:
            why = "--dup-days 0"
        elif path is None:
            why = "no --dup-store or --root"
        elif storage.is_s3(path):
            why = f"the root {options.root} is on S3 (give --dup-store)"
        elif day is None:
            why = "no --date"
        else:
            return crossday.Store(storage.local_path(path), options.dup_days), day.isoformat()
        log.warning("index: no matching across days (dup_of null): %s", why)
        return None, ""


def run(spark: Any, options: IndexOptions, stoplists: tuple[Ref, ...] | None = None) -> JobResult:
    """The index job as a function: ``options`` resolved, checked and run in ``spark`` (None:
    a session of its own), as ``main`` does with a command line (:meth:`SparkJob.call`);
    ``stoplists``: the shared stop-word lists to build with (None: the root's current ones)."""
    return IndexJob(stoplists).call(options, spark)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return IndexJob().main(argv, spark=spark)


if __name__ == "__main__":
    sys.exit(main())
