"""Extract: copy any subset of records out of WARC/ARC archives by offset and length.

    spark-submit jobs/extract.py --tsv list.tsv --archives s3://bucket/warc --output DIR
    python jobs/extract.py --index coll/indexes/index.cdxj --archives coll/archive --output DIR
    python jobs/extract.py --index ROOT/index/2026-01/15 --where "language = 'deu'" --output DIR
    python jobs/extract.py --from-parquet ROOT/preprocessed/2026/01/15 --where "url_suffix = 'gov'" --output DIR
    python jobs/extract.py --record-ids ids.txt --root ROOT --output DIR     # through ROOT/recordstore

Map-only: the driver reads the list, sorts it by (file, offset) and cuts it into tasks;
each task copies its ranges (whole members of any archive format, never decompressed unless
--verify or --output-format warc converts ARC records) into
new archives named by task id + counter. The output folder gets the archives,
manifest.tsv, errors.tsv, _stats.json and _SUCCESS last. See docs/extract.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
from dataclasses import dataclass, replace
from typing import Any, Callable

from lib.errors import UsageError
from lib.extract import record_ids as rids
from lib.extract.driver import ERRORS, assemble, plan_tasks
from lib.extract.indexes import FORMATS as INDEX_FORMATS
from lib.extract.indexes import IndexInput
from lib.extract.lines import (
    Resolver,
    items_from_rows,
    lines_by_number,
    pack_items,
    read_tsv,
    row_line,
    unpack_items,
)
from lib.extract.task import OUTPUT_FORMATS, extract_items
from lib.runtime.options import JobOptions, byte_text, opt
from lib.runtime.result import JobResult, log
from lib.runtime.sparkjob import SparkJob, resolved
from lib.store import layout, storage

BYTES_PER_TASK = 256 << 20


def byte_size(text: str) -> int:
    """``100M``, ``1.5G``, ``512k``, ``100MiB`` or a plain number of bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        n = int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"not a positive size: {text!r} (e.g. 100M, 1G, 65536)")
    return n


@dataclass(frozen=True)
class ExtractOptions(JobOptions):
    """The extract job's options (the command line's, same names and defaults). One of ``tsv``,
    ``from_parquet``, ``index`` and ``record_ids`` is the list (``input``, or ``date``/``root``: a
    preprocessed day)."""

    tsv: str | None = opt(None, "list of url<TAB>archive_file<TAB>offset<TAB>length (local or s3://)", group="list")
    from_parquet: str | None = opt(
        None,
        "a preprocessed day (language=*/ Parquet with warc_file/warc_offset/warc_length)",
        group="list",
        metavar="DIR",
    )
    index: str | None = opt(
        None,
        "an index of any format (local or s3://): TSV, CDXJ, CDX with its header, Common Crawl's columnar index "
        "(Parquet or CSV), our metadata store (Parquet); see --index-format",
        group="list",
        metavar="FILE|DIR",
    )
    record_ids: str | None = opt(
        None,
        "a file of WARC-Record-IDs, one a line (local or s3://), each found through the record store in one "
        "step; ids it does not hold are failed lines (not-found)",
        group="list",
        metavar="FILE",
    )
    record_store: str | None = opt(
        None,
        "with --record-ids: the record store's folder (lib.catalogue.recordstore)",
        shown="ROOT/recordstore",
        metavar="DIR",
    )
    index_format: str = opt(
        "auto",
        "the --index format (auto: sniffed from its content, then its name)",
        choices=("auto", *INDEX_FORMATS),
    )
    where: str | None = opt(
        None,
        "with --from-parquet: Spark SQL condition selecting rows, e.g. \"url_suffix = 'gov'\"; with a Parquet "
        "--index: DuckDB SQL over its columns; with a CDX or CDXJ --index: the same over urlkey, timestamp, url, "
        "mime, status, digest, length, offset, filename",
    )
    archives: tuple[str, ...] | None = opt(
        None,
        "archives root(s): relative archive_file paths are below one of them (the first that holds the file) "
        "and no path may leave them",
        metavar="ROOT",
        nargs="+",
        action="extend",
    )
    max_bytes: int = opt(100 << 20, "roll output files at this size", render=byte_text, type=byte_size)
    verify: bool = opt(
        False,
        "decompress each range: exactly one member (gzip/zstd/LZ4) with one record whose URL equals the line's",
        action="store_true",
    )
    output_format: str = opt(
        "same",
        "same: copy every record as stored; warc: write ARC records as WARC (.warc.gz, one gzip member a "
        "record, ARC fields in WARC headers as warcio's arc2warc)",
        choices=OUTPUT_FORMATS,
    )


