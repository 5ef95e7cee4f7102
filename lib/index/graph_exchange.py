"""The web graph across data centers: outbound links, and the exchange that merges them.

Each data center (DC) crawls its own hosts, so a day's ``graph/inlinks`` only counts links
found in its own crawl. This module works on *published* index days (local folders or
``s3://``; it reads ``graph/edges``, ``graph/inlinks``, the metadata files, and writes new
tables beside them):

* :func:`write_outbound`: ``graph/outbound/``: the day's edge rows (the edges schema) whose
  ``dst_host`` the day did not crawl (crawled hosts: the ``url_host`` of the day's documents
  and the ``src_host`` of its edges), one file sorted by ``dst_host``, ``dst_url``;
* :func:`exchange_day`: reads each partner's outbound folder for the same day (or the latest
  earlier one within ``lookback_days``; a missing partner is recorded, never waited for),
  keeps the rows whose ``dst_host`` this day crawled, and rewrites ``graph/inlinks`` as the
  local in-links (kept in ``graph/inlinks_local/``) merged with them, then the shards' anchor
  CIFFs (:mod:`lib.index.anchors`), then ``graph/_exchange.json`` last.

The merge is exact: for every ``dst_url`` that receives incoming edges, its row is recomputed
from the raw edge rows (the local ones from ``graph/edges`` plus the incoming ones), with the
aggregate rules of the graph step (docs/index.md, "Web graph"), so counts, distinct sources
and the top anchor texts are those the graph step would give over both crawls' edges. Rows
without incoming edges are copied. Re-running with the same inputs writes nothing; a later
partner day replaces the earlier merge (the merge always starts from ``inlinks_local``).
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import os
import shutil
import tempfile
from typing import Any

import duckdb
import pyarrow.parquet as pq

from lib.index.anchors import write_anchors
from lib.index.graph_tasks import drop_excluded
from lib.pages import exclusions as excl_mod
from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.store import layout, storage
from lib.store.s3 import client as s3_client

OUTBOUND = "outbound"
LOCAL = "inlinks_local"
RECORD = "_exchange.json"
EXCHANGED_PART = "part-exchange.parquet"  # the recomputed rows: every dst_url with incoming edges
MAX_ANCHORS = 10
_WS = r"[ \t\n\x0B\f\r]+"  # Java's \s, as the graph step collapses anchor whitespace
_EDGE_COLS = "src_url, dst_url, anchor_text, src_host, dst_host"


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _connect(tmp: str) -> Any:
    os.makedirs(tmp, exist_ok=True)
    return duckdb.connect(config={"threads": 1, "memory_limit": "1GB", "temp_directory": tmp})


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_json(uri: str) -> dict | None:
    try:
        return json.loads(storage.read_bytes(uri)) if storage.exists(uri) else None
    except ValueError:
        return None  # a torn or foreign file: treated as absent, so it is rewritten


def _fetch(uri: str, work: str) -> str:
    """A local folder with the files below ``uri``: the folder itself when local, else a copy."""
    if not storage.is_s3(uri):
        return storage.local_path(uri)
    dest = os.path.join(work, _sha(uri.encode())[:16])  # work is one call's own folder
    if os.path.isdir(dest):
        return dest
    base = uri.rstrip("/") + "/"
    bucket = storage.split_s3(uri)[0]
    for f in storage.list_files(uri):
        rel = f.uri[len(base) :]
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        s3_client().download_file(bucket, storage.split_s3(f.uri)[1], os.path.join(dest, rel))
    os.makedirs(dest, exist_ok=True)
    return dest


def _parquets(folder: str) -> list[str]:
    return sorted(p for p in glob.glob(os.path.join(folder, "*.parquet")) if not os.path.basename(p).startswith("."))


def _files_sql(paths: list[str]) -> str:
    return "read_parquet([" + ", ".join(_q(p) for p in paths) + "])"


def day_identity(day_uri: str) -> str:
    """What one build of a day is: the hash of its ``_stats.json`` (a re-run of the index job
    writes a new one), so side tables of an older build are told apart and rewritten."""
    stats = storage.join(day_uri, layout.STATS)
    if not storage.exists(stats):
        raise FileNotFoundError(f"{day_uri}: no {layout.STATS}: not a finished index day")
    return _sha(storage.read_bytes(stats))


def _crawled_hosts(con: Any, day_local_meta: list[str], edges: list[str]) -> None:
    """Create the temp table ``hosts``: the lowercased hosts this day crawled."""
    parts = []
    if day_local_meta:
        parts.append(f"SELECT lower(url_host) AS h FROM {_files_sql(day_local_meta)}")
    if edges:
        parts.append(f"SELECT lower(src_host) AS h FROM {_files_sql(edges)}")
    sql = " UNION ".join(parts) or "SELECT NULL::VARCHAR AS h"
    con.execute(f"CREATE OR REPLACE TEMP TABLE hosts AS SELECT DISTINCT h FROM ({sql}) WHERE h IS NOT NULL")


class _Day:
    """The local view of one published day: its graph tables and metadata files."""

    def __init__(self, uri: str, work: str):
        self.uri = uri.rstrip("/")
        self.work = work
        self.graph = storage.join(self.uri, "graph")

    def folder(self, rel: str) -> str:
        return _fetch(storage.join(self.uri, rel), self.work)

    def metadata(self) -> list[str]:
        if storage.is_s3(self.uri):
            files = [
                f.uri
                for f in storage.list_files(self.uri, suffixes=[".parquet"])
                if os.path.basename(f.uri).startswith("metadata-")
            ]
            out = []
            for u in files:
                local = os.path.join(self.work, "meta", u[len(self.uri) + 1 :])
                if not os.path.exists(local):
                    os.makedirs(os.path.dirname(local), exist_ok=True)
                    b, k = storage.split_s3(u)
                    s3_client().download_file(b, k, local)
                out.append(local)
            return out
        return sorted(glob.glob(os.path.join(storage.local_path(self.uri), "*", "*", layout.METADATA_GLOB)))


def write_outbound(day_uri: str, work: str | None = None) -> dict[str, Any]:
    """Publish ``graph/outbound/`` of a finished day (module doc); its ``_SUCCESS`` is a JSON
    with the day's identity, the row count and the file's hash. Returns that JSON."""
    ident = day_identity(day_uri)
    if work:
        os.makedirs(work, exist_ok=True)
    own = work = tempfile.mkdtemp(prefix="outbound-", dir=work)
    try:
        day = _Day(day_uri, work)
        edges = _parquets(day.folder("graph/edges"))
        out = os.path.join(work, "outbound.new")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        part = os.path.join(out, "part-00000.parquet")
        con = _connect(os.path.join(work, "_tmp"))
        try:
            _crawled_hosts(con, day.metadata(), edges)
            src = (
                _files_sql(edges)
                if edges
                else ("(SELECT " + ", ".join(f"NULL::VARCHAR AS {c}" for c in _EDGE_COLS.split(", ")) + " LIMIT 0)")
            )
            followed = " AND rel IS NULL" if edges and _has_rel(edges) else ""  # nofollow links are not sent
            rows = con.execute(f"""COPY (SELECT {_EDGE_COLS} FROM {src}
                                         WHERE dst_host IS NOT NULL AND dst_host NOT IN (SELECT h FROM hosts){followed}
                                         ORDER BY dst_host, dst_url, src_url, anchor_text)
                                   TO {_q(part)} (FORMAT parquet, COMPRESSION zstd)""").fetchone()[0]
        finally:
            con.close()
        with open(part, "rb") as f:
            marker = {"day": ident, "rows": int(rows), "sha256": _sha(f.read())}
        with open(os.path.join(out, layout.SUCCESS), "w") as f:
            json.dump(marker, f, sort_keys=True)
        storage.upload_tree(out, storage.join(day.graph, OUTBOUND))
        return marker
    finally:
        if own:
            shutil.rmtree(own, ignore_errors=True)


def find_partner_day(root: str, day: dt.date, lookback_days: int) -> tuple[dt.date, str] | None:
    """The partner's day to merge: ``day`` if its outbound folder is complete, else the latest
    complete one up to ``lookback_days`` earlier; with the uri of that day. None if none."""
    for back in range(lookback_days + 1):
        d = day - dt.timedelta(days=back)
        uri = layout.day_path(root, layout.INDEX, d)
        if storage.exists(storage.join(uri, "graph", OUTBOUND, layout.SUCCESS)):
            return d, uri
    return None


def _ensure_local_copy(day: _Day, ident: str, work: str) -> None:
    """Keep ``graph/inlinks_local/`` = the index job's in-links of this build of the day."""
    marker = _read_json(storage.join(day.graph, LOCAL, layout.SUCCESS))
    if marker and marker.get("day") == ident:
        return
    record = _read_json(storage.join(day.graph, RECORD))
    if record and record.get("day") == ident:
        # inlinks already hold a merge of this build, and the local table is gone: refuse
        # rather than treat merged rows as local ones
        raise RuntimeError(f"{day.uri}: graph/{LOCAL} is missing but graph/inlinks is merged; re-run the index job")
    src = day.folder("graph/inlinks")
    if not os.path.exists(os.path.join(src, layout.SUCCESS)):
        raise FileNotFoundError(f"{day.uri}: graph/inlinks has no {layout.SUCCESS}")
    tmp = os.path.join(work, "local.new")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(layout.SUCCESS, ".*"))
    with open(os.path.join(tmp, layout.SUCCESS), "w") as f:
        json.dump({"day": ident}, f)
    storage.upload_tree(tmp, storage.join(day.graph, LOCAL))


