"""Executor side of the preprocess job: one task per group of archives or ranges of one (:mod:`lib.preprocess.plan`).

A task streams its archives one after another (one open stream at a time: one S3 connection),
writes their pages as Parquet partitioned by language (``language=xxx/part-<task>-<n>.zstd.parquet``,
a new file each time one reaches ``file_bytes``) and their captures (``_captures/part-<task>.parquet``)
with pyarrow, and returns one small row per archive (or range) with its counters and error report;
:func:`merge_results` adds up a split archive's ranges into one entry. Output
names come from the task's archives and ranges (:func:`lib.preprocess.plan.task_name`), so a retried or
speculative task overwrites its own files with the same content and nothing else; nothing is
sorted or re-encoded in the JVM, which keeps Spark's share of the two cores small.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import time
from typing import Any, BinaryIO, Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from lib.html import walk
from lib.neardup import page_column
from lib.neardup.minhash import MinHasher
from lib.pages import directives
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.pages.schema import CAPTURE_SCHEMA, OPT_IN_PAGE_COLUMNS, PAGE_SCHEMA, ROW_GROUP_ROWS
from lib.preprocess import enrich as enrichment
from lib.preprocess import filelogs, health, langid, tasktime
from lib.preprocess.archive_pages import MAX_REPORTED_PER_FILE, FileProcessor
from lib.preprocess.file_counters import DayStats, DayTotals, FileResult
from lib.preprocess.plan import Piece, task_name
from lib.store import atomic, layout, locations, s3, storage
from lib.warc.split import find_member

#: what each task returns to the driver: one row per archive or range (``start``: its first byte,
#: before the first record is found); a task's output files and its timing
#: (:mod:`lib.preprocess.tasktime`) ride on its first row
RESULT_SCHEMA = pa.schema(
    [
        ("file", pa.string()),
        ("start", pa.int64()),
        ("stats", pa.string()),
        ("errors", pa.string()),
        ("outputs", pa.list_(pa.string())),
        ("timing", pa.string()),
    ]
)
FILE_SCHEMA = PAGE_SCHEMA.remove(PAGE_SCHEMA.get_field_index("language"))
BUFFER_BYTES = 96 << 20  # pages held before a row group is written, over all languages
FILE_BYTES = 128 << 20  # a language's Parquet file of a task is closed, and the next begun, at this size


class LanguageWriter:
    """Pages of one task -> Parquet files per language, each closed at ``file_bytes`` and
    written atomically: ``part-<name>-<n>.zstd.parquet``, ``n`` counting from 0 per language."""

    def __init__(
        self,
        out_dir: str,
        name: str,
        file_bytes: int = FILE_BYTES,
        schema: pa.Schema = FILE_SCHEMA,
        minhash: MinHasher | None = None,
    ):
        self.schema = schema  # FILE_SCHEMA plus the enrichment plugins' columns
        self.out_dir = out_dir
        self.name = name
        self.file_bytes = file_bytes
        self.buffers: dict[str, list[pa.RecordBatch]] = {}
        self.buffered_rows: dict[str, int] = {}
        self.buffered_bytes = 0
        self.writers: dict[str, tuple[pq.ParquetWriter, str, str]] = {}
        self.counters: dict[str, int] = {}
        self.done: list[str] = []
        self.minhash = minhash  # the signatures of each batch added (None: the column is null)
        # CPU seconds of signatures, Arrow conversion and Parquet writing
        self.cpu = {"minhash": 0.0, "arrow": 0.0, "parquet": 0.0}

    def add(self, rows: list[dict[str, Any]]) -> None:
        self.cpu["minhash"] += page_column.add_signatures(rows, self.minhash)
        by_lang: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_lang.setdefault(r["language"], []).append(r)
        for lang, part in by_lang.items():
            c0 = time.process_time()
            batch = pa.RecordBatch.from_pylist(part, schema=self.schema)
            self.cpu["arrow"] += time.process_time() - c0
            self.buffers.setdefault(lang, []).append(batch)
            self.buffered_rows[lang] = self.buffered_rows.get(lang, 0) + batch.num_rows
            self.buffered_bytes += batch.nbytes
            if self.buffered_rows[lang] >= ROW_GROUP_ROWS:
                self._flush(lang)
        if self.buffered_bytes > BUFFER_BYTES:
            for lang in list(self.buffers):
                self._flush(lang)

    def _flush(self, lang: str) -> None:
        batches = self.buffers.pop(lang, [])
        self.buffered_rows.pop(lang, None)
        if not batches:
            return
        c0 = time.process_time()
        self.buffered_bytes -= sum(b.nbytes for b in batches)
        if lang not in self.writers:
            n = self.counters.get(lang, 0)
            self.counters[lang] = n + 1
            final = os.path.join(self.out_dir, layout.language_dir(lang), layout.pages_part(f"{self.name}-{n:05d}"))
            os.makedirs(os.path.dirname(final), exist_ok=True)
            # hidden name: readers skip it if a killed attempt leaves it behind, remove_strays removes it
            tmp = atomic.temp_path(final)
            self.writers[lang] = (pq.ParquetWriter(tmp, self.schema, compression="zstd"), tmp, final)
        writer, tmp, _ = self.writers[lang]
        writer.write_table(pa.Table.from_batches(batches), row_group_size=ROW_GROUP_ROWS)
        self.cpu["parquet"] += time.process_time() - c0
        if os.path.getsize(tmp) >= self.file_bytes:
            self._close(lang)

    def _close(self, lang: str) -> None:
        c0 = time.process_time()
        writer, tmp, final = self.writers.pop(lang)
        writer.close()
        atomic.replace(tmp, final)
        self.cpu["parquet"] += time.process_time() - c0
        self.done.append(final)

    def close(self) -> list[str]:
        for lang in list(self.buffers):
            self._flush(lang)
        for lang in list(self.writers):
            self._close(lang)
        return sorted(self.done)


def _write_captures(out_dir: str, name: str, captures: list[dict[str, Any]]) -> str:
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(captures, schema=CAPTURE_SCHEMA), buf, compression="zstd")
    uri = storage.join(out_dir, layout.CAPTURES, layout.captures_part(name))
    storage.write_bytes(uri, buf.getvalue())
    return uri


def _open_piece(piece: Piece) -> tuple[BinaryIO | None, int]:
    """A stream at the piece's first record and that record's offset; (None, -1) for a range in
    which no member begins a record (inside one large member: the range before reads it).
    One stream serves the search for that record and the reading after it: on S3, one request
    a range (the bytes the search read are put back in front)."""
    raw = storage.open_raw(piece.uri, piece.start, piece.end)
    if piece.start == 0:
        return io.BufferedReader(raw, buffer_size=1 << 20), 0
    try:
        begin, head = find_member(raw, piece.start, piece.end)
    except BaseException:
        raw.close()
        raise
    if begin is None:
        raw.close()
        return None, -1
    return io.BufferedReader(storage.Prefixed(head, raw) if head else raw, buffer_size=1 << 20), begin


def _read_one(
    piece: Piece,
    name: str,
    writer: LanguageWriter,
    captures: list[dict[str, Any]],
    max_page_bytes: int,
    batch_rows: int,
    exclusions: Exclusions,
    plugins: Sequence[enrichment.Plugin],
    main_html: bool = False,
    robots_agents: tuple[str, ...] = directives.DEFAULT_AGENTS,
) -> dict[str, Any]:
    """Stream one archive or range into ``writer`` and ``captures``; returns its result row (no outputs)."""
    uri = piece.uri
    s3_before = s3.counters()
    enrich = enrichment.Enrichment(list(plugins))  # one per archive: its report is the archive's
    proc = FileProcessor(
        uri,
        max_page_bytes,
        name=name,
        exclusions=exclusions,
        enrich=enrich,
        main_html=main_html,
        robots_agents=robots_agents,
    )
    proc.stats.bytes = piece.length
    buf: list[dict[str, Any]] = []
    stream: BinaryIO | None = None
    try:
        stream, begin = _open_piece(piece)
    except Exception as e:  # missing file, permissions, S3 gone: the file is counted, the task goes on
        proc.stats.read += 1
        proc.stats.failed["read_error"] += 1
        proc.errors.append(
            {
                "file": uri,
                "offset": None,
                "kind": "failed",
                "reason": "read_error",
                "detail": f"{type(e).__name__}: {e}",
            }
        )
    if stream is not None:
        with stream:
            for row in proc.pages(stream, begin, piece.end):
                buf.append(row)
                if len(buf) >= batch_rows:
                    writer.add(buf)
                    buf = []
    if buf:
        writer.add(buf)
    captures.extend(proc.captures)
    s = proc.stats
    part = "" if piece.whole else f" bytes {piece.start}-{'' if piece.end is None else piece.end}"
    print(
        f"preprocess: {os.path.basename(uri)}{part}: read {s.read} kept {s.kept} skipped {sum(s.skipped.values())} "
        f"failed {sum(s.failed.values())} in {s.seconds:.1f}s",
        file=sys.stderr,
        flush=True,
    )
    # which HTML path ran on this executor: a cluster's workers may lack the compiled walker
    result = FileResult(
        **s.as_dict(),
        html_extraction=walk.status(),
        s3=s3.counters_since(s3_before),
        enrich=enrich.report() if enrich else None,
    )
    return {
        "file": uri,
        "start": piece.start,
        "stats": result.to_json(),
        "errors": "".join(json.dumps(e, default=str) + "\n" for e in proc.errors),
        "outputs": [],
    }


@dataclasses.dataclass(frozen=True)
class TaskSettings:
    """What every task of a run shares: the job's options as the tasks use them."""

    out_dir: str
    max_page_bytes: int
    batch_rows: int
    input_root: str | None = None
    exclusions: Exclusions = dataclasses.field(default_factory=lambda: NO_EXCLUSIONS)  # the one shared empty list
    file_bytes: int = FILE_BYTES
    plugins: tuple[enrichment.Plugin, ...] = ()
    main_html: bool = False
    robots_agents: tuple[str, ...] = directives.DEFAULT_AGENTS  # whose metas and X-Robots-Tag lines apply
    minhash: MinHasher | None = dataclasses.field(default_factory=MinHasher)  # the minhash column's (None: null)
    lid_model: str | None = None  # the language model the driver resolved and checked (None: the packaged one)


