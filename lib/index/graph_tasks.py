"""The web graph's two task kinds, plain functions run by Spark tasks (no JVM work).

* :func:`map_file`: a run of preprocessed page files -> its ``edges`` file, plus its edges split by
  a key range of the destination URL (``inl/p=K/``) and of the source host (``hst/p=K/``)
  into the spill folder;
* :func:`reduce_partition`: one key range -> its ``inlinks`` and ``hosts`` files.

Both run in an in-process DuckDB with one thread (a map task holding most of the day's bytes
gets more: lib.index.graph) and a memory limit, so a task's memory is
bounded whatever the day's size (DuckDB spills its aggregates to ``temp_directory``). The
SQL reproduces the Spark SQL the graph used to be (``tests/index/spark_graph_oracle.py``):
Java's ``\\s`` is ``[ \\t\\n\\x0B\\f\\r]``, Spark's ``trim`` removes spaces only, and both
engines compare strings by their UTF-8 bytes, so ties order the same.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lib.pages.exclusions import NONE as NO_EXCLUSIONS
from lib.pages.exclusions import Exclusions
from lib.store import storage

MAX_ANCHORS = 10
#: the columns of the edges table: ``rel`` is the link's nofollow/ugc/sponsored tokens (null: followed)
EDGE_COLUMNS = "src_url, dst_url, anchor_text, src_host, dst_host, rel"


def links_have_rel(paths: list[str]) -> bool:
    """Whether the page files' links carry ``rel`` (files written before it existed do not: their
    links all count as followed)."""
    if not paths:
        return True
    links = pq.read_schema(storage.local_path(paths[0])).field("outgoing_links").type.value_type
    return links.get_field_index("rel") >= 0


class GraphDirs(NamedTuple):
    """The day's three graph folders and the spill folder the tasks share (lib.index.graph's layout)."""

    edges: str
    inlinks: str
    hosts: str
    spill: str

    @classmethod
    def under(cls, root: str) -> GraphDirs:
        """``root``'s ``edges``, ``inlinks``, ``hosts`` and ``_spill`` folders."""
        return cls(*(os.path.join(root, n) for n in ("edges", "inlinks", "hosts", "_spill")))

    def scratch(self, name: str) -> str:
        """The temporary folder of one task's DuckDB (``name``: which task) under the spill folder."""
        return os.path.join(self.spill, "_tmp", name)


#: per-task DuckDB memory limit (beyond it the aggregation spills to disk)
TASK_MEMORY = "1GB"
# scheme://[userinfo@]host[:port]...: the host, as lib's url_host writes it (lowercased)
HOST_RE = r"^[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)"
_WS = r"[ \t\n\x0B\f\r]+"  # Java's \s (RE2's \s lacks \x0B)


def connect(tmp: str, threads: int = 1, memory: str = TASK_MEMORY) -> Any:
    """A DuckDB of ``threads`` threads (one by default) with ``memory`` that spills to ``tmp``."""
    os.makedirs(tmp, exist_ok=True)
    con = duckdb.connect(
        config={"threads": threads, "memory_limit": memory, "temp_directory": tmp, "preserve_insertion_order": False}
    )
    return con


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def partition_sql(expr: str, parts: int) -> str:
    """SQL of the key range (0..parts-1) of ``expr``: DuckDB's 64-bit hash modulo ``parts``."""
    return f"(hash({expr}) % {parts})::INTEGER" if parts > 1 else "0"


