"""Index real multilingual pages: ours against Anserini with its per-language analyzers.

    python -m benchmarks.bench_index_real [--day real] [--copies 1] [--cores 2] [--repeat 3]
    python -m benchmarks.bench_index_real --day own [--docs 30000]

With ``--day real`` (the default), the pages are those of the real-shaped day of
devtools/realday.py in both cuts (many small archives, few large ones), each cut through
jobs/preprocess.py, the day's shape printed beside each figure; then 2-3 as below. ``--day own``
(pages copied verbatim: an extra row):

1. Pages: the shared crawl samples (../shared/corpus) through jobs/preprocess.py (as
   benchmarks/bench_index.py does), all languages, repeated until ``--docs`` pages, each copy
   with its own URL (``?copy=N``: so its own shard by MD5), record_id and id. Written as a
   preprocessed day, ``language=xxx/part-*.parquet`` of at most 12,500 pages each.
2. Ours: ``jobs/index.py --no-graph`` (and the full job, with the graph, beside it), groups by
   TLD and language with the defaults, ``--docs-per-shard`` as given.
3. Anserini: the same texts (title, description, main text: what we index) as one
   JsonCollection per Anserini analyzer (files of 3,000 documents: Anserini's threads take
   a file each), indexed one after the other (one JVM each,
   ``-threads CORES``): ``-language de/fr/nl/pl/ru/ja/zh`` where Anserini has an analyzer for the
   page's language (German, French, Dutch, Polish Morfologik, Russian, Japanese Kuromoji, CJK
   bigrams for Chinese), its default English analyzer otherwise (English, Czech). Its wall
   time is the sum.

Rounds alternate ours (no graph), Anserini (all languages), ours (with graph).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.bench_index import (
    WORK,
    _median_run,
    anserini_index_cmd,
    anserini_tools,
    parser,
    report,
    run_ours,
    text_pool,
)
from benchmarks.common import load, machine_text, timed_cmd, utc_now
from devtools import realday

#: ISO 639-3 -> Anserini's -language code, where Anserini has an analyzer for it
ANSERINI_LANG = {
    "deu": "de",
    "fra": "fr",
    "nld": "nl",
    "pol": "pl",
    "rus": "ru",
    "jpn": "ja",
    "zho": "zh",
    "spa": "es",
    "ita": "it",
    "por": "pt",
    "swe": "sv",
    "dan": "da",
    "fin": "fi",
    "nor": "no",
    "tur": "tr",
    "ara": "ar",
    "fas": "fa",
    "hin": "hi",
    "hun": "hu",
    "ind": "id",
    "kor": "ko",
    "tha": "th",
    "ukr": "uk",
    "ben": "bn",
    "tel": "te",
}
PER_FILE = 12_500  # pages per Parquet file (as preprocess writes per WARC)
PER_JSONL = 3_000  # documents per JsonCollection file: Anserini indexes one file per thread


def write_real(n: int, cores: int) -> tuple:
    """The repeated day and the per-analyzer JsonCollections; (day, {alang: folder}, bytes, languages)."""
    day, coll = WORK / f"real-{n}", WORK / f"real-jsonl-{n}"
    if (day / "_SUCCESS").exists() and (coll / "_done").exists():
        return day, {p.name: p for p in coll.iterdir() if p.is_dir()}, *json.loads((coll / "_done").read_text())
    text_pool(cores)  # preprocesses the samples once
    shutil.rmtree(day, ignore_errors=True)
    shutil.rmtree(coll, ignore_errors=True)
    src = WORK / "corpus-pre"
    by_lang: dict[str, list[pa.Table]] = {}
    for f in sorted(src.glob("language=*/*.parquet")):
        by_lang.setdefault(f.parent.name.split("=", 1)[1], []).append(pq.read_table(f))
    total = sum(t.num_rows for ts in by_lang.values() for t in ts)
    copies = -(-n // total)
    nbytes, langs = 0, {}
    for lang, ts in sorted(by_lang.items()):
        base = pa.concat_tables(ts)
        want = round(n * base.num_rows / total)
        tables = []
        for c in range(copies):
            t = base.slice(0, max(0, min(base.num_rows, want - c * base.num_rows)))
            if t.num_rows == 0:
                break
            urls = [u + ("&" if "?" in u else "?") + f"copy={c}" for u in t.column("url").to_pylist()]
            rids = [
                f"<urn:uuid:{hashlib.md5(f'{r}-{c}'.encode()).hexdigest()}>" for r in t.column("record_id").to_pylist()
            ]
            t = t.set_column(t.schema.get_field_index("url"), "url", pa.array(urls))
            t = t.set_column(t.schema.get_field_index("record_id"), "record_id", pa.array(rids))
            t = t.set_column(
                t.schema.get_field_index("id"), "id", pa.array([hashlib.sha256(u.encode()).hexdigest() for u in urls])
            )
            tables.append(t)
        day_t = pa.concat_tables(tables)
        langs[lang] = day_t.num_rows
        (day / f"language={lang}").mkdir(parents=True)
        for k, off in enumerate(range(0, day_t.num_rows, PER_FILE)):
            pq.write_table(day_t.slice(off, PER_FILE), day / f"language={lang}" / f"part-{k:05d}.parquet")
        nbytes += write_collection(coll, lang, day_t)
    (day / "_SUCCESS").write_bytes(b"")
    (coll / "_done").write_text(json.dumps([nbytes, langs]))
    return day, {p.name: p for p in coll.iterdir() if p.is_dir()}, nbytes, langs


def write_collection(coll: pathlib.Path, lang: str, pages: pa.Table, seen: set | None = None) -> int:
    """The pages of one language as JsonCollection files in ``coll/ANALYZER/``; bytes of text.
    A record id already in ``seen`` (a capture archived twice) is written once, as the index job
    keeps it once."""
    seen = set() if seen is None else seen
    texts = pc.binary_join_element_wise(
        *[pages.column(c).cast(pa.string()) for c in ("title", "description", "plain_text")], "\n", null_handling="skip"
    ).to_pylist()
    folder = coll / ANSERINI_LANG.get(lang, "en")
    folder.mkdir(parents=True, exist_ok=True)
    rids = pages.column("record_id").to_pylist()
    nbytes = 0
    for k, off in enumerate(range(0, len(rids), PER_JSONL)):
        with open(folder / f"{lang}-{k:04d}.jsonl", "w") as out:
            for rid, text in zip(rids[off : off + PER_JSONL], texts[off : off + PER_JSONL]):
                if rid in seen:
                    continue
                seen.add(rid)
                out.write(json.dumps({"id": rid, "contents": text or ""}) + "\n")
                nbytes += len((text or "").encode())
    return nbytes


def collections_of(day: pathlib.Path, coll: pathlib.Path) -> tuple[dict, int, dict]:
    """Per-analyzer JsonCollections of a preprocessed day's pages: ({analyzer: folder}, bytes, {lang: pages})."""
    shutil.rmtree(coll, ignore_errors=True)
    nbytes, langs, seen = 0, {}, set()
    for folder in sorted(day.glob("language=*")):
        lang = folder.name.split("=", 1)[1]
        t = pa.concat_tables([pq.read_table(f) for f in sorted(folder.glob("*.parquet"))], promote_options="default")
        langs[lang] = t.num_rows
        nbytes += write_collection(coll, lang, t, seen)
    return {p.name: p for p in coll.iterdir() if p.is_dir()}, nbytes, langs


