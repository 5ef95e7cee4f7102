"""Link entries: a day's edges grouped per link, runs merged, entries read over a window (DuckDB).

An entry is one row per (target, source, rel, anchor texts) with the sorted list of days on
which the source linked the target that way (``ENTRY_SCHEMA``). A day's run has one entry per
(target, source) link of the day; a merged run folds the days of equal entries into one list, so
a link seen the same way for a year is one row. Because each entry's ``rel`` and ``anchors`` hold
on every one of its days, dropping a day (a replaced re-run, a purged day) from the list is exact.
Files are Parquet sorted by (``dst_id``, ``src_id``): a look-up of one target reads the row
groups whose statistics bracket its id. Plain functions over files, no Spark.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import duckdb
import pyarrow as pa

from lib.links.urls import key

#: whitespace as Java's \s (the day's in-links collapse it so, docs/index.md): a regular expression
SPACE = r"[ \t\n\x0B\f\r]+"
#: anchor texts kept per link and day: the most frequent first, then by text
MAX_ANCHORS = 10
ENTRY_SCHEMA = pa.schema(
    [
        ("dst_id", pa.string()),
        ("src_id", pa.string()),
        ("dst_url", pa.string()),
        ("src_url", pa.string()),
        ("dst_host", pa.string()),
        ("src_host", pa.string()),
        ("rel", pa.string()),  # null: followed (some capture of the day linked it without nofollow/ugc/sponsored)
        ("anchors", pa.list_(pa.string())),
        ("days", pa.list_(pa.date32())),
    ]
)
_COLS = ", ".join(ENTRY_SCHEMA.names)


def connect(threads: int = 2, memory: str = "1GB") -> Any:
    """An in-memory DuckDB with a thread count and a memory limit (beyond which it spills)."""
    con = duckdb.connect()
    con.execute(f"SET threads = {int(threads)}; SET memory_limit = '{memory}'; SET preserve_insertion_order = false")
    return con


def _lit(values: list[str]) -> str:
    return "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def _dates(days: list[str]) -> str:
    return "[" + ", ".join(f"DATE '{d}'" for d in days) + "]::DATE[]"


def day_run(con: Any, edges: list[str], day: str, folder: str, parts: int) -> dict[int, int]:
    """The day's link entries from its graph edges (``graph/edges/*.parquet`` of the index,
    docs/index.md) into ``folder/p{q}.parquet``, one file per target partition ``q`` that has
    entries; returns the entries written per partition. Per (target, source): ``rel`` null when
    any of the day's edges followed it, else the smallest rel; the anchor texts of its edges
    (whitespace collapsed, empty ones left out), the most frequent first."""
    os.makedirs(folder, exist_ok=True)
    if not edges:
        return {}
    con.execute(
        "CREATE OR REPLACE TEMP TABLE e AS SELECT src_url, dst_url, src_host, dst_host, rel, "
        f"trim(regexp_replace(coalesce(anchor_text, ''), '{SPACE}', ' ', 'g')) AS a "
        f"FROM read_parquet({_lit(edges)}) WHERE src_url IS NOT NULL AND dst_url IS NOT NULL"
    )
    urls = con.sql(
        "SELECT DISTINCT u FROM (SELECT src_url AS u FROM e UNION ALL SELECT dst_url FROM e)"
    ).to_arrow_table()
    names = urls.column(0).to_pylist()
    keyed = [key(u, parts) for u in names]  # Python: the URL database's normalisation, not a SQL copy of it
    ids = pa.table({"u": names, "id": [k[0] for k in keyed], "part": pa.array([k[1] for k in keyed], pa.int32())})
    con.register("ids", ids)
    con.execute(
        f"""CREATE OR REPLACE TEMP TABLE day AS
        WITH k AS (SELECT d.id AS dst_id, d.part, s.id AS src_id, e.* FROM e
                   JOIN ids d ON e.dst_url = d.u JOIN ids s ON e.src_url = s.u),
             an AS (SELECT dst_id, src_id, list(a ORDER BY n DESC, a)[1:{MAX_ANCHORS}] AS anchors
                    FROM (SELECT dst_id, src_id, a, count(*) AS n FROM k WHERE a <> '' GROUP BY ALL)
                    GROUP BY dst_id, src_id),
             g AS (SELECT part, dst_id, src_id, min(dst_url) AS dst_url, min(src_url) AS src_url,
                          min(dst_host) AS dst_host, min(src_host) AS src_host,
                          CASE WHEN bool_or(rel IS NULL OR rel = '') THEN NULL ELSE min(rel) END AS rel
                   FROM k GROUP BY part, dst_id, src_id)
        SELECT g.*, coalesce(an.anchors, []::VARCHAR[]) AS anchors, [DATE '{day}'] AS days
        FROM g LEFT JOIN an USING (dst_id, src_id)"""
    )
    con.unregister("ids")
    counts = dict(con.execute("SELECT part, count(*) FROM day GROUP BY part").fetchall())
    for q in sorted(counts):
        _copy(con, f"SELECT {_COLS} FROM day WHERE part = {q} ORDER BY dst_id, src_id", part_path(folder, q))
    con.execute("DROP TABLE day; DROP TABLE e")
    return {int(q): int(n) for q, n in counts.items()}


def part_path(folder: str, q: int) -> str:
    """A run's file of target partition ``q``."""
    return os.path.join(folder, f"p{q:04d}.parquet")