def map_file(
    path: str | list[str],
    fid: int,
    dirs: GraphDirs,
    parts: int,
    exclusions: Exclusions = NO_EXCLUSIONS,
    threads: int = 1,
) -> tuple[int, int]:
    """Explode the ``outgoing_links`` of one page file, or of a run of them read as one
    (``path`` a list), into ``edges/part-{fid}.parquet`` and the spill files
    ``spill/{inl,hst}/p=K/f{fid}.parquet`` of ``dirs``; returns (edges, edges dropped because their
    destination is excluded). Each file is written under a temporary name and renamed, so a
    retried task rewrites its own files. ``threads``: DuckDB's threads (the memory limit is
    the same whatever their number)."""
    paths = [path] if isinstance(path, str) else list(path)
    con = connect(dirs.scratch(f"m{fid}"), threads)
    try:
        dropped = edges_table(con, paths, exclusions)
        n = con.execute("SELECT count(*) FROM e").fetchone()[0]
        _copy(con, f"SELECT {EDGE_COLUMNS} FROM e", os.path.join(dirs.edges, f"part-{fid:05d}.parquet"))
        if n:
            anchors_table(con)
            _copy_parts(
                con,
                f"""SELECT dst_url, dst_host, src_url, src_host, an.anchor AS anchor, rel,
                                        {partition_sql("dst_url", parts)} AS p
                                 FROM e LEFT JOIN an ON e.anchor_text IS NOT DISTINCT FROM an.a""",
                os.path.join(dirs.spill, "inl"),
                fid,
                parts,
            )
            _copy_parts(
                con,
                f"""SELECT src_host, dst_host, src_url, count(*) FILTER (WHERE rel IS NULL) AS n,
                                        count(*) FILTER (WHERE rel IS NOT NULL) AS nf,
                                        {partition_sql("src_host", parts)} AS p
                                 FROM e GROUP BY ALL""",
                os.path.join(dirs.spill, "hst"),
                fid,
                parts,
            )
        return n, dropped
    finally:
        con.close()


def edges_table(con: Any, paths: list[str], exclusions: Exclusions = NO_EXCLUSIONS, keyed: bool = False) -> int:
    """Temp table ``e`` (src_url, dst_url, anchor_text, src_host, dst_host, rel): the outgoing links
    of the page files ``paths`` read as one, links to excluded pages left out; returns how many
    were left out. ``keyed``: ``e`` also has the link's place in the input, ``kf`` (its file's
    index in ``paths``), ``kr`` (its page's row in the file) and ``kp`` (its place in the page's
    list), so that threads' output can be put back in the input's order by a sort on integers."""
    files = "[" + ", ".join(_q(p) for p in paths) + "]"
    if keyed:
        pages = f"""SELECT url AS src_url, url_host AS src_host, list_position({files}, filename) AS kf,
                           file_row_number AS kr, unnest(outgoing_links) AS l,
                           unnest(generate_series(1, len(outgoing_links))) AS kp
                    FROM read_parquet({files}, filename=true, file_row_number=true)"""
    else:
        pages = f"SELECT url AS src_url, url_host AS src_host, unnest(outgoing_links) AS l FROM read_parquet({files})"
    key = ", kf, kr, kp" if keyed else ""
    rel = "l.rel" if links_have_rel(paths) else "NULL::VARCHAR"  # page files written before links had rel
    # the regular expressions run once per distinct destination URL and distinct anchor text,
    # not once per edge: a day's pages link to few distinct URLs (nav bars, footers), so this
    # takes most of the map's time away (benchmarks.md, "Web graph against DuckDB")
    con.execute(f"""
        CREATE TEMP TABLE e0 AS
        SELECT src_url, l.url AS dst_url, l.anchor_text AS anchor_text, src_host, {rel} AS rel{key}
        FROM ({pages})
        WHERE l.url IS NOT NULL""")
    if keyed and con.execute("SELECT count(*) FROM e0 WHERE kf IS NULL").fetchone()[0]:
        raise RuntimeError(f"DuckDB named a page file other than as given ({paths[0]!r}, ...): no input order")
    con.execute(f"""
        CREATE TEMP TABLE h AS
        SELECT u, lower(regexp_extract(u, {_q(HOST_RE)}, 1)) AS host FROM (SELECT DISTINCT dst_url AS u FROM e0)""")
    con.execute(f"""
        CREATE TEMP TABLE e AS
        SELECT src_url, dst_url, anchor_text, src_host, h.host AS dst_host, rel{key}
        FROM e0 JOIN h ON e0.dst_url = h.u""")
    con.execute("DROP TABLE e0")
    con.execute("DROP TABLE h")
    return drop_excluded(con, exclusions) if exclusions else 0


def anchors_table(con: Any) -> None:
    """Temp table ``an`` (a, anchor): each distinct anchor text of ``e`` and its normalized form
    (whitespace runs as Java's ``\\s`` collapsed to one space, spaces trimmed)."""
    con.execute(f"""
        CREATE TEMP TABLE an AS
        SELECT a, trim(regexp_replace(a, {_q(_WS)}, ' ', 'g'), ' ') AS anchor
        FROM (SELECT DISTINCT anchor_text AS a FROM e)""")