def real_shaped(a) -> list[str]:
    """Ours against Anserini on the real-shaped day of devtools/realday.py, in both cuts: each
    cut through jobs/preprocess.py, then the index job on its Parquet and Anserini on the same
    pages (per-analyzer JsonCollections), ``a.repeat`` alternating rounds; Markdown lines."""
    rd = realday.cached_day(WORK / f"realday-{a.copies}x", a.copies, a.corpus)
    lines, figures, ratio = [], {}, {}
    for cut in realday.CUTS:
        day = realday.preprocessed(rd, cut, a.cores)
        colls, nbytes, langs = collections_of(day, WORK / f"realday-{a.copies}x-{cut}-jsonl")
        shape = realday.cut_line(rd["shape"], cut)
        print(shape, file=sys.stderr)
        alone, full, ans, loads = [], [], [], []
        for _ in range(a.repeat):
            loads.append(os.getloadavg()[0])
            alone.append(run_ours(day, a.cores, a.docs_per_shard, graph=False, name="ours-realday"))
            ans.append(run_anserini_langs(colls, a.cores))
            if not a.no_full:
                full.append(run_ours(day, a.cores, a.docs_per_shard, graph=True, name="ours-realday"))
            print(f"ours {alone[-1]['wall']:.1f} s, anserini {ans[-1]['wall']:.1f} s", file=sys.stderr)
        o, x = _median_run(alone), _median_run(ans)
        if o["totals"]["docs"] != x["docs"]:
            raise SystemExit(f"documents differ: ours {o['totals']['docs']}, Anserini {x['docs']}")
        figures.update({f"{cut}_ours_s": o["wall"], f"{cut}_anserini_s": x["wall"], f"{cut}_docs": x["docs"]})
        ratio[f"{cut}_ours_per_anserini"] = round(o["wall"] / x["wall"], 3)
        walls = lambda runs: ", ".join(f"{r['wall']:.1f}" for r in runs)  # noqa: E731
        files = sum(1 for _ in day.glob("language=*/*.parquet"))
        lines += [
            f"### {dt.date.today():%Y-%m-%d}: the real-shaped day, {cut} cut, {o['totals']['docs']:,} documents, "
            f"{a.cores} cores",
            "",
            f"Machine: {machine_text()}. Load average (1 min) before each round: "
            f"{', '.join(f'{v:.1f}' for v in loads)}.",
            f"Day: {shape}; {files} Parquet files after preprocess; {nbytes / 1e6:.1f} MB of text.",
            "",
            "| indexer | median wall s | runs, s | peak RSS GiB |",
            "|---|---:|---:|---:|",
            f"| ours: jobs/index.py --no-graph, {o['shards']} shards | {o['wall']:.1f} | {walls(alone)} |"
            f" {o['rss'] / 2**30:.1f} |",
        ]
        if full:
            f = _median_run(full)
            lines.append(
                f"| ours: the full job (with the web graph) | {f['wall']:.1f} | {walls(full)} | "
                f"{f['rss'] / 2**30:.1f} |"
            )
        lines += [
            f"| Anserini, one IndexCollection per analyzer ({', '.join(sorted(colls))}), summed | {x['wall']:.1f} |"
            f" {walls(ans)} | {x['rss'] / 2**30:.1f} |",
            "",
            f"Ratio ours (no graph) / Anserini, medians: **{o['wall'] / x['wall']:.2f}**"
            + (f"; with the graph {_median_run(full)['wall'] / x['wall']:.2f}" if full else "")
            + ".",
            "",
        ]
    return lines, figures, ratio


