"""Benchmark the index job against Lucene (Anserini) on the same documents and cores.

    python -m benchmarks.bench_index [--docs 100000] [--words 500] [--cores 2] [--copies 10]
    python -m benchmarks.bench_index --set samples [--docs 30000]    # real pages, all languages
    python -m benchmarks.bench_index --set realday [--day-copies 1]  # the real-shaped day, both cuts
    python -m benchmarks.bench_index --set synthetic --set realday   # several sets, one after the other

What is indexed (``--set``, repeatable; the days and their JsonCollections are built by
benchmarks/index_days.py, the runs are benchmarks/index_peer.py's):

- ``synthetic`` (the default): ``--docs`` English pages of ~``--words`` words (~70% real lines of
  the shared samples, ~30% Zipf words of a 300k-word vocabulary), ``--copies N`` times over
  (distinct URLs and ids, same texts); Anserini with its English analyzer (Porter). The first
  run's shards are checked against the golden digests (tests/data/index_golden/) when there is
  one for this input. Result row ``bench_index`` (variant: the document count, unless 100,000).
- ``samples``: the shared samples preprocessed, all languages, repeated to ``--docs`` pages
  (default 30,000); Anserini with its per-language analyzers: one IndexCollection per analyzer
  (``-language de/fr/nl/pl/ru/ja/zh/...`` where it has one for the page's language, its English
  one otherwise), one after the other, wall times summed. Variant ``real pages`` (this was
  ``bench_index_real``).
- ``realday``: the real-shaped day of devtools/realday.py (``--day-copies`` of it) in both cuts (many
  small archives, few large ones), each cut through jobs/preprocess.py, the day's shape printed
  beside each figure; then as ``samples``. Variant ``real-shaped day``.

Ours is ``jobs/index.py`` in a subprocess, with ``--no-graph`` (the index alone: what Anserini
does) and, unless ``--no-full``, the full job with the web graph. Rounds alternate ours (no
graph), Anserini, ours (with graph), ``--repeat`` times; the tables show medians. The driver JVM
maps Spark's classes from the class archive of lib/runtime/jvm_cache.py, like every run after
the first on a machine; without one yet, an untimed run writes it first. Each set prints a
Markdown section and writes its result to benchmarks/results/bench_index/ (``python -m
benchmarks.report`` puts it into docs/benchmarks.md's table).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from typing import Any, Callable

from benchmarks.common import load, machine_text, median_run, report, utc_now
from benchmarks.index_days import collections_of, copy_inputs, text_pool, write_inputs, write_real
from benchmarks.index_peer import (
    HEAP,
    ROOT,
    WORK,
    ensure_class_archive,
    parser,
    run_anserini,
    run_anserini_langs,
    run_ours,
)
from devtools import realday

BENCH = "bench_index"
SETS = ("synthetic", "samples", "realday")


def _walls(runs: list[dict[str, Any]]) -> str:
    return ", ".join(f"{r['wall']:.1f}" for r in runs)


def _rounds(
    a, day, run_peer: Callable[[], dict | None], ours: Callable[[int], dict[str, Any]]
) -> tuple[list[dict], list[dict], list[dict], list[float]]:
    """``a.repeat`` alternating rounds: ours without the graph, the peer (None: not run), ours
    with the graph; ``ours(i)``: round i's keywords to :func:`run_ours`."""
    alone, full, peer, loads = [], [], [], []
    for i in range(max(1, a.repeat)):
        loads.append(os.getloadavg()[0])
        alone.append(run_ours(day, a.cores, a.docs_per_shard, graph=False, **ours(i)))
        print(f"ours, no graph: {alone[-1]}", file=sys.stderr)
        got = run_peer()
        if got is not None:
            peer.append(got)
            print(f"anserini: {got}", file=sys.stderr)
        if not a.no_full:
            kw = {k: v for k, v in ours(i).items() if k != "golden"}  # the shards were checked
            full.append(run_ours(day, a.cores, a.docs_per_shard, graph=True, **kw))
            print(f"ours, with graph: {full[-1]}", file=sys.stderr)
    return alone, full, peer, loads