def _merge(
    con: Any,
    local_parts: list[str],
    edges: list[str],
    incoming: list[str],
    out: str,
    exclusions: Exclusions = NO_EXCLUSIONS,
) -> dict[str, int]:
    """Write the merged in-links into ``out`` (module doc); row counts. Incoming links from or
    to an excluded URL are left out (``excluded_incoming``)."""
    inc = (
        f"SELECT {_EDGE_COLS} FROM {_files_sql(incoming)} WHERE dst_host IN (SELECT h FROM hosts)"
        if incoming
        else f"SELECT {_EDGE_COLS} FROM local_edges LIMIT 0"
    )
    followed = " WHERE rel IS NULL" if edges and _has_rel(edges) else ""  # in-links and anchors: followed links
    con.execute(
        f"CREATE TEMP VIEW local_edges AS SELECT {_EDGE_COLS} FROM {_files_sql(edges)}{followed}"
        if edges
        else "CREATE TEMP VIEW local_edges AS SELECT "
        + ", ".join(f"NULL::VARCHAR AS {c}" for c in _EDGE_COLS.split(", "))
        + " LIMIT 0"
    )
    con.execute(f"CREATE TEMP TABLE incoming AS {inc}")
    dropped = (
        drop_excluded(con, exclusions, "incoming", "dst_url") + drop_excluded(con, exclusions, "incoming", "src_url")
        if exclusions
        else 0
    )
    con.execute("CREATE TEMP TABLE affected AS SELECT DISTINCT dst_url FROM incoming")
    con.execute(f"""CREATE TEMP TABLE e AS
        SELECT dst_url, dst_host, src_url, src_host,
               trim(regexp_replace(anchor_text, {_q(_WS)}, ' ', 'g'), ' ') AS anchor
        FROM (SELECT * FROM local_edges WHERE dst_url IN (SELECT dst_url FROM affected)
              UNION ALL SELECT * FROM incoming)""")
    counts = {
        "incoming_edges": con.execute("SELECT count(*) FROM incoming").fetchone()[0],
        "merged_urls": con.execute("SELECT count(*) FROM affected").fetchone()[0],
    }
    if exclusions:
        counts["excluded_incoming"] = dropped
    for p in local_parts:
        con.execute(f"""COPY (SELECT * FROM read_parquet({_q(p)}) WHERE dst_url NOT IN (SELECT dst_url FROM affected)
                              ORDER BY dst_url)
                        TO {_q(os.path.join(out, os.path.basename(p)))} (FORMAT parquet, COMPRESSION snappy)""")
    if counts["merged_urls"]:
        con.execute(f"""COPY (
            WITH c AS (
                SELECT dst_url, min(dst_host) AS dst_host, count(*) AS inlinks,
                       count(DISTINCT src_url) AS source_pages, count(DISTINCT src_host) AS source_hosts
                FROM e GROUP BY dst_url),
            f AS (SELECT dst_url, anchor, count(*) AS n FROM e WHERE length(anchor) > 0 GROUP BY dst_url, anchor),
            t AS (SELECT dst_url, list(anchor ORDER BY n DESC, anchor ASC) AS anchor_texts
                  FROM (SELECT * FROM f QUALIFY row_number() OVER
                        (PARTITION BY dst_url ORDER BY n DESC, anchor ASC) <= {MAX_ANCHORS})
                  GROUP BY dst_url)
            SELECT c.dst_url, c.dst_host, c.inlinks, c.source_pages, c.source_hosts,
                   coalesce(t.anchor_texts, []::VARCHAR[]) AS anchor_texts,
                   coalesce(nf.nofollow_inlinks, 0)::BIGINT AS nofollow_inlinks
            FROM c LEFT JOIN t USING (dst_url) LEFT JOIN ({_nofollow_sql(local_parts)}) nf USING (dst_url)
            ORDER BY c.dst_url)
            TO {_q(os.path.join(out, EXCHANGED_PART))} (FORMAT parquet, COMPRESSION snappy)""")
    return counts


