"""Catalogue queries over the Parquet with DuckDB (embedded): the WarcManager views.

Every function takes the bucket ROOT (a local or cluster-filesystem path: DuckDB here has
no S3 extension) and returns plain rows (lists of dicts) that the CLI prints as a table
or JSON and the HTTP API returns as JSON. Only days whose preprocess folder has
``_SUCCESS`` are read.
"""

from __future__ import annotations

import datetime as dt
import decimal
import glob
import json
import os
from typing import Any

import duckdb

from lib.catalogue import digeststore, payload_table, urldb
from lib.catalogue.keys import normalize_url
from lib.errors import DailysliceError
from lib.store import layout, storage


def to_json(obj: Any) -> bytes:
    """JSON of query results: dates/times as ISO 8601, decimals as numbers."""

    def default(o: Any) -> Any:
        if isinstance(o, (dt.datetime, dt.date)):
            return o.isoformat()
        if isinstance(o, decimal.Decimal):
            return float(o)
        if isinstance(o, (set, tuple)):
            return list(o)
        raise TypeError(f"not JSON serializable: {type(o).__name__}")

    return json.dumps(obj, default=default, ensure_ascii=False).encode("utf-8")


class QueryError(DailysliceError, ValueError):
    """Bad query arguments; the message says which."""


class NotFound(QueryError):
    """The day or the URL database asked for does not exist."""


def connect():
    con = duckdb.connect()
    con.execute("SET TimeZone='UTC'")
    return con