def synthetic(a) -> None:
    """The synthetic set (module doc)."""
    docs = a.docs or 100_000
    pool = text_pool(a.cores)
    t = time.time()
    day, jsonl, nbytes = write_inputs(docs, a.words, a.seed, pool)
    if a.copies > 1:
        day, jsonl, nbytes = copy_inputs(day, jsonl, nbytes, a.copies)
    print(f"inputs ready in {time.time() - t:.0f}s: {docs} docs, {nbytes / 1e6:.0f} MB of text", file=sys.stderr)
    first = ensure_class_archive(day, a.cores, a.docs_per_shard)
    copies = f"-x{a.copies}" if a.copies > 1 else ""
    golden = ROOT / "tests" / "data" / "index_golden" / f"bench-{docs}-{a.words}{copies}.json"
    started, load0 = utc_now(), load()
    ans: dict | str = "skipped (--skip-anserini)"

    def peer() -> dict | None:
        nonlocal ans
        if a.skip_anserini:
            return None
        try:
            return run_anserini(jsonl, a.cores)
        except (SystemExit, OSError, StopIteration) as e:  # no Java, no jar: said in the table
            ans, a.skip_anserini = f"could not run: {e}", True
            return None

    alone, full, ans_runs, loads = _rounds(
        a, day, peer, lambda i: {"golden": golden if i == 0 else None, "driver_memory": a.driver_memory}
    )
    load1 = os.getloadavg()
    ours = median_run(alone)
    if ans_runs:
        ans = median_run(ans_runs)
    tot = ours["totals"]
    gb = lambda r: f"{r['rss'] / 2**30:.1f}"  # noqa: E731
    lines = [
        f"### {dt.date.today():%Y-%m-%d}: {docs * a.copies:,} documents of ~{a.words} words, {a.cores} cores"
        + (f" ({a.copies} copies of the {docs:,}-document day, distinct URLs and ids)" if a.copies > 1 else ""),
        "",
        f"Machine: {machine_text()}. Load average (1 min) before each round: {', '.join(f'{x:.1f}' for x in loads)};"
        f" after: {load1[0]:.1f} (shared with other jobs).",
        f"`python -m benchmarks.bench_index --set synthetic --docs {docs} --words {a.words} --cores {a.cores} "
        f"--docs-per-shard {a.docs_per_shard} --repeat {a.repeat}{f' --copies {a.copies}' if a.copies > 1 else ''}`;"
        f" {nbytes / 1e6:.0f} MB of text "
        f"({'~70% real lines of the shared samples, ~30% Zipf words' if pool else 'Zipf words only: no samples'}).",
        "",
        "| indexer | median wall s | runs, s | docs/s | peak RSS GiB | output MB |",
        "|---|---:|---:|---:|---:|---:|",
        f"| ours: jobs/index.py --no-graph, Spark local[{a.cores}], driver heap {a.driver_memory}, "
        f"{ours['shards']} CIFF shards + metadata |"
        f" {ours['wall']:.1f} | {_walls(alone)} | {tot['docs'] / ours['wall']:,.0f} | {gb(ours)} |"
        f" {(tot['ciff_bytes'] + tot['metadata_bytes']) / 1e6:.1f} |",
    ]
    if full:
        f = median_run(full)
        lines.append(
            f"| ours: the full job (with the web graph) | {f['wall']:.1f} | {_walls(full)} |"
            f" {tot['docs'] / f['wall']:,.0f} | {gb(f)} | |"
        )
    if isinstance(ans, dict):
        lines.append(
            f"| Anserini {ans['jar']} IndexCollection, -threads {a.cores}, -Xmx{HEAP} ({ans['java']}) |"
            f" {ans['wall']:.1f} | {_walls(ans_runs)} | {ans['docs'] / ans['wall']:,.0f} | {gb(ans)} | "
            f"{ans['bytes'] / 1e6:.1f} |"
        )
        pairs = ", ".join(f"{o['wall'] / x['wall']:.2f}" for o, x in zip(alone, ans_runs))
        lines += [
            "",
            f"Ratio ours (no graph) / Anserini wall time, medians of {len(alone)} alternating rounds:"
            f" **{ours['wall'] / ans['wall']:.2f}** (target <= 0.9); per round: {pairs}.",
        ]
        if full:
            pairs = ", ".join(f"{o['wall'] / x['wall']:.2f}" for o, x in zip(full, ans_runs))
            lines.append(f"With the web graph: {median_run(full)['wall'] / ans['wall']:.2f}; per round: {pairs}.")
    else:
        lines += ["", f"Anserini: {ans}"]
    lines += [
        "",
        f"Shards against the old code's golden digests ({golden.name}): "
        f"{alone[0]['golden'] or 'no golden for this input'}.",
        "",
        "Ours maps Spark's classes from the driver JVM's class archive (lib/runtime/jvm_cache.py), as every run after"
        " the first on a machine does"
        + (f"; this benchmark's first run, which wrote it, took {first:.1f} s." if first else "."),
        "",
        f"Our job's steps (s, median run without the graph): {json.dumps(ours['steps'])}; {tot['postings']:,} postings,"
        f" {tot['terms']:,} terms (sum over shards), {tot['total_terms']:,} tokens indexed.",
        "",
    ]
    figures = {"ours_wall_s": ours["wall"], "docs": tot["docs"], "ours_rss_gib": round(ours["rss"] / 2**30, 2)}
    if full:
        figures["full_job_wall_s"] = median_run(full)["wall"]
    report(
        lines,
        BENCH,
        figures,
        what="jobs/index.py --no-graph against Lucene on the same synthetic day",
        peer="Anserini IndexCollection",
        peers={"anserini_wall_s": ans["wall"]} if isinstance(ans, dict) else {"anserini": ans},
        ratio={"ours_per_anserini_wall": round(ours["wall"] / ans["wall"], 3)} if isinstance(ans, dict) else {},
        shape={"docs": docs * a.copies, "words_per_doc": a.words, "text_mb": round(nbytes / 1e6), "cores": a.cores},
        variant="" if docs * a.copies == 100_000 else f"{docs * a.copies:,} documents",
        started=started,
        load_before=load0,
    )


