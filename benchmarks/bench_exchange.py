"""The exchange merge against recomputing the whole in-links table in DuckDB.

    python -m benchmarks.bench_exchange [--pages 200000] [--links 10] [--foreign 0.05] [--tail 0.5] [--repeat 2]
    python -m benchmarks.bench_exchange --day real [--copies 10] [--corpus DIR] [--foreign 0.05] [--repeat 2]

Two data centers' days. Synthetic (the default): A has ``--pages`` pages with ``--links`` links
each (Zipf-like destinations over A's and B's hosts, repeated anchors); B the same size. B's
outbound file holds its links to hosts B did not crawl (``--foreign`` of its links point to A's
hosts). With ``--day real``, A's day is the web graph of the real-shaped day of
devtools/realday.py (its large cut through jobs/preprocess.py and jobs/index.py with the graph:
the edges table is the same in both cuts, bench_cuts checks it), so A's links have real
diversity; B has as many pages as A with A's mean links per page, and ``--foreign`` of them
point into A, drawn from A's own edges (a real target of A's hosts with its real anchor, so
popular pages get more), the rest within B. The day's shape is printed.

* Ours: ``lib.index.graph_exchange.exchange_day`` on A (a fresh copy each time): reads the
  local in-links and edges, B's outbound, recomputes the rows of the URLs that get incoming
  links and copies the others; the outbound folder of A is written first (timed apart).
* Peer: one DuckDB (same settings: 1 thread, 1 GB) aggregating all of A's edges plus B's
  incoming edges into the in-links table (what the graph step would do over both crawls).

Prints walls, ratio, and checks the two tables are equal (row by row).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import tempfile
import time

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.common import write_result
from lib.index.graph_exchange import _EDGE_COLS, _WS, MAX_ANCHORS, exchange_day, write_outbound

DAY = dt.date(2026, 1, 15)
ANCHORS = ["home", "read more", "news", "about us", "contact", "the shop", "Click  here", "more\tnews", "", "archive"]

INLINKS_SQL = """
WITH e AS (SELECT dst_url, dst_host, src_url, src_host,
                  trim(regexp_replace(anchor_text, '{ws}', ' ', 'g'), ' ') AS anchor FROM {src}),
c AS (SELECT dst_url, min(dst_host) AS dst_host, count(*) AS inlinks, count(DISTINCT src_url) AS source_pages,
             count(DISTINCT src_host) AS source_hosts FROM e GROUP BY dst_url),
f AS (SELECT dst_url, anchor, count(*) AS n FROM e WHERE length(anchor) > 0 GROUP BY dst_url, anchor),
t AS (SELECT dst_url, list(anchor ORDER BY n DESC, anchor ASC) AS anchor_texts
      FROM (SELECT * FROM f QUALIFY row_number() OVER (PARTITION BY dst_url ORDER BY n DESC, anchor ASC) <= {k})
      GROUP BY dst_url)
SELECT c.dst_url, c.dst_host, c.inlinks, c.source_pages, c.source_hosts,
       coalesce(t.anchor_texts, []::VARCHAR[]) AS anchor_texts FROM c LEFT JOIN t USING (dst_url) ORDER BY c.dst_url
