"""Host and domain graphs of a window with their ranks, in Common Crawl's layout (docs/links.md).

Per level (``host``, ``domain``)::

    vertices.parquet   id, name (the host or registered domain, labels reversed: com.example.www),
                       sorted by name, ids 0..n-1 in that order
    edges.parquet      from_id, to_id: one row per pair with a followed link in the window, sorted
    ranks.parquet      id, name, harmonicc_pos, harmonicc_val, pr_pos, pr_val (lib.links.ranks)

A pair of hosts is an edge when some page of the first links some page of the second in the window
and the link's latest day in the window followed it (``rel`` null); self loops are left out. The
domain graph is the host graph with each host replaced by its registered domain (the Public Suffix
List of lib.pages.weburls), repeats and self loops dropped. The window's folder is written under a
temporary name and renamed when complete, ``_SUCCESS`` (its counts) last.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from lib.links import entries, inlinks, linkdb, ranks
from lib.pages.weburls import url_parts
from lib.store import storage

LEVELS = ("host", "domain")
FOLDER = "webgraph"  # under ROOT, beside the link database


def reverse(name: str) -> str:
    """Labels in reverse order, Common Crawl's vertex names: ``www.example.com`` -> ``com.example.www``."""
    return ".".join(reversed(name.split(".")))


@lru_cache(maxsize=1 << 18)
def domain_of(host: str) -> str:
    """The registered domain of a host (the host itself when it has none: an IP address, a bare suffix)."""
    return url_parts(f"http://{host}/")["url_domain"] or host


def host_pairs(db: str, state: dict[str, Any], first: dt.date | None, last: dt.date, threads: int = 2) -> pa.Table:
    """The window's (src, dst) host pairs of followed links, lowercased, hosts given, each with the
    first and last day of such a link in the window and how many such links there are (``links``)."""
    files = [f for q in range(state["parts"] or 0) for f in linkdb.files(db, state, q)]
    sql = entries.window_sql(files, first, last)
    con = entries.connect(threads)
    try:
        return con.sql(
            f"""SELECT lower(src_host) AS src, lower(dst_host) AS dst, min(first_seen) AS first_seen,
                       max(last_seen) AS last_seen, count(*) AS links FROM ({sql})
                WHERE rel IS NULL AND coalesce(src_host, '') <> '' AND coalesce(dst_host, '') <> ''
                GROUP BY ALL ORDER BY src, dst"""
        ).to_arrow_table()
    finally:
        con.close()


def graph(src: list[str], dst: list[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Vertices (reversed names, sorted) and edge id arrays (sorted, no repeats, no self loops) of
    the named pairs ``src[i] -> dst[i]``."""
    names = sorted({reverse(h) for h in src} | {reverse(h) for h in dst})
    index = {v: i for i, v in enumerate(names)}
    s = np.fromiter((index[reverse(h)] for h in src), np.int64, len(src))
    d = np.fromiter((index[reverse(h)] for h in dst), np.int64, len(dst))
    s, d = ranks.simple(len(names), s, d)
    return names, s, d


def level_tables(names: list[str], s: np.ndarray, d: np.ndarray) -> dict[str, pa.Table]:
    """The three tables of one level: vertices, edges and ranks of every vertex."""
    n = len(names)
    g = ranks.graph(n, s, d)
    hc = ranks.harmonic(n, s, d, g)
    pr = ranks.pagerank(n, s, d, g=g)
    ids = pa.array(np.arange(n), pa.int64())
    return {
        "vertices": pa.table({"id": ids, "name": pa.array(names, pa.string())}),
        "edges": pa.table({"from_id": pa.array(s, pa.int64()), "to_id": pa.array(d, pa.int64())}),
        "ranks": pa.table(
            {
                "id": ids,
                "name": pa.array(names, pa.string()),
                "harmonicc_pos": pa.array(ranks.positions(hc)),
                "harmonicc_val": pa.array(hc),
                "pr_pos": pa.array(ranks.positions(pr)),
                "pr_val": pa.array(pr),
            }
        ),
    }


def window_folder(root: str, days: int | None, last: dt.date) -> str:
    """``ROOT/webgraph/window=N/until=YYYY-MM-DD`` (``window=all`` for all time)."""
    return os.path.join(root, FOLDER, f"window={days or 'all'}", f"until={last.isoformat()}")


def publish(root: str, days: int | None = inlinks.DEFAULT_WINDOW, until: dt.date | None = None) -> dict[str, Any]:
    """Write the window's host and domain graphs with their ranks under :func:`window_folder`;
    returns what ``_SUCCESS`` records (the window, vertices and edges per level). Re-running it
    replaces the folder whole."""
    db = inlinks.db_of(root)
    state = inlinks.open_db(db)
    win = inlinks.window(state, days, until)
    pairs = host_pairs(db, state, win["first"], win["last"])
    src, dst = pairs.column("src").to_pylist(), pairs.column("dst").to_pylist()
    dest = window_folder(root, days, win["last"])
    tmp = f"{dest}.tmp-{uuid.uuid4().hex[:12]}"
    summary: dict[str, Any] = {"window": json.loads(json.dumps(win, default=str)), "levels": {}}
    try:
        for level in LEVELS:
            if level == "domain":
                src, dst = [domain_of(h) for h in src], [domain_of(h) for h in dst]
            names, s, d = graph(src, dst)
            os.makedirs(os.path.join(tmp, level))
            for name, table in level_tables(names, s, d).items():
                pq.write_table(table, os.path.join(tmp, level, f"{name}.parquet"), compression="zstd")
            summary["levels"][level] = {"vertices": len(names), "edges": int(s.size)}
        with open(os.path.join(tmp, "_SUCCESS"), "w") as f:  # last: the folder is complete
            json.dump(summary, f, indent=1, sort_keys=True)
        storage.commit_dir(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dict(summary, folder=dest)