def _peer_table(o: dict, full: list[dict], x: dict, alone: list[dict], ans: list[dict], colls: dict) -> list[str]:
    """The table rows of a run against Anserini's per-analyzer IndexCollections, and the ratio."""
    lines = [
        "| indexer | median wall s | runs, s | peak RSS GiB |",
        "|---|---:|---:|---:|",
        f"| ours: jobs/index.py --no-graph, {o['shards']} shards | {o['wall']:.1f} | {_walls(alone)} |"
        f" {o['rss'] / 2**30:.1f} |",
    ]
    if full:
        f = median_run(full)
        lines.append(
            f"| ours: the full job (with the web graph) | {f['wall']:.1f} | {_walls(full)} | {f['rss'] / 2**30:.1f} |"
        )
    pairs = ", ".join(f"{p['wall'] / q['wall']:.2f}" for p, q in zip(alone, ans))
    return lines + [
        f"| Anserini, one IndexCollection per analyzer ({', '.join(sorted(colls))}), summed | {x['wall']:.1f} |"
        f" {_walls(ans)} | {x['rss'] / 2**30:.1f} |",
        "",
        f"Ratio ours (no graph) / Anserini, medians: **{o['wall'] / x['wall']:.2f}**"
        + (f"; with the graph {median_run(full)['wall'] / x['wall']:.2f}" if full else "")
        + f"; per round: {pairs}."
        f" Anserini's median run per analyzer (s): {json.dumps({k: round(v, 1) for k, v in x['walls'].items()})}.",
    ]


PEER_LANGS = "Anserini, one IndexCollection per analyzer"
WHAT_REAL = "jobs/index.py --no-graph against Anserini on real pages (one IndexCollection per analyzer)"


def samples(a) -> None:
    """The samples set (module doc)."""
    docs = a.docs or 30_000
    started, load0 = utc_now(), load()
    day, colls, nbytes, langs = write_real(docs, a.cores)
    alone, full, ans, loads = _rounds(
        a, day, lambda: run_anserini_langs(colls, a.cores), lambda i: {"name": "ours-real"}
    )
    o, x = median_run(alone), median_run(ans)
    tot = o["totals"]
    lines = [
        f"### {dt.date.today():%Y-%m-%d}: real pages, {tot['docs']:,} documents in {len(langs)} languages, "
        f"{a.cores} cores",
        "",
        f"Machine: {machine_text()}. Load average (1 min) before each round: {', '.join(f'{v:.1f}' for v in loads)}.",
        f"`python -m benchmarks.bench_index --set samples --docs {docs} --cores {a.cores} --docs-per-shard "
        f"{a.docs_per_shard} --repeat {a.repeat}`: the shared samples' "
        f"{sum(1 for _ in (WORK / 'corpus-pre').glob('language=*/*.parquet'))}"
        f" preprocessed files repeated with distinct URLs; {nbytes / 1e6:.0f} MB of text; pages per language: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(langs.items(), key=lambda kv: -kv[1]))
        + ".",
        "",
        *_peer_table(o, full, x, alone, ans, colls),
        f"Our steps (s, median run): {json.dumps(o['steps'])}; {tot['postings']:,} postings, "
        f"{tot['total_terms']:,} tokens.",
        "",
    ]
    report(
        lines,
        BENCH,
        {"ours_s": o["wall"], "anserini_s": x["wall"], "docs": tot["docs"]},
        what=WHAT_REAL,
        peer=PEER_LANGS,
        ratio={"ours_per_anserini": round(o["wall"] / x["wall"], 3)},
        shape={"docs": tot["docs"], "languages": len(langs), "text_mb": round(nbytes / 1e6)},
        variant="real pages",
        started=started,
        load_before=load0,
    )