"""


def _edges(rng: random.Random, dc: str, other: str, pages: int, links: int, foreign: float, tail: float) -> pa.Table:
    cols: dict[str, list] = {c: [] for c in _EDGE_COLS.split(", ")}
    for i in range(pages):
        host = f"h{i % (pages // 20 + 1)}.{dc}.example"
        src = f"https://{host}/p{i}"
        for _ in range(links):
            to = other if rng.random() < foreign else dc
            h = int(rng.paretovariate(1.2)) % (pages // 20 + 1)
            dst_host = f"h{h}.{to}.example"
            cols["src_url"].append(src)
            # a share ``tail`` of the links to a long tail of URLs (linked once or twice), the rest to popular pages
            path = rng.randrange(pages * 4) if rng.random() < tail else int(rng.paretovariate(1.1)) % pages
            cols["dst_url"].append(f"https://{dst_host}/p{path}")
            cols["anchor_text"].append(rng.choice(ANCHORS))
            cols["src_host"].append(host)
            cols["dst_host"].append(dst_host)
    return pa.table(cols)


def real_edges(copies: int, corpus: str, cores: int) -> tuple[pa.Table, str]:
    """A's edges: the graph of the real-shaped day's large cut (jobs/index.py, no anchor CIFFs),
    and the day's shape line."""
    from devtools import realday

    rd = realday.shared_day(copies, corpus)
    pre = realday.preprocessed(rd, "large", cores)
    idx = realday.indexed(
        pre,
        pre.parents[2] / "index-graph" / pre.parent.name / pre.name,
        cores,
        "--docs-per-shard",
        "25000",
        "--no-anchors",
    )
    files = sorted((idx / "graph" / "edges").glob("*.parquet"))
    edges = pa.concat_tables([pq.read_table(f, columns=_EDGE_COLS.split(", ")) for f in files])
    return edges, realday.cut_line(rd["shape"], "large")


def _partner_edges(rng: random.Random, a: pa.Table, foreign: float) -> pa.Table:
    """B's edges: as many pages as A with A's mean links per page; ``foreign`` of the links are
    rows of A's edges that point at A's hosts (URL, host, anchor), the rest within B."""
    crawled = set(a.column("src_host").to_pylist())
    dst, dh, an = (a.column(c).to_pylist() for c in ("dst_url", "dst_host", "anchor_text"))
    into = [i for i, h in enumerate(dh) if h in crawled]
    pages = len(set(a.column("src_url").to_pylist()))
    links = max(1, round(a.num_rows / pages))
    cols: dict[str, list] = {c: [] for c in _EDGE_COLS.split(", ")}
    for i in range(pages):
        host = f"h{i % (pages // 20 + 1)}.b.example"
        for _ in range(links):
            if rng.random() < foreign:
                j = rng.choice(into)
                row = (dst[j], an[j], dh[j])
            else:
                h = f"h{int(rng.paretovariate(1.2)) % (pages // 20 + 1)}.b.example"
                row = (f"https://{h}/p{int(rng.paretovariate(1.1)) % pages}", rng.choice(ANCHORS), h)
            cols["src_url"].append(f"https://{host}/p{i}")
            cols["dst_url"].append(row[0])
            cols["anchor_text"].append(row[1])
            cols["src_host"].append(host)
            cols["dst_host"].append(row[2])
    return pa.table(cols)


