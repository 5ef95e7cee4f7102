"""The pages of an on-demand request, selected from published preprocessed days into one folder
in the preprocessed layout (``language=xxx/part-YYYY-MM-DD-NAME``), which the index pipeline
then reads as it reads a day (docs/ondemand.md).

Only the requested languages' partitions are listed. When every URL pattern can be reduced to
hosts (:func:`lib.ondemand.patterns.host_test`) and the day has a valid host index
(:mod:`lib.pages.hostindex`), only the files and row groups holding a candidate host are opened;
otherwise the day is scanned (every file), and the reason counted. Per file, the ``url`` and
``url_host`` columns (and those ``where`` names) of those row groups are read first; the whole
rows are read only from the row groups that hold a selected page. File names start with the
day, so the index numbers the documents across days in day order, then in each day's file and
row order. Pages that say noindex or that their day's robots.txt disallows are left out as
``jobs/index.py`` leaves them out (:mod:`lib.index.indexable`), counted per reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import shutil
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lib.extract.parquet_index import _mentioned
from lib.index import indexable
from lib.ondemand.patterns import Pattern, host_test, selects
from lib.pages import hostindex, robotstxt
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.pages.schema import ROW_GROUP_ROWS
from lib.runtime.maptasks import map_tasks
from lib.store import layout, storage

RESULT = pa.schema(
    [
        ("day", pa.string()),
        ("language", pa.string()),
        ("rows", pa.int64()),  # pages in the file
        ("selected", pa.int64()),  # matched by the patterns and where
        ("excluded", pa.int64()),  # matched, but on the take-down list (ROOT/_exclusions.jsonl)
        ("noindex", pa.int64()),
        ("robots_txt_disallowed", pa.int64()),
        ("kept", pa.int64()),  # selected and indexable: the sub-index's pages
        ("row_groups_read", pa.int64()),
        ("row_groups", pa.int64()),
    ]
)
_ROW = "__row"
#: page files a selection task takes at most: a Spark task's fixed cost is shared by several
#: small files (a day of small files costs its pages, not its file count), while the tasks stay
#: many enough for every core
FILES_PER_TASK = 8


@dataclass(frozen=True)
class SourceFile:
    day: dt.date
    day_dir: str  # local folder of the preprocessed day
    language: str
    path: str
    groups: tuple[int, ...] | None = None  # the row groups that may hold a selected page (None: every one)

    @property
    def target(self) -> str:
        """The file's name in the selection folder: the day first, so docids follow the days."""
        return os.path.join(layout.language_dir(self.language), f"part-{self.day}-{os.path.basename(self.path)}")


def source_files(
    day_dirs: list[tuple[dt.date, str]], languages: tuple[str, ...], patterns: tuple[Pattern, ...] = ()
) -> tuple[list[SourceFile], dict[str, Any]]:
    """The page files of the requested languages' partitions of every day (other partitions
    are not listed) that may hold a selected page, in day, language, file order, and how far
    the host index narrowed them: ``days_by_host_index``, ``days_scanned`` (per reason),
    ``files_skipped``, and per day read by its index the pages of its requested languages
    (``pages_by_day``, to count the pages never read)."""
    test = host_test(patterns)
    out: list[SourceFile] = []
    pruning: dict[str, Any] = {"days_by_host_index": 0, "days_scanned": {}, "files_skipped": 0, "pages_by_day": {}}
    for day, folder in day_dirs:
        local = storage.local_path(folder)
        if test is None:
            plan = hostindex.Plan(scan="URL patterns not reducible to hosts" if patterns else "no URL pattern")
        else:
            plan = hostindex.plan(local, languages, test)
        files = hostindex.page_files(local, languages)
        if plan.scan is not None:
            pruning["days_scanned"][plan.scan] = pruning["days_scanned"].get(plan.scan, 0) + 1
            out += [
                SourceFile(day, local, layout.language_of(f.split("/")[0]) or "", os.path.join(local, f)) for f in files
            ]
            continue
        pruning["days_by_host_index"] += 1
        pruning["files_skipped"] += len(files) - len(plan.groups)
        out += [
            SourceFile(day, local, layout.language_of(f.split("/")[0]) or "", os.path.join(local, f), tuple(g))
            for f, g in plan.groups.items()
        ]
        pruning["pages_by_day"][day.isoformat()] = plan.rows
    return out, pruning


def _mask(table: pa.Table, patterns: tuple[Pattern, ...], where: str | None, lang: str) -> list[int]:
    """Row numbers of ``table`` the patterns and ``where`` select."""
    urls = table.column("url").to_pylist()
    hosts = table.column("url_host").to_pylist()
    rows = [i for i, (u, h) in enumerate(zip(urls, hosts)) if u is not None and selects(list(patterns), u, h)]
    if where is None or not rows:
        return rows
    t = table.take(rows).append_column(_ROW, pa.array(rows, pa.int64()))
    if "language" not in t.schema.names:
        t = t.append_column("language", pa.array([lang] * t.num_rows, pa.string()))
    con = duckdb.connect(config={"threads": 1})
    try:
        con.register("pages", t)
        return [r[0] for r in con.sql(f'SELECT "{_ROW}" FROM pages WHERE {where} ORDER BY "{_ROW}"').fetchall()]
    finally:
        con.close()