def drop_excluded(con: Any, exclusions: Exclusions, table: str = "e", column: str = "dst_url") -> int:
    """Delete the rows of ``table`` whose ``column`` URL is excluded (the graph holds no row in
    either direction for an excluded page); returns how many. Only the URLs of hosts a rule can
    match are tested one by one."""
    urls = pa.array([r[0] for r in con.execute(f"SELECT DISTINCT {column} FROM {table}").fetchall()], pa.string())
    gone = urls.filter(exclusions.mask(urls))
    if not len(gone):
        return 0
    con.register("gone", pa.table({"u": gone}))
    n = con.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT u FROM gone)").fetchone()[0]
    con.unregister("gone")
    return int(n)


def reduce_partition(k: int, dirs: GraphDirs, max_anchors: int = MAX_ANCHORS) -> tuple[int, int]:
    """Aggregate key range ``k``'s spill files into ``inlinks/part-{k}.parquet`` (sorted by
    dst_url) and ``hosts/part-{k}.parquet`` of ``dirs``; returns their row counts."""
    inl = os.path.join(dirs.spill, "inl", f"p={k}")
    hst = os.path.join(dirs.spill, "hst", f"p={k}")
    con = connect(dirs.scratch(f"r{k}"))
    try:
        rows = [0, 0]
        if _has_files(inl):
            src = f"read_parquet({_q(os.path.join(inl, '*.parquet'))})"
            con.execute(f"CREATE TEMP VIEW e AS SELECT * FROM {src}")
            rows[0] = _copy(
                con,
                inlinks_sql(
                    "SELECT dst_url, anchor, count(*) AS n FROM e WHERE length(anchor) > 0 AND rel IS NULL "
                    "GROUP BY dst_url, anchor",
                    max_anchors,
                ),
                os.path.join(dirs.inlinks, f"part-{k:05d}.parquet"),
            )
        if _has_files(hst):
            src = f"read_parquet({_q(os.path.join(hst, '*.parquet'))})"
            rows[1] = _copy(
                con,
                f"""SELECT src_host, dst_host, sum(n)::BIGINT AS links,
                                            count(DISTINCT src_url) AS pages, sum(nf)::BIGINT AS nofollow_links
                                     FROM {src} GROUP BY src_host, dst_host""",
                os.path.join(dirs.hosts, f"part-{k:05d}.parquet"),
            )
        return rows[0], rows[1]
    finally:
        con.close()


def inlinks_sql(freq_sql: str, max_anchors: int = MAX_ANCHORS) -> str:
    """The in-links of the edges ``e`` (dst_url, dst_host, src_url, src_host, rel), sorted by dst_url;
    ``freq_sql`` gives (dst_url, anchor, n): each URL's non-empty normalized anchors of followed links
    and their counts. The counts are of followed links (no rel); ``nofollow_inlinks`` counts the others."""
    return f"""
        WITH c AS (
            SELECT dst_url, any_value(dst_host) AS dst_host, count(*) FILTER (WHERE rel IS NULL) AS inlinks,
                   count(DISTINCT src_url) FILTER (WHERE rel IS NULL) AS source_pages,
                   count(DISTINCT src_host) FILTER (WHERE rel IS NULL) AS source_hosts,
                   count(*) FILTER (WHERE rel IS NOT NULL) AS nofollow_inlinks
            FROM e GROUP BY dst_url),
        f AS ({freq_sql}),
        t AS (
            SELECT dst_url, list(anchor ORDER BY n DESC, anchor ASC) AS anchor_texts
            FROM (SELECT * FROM f QUALIFY row_number() OVER
                  (PARTITION BY dst_url ORDER BY n DESC, anchor ASC) <= {int(max_anchors)})
            GROUP BY dst_url)
        SELECT c.dst_url, c.dst_host, c.inlinks, c.source_pages, c.source_hosts,
               coalesce(t.anchor_texts, []::VARCHAR[]) AS anchor_texts, c.nofollow_inlinks
        FROM c LEFT JOIN t USING (dst_url) ORDER BY c.dst_url"""