def process_task(files: Sequence[tuple[str, int] | Piece], settings: TaskSettings) -> list[dict[str, Any]]:
    """Process one task's archives ((uri, size) pairs) or ranges of them (:class:`Piece`) in the
    order given (the plan gives them in name order, a file's ranges by offset: the order of their
    pages in the output); returns one RESULT_SCHEMA row per archive or range, the first
    carrying the task's output files and its timing (:mod:`lib.preprocess.tasktime`). Ids and
    output names derive from the archives' paths below ``settings.input_root``
    (:func:`lib.store.locations.archive_name`), not from where they are read."""
    s = settings
    clock = tasktime.Clock()
    if s.lid_model:
        langid.use_model(s.lid_model)
    pieces = [Piece(*f) for f in files]
    names = [locations.archive_name(p.uri, s.input_root) if s.input_root else p.uri for p in pieces]
    name = task_name([n if p.whole else (n, p.start, p.end) for p, n in zip(pieces, names)])
    writer = LanguageWriter(
        storage.local_path(s.out_dir),
        name,
        s.file_bytes,
        enrichment.schema_with(file_schema(s.main_html), list(s.plugins)),
        s.minhash,
    )
    captures: list[dict[str, Any]] = []
    rows = [
        _read_one(
            p,
            arc,
            writer,
            captures,
            s.max_page_bytes,
            s.batch_rows,
            s.exclusions,
            s.plugins,
            s.main_html,
            s.robots_agents,
        )
        for p, arc in zip(pieces, names)
    ]
    if rows:
        pages = writer.close()
        c0 = time.process_time()
        filelogs.write(pages, name, rows)  # beside each page file: when, rows, bytes, errors (kept with it)
        rows[0]["outputs"] = pages + [_write_captures(s.out_dir, name, captures)]
        clock.add("parquet", time.process_time() - c0)
        for part, cpu in writer.cpu.items():
            clock.add(part, cpu)
        rows[0]["timing"] = clock.record(name, len(rows), sum(FileResult.from_json(r["stats"]).kept for r in rows))
    return rows


