"""The link database's nightly merge at 30, 90 and 365 days of history: flat in the history?
And the cross-day in-links look-up of one URL: p50 and p99 (lib/links, docs/links.md).

The days: the shared corpus's day through preprocess's task function and the index's one-task
graph (its real links: pages, links, distinct targets), replicated with new dates. Each night a
fifth of the source pages are new (their URLs carry the day: the history grows by that much every
night, as a crawl finds new pages), a third of the others are missing on odd days and every fifth
changes its anchors on days divisible by 3 (so entries split and the runs do not only fold). The
nights run one after another in this process, each as the catalogue job's step does it (under the
URL database's lease); the figures are each checkpoint's mean over its last ``--window`` nights,
wall and CPU (DuckDB's threads included), against the first nights': flat means the ratio stays
near 1. There is no peer: the question is the shape of our own cost.

    python -m benchmarks.bench_linkdb [--days 365] [--checkpoints 30 90 365] [--lookups 200]
"""

from __future__ import annotations

import argparse
import datetime as dt
import pathlib
import statistics
import tempfile
import time
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.bench_ranks import CORPUS
from benchmarks.common import load, write_result
from lib.index.graph_tasks import GraphDirs, whole_day
from lib.links import inlinks, linkdb
from lib.preprocess.tasks import TaskSettings, process_task

D0 = dt.date(2025, 1, 1)


def real_edges(corpus: pathlib.Path, out: pathlib.Path) -> pa.Table:
    """The corpus day's graph edges (as the index writes them)."""
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gz", ".warc") and p.is_file())
    res = process_task(
        [(str(p), p.stat().st_size) for p in files],
        TaskSettings(out_dir=str(out / "pages"), max_page_bytes=10 << 20, batch_rows=500, minhash=None),
    )
    dirs = GraphDirs.under(str(out / "graph"))
    for d in dirs[:3]:
        pathlib.Path(d).mkdir(parents=True)
    whole_day([o for r in res for o in (r.get("outputs") or []) if "_captures" not in o], dirs)
    return pq.read_table(dirs.edges)


def day_edges(real: pa.Table, h: np.ndarray, i: int) -> pa.Table:
    """Night ``i``'s edges (module doc)."""
    keep = ~((i % 2 == 1) & (h % 3 == 0))
    t = real.filter(pa.array(keep))
    hh = h[keep]
    src = t.column("src_url").to_pylist()
    new = hh % 5 == 1
    t = t.set_column(0, "src_url", pa.array([f"{u}?d={i}" if n else u for u, n in zip(src, new)]))
    if i % 3 == 0:
        a = t.column("anchor_text").to_pylist()
        t = t.set_column(2, "anchor_text", pa.array([f"{v} {i}" if x % 5 == 0 else v for v, x in zip(a, hh)]))
    return t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=365, help="nights merged (default %(default)s)")
    ap.add_argument("--checkpoints", type=int, nargs="+", default=[30, 90, 365], help="history lengths reported")
    ap.add_argument("--window", type=int, default=10, help="nights averaged at each checkpoint (default %(default)s)")
    ap.add_argument("--lookups", type=int, default=200, help="in-links look-ups timed at the end (default %(default)s)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the shared real samples (default %(default)s)")
    a = ap.parse_args(argv)
    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        real = real_edges(pathlib.Path(a.corpus), work / "day")
        h = np.array([zlib.crc32(u.encode()) for u in real.column("src_url").to_pylist()], np.int64)
        db, urldb = str(work / "linkdb"), str(work / "urldb")
        nights = []
        for i in range(a.days):
            day = D0 + dt.timedelta(days=i)
            path = work / "edges.parquet"
            pq.write_table(day_edges(real, h, i), path)
            w, c = time.perf_counter(), time.process_time()
            with linkdb.lock(urldb, "bench", 60):
                s = linkdb.merge_day(db, day, [str(path)])
            nights.append(
                {
                    "wall": time.perf_counter() - w,
                    "cpu": time.process_time() - c,
                    "links": s["links"],
                    "runs": s["runs"],
                    "merged": len(s["merged_runs"]),
                }
            )
            if (i + 1) in a.checkpoints:
                print(f"night {i + 1}: {nights[-1]}", flush=True)
        size = sum(f.stat().st_size for f in pathlib.Path(db).rglob("*.parquet"))
        state = linkdb.read_state(db)
        targets = sorted(set(real.column("dst_url").to_pylist()))
        rng = np.random.default_rng(56)
        times = []
        for u in rng.choice(targets, min(a.lookups, len(targets)), replace=False):
            t = time.perf_counter()
            inlinks.inlinks(db, str(u), None)
            times.append(time.perf_counter() - t)
    first = nights[: a.window]
    figures, ratio = {}, {}
    base_wall = statistics.mean(n["wall"] for n in first)
    base_cpu = statistics.mean(n["cpu"] for n in first)
    for cp in a.checkpoints:
        sel = nights[max(0, cp - a.window) : cp]
        wall, cpu = statistics.mean(n["wall"] for n in sel), statistics.mean(n["cpu"] for n in sel)
        figures[f"{cp} days: night wall s"] = round(wall, 3)
        figures[f"{cp} days: night cpu s"] = round(cpu, 3)
        ratio[f"{cp} days / first nights, cpu"] = round(cpu / base_cpu, 2)
        ratio[f"{cp} days / first nights, wall"] = round(wall / base_wall, 2)
    figures["amortised night cpu s"] = round(statistics.mean(n["cpu"] for n in nights), 3)
    figures["slowest night cpu s"] = round(max(n["cpu"] for n in nights), 3)
    figures["inlinks p50 ms"] = round(1000 * float(np.percentile(times, 50)), 1)
    figures["inlinks p99 ms"] = round(1000 * float(np.percentile(times, 99)), 1)
    shape = {
        "edges_a_day": real.num_rows,
        "links_a_day": nights[-1]["links"],
        "distinct_targets": len(targets),
        "distinct_targets_per_edge": round(len(targets) / real.num_rows, 3),
        "source_pages": len(set(real.column("src_url").to_pylist())),
        "hosts": len(set(real.column("src_host").to_pylist()) | set(real.column("dst_host").to_pylist())),
        "nights": a.days,
        "runs_at_end": len(state["runs"]),
        "database_bytes": size,
    }
    print(f"shape: {shape}\nfigures: {figures}\nratio: {ratio}")
    write_result(
        "bench_linkdb",
        figures,
        what="the link database's nightly merge (lib.links.linkdb.merge_day: the day's run, the log-structured "
        "merge of runs) at each history length, mean of the last nights before it; the in-links look-up of one URL "
        "over all time at the end",
        peer="the first nights of the same run (flat in history: ratios near 1)",
        ratio=ratio,
        shape=shape,
        load_before=before,
        details={"nights": nights},
    )


if __name__ == "__main__":
    main()
