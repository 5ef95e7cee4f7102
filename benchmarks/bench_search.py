"""Benchmark search latency (lib.serve.engine) against PISA on the same documents and queries.

    python -m benchmarks.bench_search [--docs 100000] [--copies 10] [--queries 1000] [--append]

1. The day: bench_index.py's synthetic day (``--docs`` x ``--copies`` documents, ~500 words each,
   ~70% real lines of the shared samples), indexed by jobs/index.py (25k documents a shard, no
   graph) into benchmarks/work/search/root/index/2026-01/15; reused when it exists. The
   preprocessed day is linked under root/preprocessed for the snippets' texts.
2. Ours: the serving index is built (timed; a rebuild of the cache folder) and loaded.
3. PISA: one PISA index over the same postings (the union of the day's shards, documents in our
   global order), written as PISA's uncompressed collection from our serving index and compressed
   by pyterrier-pisa (block_simdbp, block-max WAND, BM25 k1=0.9 b=0.4). Queries reach both as the
   same analyzed terms (PISA gets them pre-tokenised, no stemmer or stopwords of its own).
4. Queries: ``--queries`` titles and as many 2-5-word runs of the texts (seeded), top-10.
   Each engine answers every query once untimed (warm), then every query timed, one process
   pinned to one core. Ours is timed twice: ranking only (what PISA does) and the full
   ``Engine.search`` (ranking plus hits with snippets).

Prints p50/p95/p99 per engine and the ratios; ``--append`` adds the section to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import pathlib
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parent.parent

from benchmarks import WORK as BENCH_WORK  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from benchmarks import bench_index as bi  # noqa: E402
from lib.serve import serving_index  # noqa: E402
from lib.serve.engine import Engine  # noqa: E402

WORK = BENCH_WORK / "search"
DAY = dt.date(2026, 1, 15)


def make_day(docs: int, copies: int, cores: int) -> pathlib.Path:
    """The published root with the benchmark day's index (and its preprocessed day linked)."""
    root = WORK / "root"
    out = root / "index" / "2026-01" / "15"
    bi.WORK.mkdir(parents=True, exist_ok=True)
    day, jsonl, nbytes = bi.write_inputs(docs, 500, 11, bi.text_pool(cores))
    if copies > 1:
        day, jsonl, nbytes = bi.copy_inputs(day, jsonl, nbytes, copies)
    if not (out / "_SUCCESS").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "jobs" / "index.py"), "--input", str(day), "--output", str(out),
                        "--master", f"local[{cores}]", "--docs-per-shard", "25000", "--no-graph",
                        "--conf", "spark.driver.memory=6g", "--conf", "spark.ui.enabled=false"], check=True)
    pre = root / "preprocessed" / "2026-01" / "15"
    if not pre.exists():
        pre.parent.mkdir(parents=True, exist_ok=True)
        pre.symlink_to(day.resolve())
    return root


def queries(root: pathlib.Path, n: int, seed: int = 5) -> list[str]:
    """``n`` titles and ``n`` 2-5-word runs of the texts (the preprocessed day), seeded."""
    rng = random.Random(seed)
    files = sorted((root / "preprocessed" / "2026-01" / "15").glob("language=*/*.parquet"))
    t = pq.read_table(files[0], columns=["title", "plain_text"])
    titles = [x for x in t.column("title").to_pylist() if x]
    texts = t.column("plain_text").to_pylist()
    out = rng.sample(titles, n)
    while len(out) < 2 * n:
        words = rng.choice(texts).split()
        m = rng.randint(2, 5)
        if len(words) > m:
            i = rng.randrange(len(words) - m)
            out.append(" ".join(words[i:i + m]))
    return out


def pisa_collection(part: serving_index.DayIndex, output: str) -> None:
    """PISA's uncompressed collection (.docs/.freqs/.sizes/.terms/.documents) of the union of the
    day's shards: documents numbered in our global order (shard, then docid)."""
    bases = np.cumsum([0] + [s.docs for s in part.shards])
    terms = sorted(part.vocab, key=part.vocab.get)
    with open(f"{output}.docs", "wb") as docs, open(f"{output}.freqs", "wb") as freqs, \
            open(f"{output}.terms", "w") as tf_out:
        docs.write(struct.pack("<II", 1, int(bases[-1])))
        offs = np.asarray(part.offsets)
        for tid, term in enumerate(terms):
            lo, hi = offs[:, tid], offs[:, tid + 1]
            idx = np.nonzero(hi > lo)[0]
            d = np.concatenate([part.shards[i].docids[lo[i]:hi[i]].astype(np.uint32) + np.uint32(bases[i]) for i in idx])
            f = np.concatenate([part.shards[i].tfs[lo[i]:hi[i]] for i in idx]).astype(np.uint32)
            docs.write(struct.pack("<I", len(d)))
            docs.write(d.tobytes())
            freqs.write(struct.pack("<I", len(f)))
            freqs.write(f.tobytes())
            tf_out.write(term + "\n")
    with open(f"{output}.sizes", "wb") as f:
        dl = np.concatenate([s.dl for s in part.shards]).astype(np.uint32)
        f.write(struct.pack("<I", len(dl)))
        f.write(dl.tobytes())
    with open(f"{output}.documents", "w") as f:
        for s in part.shards:
            for rid in s.table.column("record_id").to_pylist():
                f.write(rid + "\n")