def make_mapper(files: Sequence[tuple[str, int] | Piece], tasks: list[list[int]], settings: TaskSettings):
    """The :func:`lib.runtime.maptasks.map_tasks` function: input rows carry indexes into ``tasks``,
    each a list of indexes into ``files`` (archives or ranges of them, found below
    ``settings.input_root``)."""

    def mapper(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for t in batch.column(0).to_pylist():
                rows = process_task([files[i] for i in tasks[t]], settings)
                yield pa.RecordBatch.from_pylist(rows, schema=RESULT_SCHEMA)

    return mapper


def file_schema(main_html: bool = False) -> pa.Schema:
    """The schema of a page file: FILE_SCHEMA, plus main_html when asked. It is marked as a
    plugin's column is (field metadata ``dailyslice.enricher``), so that the index carries it
    into the metadata store as it carries theirs (lib.index.owi.plugin_fields)."""
    schema = FILE_SCHEMA
    for name, type_, _ in OPT_IN_PAGE_COLUMNS if main_html else ():
        schema = schema.append(pa.field(name, type_).with_metadata({enrichment.PLUGIN_KEY: name}))
    return schema


def remove_strays(out_dir: str, results: list[dict[str, Any]]) -> int:
    """Delete files no successful task reported (left by killed attempts), and the per-file logs
    of page files no task reported; returns how many."""
    keep = {os.path.abspath(storage.local_path(o)) for r in results for o in r["outputs"]}
    keep |= {layout.file_log_name(p) for p in keep if p.endswith(".parquet")}
    removed = 0
    for d, _, names in os.walk(storage.local_path(out_dir)):
        for n in names:
            p = os.path.abspath(os.path.join(d, n))
            stray_log = n.startswith("_part-") and n.endswith(layout.FILE_LOG_SUFFIX)
            if p not in keep and (n.startswith(".") or n.endswith(".parquet") or stray_log):
                os.remove(p)
                removed += 1
    return removed


def merge_ranges(rows: list[dict[str, Any]], size: int) -> dict[str, Any]:
    """One file's result rows (one per range read, any order) as one: counters and seconds added
    up, ``bytes`` the file's size, the reports in offset order and capped as one file's are
    (the lines past :data:`MAX_REPORTED_PER_FILE` counted in ``errors_not_reported``)."""
    if len(rows) == 1:
        return rows[0]
    rows = sorted(rows, key=lambda r: r["start"])
    ranges = [FileResult.from_json(r["stats"]) for r in rows]
    out = ranges[0].merged(ranges, size)
    lines = [line for r in rows for line in r["errors"].splitlines(keepends=True)]
    out.errors_not_reported += max(0, len(lines) - MAX_REPORTED_PER_FILE)
    errors = "".join(lines[:MAX_REPORTED_PER_FILE])
    return {"file": rows[0]["file"], "start": 0, "stats": out.to_json(), "errors": errors}


def merge_results(
    out_dir: str,
    files: list[tuple[str, int]],
    results: list[dict[str, Any]],
    thresholds: health.Thresholds = health.Thresholds(),
) -> tuple[DayStats, int]:
    """Per-file counters -> ``_stats.json`` (with the day's ``health`` block, see
    :mod:`lib.preprocess.health`), reports -> ``_errors.jsonl`` (in input order); returns (stats, number
    of report lines). Every input file must have a result; a split file's ranges are added up
    into one entry (:func:`merge_ranges`)."""
    parts: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        parts.setdefault(r["file"], []).append(r)
    by_file = {uri: merge_ranges(parts[uri], size) for uri, size in files if uri in parts}
    missing = [uri for uri, _ in files if uri not in by_file]
    if missing:
        raise RuntimeError(f"no result for {len(missing)} input files (first: {missing[0]})")
    totals = DayTotals(files=len(files))
    per_file = []
    lines = 0
    base = storage.local_path(out_dir)
    with open(os.path.join(base, layout.ERRORS), "w") as out:
        for uri, _ in files:
            res = FileResult.from_json(by_file[uri]["stats"])
            per_file.append(res.as_dict())
            totals.add_file(res)
            report = by_file[uri]["errors"]
            out.write(report)
            lines += report.count("\n")
    with open(os.path.join(base, layout.ERRORS)) as report_lines:
        day_health = health.assess(totals.as_dict(), per_file, thresholds, report_lines)
    stats = DayStats(totals, day_health, per_file)
    with open(os.path.join(base, layout.STATS), "w") as f:
        json.dump(stats.as_dict(), f, indent=1, sort_keys=True)
    return stats, lines
