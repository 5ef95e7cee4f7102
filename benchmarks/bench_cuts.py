"""Index, graph and catalogue on one day in two cuts: few large files against many small ones.

    python -m benchmarks.bench_cuts [--day PREPROCESSED] [--scale 5] [--rows-per-file 2]
                                    [--cores 2] [--repeat 1] [--tree DIR]
    python -m benchmarks.bench_cuts --large PREPROCESSED --small PREPROCESSED ...

1. Day: a preprocessed day (``--day``; by default ``../shared/corpus``'s archives through
   ``jobs/preprocess.py``: real pages from several producers, 0.3-0.4 distinct link targets
   per link) re-cut by :mod:`benchmarks.recut` into ``large`` (one file per language) and
   ``small`` (``--rows-per-file`` pages a file, as a collection of small archives gives),
   ``--scale`` copies with their hosts renamed. Or two preprocessed days of the same records
   (``--large``, ``--small``: e.g. the few-large and many-small archive cuts of a real-shaped
   day, each through ``jobs/preprocess.py``).
2. Per cut, each a fresh process, JVM start included: ``jobs/index.py --no-graph`` and with
   the graph (``--no-anchors``: the three tables, what DuckDB computes), the graph alone
   (``lib.index.graph.write_graph``), DuckDB computing the same three tables
   (``bench_graph.DUCKDB_SQL``, its peer), and ``jobs/catalogue.py --no-urldb``.
3. Prints each job's small/large ratio and the graph's ratio to DuckDB per cut (the graph in a
   started Spark session, as the index job runs it; what it adds to the index job, as
   bench_graph states it; alone with its JVM start), with the day's
   shape; checks that the graph's row counts equal DuckDB's and that both cuts give the same
   index (its shards' digests).

``--tree`` runs another checkout's code (e.g. the base commit's worktree) on the same days, for
before/after figures.
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

from benchmarks import WORK as BENCH_WORK
from benchmarks import bench_graph, job_cmd
from benchmarks.common import load, machine_text, report, timed_cmd, utc_now
from benchmarks.recut import recut

ROOT = pathlib.Path(__file__).resolve().parents[1]


WORK = BENCH_WORK / "cuts"
CORPUS = ROOT.parent / "shared" / "corpus"


def corpus_day(corpus: pathlib.Path, cores: int) -> pathlib.Path:
    """The shared corpus's archives (every producer) preprocessed into one day."""
    day = WORK / "corpus-day"
    if (day / "_SUCCESS").exists():
        return day
    if not corpus.is_dir():
        raise SystemExit(f"no corpus at {corpus}: give --day or --corpus")
    src = WORK / "corpus-warc"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    for f in sorted(corpus.rglob("*")):
        if f.is_file() and (".arc" in f.name or ".warc" in f.name):
            os.symlink(f, src / f"{f.parent.name}-{f.name}")
    subprocess.run(
        [
            *job_cmd("preprocess", src, day, cores),
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return day


def shape(day: pathlib.Path) -> dict:
    """Pages, files, links and distinct link targets of a cut (DuckDB over its Parquet)."""
    import duckdb

    files = [p for p in day.rglob("*.parquet") if p.parent.name.startswith("language=")]
    con = duckdb.connect()
    pages, links, targets = con.execute(
        f"""SELECT count(DISTINCT (url, record_id)), sum(len(outgoing_links)),
                   (SELECT count(DISTINCT l.url) FROM (SELECT unnest(outgoing_links) AS l
                    FROM read_parquet('{day}/language=*/*.parquet')))
            FROM read_parquet('{day}/language=*/*.parquet')"""
    ).fetchone()
    caps = len(list((day / "_captures").glob("*.parquet")))
    return {
        "pages": pages,
        "page_files": len(files),
        "capture_files": caps,
        "links": int(links or 0),
        "targets": targets,
        "bytes": sum(p.stat().st_size for p in files),
    }


#: bench_graph's graph-only job, also timing write_graph alone (a running session: the index job's case)
GRAPH_TIMED = bench_graph.GRAPH_ONLY.replace(
    "print(json.dumps(graph.write_graph(spark, [f[0] for f in files], sys.argv[2], input_bytes=sum(f[2] for f "
    "in files))))",
    "import time\nt0 = time.time()\n"
    "rows = graph.write_graph(spark, [f[0] for f in files], sys.argv[2], input_bytes=sum(f[2] for f in files))\n"
    "print(json.dumps([rows, time.time() - t0]))",
)
assert GRAPH_TIMED != bench_graph.GRAPH_ONLY


def _job(tree: pathlib.Path, module: str, args: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p, wall, _ = timed_cmd(
        [sys.executable, "-m", module, *args], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    if p.returncode != 0:
        raise SystemExit(f"{module} failed ({p.returncode}) on {args}")
    return wall


def run_cut(day: pathlib.Path, tree: pathlib.Path, cores: int, cut: str) -> dict:
    """Walls of the runs on one cut (module doc, 2)."""
    out = WORK / f"out-{cut}"
    shutil.rmtree(out, ignore_errors=True)
    conf = ["--master", f"local[{cores}]", "--date", "2026-01-15", "--conf", "spark.ui.enabled=false"]
    index = ["jobs.index", "--input", str(day), "--min-group-docs", "1", *conf]
    r = {"index": _job(tree, index[0], [*index[1:], "--output", str(out / "index"), "--no-graph"])}
    r["index_graph"] = _job(tree, index[0], [*index[1:], "--output", str(out / "index-graph"), "--no-anchors"])
    r["catalogue"] = _job(
        tree,
        "jobs.catalogue",
        [
            "--input",
            str(day),
            "--output",
            str(out / "catalogue"),
            "--no-urldb",
            "--no-report",
            "--index",
            str(out / "index"),
            *conf,
        ],
    )
    env = dict(os.environ, PYTHONPATH=str(tree))
    g_out = out / "graph"
    p, wall, rss = timed_cmd(
        [sys.executable, "-c", GRAPH_TIMED, str(day), str(g_out), f"local[{cores}]"],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    if p.returncode != 0:
        raise SystemExit("graph-only run failed")
    r["graph"], r["graph_rss"] = wall, rss
    r["graph_rows"], r["graph_in_session"] = json.loads(p.stdout.decode().strip().splitlines()[-1])
    d = bench_graph.run_duckdb(day, cores)
    r["duckdb"], r["duckdb_rss"], r["duckdb_rows"] = d["wall"], d["rss"], d["rows"]
    if {k: r["graph_rows"][k] for k in d["rows"]} != d["rows"]:
        raise SystemExit(f"row counts differ: duckdb {d['rows']} ours {r['graph_rows']}")
    from lib.index.shard_digests import shard_digests

    r["digests"] = shard_digests(out / "index")
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--day", type=pathlib.Path, help="a preprocessed day (default: the shared corpus's)")
    ap.add_argument("--corpus", type=pathlib.Path, default=CORPUS)
    ap.add_argument("--large", type=pathlib.Path, help="a preprocessed day (with --small: no re-cut)")
    ap.add_argument("--small", type=pathlib.Path, help="the same records preprocessed in many small files")
    ap.add_argument("--scale", type=int, default=5)
    ap.add_argument("--rows-per-file", type=int, default=2)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--tree", type=pathlib.Path, default=ROOT, help="checkout whose jobs run (default this one)")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if a.large and a.small:
        paths = {"large": a.large, "small": a.small}
        title = f"{a.large.name} and {a.small.name}"
    else:
        src = a.day or corpus_day(a.corpus, a.cores)
        cuts = WORK / f"{src.name}-x{a.scale}-r{a.rows_per_file}"
        if not (cuts / "small" / "_SUCCESS").exists():
            recut(src, cuts, a.scale, a.rows_per_file)
        paths = {c: cuts / c for c in ("large", "small")}
        title = f"{src.name} x{a.scale}, re-cut {a.rows_per_file} pages a file"
    shapes = {c: shape(paths[c]) for c in ("large", "small")}
    s = shapes["small"]
    started, load0 = utc_now(), load()
    lines = [
        f"### Index, graph and catalogue by cut ({time.strftime('%Y-%m-%d %H:%M')} UTC, {title})",
        "",
        f"Machine: {machine_text()}; load at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; cores {a.cores}; "
        f"code: {'this checkout' if a.tree == ROOT else a.tree.name}.",
        "",
        f"Day: {s['pages']:,} pages, {s['links']:,} links to {s['targets']:,} distinct targets "
        f"({s['targets'] / max(1, s['links']):.2f} a link), {s['bytes'] / 2**20:.1f} MiB of page files: "
        f"large cut {shapes['large']['page_files']} page + {shapes['large']['capture_files']} capture files, "
        f"small cut {s['page_files']:,} + {s['capture_files']:,}.",
        "",
    ]
    for rnd in range(a.repeat):
        res = {c: run_cut(paths[c], a.tree, a.cores, c) for c in ("large", "small")}
        same = "the same shards" if res["large"]["digests"] == res["small"]["digests"] else "DIFFERENT shards"
        lines += [
            f"Round {rnd + 1} (both cuts give {same}):",
            "",
            "| job | large cut | small cut | small/large |",
            "|---|---:|---:|---:|",
        ]
        for c in res.values():
            c["adds"] = c["index_graph"] - c["index"]
        for job in ("index", "index_graph", "adds", "catalogue", "graph", "graph_in_session", "duckdb"):
            lo, sm = res["large"][job], res["small"][job]
            name = {
                "index": "index --no-graph",
                "index_graph": "index with the graph (`--no-anchors`)",
                "adds": "what the graph adds to the index job",
                "graph": "graph alone (fresh job, JVM start)",
                "graph_in_session": "graph alone, in a started Spark session",
                "duckdb": "DuckDB, same tables (fresh process)",
            }.get(job, job)
            lines.append(f"| {name} | {lo:.1f} s | {sm:.1f} s | **{sm / lo:.2f}x** |")
        lines.append(
            "| graph in a session / DuckDB | "
            + " | ".join(f"**{res[c]['graph_in_session'] / res[c]['duckdb']:.2f}x**" for c in ("large", "small"))
            + " | |"
        )
        lines.append(
            "| graph adds / DuckDB | "
            + " | ".join(f"**{res[c]['adds'] / res[c]['duckdb']:.2f}x**" for c in ("large", "small"))
            + " | |"
        )
        lines.append(
            "| graph alone / DuckDB | "
            + " | ".join(
                f"**{res[c]['graph'] / res[c]['duckdb']:.2f}x** (peak {res[c]['graph_rss'] / 2**30:.2f} against "
                f"{res[c]['duckdb_rss'] / 2**30:.2f} GiB)"
                for c in ("large", "small")
            )
            + " | |"
        )
        lines.append("")
        print("\n".join(lines[-14:]), flush=True)
    lines.append(f"Load at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}.")
    jobs = ("index", "index_graph", "adds", "catalogue", "graph", "graph_in_session", "duckdb")
    report(
        lines,
        "bench_cuts",
        {f"{c}_{job}_s": round(res[c][job], 2) for c in ("large", "small") for job in jobs},
        what="index, graph and catalogue on one day in a few-large and a many-small cut (the last round)",
        peer="the large cut (target small <= 1.2x); DuckDB for the graph",
        ratio={
            **{f"small_per_large_{job}": round(res["small"][job] / res["large"][job], 3) for job in jobs},
            **{
                f"{c}_graph_in_session_per_duckdb": round(res[c]["graph_in_session"] / res[c]["duckdb"], 3) for c in res
            },
        },
        shape={k: v for k, v in s.items() if isinstance(v, int | float)} | {"day": title},
        started=started,
        load_before=load0,
    )


if __name__ == "__main__":
    main()