def real_day(a) -> None:
    """The realday set (module doc): one section per cut, one result for both."""
    started, load0 = utc_now(), load()
    rd = realday.cached_day(WORK / f"realday-{a.day_copies}x", a.day_copies, a.corpus)
    lines: list[str] = []
    figures: dict[str, Any] = {}
    ratio: dict[str, Any] = {}
    for cut in realday.CUTS:
        day = realday.preprocessed(rd, cut, a.cores)
        colls, nbytes, _ = collections_of(day, WORK / f"realday-{a.day_copies}x-{cut}-jsonl")
        shape = realday.cut_line(rd["shape"], cut)
        print(shape, file=sys.stderr)
        alone, full, ans, loads = _rounds(
            a, day, lambda: run_anserini_langs(colls, a.cores), lambda i: {"name": "ours-realday"}
        )
        o, x = median_run(alone), median_run(ans)
        # Anserini indexes every page; ours leaves out those that say noindex (or robots.txt disallows)
        if o["totals"]["docs"] + o["left_out"] != x["docs"]:
            raise SystemExit(
                f"documents differ: ours {o['totals']['docs']} + {o['left_out']} left out, Anserini {x['docs']}"
            )
        figures.update({f"{cut}_ours_s": o["wall"], f"{cut}_anserini_s": x["wall"], f"{cut}_docs": x["docs"]})
        ratio[f"{cut}_ours_per_anserini"] = round(o["wall"] / x["wall"], 3)
        files = sum(1 for _ in day.glob("language=*/*.parquet"))
        lines += [
            f"### {dt.date.today():%Y-%m-%d}: the real-shaped day, {cut} cut, {o['totals']['docs']:,} documents, "
            f"{a.cores} cores",
            "",
            f"Machine: {machine_text()}. Load average (1 min) before each round: "
            f"{', '.join(f'{v:.1f}' for v in loads)}.",
            f"Day: {shape}; {files} Parquet files after preprocess; {nbytes / 1e6:.1f} MB of text; Anserini also"
            f" indexes the {o['left_out']} pages ours leaves out (noindex, robots.txt: docs/robots.md).",
            "",
            *_peer_table(o, full, x, alone, ans, colls),
            "",
        ]
    report(
        lines,
        BENCH,
        figures,
        what=WHAT_REAL,
        peer=PEER_LANGS,
        ratio=ratio,
        shape={"day": f"real-{a.day_copies}x", "cuts": list(realday.CUTS)},
        variant="real-shaped day",
        started=started,
        load_before=load0,
    )


RUN = {"synthetic": synthetic, "samples": samples, "realday": real_day}


def main(argv: list[str] | None = None) -> None:
    ap = parser(__doc__, 0)
    ap.set_defaults(docs=None)
    ap.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=SETS,
        help="what to index (repeatable, run in the order given; default synthetic): the module doc says each",
    )
    ap.add_argument("--docs-per-shard", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=11, help="synthetic: the documents' seed")
    ap.add_argument("--skip-anserini", action="store_true", help="synthetic: ours only")
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each, alternating; the table shows medians (default 3: the VM is shared and noisy)",
    )
    ap.add_argument("--no-full", action="store_true", help="skip the full job's runs (with the web graph)")
    ap.add_argument(
        "--copies",
        type=int,
        default=1,
        help="synthetic: the --docs day this many times over (distinct URLs and ids, same texts)",
    )
    ap.add_argument("--day-copies", type=int, default=1, help="realday: copies of the real-shaped day's sources")
    ap.add_argument(
        "--corpus", default=str(realday.CORPUS), help="realday: the real samples (default ../shared/corpus)"
    )
    ap.add_argument(
        "--driver-memory",
        default=HEAP,
        help=f"synthetic: our driver (and, in local mode, executor) heap (default {HEAP})",
    )
    a = ap.parse_args(argv)
    WORK.mkdir(parents=True, exist_ok=True)
    for name in a.sets or ["synthetic"]:
        RUN[name](a)


if __name__ == "__main__":
    main()
