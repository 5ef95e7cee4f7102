"""Benchmark search latency (lib.serve.engine) against PISA on the same documents and queries.

    python -m benchmarks.bench_search [--day real] [--copies 10] [--corpus DIR] [--queries 1000]
    python -m benchmarks.bench_search --day synthetic [--docs 100000] [--copies 10]

1. The day (``--day``, repeatable; default ``real``):
   * ``real``: the real-shaped day of devtools/realday.py (``--copies`` copies of the shared
     samples, host-renamed), each cut (many small archives, few large ones) through
     jobs/preprocess.py and jobs/index.py (realday.day_index: 25k documents a shard, no graph,
     the cut's folder is the published root), the day's shape
     printed beside each figure. The cut does not change the postings (the same pages, the same
     shards): the two cuts' indexes must give the same top-10 (ids and scores) for every query,
     which is checked; both are timed (a few seconds each).
   * ``synthetic``: bench_index.py's synthetic day (``--docs`` x ``--copies`` documents, ~500
     words each, ~70% real lines of the shared samples): an extra row, as before.
   Indexes are kept under benchmarks/work/search and reused. The preprocessed day is linked
   under root/preprocessed for the snippets' texts.
2. Ours: the serving index is built (timed; a rebuild of the cache folder) and loaded.
3. PISA: one PISA index over the same postings (the union of the day's shards, documents in our
   global order), written as PISA's uncompressed collection from our serving index and compressed
   by pyterrier-pisa (block_simdbp, block-max WAND, BM25 k1=0.9 b=0.4). Queries reach both as the
   same analyzed terms (PISA gets them pre-tokenised by the analyzer of the day's English shards,
   no stemmer or stopwords of its own).
4. Queries: ``--queries`` titles and as many 2-5-word runs of the texts (seeded; of the English
   pages), top-10 (the real day has fewer titles than 1000 at small sizes: all of them then).
   Each engine answers every query once untimed (warm), then every query timed, one process
   pinned to one core. Ours is timed twice: ranking only (what PISA does) and the full
   ``Engine.search`` (ranking plus hits with snippets).

Prints p50/p95/p99 per engine and the ratios and writes the result to benchmarks/results/bench_search/.
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
import time
import types
from collections import Counter

import numpy as np
import pyarrow.parquet as pq

from benchmarks import WORK as BENCH_WORK
from benchmarks import index_days as bi
from benchmarks import job_cmd
from benchmarks.common import machine_text, write_result
from devtools import realday
from lib.serve import serving_index
from lib.serve.engine import Engine

ROOT = pathlib.Path(__file__).resolve().parent.parent


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
        subprocess.run(
            [
                *job_cmd("index", day, out, cores),
                "--docs-per-shard",
                "25000",
                "--no-graph",
                "--conf",
                "spark.driver.memory=6g",
                "--conf",
                "spark.ui.enabled=false",
            ],
            check=True,
        )
    pre = root / "preprocessed" / "2026-01" / "15"
    if not pre.exists():
        pre.parent.mkdir(parents=True, exist_ok=True)
        pre.symlink_to(day.resolve())
    return root


def real_roots(a) -> list[tuple[str, pathlib.Path, str]]:
    """(name, published root, shape line) of each cut of the real-shaped day, indexed once."""
    rd = realday.shared_day(a.copies, a.corpus)
    out = []
    for cut in realday.CUTS:
        root = realday.day_index(rd, cut, a.cores).parents[2]  # CUT: warc/, preprocessed/, index/
        out.append((f"real-{a.copies}x, {cut} cut", root, realday.cut_line(rd["shape"], cut)))
    return out


def queries(root: pathlib.Path, n: int, seed: int = 5) -> list[str]:
    """``n`` titles and ``n`` 2-5-word runs of the texts (the preprocessed day's English pages,
    files read until there are ``n`` titles; all titles when the day has fewer), seeded."""
    rng = random.Random(seed)
    files = sorted((root / "preprocessed" / "2026-01" / "15").glob("language=eng/*.parquet")) or sorted(
        (root / "preprocessed" / "2026-01" / "15").glob("language=*/*.parquet")
    )
    titles, texts = [], []
    for f in files:
        t = pq.read_table(f, columns=["title", "plain_text"])
        titles += [x for x in t.column("title").to_pylist() if x]
        texts += [x for x in t.column("plain_text").to_pylist() if x]
        if len(titles) >= n:
            break
    n = min(n, len(titles))
    out = rng.sample(titles, n)
    while len(out) < 2 * n:
        words = rng.choice(texts).split()
        m = rng.randint(2, 5)
        if len(words) > m:
            i = rng.randrange(len(words) - m)
            out.append(" ".join(words[i : i + m]))
    return out


def pisa_collection(part: serving_index.DayIndex, output: str) -> None:
    """PISA's uncompressed collection (.docs/.freqs/.sizes/.terms/.documents) of the union of the
    day's shards: documents numbered in our global order (shard, then docid)."""
    bases = np.cumsum([0] + [s.docs for s in part.shards])
    terms = sorted(part.vocab, key=part.vocab.get)
    with (
        open(f"{output}.docs", "wb") as docs,
        open(f"{output}.freqs", "wb") as freqs,
        open(f"{output}.terms", "w") as tf_out,
    ):
        docs.write(struct.pack("<II", 1, int(bases[-1])))
        offs = np.asarray(part.offsets)
        for tid, term in enumerate(terms):
            lo, hi = offs[:, tid], offs[:, tid + 1]
            idx = np.nonzero(hi > lo)[0]
            d = np.concatenate(
                [part.shards[i].docids[lo[i] : hi[i]].astype(np.uint32) + np.uint32(bases[i]) for i in idx]
            )
            f = np.concatenate([part.shards[i].tfs[lo[i] : hi[i]] for i in idx]).astype(np.uint32)
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
        n = _pisathon.retrieve(
            bm25._ctxt,
            bm25.query_algorithm.value,
            [(0, {t: float(c) for t, c in terms.items()})],
            k=k,
            threads=1,
            query_weighted=1,
            pretokenised=True,
            result_qidxs=qidx,
            result_docnos=docnos,
            result_ranks=ranks,
            result_scores=scores,
        )
        return list(docnos[:n])

    return retrieve, build