class ExtractJob(SparkJob):
    name = "extract"
    description = (
        "copy records out of WARC/ARC archives (gzip, zstd, LZ4 or none) by offset/length into new "
        "archives (map-only, no decompression)"
    )
    input_kind = layout.PREPROCESSED
    output_kind = "extract"
    options_class = ExtractOptions

    def resolve_io(self, options: ExtractOptions) -> ExtractOptions:
        """The options with the list (``input``) and ``output`` settled (:class:`UsageError` when
        they cannot be)."""
        if options.record_store and not options.record_ids:
            raise UsageError("extract: --record-store needs --record-ids")
        if options.record_ids:
            options = replace(options, record_store=rids.store_of(options.record_store, options.root))
        elif not options.tsv and not options.from_parquet and not options.index:
            if options.input:
                options = replace(options, from_parquet=options.input)
            elif options.date and options.root:
                options = replace(
                    options, from_parquet=layout.day_path(options.root, layout.PREPROCESSED, options.date)
                )
            else:
                raise UsageError(
                    "extract: give --tsv FILE, --index FILE|DIR, --record-ids FILE or --from-parquet DIR "
                    "(or --date/--root)"
                )
        if options.where and not (options.from_parquet or options.index):
            raise UsageError("extract: --where needs --from-parquet or a Parquet, CDX or CDXJ --index")
        if options.index_format != "auto" and not options.index:
            raise UsageError("extract: --index-format needs --index")
        if options.output is None:
            if options.date is None or options.root is None:
                raise UsageError("extract: give --output DIR (or --date/--root)")
            options = replace(options, output=layout.day_path(options.root, self.output_kind, options.date))
        return replace(options, input=options.tsv or options.index or options.record_ids or options.from_parquet)

    def read_list(self, spark: Any, options: ExtractOptions, resolver: Resolver) -> tuple[list, list, Callable]:
        """(items, parse errors, line numbers -> input text)."""
        if options.tsv:
            items, errors = read_tsv(options.tsv, resolver)
            return items, errors, lambda numbers: lines_by_number(options.tsv, numbers)
        if options.record_ids:
            store = resolved(options.record_store, "--record-store")
            items, errors = rids.read_items(options.record_ids, store, resolver)
            log.info("extract: %d record ids found in %s, %d not", len(items), store, len(rids.missing(errors)))
            ids = options.record_ids
            return items, errors, lambda numbers: rids.line_texts(ids, numbers)
        if options.index:
            index = IndexInput(options.index, options.index_format, options.where)
            items, errors = index.read(resolver)
            log.info(
                "extract: %s index %s: %d records, %d bad lines", index.format, options.index, len(items), len(errors)
            )
            return items, errors, index.texts
        path = resolved(options.from_parquet, "--from-parquet")  # resolve_io leaves one of the three
        if storage.is_s3(path):  # Spark needs its own S3 connector (hadoop-aws) for this
            path = "s3a://" + path.split("://", 1)[1]
        df = spark.read.parquet(path)
        if options.where:
            df = df.where(options.where)
        rows = df.select("url", "warc_file", "warc_offset", "warc_length").collect()
        # line numbers of a Parquet selection: its rows in (file, offset, url) order
        rows.sort(key=lambda r: (r[1] or "", r[2] if r[2] is not None else -1, r[0] or ""))
        items, errors = items_from_rows(rows, resolver)
        return items, errors, lambda numbers: {no: row_line(rows[no - 1]) for no in numbers}

    def copy(
        self, spark: Any, options: ExtractOptions, items: list, resolver: Resolver, tmp: str, started: dt.datetime
    ) -> list[dict]:
        """The map-only stage: one slice of the sorted list per task; returns the tasks' results."""
        if not items:
            return []
        total = sum(it.weight for it in items)
        n = options.partitions or max(spark.sparkContext.defaultParallelism, math.ceil(total / BYTES_PER_TASK))
        slices = [pack_items(s) for s in plan_tasks(items, n)]
        real_root = resolver.real_roots()
        max_bytes, verify, output_format = options.max_bytes, options.verify, options.output_format

        def task(index, slices_iter):
            for packed in slices_iter:  # exactly one slice per partition
                yield extract_items(
                    index,
                    unpack_items(packed),
                    tmp,
                    max_bytes=max_bytes,
                    verify=verify,
                    real_root=real_root,
                    when=started,
                    output_format=output_format,
                )

        return spark.sparkContext.parallelize(slices, len(slices)).mapPartitionsWithIndex(task).collect()

    def started_at(self) -> dt.datetime:
        """The time the output archives' header records (warcinfo, ARC filedesc) carry: the run's
        start; a caller that needs the same bytes on every run (jobs/ondemand.py) fixes it."""
        return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)

    def run(self, spark: Any, options: ExtractOptions) -> JobResult:
        started = self.started_at()
        with self.steps("read_list"):
            resolver = Resolver(options.archives)
            items, parse_errors, line_text = self.read_list(spark, options, resolver)
            lines = len(items) + len(parse_errors)
        with self.work_dir(spark, options) as work:
            with self.steps("copy"):
                results = self.copy(spark, options, items, resolver, work.path, started)
                del items
            with self.steps("commit"):
                summary = assemble(work.path, results, parse_errors, lines, line_text)
                work.publish(f"extracted {summary['extracted']} of {lines}, failed {summary['failed']}\n")
        if summary["failed"]:
            log.error(
                "extract: %d of %d lines failed, see %s",
                summary["failed"],
                lines,
                storage.join(resolved(options.output, "output"), ERRORS),
            )
        if options.record_ids:
            gone = rids.missing(parse_errors)
            summary.update(
                record_store=options.record_store,
                record_ids_missing=len(gone),
                missing_record_ids=gone[: rids.SUMMARY_IDS],
            )
        summary.update(
            input=options.input,
            output=options.output,
            verify=options.verify,
            output_format=options.output_format,
            seconds_by_phase=self.steps.seconds,
        )
        return JobResult(ok=summary["failed"] == 0, summary=summary, output=options.output)


def run(spark: Any, options: ExtractOptions) -> JobResult:
    """The extract job as a function: ``options`` resolved and run in ``spark`` (None: a
    session of its own), as ``main`` does with a command line (:meth:`SparkJob.call`)."""
    return ExtractJob().call(options, spark)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return ExtractJob().main(argv, spark)


if __name__ == "__main__":
    sys.exit(main())