def _rows(con, sql: str, params: list | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def local_root(root: str) -> str:
    """ROOT as a local path (queries cannot read S3)."""
    if storage.is_s3(root):
        raise QueryError("queries need ROOT on a local or cluster filesystem (DuckDB has no S3 support here)")
    return storage.local_path(root)


def day_dir(root: str, day: dt.date) -> str:
    """The preprocess folder of ``day`` under ROOT."""
    return layout.day_path(local_root(root), layout.PREPROCESSED, day)


def list_days(root: str) -> list[dt.date]:
    """Completed preprocess days (folder with ``_SUCCESS``), oldest first."""
    out = []
    for d in glob.glob(os.path.join(local_root(root), layout.PREPROCESSED, "*", "*")):
        day = layout.day_of(d)
        if day and os.path.exists(os.path.join(d, layout.SUCCESS)):
            out.append(day)
    return sorted(out)


def parse_day(text: str | dt.date) -> dt.date:
    if isinstance(text, dt.date):
        return text
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise QueryError(f"day must be YYYY-MM-DD, got {text!r}") from None


def _capture_files(root: str, days: list[dt.date] | None = None) -> list[str]:
    files = []
    for d in days if days is not None else list_days(root):
        files += sorted(glob.glob(os.path.join(day_dir(root, d), layout.CAPTURES, "*.parquet")))
    return files


def _checked_day(root: str, day: str | dt.date) -> dt.date:
    d = parse_day(day)
    if d not in list_days(root):
        raise NotFound(f"no completed preprocess output for {d} under {day_dir(root, d)}")
    return d


def captures(root: str, url: str) -> list[dict[str, Any]]:
    """Every capture of ``url`` (as given or normalized) over all days, oldest first.

    ``duplicate`` is true when an earlier capture of the URL had the same payload digest;
    ``duplicate_of`` is then the date of the first capture with that digest."""
    files = _capture_files(root)
    if not files:
        return []
    sql = """
      WITH c AS (
        SELECT * FROM read_parquet(?) WHERE url = ? OR url = ?
      ), o AS (
        SELECT *, row_number() OVER (PARTITION BY payload_digest ORDER BY warc_date, warc_file, warc_offset) AS n,
               min(warc_date) OVER (PARTITION BY payload_digest) AS first_with_digest
        FROM c
      )
      SELECT warc_date, url, record_type, http_status, mime_type, payload_digest,
             payload_digest IS NOT NULL AND n > 1 AS duplicate,
             CASE WHEN payload_digest IS NOT NULL AND n > 1 THEN first_with_digest END AS duplicate_of,
             kept, warc_file, warc_offset, warc_length
      FROM o ORDER BY warc_date, warc_file, warc_offset"""
    con = connect()
    return _rows(con, sql, [files, url, normalize_url(url)])


def search(
    root: str, prefix: str | None = None, contains: str | None = None, limit: int = 100, db: str | None = None
) -> list[dict[str, Any]]:
    """URLs of the URL database by prefix and/or substring, in URL order."""
    if not prefix and not contains:
        raise QueryError("search needs a prefix or a substring")
    db = db or os.path.join(local_root(root), "urldb")
    table = urldb.table_path(db)
    if table is None:
        raise NotFound(f"no URL database at {db} (run the catalogue build first)")
    where, params = [], [os.path.join(table, "**", "*.parquet")]
    if prefix:
        where.append("starts_with(url, ?)")
        params.append(prefix)
    if contains:
        where.append("contains(url, ?)")
        params.append(contains)
    sql = f"""SELECT url, id, first_seen, last_seen, captures, n_digests, days_seen, changed_days
              FROM read_parquet(?, hive_partitioning = true) WHERE {" AND ".join(where)}
              ORDER BY url LIMIT {int(limit)}"""
    return _rows(connect(), sql, params)


def digest(root: str, digests_: str | list[str], db: str | None = None) -> list[dict[str, Any]]:
    """Every capture whose payload digest is one of ``digests_`` (``sha1:BASE32``, bare base32
    or hex SHA-1; one or many) over the days of the URL database: URL, day, time, record type,
    status, MIME and the archive pointer (file, offset, length), by digest then time. From the
    digest store (linear hashing, lib.catalogue.digeststore) when it holds every day of the
    database (it then also lists files registered since), else from the database's digest table.
    QueryError names a malformed digest; NotFound when there is no URL database."""
    wanted = [digests_] if isinstance(digests_, str) else list(digests_)
    if not wanted:
        raise QueryError("give at least one digest")
    try:
        keys = [payload_table.parse_digest(d) for d in wanted]
    except payload_table.DigestError as e:
        raise QueryError(str(e)) from None
    default = os.path.join(local_root(root), "urldb")
    db = db or default
    state = urldb.read_state(db)
    if not state.get("table"):
        raise NotFound(f"no URL database at {db} (run the catalogue build first)")
    store = os.path.join(local_root(root), digeststore.FOLDER)
    if db == default and set(state["days"]) <= digeststore.days(store, state["days"]):
        try:  # the key store answers in one step per digest, whatever the number of days
            return digeststore.captures(local_root(root), keys)
        except digeststore.Corrupt:  # a torn store: the digest table answers until it is rebuilt
            pass
    return payload_table.rows(payload_table.lookup(payload_table.day_files(db, state["days"]), keys))


def files(root: str, day: str | dt.date) -> list[dict[str, Any]]:
    """Archive files of a day with their record counts (from the captures) and the
    preprocess error count per file (from ``_errors.jsonl``)."""
    d = _checked_day(root, day)
    caps = _capture_files(root, [d])
    errors = error_counts(day_dir(root, d))["by_file"]
    if not caps:
        return []
    sql = """SELECT warc_file, count(*) AS records,
                    count(*) FILTER (WHERE record_type = 'response') AS responses,
                    count(*) FILTER (WHERE record_type = 'revisit') AS revisits,
                    count(*) FILTER (WHERE record_type = 'resource') AS resources,
                    count(*) FILTER (WHERE kept) AS pages,
                    sum(warc_length) AS record_bytes,
                    min(warc_date) AS first_date, max(warc_date) AS last_date
             FROM read_parquet(?) GROUP BY warc_file ORDER BY warc_file"""
    rows = _rows(connect(), sql, [caps])
    for r in rows:
        r["errors"] = errors.get(r["warc_file"], 0)
    return rows


def records(root: str, file: str, day: str | dt.date | None = None) -> list[dict[str, Any]]:
    """The capture records of one archive file (full URI, or a name it ends with), by offset."""
    days = [_checked_day(root, day)] if day else None
    caps = _capture_files(root, days)
    if not caps:
        return []
    sql = """SELECT warc_offset, warc_length, record_type, warc_date, url, http_status, mime_type,
                    payload_digest, kept, record_id, warc_file
             FROM read_parquet(?) WHERE warc_file = ? OR ends_with(warc_file, ?)
             ORDER BY warc_file, warc_offset"""
    return _rows(connect(), sql, [caps, file, "/" + file.lstrip("/")])


def error_counts(day_path: str) -> dict[str, Any]:
    """Bad records of a day's run from ``_errors.jsonl``: total, by reason, by file."""
    path = os.path.join(day_path, layout.ERRORS)
    total = 0
    by_reason: dict[str, int] = {}
    by_file: dict[Any, int] = {}  # the file named by the error line (None when it names none)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    e = json.loads(line)
                except json.JSONDecodeError:
                    e = {"reason": "unreadable error line", "file": f"{path}:{n}"}
                total += 1
                reason = str(e.get("reason", "unknown"))
                by_reason[reason] = by_reason.get(reason, 0) + 1
                by_file[e.get("file")] = by_file.get(e.get("file"), 0) + 1
    return {"total": total, "by_reason": dict(sorted(by_reason.items(), key=lambda kv: -kv[1])), "by_file": by_file}


def run_stats(day_path: str) -> dict[str, Any]:
    """The preprocess run's ``_stats.json`` (empty when missing)."""
    path = os.path.join(day_path, layout.STATS)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _counts(con, sql: str, params: list) -> list[dict[str, Any]]:
    return [{"key": r["k"], "count": r["n"]} for r in _rows(con, sql, params)]


def stats(root: str, day: str | dt.date, top: int = 15) -> dict[str, Any]:
    """Per-day statistics: record counts by type, language, MIME, status and host,
    duplicate share, page size histogram and the run's error counts."""
    d = _checked_day(root, day)
    return day_stats(day_dir(root, d), d, top, previous_day_path(root, d))


def previous_day_path(root: str, day: dt.date) -> str | None:
    """Preprocess folder of the last completed day before ``day`` (None if there is none)."""
    try:
        earlier = [d for d in list_days(root) if d < day]
    except QueryError:
        return None
    return day_dir(root, earlier[-1]) if earlier else None


def day_stats(path: str, d: dt.date, top: int = 15, prev_path: str | None = None) -> dict[str, Any]:
    """:func:`stats` of the preprocess output folder ``path`` (any location); ``prev_path``
    is the previous day's folder, for captures unchanged since then."""
    con = connect()
    caps = sorted(glob.glob(os.path.join(path, layout.CAPTURES, "*.parquet")))
    prev_caps = sorted(glob.glob(os.path.join(prev_path, layout.CAPTURES, "*.parquet"))) if prev_path else []
    pages = sorted(glob.glob(os.path.join(path, layout.language_dir("*"), "*.parquet")))
    out: dict[str, Any] = {
        "day": d.isoformat(),
        "captures": 0,
        "urls": 0,
        "pages": 0,
        "by_record_type": [],
        "by_mime": [],
        "by_status": [],
        "top_hosts": [],
        "duplicates": {},
        "by_language": [],
        "page_sizes": [],
    }
    if caps:
        src = "read_parquet(?)"
        tot = _rows(
            con, f"SELECT count(*) AS n, count(DISTINCT url) AS u, count(*) FILTER (WHERE kept) AS p FROM {src}", [caps]
        )[0]
        out.update(captures=tot["n"], urls=tot["u"], kept=tot["p"])
        out["by_record_type"] = _counts(
            con, f"SELECT record_type AS k, count(*) AS n FROM {src} GROUP BY 1 ORDER BY 2 DESC, 1", [caps]
        )
        out["by_mime"] = _counts(
            con,
            f"SELECT coalesce(nullif(mime_type, ''), '(none)') AS k, count(*) AS n FROM {src} GROUP BY 1 ORDER "
            f"BY 2 DESC, 1 LIMIT {top}",
            [caps],
        )
        out["by_status"] = _counts(
            con,
            f"SELECT coalesce(CAST(http_status AS VARCHAR), '(none)') AS k, count(*) AS n FROM {src} GROUP BY 1 "
            "ORDER BY 2 DESC, 1",
            [caps],
        )
        # hosts of hierarchical URLs; others (dns:, urn:) are grouped by scheme, e.g. "(dns:)"
        out["top_hosts"] = _counts(
            con,
            f"""SELECT coalesce(nullif(lower(regexp_extract(url,
                                               '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/?#]*@)?([^:/?#]*)', 1)), ''),
                                               '(' || lower(split_part(url, ':', 1)) || ':)') AS k,
                                           count(*) AS n FROM {src} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT {top}""",
            [caps],
        )
        # duplicate: same URL and digest earlier that day; unchanged: same URL and digest on
        # the previous completed day (the crawl's usual re-visit), first time today.
        prev = (
            "SELECT DISTINCT url, payload_digest FROM read_parquet(?)"
            if prev_caps
            else "SELECT NULL::VARCHAR AS url, NULL::VARCHAR AS payload_digest WHERE false"
        )
        dup = _rows(
            con,
            f"""
            WITH t AS (SELECT url, payload_digest, record_type,
                              payload_digest IS NOT NULL AND row_number() OVER (PARTITION BY url, payload_digest
                                  ORDER BY warc_date, warc_file, warc_offset) > 1 AS again FROM {src}),
                 p AS ({prev})
            SELECT count(*) FILTER (WHERE record_type = 'revisit') AS revisit,
                   count(*) FILTER (WHERE record_type <> 'revisit' AND again) AS duplicate,
                   count(*) FILTER (WHERE record_type <> 'revisit' AND NOT again AND p.url IS NOT NULL) AS unchanged,
                   count(*) FILTER (WHERE record_type <> 'revisit' AND NOT again AND p.url IS NULL) AS unique
            FROM t LEFT JOIN p ON t.url = p.url AND t.payload_digest = p.payload_digest""",
            [caps] + ([prev_caps] if prev_caps else []),
        )[0]
        out["duplicates"] = dup
    if pages:
        src = "read_parquet(?, hive_partitioning = true)"
        out["pages"] = _rows(con, f"SELECT count(*) AS n FROM {src}", [pages])[0]["n"]
        out["by_language"] = _counts(
            con, f"SELECT language AS k, count(*) AS n FROM {src} GROUP BY 1 ORDER BY 2 DESC, 1", [pages]
        )
        # log2 buckets: bucket b holds sizes in [2^b, 2^(b+1)); 0 bytes gets its own bucket -1
        out["page_sizes"] = [
            {"bucket": r["b"], "count": r["n"]}
            for r in _rows(
                con,
                f"""
            SELECT CASE WHEN coalesce(content_length, 0) <= 0 THEN -1 ELSE floor(log2(content_length))::INT END AS b,
                   count(*) AS n FROM {src} GROUP BY 1 ORDER BY 1""",
                [pages],
            )
        ]
    out["errors"] = {k: v for k, v in error_counts(path).items() if k != "by_file"}
    run = run_stats(path)
    out["run"] = run.get("totals", run)
    out["health"] = run.get("health")  # lib.preprocess.health's block; None for days preprocessed before it
    return out