def percentiles(xs: list[float]) -> tuple[float, float, float]:
    a = np.array(xs) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(np.percentile(a, 99))


def english(part: serving_index.DayIndex):
    """The analyzer of the day's English shards (of the biggest shard when there are none)."""
    eng = [s for s in part.shards if s.analyzer.name.startswith("en")]
    return max(eng or part.shards, key=lambda s: s.docs).analyzer


def top10(ranking, qs: list[str]) -> list[list[tuple[str, float]]]:
    """Our top-k of each query as (record id, score), ties in record id order (for comparing days)."""
    return [
        sorted(
            ((s.table.column("record_id")[r].as_py(), round(float(sc), 4)) for sc, _, s, r in ranking(q)[0]),
            key=lambda x: (-x[1], x[0]),
        )
        for q in qs
    ]


def same_answer(x: list[tuple[str, float]], y: list[tuple[str, float]]) -> bool:
    """The same scores, and the same documents above the last score (which of the documents tied
    at the k-th score are kept goes by docid, and docids follow the order of the input files)."""
    if [s for _, s in x] != [s for _, s in y]:
        return False
    last = x[-1][1] if x else None
    return {d for d, s in x if s != last} == {d for d, s in y if s != last}


def run_day(a, name: str, root: pathlib.Path, shape: str, tag: str, qs: list[str]) -> tuple[list[str], list]:
    """Time ours and PISA on one published day; (Markdown lines, our top-10 of every query)."""
    cache = WORK / f"cache-{tag}"
    if not a.reuse:
        shutil.rmtree(cache, ignore_errors=True)  # the build is part of what is measured
    rep = serving_index.ensure_built(str(root), DAY, str(cache), "dc1")
    build_s = rep.seconds
    load0 = os.getloadavg()
    eng = Engine({"dc1": str(root)}, cache_dir=str(cache))
    part = eng.load("dc1", DAY)
    ndocs = sum(s.docs for s in part.shards)
    analyzer = english(part)
    pisa_dir = WORK / f"pisa-{tag}"
    if not a.reuse:
        shutil.rmtree(pisa_dir, ignore_errors=True)
    pisa_reused = (pisa_dir / "pt_meta.json").exists()
    retrieve, pisa_build = pisa_retriever(part, pisa_dir, a.k)
    ranking = lambda q: eng._top_k(q, [part], [(part, s) for s in part.shards], a.k, 0.9, 0.4)  # noqa: E731
    runs = {
        "ours (ranking)": ranking,
        "ours (Engine.search, with hits and snippets)": lambda q: eng.search(q, DAY, k=a.k),
        "PISA (block-max WAND, pre-tokenised)": lambda q: retrieve(Counter(analyzer.tokens(q))),
    }
    times: dict[str, list[float]] = {}
    agree, compared = 0, 0
    subset = qs[:: max(1, len(qs) // a.search_queries)][: a.search_queries]
    for name_, fn in runs.items():
        for q in subset if "Engine.search" in name_ else qs:
            fn(q)  # warm
    for name_, fn in runs.items():
        ts = []
        for q in subset if "Engine.search" in name_ else qs:
            t = time.perf_counter()
            fn(q)
            ts.append(time.perf_counter() - t)
        times[name_] = ts
    for q in qs[:200]:  # the top-10 sets (PISA scores in float32: order within ties may differ)
        ours = {s.table.column("record_id")[r].as_py() for _, _, s, r in ranking(q)[0]}
        theirs = set(retrieve(Counter(analyzer.tokens(q))))
        agree += len(ours & theirs)
        compared += max(len(ours), len(theirs))
    load1 = os.getloadavg()
    pisa_p = percentiles(times["PISA (block-max WAND, pre-tokenised)"])
    how = (
        f"--day real --copies {a.copies}"
        if name.startswith("real")
        else f"--day synthetic --docs {a.docs} --copies {a.copies}"
    )
    lines = [
        f"### {dt.date.today():%Y-%m-%d}: search on {name}, top-{a.k}, warm, one core, {ndocs:,} documents "
        f"({len(part.shards)} shards)",
        "",
        f"Day: {shape}." if shape else "Day: synthetic (pages copied verbatim: an extra row).",
        f"Machine: {machine_text()}. Load average (1 min) before: {load0[0]:.1f}, after: {load1[0]:.1f} (shared "
        "with other helpers' jobs).",
        f"`python -m benchmarks.bench_search {how} --queries {a.queries}`: {len(qs)} queries "
        f"({len(qs) // 2} titles, as many 2-5-word runs of the texts). Serving index build: {build_s:.1f} s, "
        f"{rep.bytes / 1e9:.3f} GB{' (recorded when built)' if not rep.built else ''}; PISA index "
        f"({'loaded, built earlier' if pisa_reused else 'collection + compression'}): {pisa_build:.1f} s. "
        f"Engine.search timed on {len(subset)} of the queries.",
        f"Top-10 agreement with PISA over {min(200, len(qs))} queries: {agree}/{compared} documents (PISA scores "
        "in float32).",
        "",
        "| engine | p50 ms | p95 ms | p99 ms | p50 / PISA | p95 / PISA |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name_, ts in times.items():
        p = percentiles(ts)
        lines.append(
            f"| {name_} | {p[0]:.2f} | {p[1]:.2f} | {p[2]:.2f} | {p[0] / pisa_p[0]:.2f} | {p[1] / pisa_p[1]:.2f} |"
        )
    lines.append("")
    pct = {n: [round(x, 3) for x in percentiles(ts)] for n, ts in times.items()}
    path = write_result(
        "bench_search",
        {f"{n} p50/p95/p99 ms": v for n, v in pct.items()},
        what=f"search latency, top-{a.k}, warm, one core, {ndocs:,} documents ({len(part.shards)} shards)",
        peer="PISA (pyterrier-pisa, block-max WAND)",
        ratio={f"{n} p50 / PISA": round(v[0] / pisa_p[0], 3) for n, v in pct.items() if not n.startswith("PISA")},
        shape={"day": name, "shape": shape or "synthetic (pages copied verbatim)", "queries": len(qs)},
        variant="" if name.startswith("real") else f"synthetic {ndocs / 1e6:g}M",
        load_before=list(load0),
        command=f"python -m benchmarks.bench_search {how} --queries {a.queries}",
    )
    lines.append(f"Result: {path}")
    return lines, top10(ranking, qs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--day", action="append", choices=["real", "synthetic"], help="real (default) and/or synthetic")
    ap.add_argument("--docs", type=int, default=100_000, help="documents of the synthetic day (before --copies)")
    ap.add_argument("--copies", type=int, default=10, help="copies of the real samples, or of the synthetic day")
    ap.add_argument("--corpus", default=str(realday.CORPUS), help="the real samples (default ../shared/corpus)")
    ap.add_argument("--queries", type=int, default=1000, help="titles, and as many 2-5-word queries")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--cores", type=int, default=2, help="for building the day (the queries run on one core)")
    ap.add_argument(
        "--search-queries",
        type=int,
        default=300,
        help="queries (of the mix, evenly spread) timed through the full Engine.search with snippets",
    )
    ap.add_argument(
        "--reuse", action="store_true", help="keep a built serving index (its recorded build cost is shown)"
    )
    a = ap.parse_args()
    days = []
    for d in a.day or ["real"]:
        if d == "real":
            days += [
                (name, root, shape, f"real-{a.copies}x-{name.rsplit(' ', 2)[1]}") for name, root, shape in real_roots(a)
            ]
        else:
            days.append(
                (
                    f"the synthetic day ({a.docs:,} x {a.copies})",
                    make_day(a.docs, a.copies, a.cores),
                    "",
                    f"{a.docs}x{a.copies}",
                )
            )
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # after the Spark jobs: the queries run on one core
    lines, tops = [], {}
    real = [root for name, root, _, _ in days if name.startswith("real")]
    real_qs = queries(real[-1], a.queries) if real else []  # the same queries for both cuts
    for name, root, shape, tag in days:
        print(shape or name, file=sys.stderr, flush=True)
        got, tops[name] = run_day(
            a, name, root, shape, tag, real_qs if name.startswith("real") else queries(root, a.queries)
        )
        lines += got
        print("\n".join(got), flush=True)
    real = [n for n in tops if n.startswith("real")]
    if len(real) == 2:  # the cut changes the files, not the pages: the same answers
        pairs = list(zip(tops[real[0]], tops[real[1]]))
        ident = sum(x == y for x, y in pairs)
        diff = sum(not same_answer(x, y) for x, y in pairs)
        line = (
            f"The two cuts' indexes give the same top-{a.k} (record ids and scores) for {ident} of {len(pairs)} "
            "queries;"
            f" {len(pairs) - ident - diff} more differ only in which documents tied at the {a.k}th score are kept"
            f" (ties go by docid, which follows the input files' order); {diff} differ otherwise."
        )
        print(line, flush=True)
        lines.append(line)
        if diff:
            raise SystemExit(f"the cuts' indexes answer {diff} queries differently")


if __name__ == "__main__":
    main()