def run_anserini_langs(colls: dict, cores: int) -> dict:
    java, jar = anserini_tools()
    walls, docs, peak = {}, 0, 0
    for alang, folder in sorted(colls.items()):
        out = WORK / "out-anserini-real" / alang
        shutil.rmtree(out, ignore_errors=True)
        cmd = anserini_index_cmd(java, jar, folder, out, cores, alang)
        p, wall, rss = timed_cmd(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        m = re.search(r"Total ([\d,]+) documents indexed", p.stdout + p.stderr)
        if p.returncode != 0 or not m:
            raise SystemExit(f"Anserini ({alang}) failed: {(p.stdout + p.stderr)[-2000:]}")
        walls[alang] = wall
        docs += int(m.group(1).replace(",", ""))
        peak = max(peak, rss)
    return {"wall": sum(walls.values()), "walls": walls, "docs": docs, "rss": peak}


def main() -> None:
    ap = parser(__doc__, 30_000)
    ap.add_argument("--docs-per-shard", type=int, default=25_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-full", action="store_true")
    realday.add_day_options(ap, "real")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    started, load0 = utc_now(), load()
    if a.day == "real":
        lines, figures, ratio = real_shaped(a)
        report(
            lines,
            "bench_index_real",
            figures,
            what="jobs/index.py --no-graph against Anserini on real pages (one IndexCollection per analyzer)",
            peer="Anserini, one IndexCollection per analyzer",
            ratio=ratio,
            shape={"day": f"real-{a.copies}x", "cuts": list(realday.CUTS)},
            variant="real-shaped day",
            started=started,
            load_before=load0,
        )
        return
    day, colls, nbytes, langs = write_real(a.docs, a.cores)
    alone, full, ans, loads = [], [], [], []
    for _ in range(a.repeat):
        loads.append(os.getloadavg()[0])
        alone.append(run_ours(day, a.cores, a.docs_per_shard, graph=False, name="ours-real"))
        print(f"ours, no graph: {alone[-1]}", file=sys.stderr)
        ans.append(run_anserini_langs(colls, a.cores))
        print(f"anserini: {ans[-1]}", file=sys.stderr)
        if not a.no_full:
            full.append(run_ours(day, a.cores, a.docs_per_shard, graph=True, name="ours-real"))
            print(f"ours, with graph: {full[-1]}", file=sys.stderr)
    o, x = _median_run(alone), _median_run(ans)
    walls = lambda runs: ", ".join(f"{r['wall']:.1f}" for r in runs)  # noqa: E731
    tot = o["totals"]
    lines = [
        f"### {dt.date.today():%Y-%m-%d}: real pages, {tot['docs']:,} documents in {len(langs)} languages, "
        f"{a.cores} cores",
        "",
        f"Machine: {machine_text()}. Load average (1 min) before each round: {', '.join(f'{v:.1f}' for v in loads)}.",
        f"`python -m benchmarks.bench_index_real --docs {a.docs} --cores {a.cores} --docs-per-shard {a.docs_per_shard}"
        f" --repeat {a.repeat}`: the shared samples' "
        f"{sum(1 for _ in (WORK / 'corpus-pre').glob('language=*/*.parquet'))}"
        f" preprocessed files repeated with distinct URLs; {nbytes / 1e6:.0f} MB of text; pages per language: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(langs.items(), key=lambda kv: -kv[1]))
        + ".",
        "",
        "| indexer | median wall s | runs, s | peak RSS GiB |",
        "|---|---:|---:|---:|",
        f"| ours: jobs/index.py --no-graph, {o['shards']} shards | {o['wall']:.1f} | {walls(alone)} | "
        f"{o['rss'] / 2**30:.1f} |",
    ]
    if full:
        f = _median_run(full)
        lines.append(
            f"| ours: the full job (with the web graph) | {f['wall']:.1f} | {walls(full)} | {f['rss'] / 2**30:.1f} |"
        )
    lines.append(
        f"| Anserini, one IndexCollection per analyzer ({', '.join(sorted(colls))}), summed | {x['wall']:.1f} |"
        f" {walls(ans)} | {x['rss'] / 2**30:.1f} |"
    )
    pairs = ", ".join(f"{p['wall'] / q['wall']:.2f}" for p, q in zip(alone, ans))
    lines += [
        "",
        f"Ratio ours (no graph) / Anserini, medians: **{o['wall'] / x['wall']:.2f}**; per round: {pairs}."
        f" Anserini's median run per analyzer (s): {json.dumps({k: round(v, 1) for k, v in x['walls'].items()})}.",
        f"Our steps (s, median run): {json.dumps(o['steps'])}; {tot['postings']:,} postings, "
        f"{tot['total_terms']:,} tokens.",
        "",
    ]
    report(
        lines,
        "bench_index_real",
        {"ours_s": o["wall"], "anserini_s": x["wall"], "docs": tot["docs"]},
        what="jobs/index.py --no-graph against Anserini on real pages (one IndexCollection per analyzer)",
        peer="Anserini, one IndexCollection per analyzer",
        ratio={"ours_per_anserini": round(o["wall"] / x["wall"], 3)},
        shape={"docs": tot["docs"], "languages": len(langs), "text_mb": round(nbytes / 1e6)},
        started=started,
        load_before=load0,
    )


if __name__ == "__main__":
    main()
