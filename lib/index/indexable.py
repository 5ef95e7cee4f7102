"""Which of a day's pages the index takes: not those that say ``noindex``, nor those the day's
own robots.txt disallows (docs/robots.md).

The preprocessed day keeps every page, marked (``ows_index``, ``robots``); the index job reads
a copy of the day without the pages it leaves out, as it reads a day without excluded URLs
(:mod:`lib.pages.exclude`): files with nothing to leave out are linked, the others rewritten.
Each left-out page is listed (record id, URL, reason) in the index's ``_left_out.parquet``,
so an operator sees what was held back and why.

The robots.txt rules come from the day's captures (``_captures/``, column ``robots_txt``):
every robots.txt response the day's archives hold, whichever archive holds the page. A
page whose origin has no robots.txt that day is taken: nothing is assumed. Plain pyarrow
per file; the job runs one Spark task per file (:func:`filter_day`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.index.run_stats import SignalCounts
from lib.pages import robotstxt
from lib.pages.exclude import _place
from lib.pages.schema import ROW_GROUP_ROWS
from lib.runtime.maptasks import map_tasks
from lib.store import layout

LEFT_OUT = "_left_out.parquet"
LEFT_OUT_SCHEMA = pa.schema([("record_id", pa.string()), ("url", pa.string()), ("reason", pa.string())])
_RESULT = pa.schema(
    [
        ("rows", pa.int64()),
        ("noindex", pa.int64()),
        ("robots_txt_disallowed", pa.int64()),
        ("robots_txt_allowed", pa.int64()),
        ("left_out", pa.binary()),  # the file's LEFT_OUT_SCHEMA rows, as Arrow IPC
    ]
)


@dataclass(frozen=True)
class Policy:
    """What the index honours: ``honour`` False indexes every page (the counts are still made);
    ``agents``: the robots.txt product tokens checked (a page is left out if any is disallowed)."""

    honour: bool = True
    agents: tuple[str, ...] = robotstxt.DEFAULT_AGENTS


def day_robots(day: str) -> tuple[list[robotstxt.RobotsRecord], list[str]]:
    """The robots.txt captures of the local preprocessed day ``day`` (its ``_captures/``), and
    the capture files that could not be read (their rules are missing: the caller reports them)."""
    folder = os.path.join(day, layout.CAPTURES)
    out: list[robotstxt.RobotsRecord] = []
    unreadable: list[str] = []
    cols = ["url", "http_status", "warc_date", "robots_txt"]
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not name.endswith(".parquet") or name[0] in "._":
            continue
        try:
            pf = pq.ParquetFile(os.path.join(folder, name))
            if "robots_txt" not in pf.schema_arrow.names:  # a day preprocessed before the column existed
                continue
            t = pf.read(columns=cols)
        except (OSError, pa.ArrowException) as e:
            unreadable.append(f"{name}: {e}")
            continue
        t = t.filter(pc.is_valid(t.column("robots_txt")))
        for url, status, date, body in zip(*(t.column(c).to_pylist() for c in cols)):
            if status is None:
                continue
            redirect = 300 <= status <= 399  # preprocess keeps a redirect's Location in place of its body
            where = body.decode("utf-8", "replace") if redirect else None
            rec = robotstxt.robots_record(url, status, b"" if redirect else body, date, where)
            if rec is not None:
                out.append(rec)
    return out, unreadable


def filter_file(src: str, dest: str, rules: robotstxt.RobotsRules | None, honour: bool) -> dict[str, Any]:
    """One page file without its pages that say noindex or that ``rules`` disallow (``honour``
    False: all kept); returns the counts and the left-out rows."""
    names = set(pq.read_schema(src).names)
    cols = ["record_id", "url"] + (["ows_index"] if "ows_index" in names else [])
    t = pq.read_table(src, columns=cols)
    n = t.num_rows
    noindex = (
        pc.fill_null(pc.invert(t.column("ows_index")), False)
        if "ows_index" in names
        else pa.array([False] * n, pa.bool_())
    )
    verdicts = robotstxt.verdicts(t.column("url"), rules) if rules is not None and len(rules) else [(None, "")] * n
    disallowed = pa.array([v is False for v, _ in verdicts], pa.bool_())
    leave = pc.or_(noindex, disallowed)
    reasons = [
        "noindex" if ni else reason for ni, (v, reason) in zip(noindex.to_pylist(), verdicts) if ni or v is False
    ]
    out = {
        "rows": n,
        "noindex": pc.sum(noindex).as_py() or 0,
        "robots_txt_disallowed": sum(1 for v, _ in verdicts if v is False),
        "robots_txt_allowed": sum(1 for v, _ in verdicts if v is True),
    }
    left = t.filter(leave).select(["record_id", "url"]) if honour else t.slice(0, 0).select(["record_id", "url"])
    out["left_out"] = left.append_column("reason", pa.array(reasons if honour else [], pa.string()))
    if not honour or not pc.any(leave).as_py():
        _place(src, dest, "symlink")
        return out
    kept = pq.read_table(src).filter(pc.invert(leave))
    if kept.num_rows:  # a file left without pages is not written, as preprocess writes none
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        pq.write_table(kept, dest + ".tmp", compression="zstd", row_group_size=ROW_GROUP_ROWS)
        os.replace(dest + ".tmp", dest)
    return out


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, LEFT_OUT_SCHEMA) as w:
        w.write_table(table.cast(LEFT_OUT_SCHEMA))
    return sink.getvalue().to_pybytes()


@dataclass
class Signals:
    """What :func:`filter_day` left out: the counts (``_stats.json``'s ``signals``) and the
    left-out rows (a :data:`LEFT_OUT_SCHEMA` table, input order)."""

    counts: SignalCounts
    left_out: pa.Table


def filter_day(spark: Any, src: str, dest: str, policy: Policy = Policy()) -> Signals:
    """The local preprocessed day ``src`` as ``dest`` (page files only, module doc), one Spark
    task per page file; returns the counts and the left-out rows and writes nothing else."""
    records, unreadable = day_robots(src)
    rules = robotstxt.RobotsRules(records, policy.agents)  # counted even when not honoured
    files: list[str] = []
    for d, _, names in os.walk(src):
        rel = os.path.relpath(d, src)
        if rel.split(os.sep, 1)[0].startswith(layout.LANG_PREFIX):
            files += [os.path.join(rel, n) for n in sorted(names) if n.endswith(".parquet") and n[0] not in "._"]
    files.sort()

    def task(batches):
        for b in batches:
            rows = []
            for i in b.column(0).to_pylist():
                r = filter_file(os.path.join(src, files[i]), os.path.join(dest, files[i]), rules, policy.honour)
                rows.append(dict(r, left_out=_ipc(r["left_out"])))
            yield pa.RecordBatch.from_pylist(rows, schema=_RESULT)

    results = map_tasks(spark, len(files), task, _RESULT)
    if not files:
        os.makedirs(dest, exist_ok=True)
    tables = [pa.ipc.open_stream(r["left_out"]).read_all() for r in results]
    left = pa.concat_tables(tables) if tables else LEFT_OUT_SCHEMA.empty_table()
    sums = {k: sum(r[k] for r in results) for k in ("rows", "noindex", "robots_txt_disallowed", "robots_txt_allowed")}
    counts = SignalCounts(
        **sums,
        robots_txt_origins=len(rules),
        captures_unreadable=unreadable,
        left_out=left.num_rows,
        honoured=policy.honour,
        robots_txt_agents=list(policy.agents),
    )
    return Signals(counts, left)


def write_left_out(table: pa.Table, folder: str) -> str:
    """The left-out pages as ``folder/_left_out.parquet`` (sorted by URL, so a re-run writes the same bytes)."""
    path = os.path.join(folder, LEFT_OUT)
    order = pc.sort_indices(table, sort_keys=[("url", "ascending"), ("record_id", "ascending")])
    pq.write_table(table.take(order).cast(LEFT_OUT_SCHEMA), path, compression="zstd")
    return path


def agents_option(given: Sequence[str]) -> tuple[str, ...]:
    """``--robots-txt-agents`` values (each "NAME" or "NAME,NAME"); default ``*``."""
    names = [n.strip() for a in given for n in a.split(",") if n.strip()]
    return tuple(dict.fromkeys(names)) or robotstxt.DEFAULT_AGENTS