def select_file(
    src: SourceFile,
    raw: str,
    dest: str,
    patterns: tuple[Pattern, ...],
    where: str | None,
    policy: indexable.Policy,
    excl: Exclusions = NO_EXCLUSIONS,
) -> dict[str, Any]:
    """One page file's selected, indexable pages written to ``dest/<target>`` (nothing when none);
    ``raw``: a scratch folder for the selected rows before the noindex/robots.txt filter."""
    pf = pq.ParquetFile(src.path)
    names = pf.schema_arrow.names
    cols = ["url", "url_host"] + (
        [n for n in names if n not in ("url", "url_host") and _mentioned(n, where)] if where else []
    )
    probed = list(range(pf.num_row_groups)) if src.groups is None else list(src.groups)
    probe = pf.read(columns=cols) if src.groups is None else pf.read_row_groups(probed, columns=cols)
    rows = _mask(probe, patterns, where, src.language)  # row numbers within the probed row groups
    out = {"day": src.day.isoformat(), "language": src.language, "rows": probe.num_rows, "selected": len(rows)}
    if excl and rows:  # a take-down holds for sub-indices as for the days (docs/operations.md)
        hit = excl.mask(probe.column("url").take(rows)).to_pylist()
        out["excluded"] = sum(hit)
        rows = [r for r, h in zip(rows, hit) if not h]
    else:
        out["excluded"] = 0
    out.update(noindex=0, robots_txt_disallowed=0, kept=0, row_groups=pf.num_row_groups, row_groups_read=0)
    if not rows:
        return out
    starts, n = [], 0
    for g in probed:
        starts.append(n)
        n += pf.metadata.row_group(g).num_rows
    hits = sorted({_group_of(starts, r) for r in rows})  # indexes into probed
    # only the row groups holding a selected page are read whole
    table = pf.read_row_groups([probed[i] for i in hits])
    offset, base = {}, 0
    for i in hits:
        offset[i] = base - starts[i]
        base += pf.metadata.row_group(probed[i]).num_rows
    picked = table.take([r + offset[_group_of(starts, r)] for r in rows])
    raw_path = os.path.join(raw, src.target)
    os.makedirs(os.path.dirname(raw_path), exist_ok=True)
    pq.write_table(picked, raw_path, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    rules = _rules(src.day_dir, policy.agents)
    f = indexable.filter_file(raw_path, os.path.join(dest, src.target), rules, policy.honour)
    left = f["left_out"].column("reason").to_pylist() if policy.honour else []
    noindex = sum(1 for r in left if r == "noindex")
    out.update(
        noindex=noindex,
        robots_txt_disallowed=len(left) - noindex,
        kept=len(rows) - len(left),
        row_groups_read=len(hits),
    )
    return out


@functools.lru_cache(maxsize=4)
def _rules(day_dir: str, agents: tuple[str, ...]) -> robotstxt.RobotsRules:
    """The day's robots.txt rules (read once per day and worker, not once per file)."""
    return robotstxt.RobotsRules(indexable.day_robots(day_dir)[0], agents)


def _group_of(starts: list[int], row: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= row:
            lo = mid
        else:
            hi = mid - 1
    return lo


def select_pages(
    spark: Any,
    files: list[SourceFile],
    dest: str,
    patterns: tuple[Pattern, ...],
    where: str | None,
    policy: indexable.Policy = indexable.Policy(),
    excl: Exclusions = NO_EXCLUSIONS,
) -> list[dict[str, Any]]:
    """Every file's selection written into ``dest`` (up to :data:`FILES_PER_TASK` consecutive
    files a Spark task); the per-file counts (:data:`RESULT`), in file order."""
    raw = dest + ".raw"
    slots = spark.sparkContext.defaultParallelism
    tasks = min(len(files), max(2 * slots, -(-len(files) // FILES_PER_TASK)))

    def task(batches):
        for b in batches:
            rows = [select_file(files[i], raw, dest, patterns, where, policy, excl) for i in b.column(0).to_pylist()]
            yield pa.RecordBatch.from_pylist(rows, schema=RESULT)

    os.makedirs(dest, exist_ok=True)
    try:
        return map_tasks(spark, len(files), task, RESULT, partitions=tasks)
    finally:
        # the kept pages are links into raw where nothing was left out: make them files first
        for d, _, names in os.walk(dest):
            for n in names:
                p = os.path.join(d, n)
                if os.path.islink(p):
                    target = os.path.realpath(p)
                    os.remove(p)
                    os.replace(target, p)
        shutil.rmtree(raw, ignore_errors=True)
