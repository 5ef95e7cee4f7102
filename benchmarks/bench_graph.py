"""The web graph (edges, inlinks, hosts) against a DuckDB implementation of the same tables.

    python -m benchmarks.bench_graph [--day real] [--copies 10] [--cores 2] [--repeat 2] [--no-session]
    python -m benchmarks.bench_graph --day heavy [--records 20000] [--scale 1]

1. Day (``--day``, repeatable; default ``real``):

   * ``real``: the real-shaped day of devtools/realday.py (the shared samples and the heavy
     pages, ``--copies`` copies with renamed hosts: each copy links within itself, as many
     distinct link targets per link as the real sources), in both cuts (many small archives,
     few large ones), each cut through ``jobs/preprocess.py``; the day's shape is printed beside
     each figure;
   * ``heavy`` (an extra row: pages copied verbatim, so the same links repeat): ``--records``
     real heavy pages (tests/data/heavy_pages, each copy with its own URL, as
     benchmarks/bench_preprocess_peers.py builds them) through ``jobs/preprocess.py``;
     ``--scale N`` repeats the preprocessed files N times (each copy's URLs and links made
     distinct by a ``?d=K`` suffix), for the 10x day.
2. DuckDB: one process (``threads=CORES``) reading the day's Parquet and writing the three
   tables (:data:`DUCKDB_SQL`), process start included.
3. Ours, the graph alone in a fresh job: a new Python process starts Spark ``local[CORES]``
   (the index job's session) and runs ``lib.index.graph.write_graph``: JVM start included.
4. Ours, in a started Spark session (the index job's case, the session warmed by one task):
   ``write_graph`` with the day's default plan and with the two-stage plan
   (``single_task_bytes=0``), alternating, twice each; the best of each beside DuckDB's wall.
5. Ours, ``jobs/index.py`` without the graph (``--no-graph``), with the three tables only
   (``--no-anchors``, what DuckDB computes) and with the anchor-text CIFFs too: what the graph
   adds to the nightly job, JVM start included in every run.

Prints walls, peak RSS of each process tree and the ratios; checks the row counts agree.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks import WORK as BENCH_WORK
from benchmarks import job_cmd
from benchmarks.bench_preprocess_peers import build_heavy
from benchmarks.common import load, machine_text, report, timed_cmd, utc_now
from benchmarks.index_peer import run_ours
from devtools import realday

ROOT = pathlib.Path(__file__).resolve().parents[1]


WORK = BENCH_WORK / "graph"

DUCKDB_SQL = r"""
SET threads={cores};
CREATE TEMP TABLE e AS
SELECT url AS src_url, l.url AS dst_url, l.anchor_text AS anchor_text, url_host AS src_host,
       lower(regexp_extract(l.url, '^[A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)', 1)) AS dst_host
FROM (SELECT url, url_host, unnest(outgoing_links) AS l FROM read_parquet('{day}/language=*/*.parquet'))
WHERE l.url IS NOT NULL;
COPY e TO '{out}/edges.parquet' (FORMAT parquet);
COPY (
  WITH a AS (SELECT dst_url, trim(regexp_replace(anchor_text, '[ \t\n\x0B\f\r]+', ' ', 'g'), ' ') AS anchor FROM e),
  c AS (SELECT dst_url, any_value(dst_host) AS dst_host, count(*) AS inlinks, count(DISTINCT src_url) AS source_pages,
               count(DISTINCT src_host) AS source_hosts FROM e GROUP BY dst_url),
  f AS (SELECT dst_url, anchor, count(*) AS n FROM a WHERE length(anchor) > 0 GROUP BY ALL),
  t AS (SELECT dst_url, list(anchor ORDER BY n DESC, anchor) AS anchor_texts FROM
        (SELECT * FROM f QUALIFY row_number() OVER (PARTITION BY dst_url ORDER BY n DESC, anchor) <= 10)
        GROUP BY dst_url)
  SELECT c.*, coalesce(t.anchor_texts, []::VARCHAR[]) AS anchor_texts FROM c LEFT JOIN t USING (dst_url)
) TO '{out}/inlinks.parquet' (FORMAT parquet);
COPY (SELECT src_host, dst_host, count(*) AS links, count(DISTINCT src_url) AS pages FROM e GROUP BY ALL)
  TO '{out}/hosts.parquet' (FORMAT parquet);
"""

GRAPH_ONLY = """
import sys, json
from jobs.index import IndexJob, IndexOptions
from lib.index import graph
from lib.index.page_files import input_files
spark = IndexJob().session(IndexOptions(master=sys.argv[3], conf=("spark.ui.enabled=false", "spark.driver.memory=6g")))
files = input_files(sys.argv[1])
print(json.dumps(graph.write_graph(spark, [f[0] for f in files], sys.argv[2], input_bytes=sum(f[2] for f in files))))
spark.stop()
"""


IN_SESSION = """
import sys, json, time
from jobs.index import IndexJob
from lib.runtime.maptasks import map_tasks
from lib.index import graph
from lib.index.page_files import input_files
import pyarrow as pa
job = IndexJob()
args = job.parser().parse_args(["--input", sys.argv[1], "--output", sys.argv[2], "--master", sys.argv[3],
                                "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.memory=6g"])