def _copy(con: Any, sql: str, dest: str) -> None:
    """``sql``'s rows to ``dest`` as Parquet, under a temporary name renamed when complete; row
    groups of 16 K rows, so a look-up by target id reads little."""
    tmp = dest + ".tmp"
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    con.execute(f"COPY ({sql}) TO '{tmp}' (FORMAT parquet, ROW_GROUP_SIZE 16384, COMPRESSION zstd)")
    os.replace(tmp, dest)


def source(files: list[tuple[str, list[str]]], where: str = "TRUE") -> str:
    """SQL over entry files, each with the days to leave out of it (a run's days whose folder was
    replaced or dropped since): the entries with their other days, ``where`` applied, none left
    without a day."""
    parts = []
    for path, dead in files:
        days = f"list_filter(days, lambda d: NOT list_contains({_dates(dead)}, d))" if dead else "days"
        parts.append(f"SELECT * REPLACE ({days} AS days) FROM read_parquet('{path}') WHERE {where}")
    if not parts:  # no file: no rows, with the entries' columns
        nulls = ", ".join(f"NULL::{_sql_type(f.type)} AS {f.name}" for f in ENTRY_SCHEMA)
        return f"SELECT * FROM (SELECT {nulls}) WHERE FALSE"
    return "SELECT * FROM (" + " UNION ALL ".join(parts) + ") WHERE len(days) > 0"


def _sql_type(t: pa.DataType) -> str:
    return {"string": "VARCHAR", "list<item: string>": "VARCHAR[]", "list<item: date32[day]>": "DATE[]"}[str(t)]


def merge_part(con: Any, files: list[tuple[str, list[str]]], dest: str) -> int:
    """Entries of several runs' files of one partition into one file ``dest``: equal entries (same
    target, source, rel and anchors) with their days joined; the dead days (per file) dropped.
    Returns the entries written (nothing is written when there are none)."""
    sql = f"""SELECT dst_id, src_id, min(dst_url) AS dst_url, min(src_url) AS src_url, min(dst_host) AS dst_host,
                     min(src_host) AS src_host, rel, anchors, list_sort(list_distinct(flatten(list(days)))) AS days
              FROM ({source(files)}) GROUP BY dst_id, src_id, rel, anchors"""
    n = con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0]
    if n:
        _copy(con, f"SELECT * FROM ({sql}) ORDER BY dst_id, src_id, days[-1], rel, anchors", dest)
    return int(n)


def window_sql(files: list[tuple[str, list[str]]], first: dt.date | None, last: dt.date, where: str = "TRUE") -> str:
    """One row per link (target, source) over the days from ``first`` (None: all time) to ``last``:
    ``first_seen``, ``last_seen``, ``days_seen``, and the ``rel`` and ``anchors`` of its latest day."""
    lo = f"d >= DATE '{first.isoformat()}' AND " if first else ""
    clip = f"list_filter(days, lambda d: {lo}d <= DATE '{last.isoformat()}')"
    inner = f"""SELECT dst_id, src_id, min(dst_url) AS dst_url, min(src_url) AS src_url, min(dst_host) AS dst_host,
                      min(src_host) AS src_host, min(list_min(days)) AS first_seen, max(list_max(days)) AS last_seen,
                      sum(len(days))::INTEGER AS days_seen,
                      arg_max({{'rel': rel, 'anchors': anchors}}, list_max(days)) AS latest
               FROM (SELECT * REPLACE ({clip} AS days) FROM ({source(files, where)})) WHERE len(days) > 0
               GROUP BY dst_id, src_id"""
    # a struct, so that a null rel (followed) of the latest day is taken, not skipped as arg_max skips nulls
    return f"SELECT * EXCLUDE (latest), latest.rel AS rel, latest.anchors AS anchors FROM ({inner})"
