"""The index benchmarks' days, each as a preprocessed day and the same texts as Anserini
JsonCollections (what ``bench_index``'s sets index, and ``bench_search`` and ``bench_overlap`` reuse).

- synthetic (:func:`write_inputs`, :func:`copy_inputs`): real text and a growing vocabulary.
  The shared crawl samples (../shared/corpus) go through jobs/preprocess.py once; the lines of
  their English pages are the text pool (:func:`text_pool`). Each of ``n`` pages gets ~70% of
  ``words`` words as random real lines and ~30% as Zipf-distributed (s=1.1) words of a 300k-word
  synthetic vocabulary, so that the vocabulary grows as with real crawls instead of stopping at
  the samples' few thousand words. Written as a preprocessed day (Parquet, language=eng, 8 files)
  and, with the same text (title + "\\n" + text), as Anserini JsonCollection files.
- samples (:func:`write_real`): the preprocessed samples, all languages, repeated until ``n``
  pages, each copy with its own URL (``?copy=N``: so its own shard by MD5), record_id and id,
  ``language=xxx/part-*.parquet`` of at most 12,500 pages each; the same texts (title,
  description, main text: what we index) as one JsonCollection per Anserini analyzer
  (:func:`write_collection`, files of 3,000 documents: Anserini's threads take a file each).
- the real-shaped day's cuts (devtools/realday.py) get their JsonCollections from
  :func:`collections_of`.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import pathlib
import random
import shutil
import subprocess

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks import job_cmd
from benchmarks.index_peer import ANSERINI_LANG, ROOT, WORK
from lib.pages.schema import PAGE_SCHEMA

CORPUS = ROOT.parent / "shared" / "corpus"
FILES = 8
PER_FILE = 12_500  # pages per Parquet file (as preprocess writes per WARC)
PER_JSONL = 3_000  # documents per JsonCollection file: Anserini indexes one file per thread


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
    nbytes, langs = 0, {}
    seen: set[str] = set()  # a capture archived twice is written once, as the index keeps it once
    for folder in sorted(day.glob("language=*")):
        lang = folder.name.split("=", 1)[1]
        t = pa.concat_tables([pq.read_table(f) for f in sorted(folder.glob("*.parquet"))], promote_options="default")
        langs[lang] = t.num_rows
        nbytes += write_collection(coll, lang, t, seen)
    return {p.name: p for p in coll.iterdir() if p.is_dir()}, nbytes, langs