def pisa_retriever(part: serving_index.DayIndex, folder: pathlib.Path, k: int):
    """(retrieve(terms) -> docnos, build seconds): PISA over the same postings, pre-tokenised queries."""
    import pyterrier_pisa as pisa
    from pyterrier_pisa import _pisathon

    t0 = time.time()
    if not (folder / "pt_meta.json").exists():
        shutil.rmtree(folder, ignore_errors=True)
        sys.modules["pyciff"] = types.SimpleNamespace(ciff_to_pisa=lambda _ciff, out: pisa_collection(part, out))
        pisa.PisaIndex.from_ciff("unused", str(folder), stemmer="none")
    index = pisa.PisaIndex(str(folder), stemmer="none", threads=1)
    bm25 = index.bm25(k1=0.9, b=0.4, num_results=k, threads=1)
    bm25.reset_retrieval_context()
    build = time.time() - t0
    shape = (k,)
    qidx, docnos = np.empty(shape, np.int32), np.empty(shape, dtype=object)
    ranks, scores = np.empty(shape, np.int32), np.empty(shape, np.float32)

    def retrieve(terms: dict[str, int]) -> list[str]:
        n = _pisathon.retrieve(bm25._ctxt, bm25.query_algorithm.value, [(0, {t: float(c) for t, c in terms.items()})],
                               k=k, threads=1, query_weighted=1, pretokenised=True, result_qidxs=qidx,
                               result_docnos=docnos, result_ranks=ranks, result_scores=scores)
        return list(docnos[:n])

    return retrieve, build


def percentiles(xs: list[float]) -> tuple[float, float, float]:
    a = np.array(xs) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(np.percentile(a, 99))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--queries", type=int, default=1000, help="titles, and as many 2-5-word queries")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cores", type=int, default=2, help="for building the day (the queries run on one core)")
    ap.add_argument("--search-queries", type=int, default=300,
                    help="queries (of the mix, evenly spread) timed through the full Engine.search with snippets")
    ap.add_argument("--reuse", action="store_true", help="keep a built serving index (its recorded build cost is shown)")
    ap.add_argument("--append", action="store_true")
    a = ap.parse_args()
    root = make_day(a.docs, a.copies, a.cores)
    cache = WORK / "cache"
    if not a.reuse:
        shutil.rmtree(cache, ignore_errors=True)  # the build is part of what is measured
    rep = serving_index.ensure_built(str(root), DAY, str(cache), "dc1")
    build_s = rep.seconds
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    load0 = os.getloadavg()
    eng = Engine({"dc1": str(root)}, cache_dir=str(cache))
    part = eng.load("dc1", DAY)
    ndocs = sum(s.docs for s in part.shards)
    qs = queries(root, a.queries)
    analyzer = part.shards[0].analyzer
    pisa_reused = (WORK / f"pisa-{a.docs}x{a.copies}" / "pt_meta.json").exists()
    retrieve, pisa_build = pisa_retriever(part, WORK / f"pisa-{a.docs}x{a.copies}", a.k)
    ranking = lambda q: eng._top_k(q, [part], [(part, s) for s in part.shards], a.k, 0.9, 0.4)  # noqa: E731
    runs = {"ours (ranking)": ranking, "ours (Engine.search, with hits and snippets)": lambda q: eng.search(q, DAY, k=a.k),
            "PISA (block-max WAND, pre-tokenised)": lambda q: retrieve(Counter(analyzer.tokens(q)))}
    times: dict[str, list[float]] = {}
    agree, compared = 0, 0
    subset = qs[:: max(1, len(qs) // a.search_queries)][: a.search_queries]
    for name, fn in runs.items():
        for q in subset if "Engine.search" in name else qs:
            fn(q)  # warm
    for name, fn in runs.items():
        ts = []
        for q in subset if "Engine.search" in name else qs:
            t = time.perf_counter()
            fn(q)
            ts.append(time.perf_counter() - t)
        times[name] = ts
    for q in qs[:200]:  # the top-10 sets (PISA scores in float32: order within ties may differ)
        ours = {s.table.column("record_id")[r].as_py() for _, _, s, r in ranking(q)[0]}
        theirs = set(retrieve(Counter(analyzer.tokens(q))))
        agree += len(ours & theirs)
        compared += max(len(ours), len(theirs))
    load1 = os.getloadavg()
    pisa_p = percentiles(times["PISA (block-max WAND, pre-tokenised)"])
    lines = [f"### {dt.date.today():%Y-%m-%d}: search, top-{a.k}, warm, one core, {ndocs:,} documents ({len(part.shards)} shards)", "",
             f"Machine: {bi.machine()}. Load average (1 min) before: {load0[0]:.1f}, after: {load1[0]:.1f} (shared with other helpers' jobs).",
             f"`python -m benchmarks.bench_search --docs {a.docs} --copies {a.copies} --queries {a.queries}`: {len(qs)} queries "
             f"({a.queries} titles, {a.queries} 2-5-word runs of the texts). Serving index build: {build_s:.1f} s, "
             f"{rep.bytes / 1e9:.2f} GB{' (recorded when built)' if not rep.built else ''}; PISA index "
             f"({'loaded, built earlier' if pisa_reused else 'collection + compression'}): {pisa_build:.1f} s. "
             f"Engine.search timed on {len(subset)} of the queries.",
             f"Top-10 agreement with PISA over 200 queries: {agree}/{compared} documents (PISA scores in float32).", "",
             "| engine | p50 ms | p95 ms | p99 ms | p50 / PISA | p95 / PISA |", "|---|---:|---:|---:|---:|---:|"]
    for name, ts in times.items():
        p = percentiles(ts)
        lines.append(f"| {name} | {p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} | {p[0] / pisa_p[0]:.2f} | {p[1] / pisa_p[1]:.2f} |")
    text = "\n".join(lines)
    print(text)
    if a.append:
        path = ROOT / "docs" / "benchmarks.md"
        cur = path.read_text()
        if "\n## Search\n" not in cur:
            cur = cur.rstrip("\n") + "\n\n## Search\n"
        path.write_text(cur.rstrip("\n") + "\n\n" + text + "\n")


if __name__ == "__main__":
    main()
