"""The daily catalogue job (Spark): CDXJ index, URL database merge and report for one day.

    python jobs/catalogue.py --date 2026-01-15 --root ROOT
    spark-submit jobs/catalogue.py --date 2026-01-15 --input DAY/preprocessed --output DAY/catalogue --urldb DB

Input: a completed preprocess day (``ROOT/preprocessed/YYYY-MM/DD`` with ``_SUCCESS``).
Output: ``ROOT/catalogue/YYYY-MM/DD/{index.cdxj, index.cdx, report.html, _SUCCESS}`` (written to a
temporary folder and swapped in, or uploaded with ``_SUCCESS`` last for S3), and the
URL database under ``ROOT/urldb`` (or ``--urldb``) and the day's lines in the capture index beside it
(``ROOT/cdxindex``, lib.catalogue.capindex), its record ids in the record store (``ROOT/recordstore``,
lib.catalogue.recordstore). See docs/catalogue.md.

Exit codes: 0 published, the day in the URL database; 1 failed, nothing published; 2 usage (an
input that does not exist included); 4 the preprocessed day holds no captures: nothing
published (the URL database untouched) unless ``--allow-empty``; 5 another run holds the day's
output (``--wait-lock``) or the URL database (``--urldb-wait``, default an hour) past the
wait: nothing published, one line names the holder.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from typing import Any

from lib.catalogue import (
    capindex,
    completeness,
    delta,
    digeststore,
    noindex,
    recordstore,
    report,
    textroots,
    urldb,
)
from lib.catalogue.day_captures import (
    CDXJ_NAME,
    copy_day,
    day_has_captures,
    is_small_day,
    local_day,
    read_captures,
    write_day_cdxj,
)
from lib.catalogue.urldb import DEFAULT_KEEP, DEFAULT_PARTITIONS, DEFAULT_WAIT
from lib.errors import UsageError
from lib.links import linkdb as linkstore
from lib.pages import exclusions
from lib.pages.exclude import filter_day
from lib.runtime.options import DayJobOptions, opt
from lib.runtime.result import JobResult, empty_input, log
from lib.runtime.sparkjob import SparkJob, resolved
from lib.store import layout, storage


@dataclass(frozen=True)
class CatalogueOptions(DayJobOptions):
    """The catalogue job's options (the command line's, same names and defaults)."""

    urldb: str | None = opt(None, "URL database folder (local/cluster filesystem)", shown="ROOT/urldb")
    no_urldb: bool = opt(False, "skip the URL database merge", action="store_true")
    url_partitions: int = opt(DEFAULT_PARTITIONS, "key-space partitions of a new URL database", type=int)
    keep_versions: int = opt(DEFAULT_KEEP, "URL database versions kept for re-runs", type=int)
    urldb_wait: float = opt(
        DEFAULT_WAIT,
        "wait this long for another run's merge or purge of the URL database (0: refuse at once), then exit 5 "
        "with nothing published",
        type=float,
        metavar="SECONDS",
    )
    warc_prefix: str | None = opt(
        None,
        "archive folder that CDXJ filenames are relative to: a path, file:// or s3:// URI, trailing slash optional",
        shown="ROOT/warc; full URIs when no ROOT",
    )
    index: str | None = opt(
        None, "the day's index output: shard sizes, text roots of the delta", shown="ROOT/index/YYYY-MM/DD"
    )
    no_report: bool = opt(False, "skip the HTML report", action="store_true")
    capindex: str | None = opt(
        None,
        "the capture index over every day, which the CDX server reads (local/cluster filesystem; "
        "skipped with --no-urldb)",
        shown="cdxindex beside the URL database",
    )
    links: bool = opt(
        False,
        "merge the index's graph edges of the day into the link database, under the URL database's lease",
        action="store_true",
    )
    linkdb: str | None = opt(None, "link database folder (local/cluster filesystem)", shown="ROOT/linkdb")

    def record(self) -> dict[str, Any]:
        """The options that shape the day's CDXJ and report, as given (``warc_prefix`` None: the
        root's ``warc/``, wherever the root is then), as its ``_SUCCESS`` records them (``args``):
        what a rebuild of the day (the purge command) repeats."""
        return {"warc_prefix": self.warc_prefix, "no_report": self.no_report}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> "CatalogueOptions":
        """The options a day was built with, from its ``_SUCCESS`` ``args`` (a day recorded
        before, or a setting it lacks: the default)."""
        return cls(**{k: record[k] for k in ("warc_prefix", "no_report") if k in record})


class CatalogueJob(SparkJob):
    name = "catalogue"
    description = "Per-day CDXJ index, URL database merge and HTML report from preprocess output"
    input_kind = layout.PREPROCESSED
    output_kind = layout.CATALOGUE
    checks_input = True  # a missing input folder: exit 2; a day without captures: exit 4 (--allow-empty)
    options_class = CatalogueOptions

    def light(self, args: Any) -> bool:
        """A small day starts a local driver JVM light (C1 only, the serial collector: LIGHT_DRIVER_OPTS):
        half the wall time of a ~300-capture day on 2 cores, where C2's threads took the cores from the
        queries (docs/benchmarks.md, "Catalogue"). A large day keeps the JVM's defaults."""
        return is_small_day(args.input)

    def run(self, spark: Any, options: CatalogueOptions) -> JobResult:
        day = options.date or layout.day_of(resolved(options.input, "input"))
        if day is None:
            raise UsageError("catalogue: give --date (the input path does not end in YYYY-MM/DD)")
        prefix = options.warc_prefix or (storage.join(options.root, layout.WARC) if options.root else None)
        summary: dict[str, Any] = {"date": day.isoformat(), "input": options.input}
        with self.work_dir(spark, options) as wd:
            copy = wd.path + ".input"  # an S3 day's captures, copied where Spark can read them
            try:
                return self._run(spark, options, day, prefix, summary, wd, copy)
            finally:
                shutil.rmtree(copy, ignore_errors=True)
                shutil.rmtree(copy + ".kept", ignore_errors=True)

    def _run(
        self,
        spark: Any,
        options: CatalogueOptions,
        day: Any,
        prefix: str | None,
        summary: dict[str, Any],
        wd: Any,
        copy: str,
    ) -> JobResult:
        source = resolved(options.input, "input")
        if storage.is_s3(source):
            if not storage.exists(storage.join(source, layout.SUCCESS)):
                raise FileNotFoundError(f"{source}: preprocess output is not complete (no {layout.SUCCESS})")
            copy_day(source, copy)
        src = local_day(copy if storage.is_s3(source) else source)
        root = options.root or layout.root_of(src)
        excl = exclusions.for_job(options.root, options.exclusions)
        if excl:  # the CDXJ, the URL database and the report see the day without its excluded captures
            kept = copy + ".kept"
            r = filter_day(src, kept, excl, how="symlink", pages=False)
            storage.write_bytes(os.path.join(kept, layout.SUCCESS), b"")
            summary["excluded"] = {"rules": len(excl), "captures": r["captures"]["excluded"]}
            src = kept
        if not day_has_captures(src) and (empty := empty_input(self.name, options, "no captures")) is not None:
            return empty
        with self.steps("cdxj"):
            captures = read_captures(spark, src)
            summary.update(write_day_cdxj(captures, src, prefix, wd.path))
        index_day = options.index or layout.day_path(root, layout.INDEX, day)
        if not options.no_urldb:
            roots, summary["text_roots"] = textroots.day_roots(spark, index_day, day)
            db = options.urldb or (storage.join(options.root, layout.URLDB) if options.root else None)
            if db is None:
                raise UsageError("catalogue: give --urldb or --root (or --no-urldb)")
            with self.steps("urldb"):
                summary["urldb"] = urldb.merge_day(
                    spark,
                    db,
                    day,
                    captures,
                    options.url_partitions,
                    options.keep_versions,
                    options.urldb_wait,
                    roots=roots,
                )
            with self.steps("delta"):  # what changed with the day, beside its catalogue (lib/catalogue/delta.py)
                try:
                    summary["delta"] = delta.write_delta(
                        spark,
                        db,
                        day,
                        captures,
                        os.path.join(wd.path, delta.DELTA),
                        options.url_partitions,
                        options.urldb_wait,
                    )
                except delta.NoBaseline as e:  # merged out of order: the day is in the database, no delta
                    log.warning("%s", e)
                    summary["delta"] = None
                    summary["delta_skipped"] = str(e)
            ci = storage.local_path(options.capindex or capindex.beside(db))
            with self.steps("capindex"):  # the day's lines join the index over every day (lib/catalogue/capindex.py)
                summary["capindex"] = capindex.add_day(
                    ci, day.isoformat(), os.path.join(wd.path, CDXJ_NAME), self.name, options.urldb_wait
                )
            with self.steps("recordstore"):  # record id -> capture pointer (lib/catalogue/recordstore.py)
                summary["recordstore"] = recordstore.add_day(
                    recordstore.beside(ci), day.isoformat(), recordstore.day_rows(src), self.name, options.urldb_wait
                )
            with self.steps("digeststore"):  # payload digest -> record ids (lib/catalogue/digeststore.py)
                summary["digeststore"] = digeststore.add_day(
                    digeststore.beside(ci), day.isoformat(), recordstore.day_rows(src), self.name, options.urldb_wait
                )
            if options.links:
                with self.steps("links"):  # the link database beside it (lib/links/linkdb.py, docs/links.md)
                    summary["links"] = merge_links(options, db, day, index_day)
        if not options.no_report:
            signals = noindex.report(root, day, src)
            summary["now_noindex"] = {k: v for k, v in signals.items() if k != "urls"}
            complete = None
            if not options.no_urldb:  # resources' nearest captures over every day (lib/catalogue/completeness.py)
                with self.steps("completeness"):
                    complete = completeness.day_summary(src, ci)
                summary["completeness"] = {k: v for k, v in (complete or {}).items() if k != "least_complete"}
            report.write_report(
                root,
                day,
                os.path.join(wd.path, report.REPORT),
                index_day,
                src,
                signals,
                summary.get("delta"),
                completeness=complete,
            )
        wd.publish({"job": self.name, "args": options.record()})
        summary.update({f"{step}_seconds": s for step, s in self.steps.seconds.items()})
        return JobResult(ok=True, summary=summary, output=options.output)