def _day(root: str, edges: pa.Table, con) -> str:
    day = os.path.join(root, "index", "2026-01", "15")
    for sub in ("graph/edges", "graph/inlinks"):
        os.makedirs(os.path.join(day, sub))
    pq.write_table(edges, os.path.join(day, "graph/edges/part-00000.parquet"))
    con.register("src_edges", edges)
    con.execute(
        f"COPY ({INLINKS_SQL.format(ws=_WS, k=MAX_ANCHORS, src='src_edges')}) TO "
        f"'{os.path.join(day, 'graph/inlinks/part-00000.parquet')}' (FORMAT parquet)"
    )
    con.unregister("src_edges")
    for sub in ("graph/edges", "graph/inlinks", ""):
        open(os.path.join(day, sub, "_SUCCESS"), "wb").close()
    with open(os.path.join(day, "_stats.json"), "w") as f:
        json.dump({"groups": [], "shards": [], "bench": len(edges)}, f)
    return day


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--pages", type=int, default=200000)
    p.add_argument("--links", type=int, default=10)
    p.add_argument("--foreign", type=float, default=0.05)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--tail", type=float, default=0.5, help="share of links to the long tail of URLs (default 0.5)")
    p.add_argument(
        "--day",
        choices=["synthetic", "real"],
        default="synthetic",
        help="real: A's day is the real-shaped day's web graph (--pages/--links/--tail unused)",
    )
    p.add_argument("--copies", type=int, default=10, help="copies of the real samples (--day real)")
    p.add_argument("--corpus", default=None, help="the real samples (default ../shared/corpus)")
    p.add_argument("--cores", type=int, default=2, help="for building the real day's graph")
    args = p.parse_args()
    rng = random.Random(5)
    if args.day == "real":
        from devtools import realday

        ea, shape = real_edges(args.copies, args.corpus or str(realday.CORPUS), args.cores)
        eb = _partner_edges(rng, ea, args.foreign)
        print(f"A's day: the real-shaped day's graph; {shape}", flush=True)
    base = tempfile.mkdtemp(prefix="bench-exchange-")
    try:
        con = duckdb.connect(config={"threads": 1, "memory_limit": "1GB"})
        if args.day != "real":
            ea = _edges(rng, "a", "b", args.pages, args.links, args.foreign, args.tail)
            eb = _edges(rng, "b", "a", args.pages, args.links, args.foreign, args.tail)
        day_a, day_b = _day(os.path.join(base, "a0"), ea, con), _day(os.path.join(base, "b"), eb, con)
        t = time.perf_counter()
        rows = write_outbound(day_b)["rows"]
        outbound_s = time.perf_counter() - t
        print(f"edges A {len(ea):,}, B {len(eb):,}; B's outbound {rows:,} rows written in {outbound_s:.2f} s")
        ours, peer = [], []
        for r in range(args.repeat):
            copy = os.path.join(base, f"a{r + 1}")
            shutil.copytree(os.path.join(base, "a0"), copy)
            t = time.perf_counter()
            rec = exchange_day(
                os.path.join(copy, "index/2026-01/15"),
                DAY,
                {"b": os.path.join(base, "b")},
                work=os.path.join(base, "w"),
            )
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            c2 = duckdb.connect(config={"threads": 1, "memory_limit": "1GB"})
            src = (
                f"(SELECT * FROM read_parquet('{day_a}/graph/edges/*.parquet') UNION ALL "  # B's rows to A's hosts
                f"SELECT * FROM read_parquet('{day_b}/graph/outbound/*.parquet') WHERE dst_host IN "
                f"(SELECT src_host FROM read_parquet('{day_a}/graph/edges/*.parquet')))"
            )
            c2.execute(f"CREATE TABLE peer AS {INLINKS_SQL.format(ws=_WS, k=MAX_ANCHORS, src=src)}")
            peer.append(time.perf_counter() - t)
        diff = c2.execute(f"""SELECT count(*) FROM (
            (SELECT * FROM peer EXCEPT ALL SELECT * FROM
            read_parquet('{copy}/index/2026-01/15/graph/inlinks/*.parquet'))
            UNION ALL
            (SELECT * FROM read_parquet('{copy}/index/2026-01/15/graph/inlinks/*.parquet') EXCEPT ALL SELECT
            * FROM peer))
        """).fetchone()[0]
        print(
            f"incoming edges {rec['counts']['incoming_edges']:,}, URLs recomputed {rec['counts']['merged_urls']:,}, "
            f"in-links rows {rec['counts']['inlinks']:,} (A's own outbound written inside the first step)"
        )
        print(f"ours (exchange_day)     best {min(ours):.2f} s  runs {[round(x, 2) for x in ours]}")
        print(f"peer (DuckDB recompute) best {min(peer):.2f} s  runs {[round(x, 2) for x in peer]}")
        print(f"ratio ours/peer {min(ours) / min(peer):.2f}; tables differ in {diff} rows")
        if diff:
            raise SystemExit("the merged table differs from the recomputed one")
        write_result(
            "bench_exchange",
            {
                "ours_best_s": round(min(ours), 3),
                "incoming_edges": rec["counts"]["incoming_edges"],
                "rows_differ": diff,
            },
            what="the in-links exchange merge of a partner's incoming edges into a day's graph",
            peer="one DuckDB recomputing the whole in-links table",
            peers={"duckdb_best_s": round(min(peer), 3)},
            ratio={"ours / peer (time)": round(min(ours) / min(peer), 3)},
            shape={"day": args.day, "edges_a": len(ea), "edges_b": len(eb)}
            | ({"shape": shape} if args.day == "real" else {"pages": args.pages, "tail": args.tail}),
            variant="" if args.day == "real" else "synthetic days",
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