def _has_rel(files: list[str]) -> bool:
    """Whether edges files carry ``rel`` (days indexed before it existed do not)."""
    return "rel" in pq.read_schema(files[0]).names


def _nofollow_sql(local_parts: list[str]) -> str:
    """(dst_url, nofollow_inlinks) of the day's own in-links: partners send followed links only."""
    if local_parts and "nofollow_inlinks" in pq.read_schema(local_parts[0]).names:
        return f"SELECT dst_url, nofollow_inlinks FROM {_files_sql(local_parts)}"
    return "SELECT NULL::VARCHAR AS dst_url, 0::BIGINT AS nofollow_inlinks LIMIT 0"


def check_outbound(folder: str) -> str | None:
    """Why a fetched outbound folder cannot be merged (None when it can): its file must have
    the hash its ``_SUCCESS`` gives and the edges' columns."""
    try:
        with open(os.path.join(folder, layout.SUCCESS), "rb") as f:
            marker = json.loads(f.read())
    except (OSError, ValueError) as e:
        return f"{layout.SUCCESS} is not the outbound marker JSON ({e})"
    parts = _parquets(folder)
    if len(parts) != 1:
        return f"expected one part file, found {len(parts)}"
    with open(parts[0], "rb") as f:
        got = _sha(f.read())
    if got != marker.get("sha256"):
        return f"{os.path.basename(parts[0])}: SHA-256 {got} but {layout.SUCCESS} says {marker.get('sha256')}"
    try:
        names = set(pq.read_schema(parts[0]).names)
    except Exception as e:  # pyarrow raises several kinds for a bad file
        return f"{os.path.basename(parts[0])}: not a Parquet file ({e})"
    missing = [c for c in _EDGE_COLS.split(", ") if c not in names]
    return f"{os.path.basename(parts[0])}: no column(s) {missing}" if missing else None


