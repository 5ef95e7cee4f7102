"""Retrieval sanity against Lucene: BM25 top-10 of ours and of Anserini on the benchmark day.

    python -m benchmarks.bench_overlap [--day real] [--copies 10] [--corpus DIR] [--queries 200]
    python -m benchmarks.bench_overlap --day synthetic [--docs 100000] [--words 500]

The day (``--day``, repeatable; default ``real``):

* ``real``: the English pages of the real-shaped day of devtools/realday.py (``--copies``
  copies of the shared samples), each cut through jobs/preprocess.py once; the pages of
  ``language=eng`` are indexed by us as one shard (``--min-group-docs`` and ``--docs-per-shard``
  above the day) and by Anserini as one JsonCollection of the same texts (title, description, main
  text: what we index; benchmarks/index_days.py's writer). Only English, because Anserini ranks a
  collection with one analyzer and one set of statistics (the other languages and their analyzers
  are compared by bench_index --set samples). The cut does not change the pages: both cuts are indexed by
  us and must give the same top 10 (ids and scores) for every query, which is checked; Anserini
  runs once, on the large cut's pages. The day's shape is printed beside the figures.
* ``synthetic``: the inputs of benchmarks/bench_index.py (run it first for the same
  ``--docs``/``--words``): the preprocessed day and the same texts as an Anserini JsonCollection
  (an extra row).

1. Ours: ``jobs/index.py --no-graph`` with one shard for the whole day (``--docs-per-shard``
   = the day), so that both sides rank with the same collection statistics; queries through
   ``lib.ciff.search.search_many`` (the scoring of ``python -m lib.ciff search``, all queries
   in one pass over the shard): BM25 k1=0.9, b=0.4,
   the analyzer named in the shard's header (English: lowercase, NFKC/casefold, 174 stopwords,
   Snowball English).
2. Anserini: IndexCollection (as bench_index.py: English analyzer, Porter stemmer, Lucene's
   33 stopwords) and SearchCollection ``-bm25 -bm25.k1 0.9 -bm25.b 0.4 -hits 10`` on a TSV of the
   queries.
3. Queries: the titles of ``--queries`` documents drawn at random (seeded) from the day.
   Overlap@10 of a query = |our top 10 ∩ Anserini's top 10| / 10 (by collection docid =
   record_id = Anserini's doc id); reported: its mean, and how often each side ranks the
   title's own document first / in its top 10.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import shutil
import subprocess
import time

import pyarrow.parquet as pq

from benchmarks import job_cmd
from benchmarks.common import load, machine_text, report, utc_now
from benchmarks.index_peer import HEAP, WORK, anserini_index_cmd, anserini_tools, parser


def pick_queries(day, n: int, seed: int) -> list[tuple[str, str, str]]:
    """(qid, record_id, title) of ``n`` documents drawn at random."""
    rows = []
    for f in sorted(day.glob("language=*/*.parquet")):
        t = pq.read_table(f, columns=["record_id", "title"])
        rows += zip(t.column(0).to_pylist(), t.column(1).to_pylist())
    rng = random.Random(seed)
    picked = rng.sample([r for r in rows if r[1] and r[1].strip()], n)
    return [(f"q{i}", rid, re.sub(r"\s+", " ", title).strip()) for i, (rid, title) in enumerate(picked)]


def ours(
    day, docs: int, queries, cores: int, out=None, scores: dict | None = None
) -> tuple[dict[str, list[str]], float]:
    """Our top 10 of each query from one shard of the day (``scores``: filled with (id, score) lists)."""
    from lib.ciff.search import search_many

    out = out or WORK / "overlap-ours"
    if not (out / "_SUCCESS").exists():  # built once per day
        subprocess.run(
            [
                *job_cmd("index", day, out, cores),
                "--docs-per-shard",
                str(docs),
                "--min-group-docs",
                str(docs + 1),
                "--no-graph",
                "--conf",
                f"spark.driver.memory={HEAP}",
                "--conf",
                "spark.ui.enabled=false",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
    shards = sorted(out.rglob("index-*.ciff.gz"))
    if len(shards) != 1:
        raise SystemExit(f"expected one shard, got {len(shards)}")
    t = time.time()
    hits = search_many(str(shards[0]), [q for _, _, q in queries], 10)  # search()'s scores, one pass
    got = {qid: [h.collection_docid for h in hs] for (qid, _, _), hs in zip(queries, hits)}
    if scores is not None:
        scores.update(
            {qid: sorted((h.collection_docid, round(h.score, 4)) for h in hs) for (qid, _, _), hs in zip(queries, hits)}
        )
    return got, time.time() - t


def anserini(jsonl, queries, cores: int, tag: str = "") -> tuple[dict[str, list[str]], float]:
    java, jar = anserini_tools()
    idx = WORK / f"overlap-anserini{tag}"
    if not (idx / "_done").exists():
        shutil.rmtree(idx, ignore_errors=True)
        subprocess.run(
            anserini_index_cmd(java, jar, jsonl, idx, cores),
            check=True,
            capture_output=True,
        )
        (idx / "_done").write_text("")
    topics = WORK / f"overlap-topics{tag}.tsv"
    topics.write_text("".join(f"{qid}\t{q}\n" for qid, _, q in queries))
    run = WORK / f"overlap-anserini{tag}.run"
    t = time.time()
    p = subprocess.run(
        [
            java,
            f"-Xmx{HEAP}",
            "-cp",
            jar,
            "io.anserini.search.SearchCollection",
            "-index",
            str(idx),
            "-topics",
            str(topics),
            "-topicReader",
            "TsvString",
            "-output",
            str(run),
            "-bm25",
            "-bm25.k1",
            "0.9",
            "-bm25.b",
            "0.4",
            "-hits",
            "10",
            "-threads",
            str(cores),
        ],
        capture_output=True,
        text=True,
    )
    wall = time.time() - t
    if p.returncode != 0:
        raise SystemExit(f"SearchCollection failed: {(p.stdout + p.stderr)[-2000:]}")
    got: dict[str, list[str]] = {}
    for line in run.read_text().splitlines():
        qid, _, docid, rank, _score, _tag = line.split()
        got.setdefault(qid, []).append(docid)
    return got, wall


def real_days(a) -> tuple[dict, dict]:
    """The real-shaped day's English pages per cut, as preprocessed days of ``language=eng`` only
    (hard-linked), and Anserini's JsonCollection of the large cut's; ({cut: day}, {"jsonl", "shape"...})."""
    import pyarrow as pa

    from benchmarks.index_days import write_collection
    from devtools import realday

    rd = realday.shared_day(a.copies, a.corpus)
    days, pages = {}, {}
    for cut in realday.CUTS:
        pre = realday.preprocessed(rd, cut, a.cores)
        day = WORK / f"overlap-real-{a.copies}x-{cut}" / "pre"
        if not (day / ".from").exists() or (day / ".from").read_text() != str(pre):
            shutil.rmtree(day.parent, ignore_errors=True)
            (day / "language=eng").mkdir(parents=True)
            for f in sorted((pre / "language=eng").glob("*.parquet")):  # linked: the job lists real files
                os.link(f, day / "language=eng" / f.name)
            (day / ".from").write_text(str(pre))
            (day / "_SUCCESS").write_bytes(b"")
        days[cut] = day
        t = pa.concat_tables(
            [pq.read_table(f) for f in sorted((day / "language=eng").glob("*.parquet"))], promote_options="default"
        )
        pages[cut] = t
    ids = {cut: sorted(t.column("record_id").to_pylist()) for cut, t in pages.items()}
    if ids["small"] != ids["large"]:
        raise SystemExit("the cuts' English pages differ")
    jsonl = WORK / f"overlap-real-{a.copies}x-jsonl"
    if not (jsonl / "_done").exists():
        shutil.rmtree(jsonl, ignore_errors=True)
        write_collection(jsonl, "eng", pages["large"])
        (jsonl / "_done").write_text("")
    return days, {"jsonl": jsonl / "en", "pages": pages["large"].num_rows, "rd": rd}


def report_lines(a, title: str, how: str, day_line: str, queries, mine, theirs, t_ours, t_ans) -> list[str]:
    """The Markdown section of one comparison."""
    overlaps = [len(set(mine.get(q, [])) & set(theirs.get(q, []))) / 10 for q, _, _ in queries]

    def own(got):
        return (
            sum(got.get(q, [None])[:1] == [rid] for q, rid, _ in queries),
            sum(rid in got.get(q, []) for q, rid, _ in queries),
        )

    o1, o10 = own(mine)
    a1, a10 = own(theirs)
    n = len(queries)
    dist = {k: sum(1 for x in overlaps if round(x * 10) == k) for k in range(11)}
    worst = sorted(zip(overlaps, queries))[:5]
    a.means[title] = round(sum(overlaps) / len(overlaps), 3)  # the result main() writes
    return [
        f"### {dt.date.today():%Y-%m-%d}: retrieval overlap with Anserini, {title}, {n} title queries",
        "",
        f"Machine: {machine_text()}. Load average (1 min): {os.getloadavg()[0]:.1f}. `python -m "
        f"benchmarks.bench_overlap {how}"
        f" --queries {a.queries} --seed {a.seed}`; BM25 k1=0.9, b=0.4, top 10; ours from one shard of the whole day.",
        *([day_line] if day_line else []),
        "",
        f"**Mean overlap@10: {sum(overlaps) / len(overlaps):.3f}** (target >= 0.7). Queries by overlap (0..10 shared"
        f" documents): {', '.join(f'{k}: {v}' for k, v in dist.items() if v)}.",
        f"The title's own document ranked first: ours {o1}/{n}, Anserini {a1}/{n}; in the top 10:"
        f" ours {o10}, Anserini {a10}. Search time for all queries: ours {t_ours:.1f} s (one streaming pass over"
        f" the shard for all), Anserini {t_ans:.1f} s (one JVM, JVM start included).",
        "",
        "Lowest-overlap queries: " + "; ".join(f"{x:.1f} `{q[2]}`" for x, q in worst) + ".",
        "",
    ]


def main() -> None:
    ap = parser(__doc__, 100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--day", action="append", choices=["real", "synthetic"], help="real (default) and/or synthetic")
    ap.add_argument("--copies", type=int, default=10, help="copies of the real samples (--day real)")
    ap.add_argument("--corpus", default=None, help="the real samples (default ../shared/corpus)")
    a = ap.parse_args()
    a.means, started, load0 = {}, utc_now(), load()
    lines = []
    for which in a.day or ["real"]:
        if which == "real":
            from devtools import realday

            a.corpus = a.corpus or str(realday.CORPUS)
            days, info = real_days(a)
            queries = pick_queries(days["large"], min(a.queries, info["pages"] // 2), a.seed)
            mine, scores, t_ours = {}, {}, {}
            for cut, day in days.items():
                scores[cut] = {}
                mine[cut], t_ours[cut] = ours(
                    day, info["pages"], queries, a.cores, WORK / f"overlap-real-{a.copies}x-{cut}" / "ours", scores[cut]
                )
            same = sum(scores["small"][q] == scores["large"][q] for q, _, _ in queries)
            theirs, t_ans = anserini(info["jsonl"], queries, a.cores, f"-real-{a.copies}x")
            for cut in realday.CUTS:
                lines += report_lines(
                    a,
                    f"real-{a.copies}x {cut} cut, its {info['pages']:,} English pages",
                    f"--day real --copies {a.copies}",
                    f"Day: {realday.cut_line(info['rd']['shape'], cut)}.",
                    queries,
                    mine[cut],
                    theirs,
                    t_ours[cut],
                    t_ans,
                )
            lines.append(
                f"The two cuts' shards give the same top 10 (record ids and scores) for {same} of"
                f" {len(queries)} queries (the cut changes the files, not the pages; Anserini indexed once)."
            )
            lines.append("")
            if same != len(queries):
                print("\n".join(lines))
                raise SystemExit("the cuts' shards answer differently")
            continue
        day, jsonl = WORK / f"pre-{a.docs}-{a.words}", WORK / f"jsonl-{a.docs}-{a.words}"
        if not (day / "_SUCCESS").exists() or not (jsonl / "_done").exists():
            raise SystemExit(f"no benchmark day for {a.docs} docs: run benchmarks/bench_index.py --docs {a.docs} first")
        queries = pick_queries(day, a.queries, a.seed)
        mine, t_ours = ours(day, a.docs, queries, a.cores)
        theirs, t_ans = anserini(jsonl, queries, a.cores)
        lines += report_lines(
            a,
            f"{a.docs:,} synthetic documents (pages copied verbatim: an extra row)",
            f"--day synthetic --docs {a.docs} --words {a.words}",
            "",
            queries,
            mine,
            theirs,
            t_ours,
            t_ans,
        )
    report(
        lines,
        "bench_overlap",
        {f"mean_overlap_at_10 ({k})": v for k, v in a.means.items()},
        what=f"BM25 top-10 agreement on {a.queries} title queries, one shard per cut",
        peer="Anserini SearchCollection",
        shape={"day": a.day, "queries": a.queries},
        variant="synthetic day" if a.day == ["synthetic"] else "",
        started=started,
        load_before=load0,
    )


if __name__ == "__main__":
    main()