def merge_links(options: CatalogueOptions, urldb_path: str, day: Any, index_day: str) -> dict[str, Any]:
    """The day's graph edges merged into the link database under the URL database's lease; a day
    indexed without a graph (or not on a local path) is skipped, and the summary says why."""
    db = options.linkdb or (storage.join(options.root, linkstore.FOLDER) if options.root else None)
    if db is None:
        raise UsageError("catalogue: --links needs --linkdb or --root")
    edges = linkstore.edges_of(index_day)
    if edges is None:
        log.warning("links: %s has no complete graph/edges: the link database is not merged", index_day)
        return {"skipped": f"{index_day} has no complete graph/edges (an index run with --no-graph, or on S3)"}
    with linkstore.lock(storage.local_path(urldb_path), "catalogue: link database", options.urldb_wait) as held:
        out = linkstore.merge_day(storage.local_path(db), day, edges)
    return dict(out, waited_seconds=held.waited)


def run(spark: Any, options: CatalogueOptions) -> JobResult:
    """The catalogue job as a function: ``options`` resolved, checked and run in ``spark`` (None:
    a session of its own), as ``main`` does with a command line (:meth:`SparkJob.call`)."""
    return CatalogueJob().call(options, spark)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return CatalogueJob().main(argv, spark=spark)


if __name__ == "__main__":
    sys.exit(main())