def _inputs(record: dict[str, Any]) -> dict[str, Any]:
    """What a merge depends on: the day's build and each partner's day and outbound marker."""
    return {
        "day": record.get("day"),
        "exclusions": record.get("exclusions"),
        "partners": {k: (v.get("date"), v.get("outbound")) for k, v in (record.get("partners") or {}).items()},
    }


def _same_inputs(prev: dict[str, Any], now: dict[str, Any]) -> bool:
    """Whether ``prev`` merged the inputs of ``now`` (a partner left out as invalid is tried again)."""
    retry = any(v.get("status") == "invalid" for v in (prev.get("partners") or {}).values())
    return not retry and _inputs(prev) == _inputs(now)


def _inlinks_marker_of(record: dict[str, Any]) -> str:
    """The ``graph/inlinks/_SUCCESS`` a merge writes: its inputs, so a table put back by
    someone else (e.g. a re-staged job output) is told apart from the merged one."""
    return json.dumps(_inputs(record), sort_keys=True)


def _inlinks_marker(day: _Day) -> str | None:
    uri = storage.join(day.graph, "inlinks", layout.SUCCESS)
    return storage.read_bytes(uri).decode("utf-8", "replace") if storage.exists(uri) else None


def exchange_day(
    day_uri: str,
    day: dt.date,
    partners: dict[str, str],
    lookback_days: int = 7,
    work: str | None = None,
    force: bool = False,
    exclusions_uri: str | None = None,
) -> dict[str, Any]:
    """Merge the partners' links into one finished index day (module doc). The exclusion list
    (``exclusions_uri``, default the day's ``ROOT/_exclusions.jsonl`` when it exists) keeps
    incoming links from and to excluded URLs out; a changed list is a new input.

    ``partners``: ``{data center: index root}`` (the day of a partner is
    ``ROOT/index/YYYY-MM/DD``). Returns the record written to ``graph/_exchange.json``, with
    ``"changed": False`` when the same inputs were merged before (nothing is written then,
    unless ``force``)."""
    if not storage.exists(storage.join(day_uri, layout.SUCCESS)):
        raise FileNotFoundError(f"{day_uri}: the day is not complete (no {layout.SUCCESS}); nothing to exchange")
    ident = day_identity(day_uri)
    if work:
        os.makedirs(work, exist_ok=True)
    own = work = tempfile.mkdtemp(prefix="exchange-", dir=work)
    try:
        d = _Day(day_uri, work)
        out_marker = _read_json(storage.join(d.graph, OUTBOUND, layout.SUCCESS))
        if not out_marker or out_marker.get("day") != ident:
            out_marker = write_outbound(day_uri, os.path.join(work, "own"))
        merged: dict[str, Any] = {}
        sources: list[tuple[str, str]] = []
        for dc in sorted(partners):
            found = find_partner_day(partners[dc], day, lookback_days)
            if found is None:
                merged[dc] = {"status": "missing"}
                continue
            pday, puri = found
            marker = storage.read_bytes(storage.join(puri, "graph", OUTBOUND, layout.SUCCESS))
            merged[dc] = {
                "status": "merged",
                "date": pday.isoformat(),
                "outbound": _sha(marker),
                "same_day": pday == day,
            }
            sources.append((dc, puri))
        excl = excl_mod.for_job(layout.root_of(day_uri), exclusions_uri)
        record: dict[str, Any] = {
            "day": ident,
            "date": day.isoformat(),
            "partners": merged,
            "exclusions": _sha(json.dumps([r.as_dict() for r in excl.rules]).encode()) if excl else None,
        }
        prev = _read_json(storage.join(d.graph, RECORD))
        if not force and prev and _same_inputs(prev, record) and _inlinks_marker(d) == _inlinks_marker_of(prev):
            return {**prev, "changed": False}
        _ensure_local_copy(d, ident, work)
        local = d.folder(f"graph/{LOCAL}")
        local_parts = _parquets(local)
        edges = _parquets(d.folder("graph/edges"))
        incoming = []
        for dc, puri in sources:
            folder = _fetch(storage.join(puri, "graph", OUTBOUND), os.path.join(work, "in", dc))
            error = check_outbound(folder)
            if error:  # a partner's broken file must not stop this day: recorded, left out
                merged[dc] = {
                    **merged[dc],
                    "status": "invalid",
                    "error": f"{storage.join(puri, 'graph', OUTBOUND)}: {error}",
                }
                continue
            incoming += _parquets(folder)
        out = os.path.join(work, "inlinks.new")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        con = _connect(os.path.join(work, "_tmp"))
        try:
            _crawled_hosts(con, d.metadata(), edges)
            counts = _merge(con, local_parts, edges, incoming, out, excl)
            rows = con.execute(f"SELECT count(*) FROM {_files_sql(_parquets(out))}").fetchone()[0]
        finally:
            con.close()
        record["counts"] = {**counts, "inlinks": int(rows), "outbound_rows": out_marker["rows"]}
        with open(os.path.join(out, layout.SUCCESS), "w") as f:
            f.write(_inlinks_marker_of(record))
        storage.upload_tree(out, storage.join(d.graph, "inlinks"))
        record["anchors"] = write_anchors(day_uri, out, os.path.join(work, "anchors"))
        storage.write_bytes(storage.join(d.graph, RECORD), json.dumps(record, indent=1, sort_keys=True).encode())
        return {**record, "changed": True}
    finally:
        if own:
            shutil.rmtree(own, ignore_errors=True)