spark = job.session(args)
map_tasks(spark, 2, lambda it: it, pa.schema([("id", pa.int64())]))  # the Python workers started
files = input_files(sys.argv[1])
walls = {"default": [], "two_stages": []}
for _ in range(2):
    for plan, single in (("default", graph.SINGLE_TASK_BYTES), ("two_stages", 0)):
        t0 = time.perf_counter()
        graph.write_graph(spark, [f[0] for f in files], sys.argv[2], single_task_bytes=single,
                          sizes=[f[2] for f in files])
        walls[plan].append(time.perf_counter() - t0)
print(json.dumps(walls))
spark.stop()
"""


def preprocessed_day(records: int, cores: int) -> pathlib.Path:
    day = WORK / f"heavy-{records}"
    if (day / "_SUCCESS").exists():
        return day
    warcs = build_heavy(str(WORK / f"warc-{records}"), records, max(2, cores))
    shutil.rmtree(day, ignore_errors=True)
    src = WORK / f"warcdir-{records}"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    for w in warcs:
        os.symlink(w, src / os.path.basename(w))
    subprocess.run(
        [
            *job_cmd("preprocess", src, day, cores),
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return day


def scaled(day: pathlib.Path, scale: int) -> pathlib.Path:
    """``day``'s files ``scale`` times, copy K's URLs (pages and links) suffixed ``?d=K``."""
    if scale == 1:
        return day
    out = day.parent / f"{day.name}-x{scale}"
    if (out / "_SUCCESS").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    for f in sorted(day.glob("language=*/*.parquet")):
        t = pq.read_table(f)
        for k in range(scale):
            rows = t.to_pylist() if k else None
            if rows is not None:
                for r in rows:
                    r["url"] = f"{r['url']}?d={k}"
                    for ln in r.get("outgoing_links") or []:
                        ln["url"] = f"{ln['url']}?d={k}" if ln.get("url") else ln.get("url")
                tk = pa.Table.from_pylist(rows, schema=t.schema)
            else:
                tk = t
            dest = out / f.parent.name / f"k{k:02d}-{f.name}"
            dest.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(tk, dest)
    (out / "_SUCCESS").touch()
    return out


def run_duckdb(day: pathlib.Path, cores: int) -> dict:
    out = WORK / "out-duckdb"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    sql = DUCKDB_SQL.format(cores=cores, day=day, out=out)
    code = "import duckdb, sys; c = duckdb.connect(); c.execute(sys.stdin.read())"
    p, wall, rss = timed_cmd([sys.executable, "-c", code], stdin_text=sql)
    if p.returncode != 0:
        raise SystemExit(f"DuckDB failed: {p.returncode}")
    rows = {n: pq.read_metadata(out / f"{n}.parquet").num_rows for n in ("edges", "inlinks", "hosts")}
    return {"wall": wall, "rss": rss, "rows": rows}


def run_graph_only(day: pathlib.Path, cores: int) -> dict:
    out = WORK / "out-graph"
    shutil.rmtree(out, ignore_errors=True)
    p, wall, rss = timed_cmd(
        [sys.executable, "-c", GRAPH_ONLY, str(day), str(out), f"local[{cores}]"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if p.returncode != 0:
        raise SystemExit("graph-only run failed")
    return {"wall": wall, "rss": rss, "rows": json.loads(p.stdout.decode().strip().splitlines()[-1])}


def run_in_session(day: pathlib.Path, cores: int) -> dict:
    """The best wall of each plan in one started session (module doc, 4)."""
    out = WORK / "out-session"
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run(
        [sys.executable, "-c", IN_SESSION, str(day), str(out), f"local[{cores}]"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    if p.returncode != 0:
        raise SystemExit("in-session run failed")
    return {k: min(v) for k, v in json.loads(p.stdout.decode().strip().splitlines()[-1]).items()}


def days(a) -> list[tuple[str, pathlib.Path, str]]:
    """(name, preprocessed day, shape line) of each day asked for, in the order of ``--day``."""
    out = []
    for kind in a.day or ["real"]:
        if kind == "real":
            rd = realday.cached_day(WORK / f"real-{a.copies}x", a.copies, a.corpus)
            for cut in realday.CUTS:
                out.append(
                    (
                        f"real-{a.copies}x {cut}",
                        realday.preprocessed(rd, cut, a.cores),
                        realday.cut_line(rd["shape"], cut),
                    )
                )
        else:
            day = scaled(preprocessed_day(a.records, a.cores), a.scale)
            out.append(
                (
                    day.name,
                    day,
                    f"copy-verbatim day: {day.name} ({a.records:,} heavy pages"
                    f"{f' x {a.scale}' if a.scale > 1 else ''}, the same links repeated)",
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--day", action="append", choices=["real", "heavy"], help="real (default) and/or heavy")
    ap.add_argument("--copies", type=int, default=1, help="copies of the real-shaped day (10: the 10x day)")
    ap.add_argument("--corpus", default=str(realday.CORPUS), help="the real samples (default ../shared/corpus)")
    ap.add_argument("--records", type=int, default=20_000, help="heavy day: pages")
    ap.add_argument("--scale", type=int, default=1, help="heavy day: copies of the preprocessed files")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-job", action="store_true", help="skip the jobs/index.py runs")
    ap.add_argument("--no-session", action="store_true", help="skip the runs in a started session")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    for name, day, shape in days(a):
        started, load0 = utc_now(), load()
        lines, rounds = run_day(a, name, day, shape)
        figures = {k: [r[k] for r in rounds] for k in rounds[0] if not k.endswith("_per_duckdb")}
        report(
            lines,
            "bench_graph",
            figures,
            what="the web graph (edges, in-links, hosts) in our jobs against DuckDB on the same pages (per round)",
            peer="DuckDB (1 process, the same cores)",
            ratio={k: [r[k] for r in rounds] for k in rounds[0] if k.endswith("_per_duckdb")},
            shape={"day": name, "shape": shape},
            variant="" if name.startswith("real") else name,
            started=started,
            load_before=load0,
        )


def run_day(a, name: str, day: pathlib.Path, shape: str) -> tuple[list[str], list[dict]]:
    """The rounds on one preprocessed day: DuckDB, ours fresh, and in the index job; (the
    Markdown lines, each round's figures)."""
    load0, rounds = load(), []
    files = sum(1 for _ in day.glob("language=*/*.parquet"))
    lines = [
        f"### Web graph against DuckDB ({time.strftime('%Y-%m-%d')}, {name})",
        "",
        f"Machine: {machine_text()}; load at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; cores {a.cores}.",
        f"Day: {shape}; {files} Parquet files after preprocess.",
        "",
    ]
    print("\n".join(lines), flush=True)
    for r in range(a.repeat):
        d = run_duckdb(day, a.cores)
        g = run_graph_only(day, a.cores)
        if d["rows"] != g["rows"]:
            raise SystemExit(f"row counts differ: duckdb {d['rows']} ours {g['rows']}")
        line = (
            f"- round {r + 1}: {d['rows']['edges']:,} edges, {d['rows']['inlinks']:,} inlinks, {d['rows']['hosts']:,} "
            f"host pairs. DuckDB {d['wall']:.1f} s (peak {d['rss'] / 2**30:.2f} GiB); ours, fresh job "
            f"{g['wall']:.1f} s (peak {g['rss'] / 2**30:.2f} GiB): **{g['wall'] / d['wall']:.2f}x**"
        )
        fig = {"edges": d["rows"]["edges"], "duckdb_s": round(d["wall"], 2), "fresh_job_s": round(g["wall"], 2)}
        fig["fresh_job_per_duckdb"] = round(g["wall"] / d["wall"], 3)
        if not a.no_session:
            s = run_in_session(day, a.cores)
            line += (
                f"; in a started session, the default plan {s['default']:.2f} s = **{s['default'] / d['wall']:.2f}x "
                f"DuckDB**, two stages {s['two_stages']:.2f} s = {s['two_stages'] / d['wall']:.2f}x"
            )
            fig.update(in_session_s=round(s["default"], 2), in_session_per_duckdb=round(s["default"] / d["wall"], 3))
        if not a.no_job:
            full = run_ours(day, a.cores, 100_000, graph=True, name="full")
            tables = run_ours(day, a.cores, 100_000, graph=True, anchors=False, name="tables")
            bare = run_ours(day, a.cores, 100_000, graph=False, name="bare")
            line += (
                f"; jobs/index.py {bare['wall']:.1f} s without the graph; with the three tables only "
                f"(`--no-anchors`) {tables['wall']:.1f} s (graph step {tables['steps'].get('graph', 0):.1f} s): "
                f"the graph adds {tables['wall'] - bare['wall']:.1f} s = "
                f"**{(tables['wall'] - bare['wall']) / d['wall']:.2f}x DuckDB**; with the anchor CIFFs too "
                f"{full['wall']:.1f} s (anchors step {full['steps'].get('anchors', 0):.1f} s): adds "
                f"{full['wall'] - bare['wall']:.1f} s = {(full['wall'] - bare['wall']) / d['wall']:.2f}x"
            )
            fig["index_job_adds_per_duckdb"] = round((tables["wall"] - bare["wall"]) / d["wall"], 3)
        print(line, flush=True)
        lines.append(line)
        rounds.append(fig)
    lines.append(f"\nLoad at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}.\n")
    return lines, rounds


if __name__ == "__main__":
    main()