def whole_day(
    paths: list[str],
    dirs: GraphDirs,
    exclusions: Exclusions = NO_EXCLUSIONS,
    threads: int = 1,
    max_anchors: int = MAX_ANCHORS,
) -> tuple[int, int, int, int]:
    """The three tables of the page files ``paths`` in one DuckDB (``threads`` threads, a
    memory limit of :data:`TASK_MEMORY` per thread, spilling to ``spill/_tmp/whole`` of ``dirs``):
    the single-task plan of a small day, no spill files and no second stage. Writes
    ``part-00000.parquet`` in each of the three folders (inlinks sorted by dst_url); returns
    (edges, edges left out as excluded, inlinks, hosts)."""
    con = connect(dirs.scratch("whole"), threads, memory=_times(TASK_MEMORY, threads))
    try:
        dropped = edges_table(con, [storage.local_path(p) for p in paths], exclusions, keyed=True)
        # threads finish in any order: put back in the input's order, so a re-run writes the same bytes
        n = _copy(
            con, f"SELECT {EDGE_COLUMNS} FROM e ORDER BY kf, kr, kp", os.path.join(dirs.edges, "part-00000.parquet")
        )
        if not n:
            write_empty(dirs.inlinks, dirs.hosts)
            return 0, dropped, 0, 0
        anchors_table(con)
        # anchors counted per raw text first (fewer rows than edges), then per normalized text
        freq = """SELECT g.dst_url, an.anchor, sum(g.n) AS n
                  FROM (SELECT dst_url, anchor_text, count(*) AS n FROM e WHERE rel IS NULL
                        GROUP BY dst_url, anchor_text) g
                  JOIN an ON g.anchor_text IS NOT DISTINCT FROM an.a
                  WHERE length(an.anchor) > 0 GROUP BY g.dst_url, an.anchor"""
        inl = _copy(con, inlinks_sql(freq, max_anchors), os.path.join(dirs.inlinks, "part-00000.parquet"))
        hst = _copy(
            con,
            """SELECT src_host, dst_host, count(*) FILTER (WHERE rel IS NULL) AS links,
                      count(DISTINCT src_url) AS pages, count(*) FILTER (WHERE rel IS NOT NULL) AS nofollow_links
               FROM e GROUP BY src_host, dst_host ORDER BY src_host, dst_host""",
            os.path.join(dirs.hosts, "part-00000.parquet"),
        )
        return n, dropped, inl, hst
    finally:
        con.close()


def _times(size: str, k: int) -> str:
    """``k`` times a DuckDB size such as ``1GB``."""
    num = size.rstrip("KMGTB")
    return f"{int(num) * k}{size[len(num) :]}"


def write_empty(inlinks_dir: str, hosts_dir: str) -> None:
    """The two aggregates of a day without links: one empty file each, with their columns."""
    con = duckdb.connect()
    try:
        _copy(
            con,
            """SELECT ''::VARCHAR AS dst_url, ''::VARCHAR AS dst_host, 0::BIGINT AS inlinks,
                             0::BIGINT AS source_pages, 0::BIGINT AS source_hosts,
                             []::VARCHAR[] AS anchor_texts, 0::BIGINT AS nofollow_inlinks LIMIT 0""",
            os.path.join(inlinks_dir, "part-00000.parquet"),
        )
        _copy(
            con,
            """SELECT ''::VARCHAR AS src_host, ''::VARCHAR AS dst_host, 0::BIGINT AS links,
                             0::BIGINT AS pages, 0::BIGINT AS nofollow_links LIMIT 0""",
            os.path.join(hosts_dir, "part-00000.parquet"),
        )
    finally:
        con.close()


def _has_files(folder: str) -> bool:
    return os.path.isdir(folder) and any(n.endswith(".parquet") for n in os.listdir(folder))


def _copy(con: Any, sql: str, dest: str) -> int:
    """``COPY (sql)`` to the Parquet file ``dest`` (written aside, then renamed); its rows."""
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = os.path.join(os.path.dirname(dest), "." + os.path.basename(dest) + ".tmp")
    n = con.execute(f"COPY ({sql}) TO {_q(tmp)} (FORMAT parquet, COMPRESSION snappy)").fetchone()[0]
    os.replace(tmp, dest)
    return int(n)


def _copy_parts(con: Any, sql: str, folder: str, fid: int, parts: int) -> None:
    """``sql``'s rows split by its column ``p`` into ``folder/p=K/f{fid}.parquet`` in one
    pass (empty ranges get no file); a retried task overwrites its own files."""
    os.makedirs(folder, exist_ok=True)
    con.execute(
        f"COPY ({sql}) TO {_q(folder)} (FORMAT parquet, COMPRESSION snappy, PARTITION_BY (p), "
        f"FILENAME_PATTERN 'f{fid:05d}', OVERWRITE_OR_IGNORE true)"
    )
