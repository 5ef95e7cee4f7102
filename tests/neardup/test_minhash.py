"""lib/neardup/minhash.py and lib/neardup/clusters.py: signatures and within-day clusters (no Spark),
on the real heavy pages (tests/data/heavy_pages, through our extractor) and on pages made
near-duplicate on purpose."""

from __future__ import annotations

import functools
import itertools
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from devtools.heavypages import heavy_pages
from lib.html.content import extract
from lib.neardup import clusters
from lib.neardup.minhash import MIN_SHINGLES, MinHasher, estimate, tokens

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MH = MinHasher()


@functools.lru_cache(maxsize=None)
def shingle_set(text: str, k: int = 5) -> frozenset:
    w = tokens(text)
    return frozenset(" ".join(w[i : i + k]) for i in range(len(w) - k + 1))


def jaccard(a: str, b: str) -> float:
    x, y = shingle_set(a), shingle_set(b)
    return len(x & y) / len(x | y)


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Main texts of the real heavy pages with at least 200 words, each text once."""
    out = {extract(html.decode("utf-8", "replace"), url).text for url, html in heavy_pages()}
    return sorted(t for t in out if len(t.split()) >= 200)


def made_near_duplicates(text: str, other: str) -> dict[str, str]:
    words = text.split()
    k = len(words) // 10
    mid = len(words) // 2
    return {
        "date": "Updated 14 January 2026, 10:32. " + text,
        "order": " ".join(words[-k:] + words[k:-k] + words[:k]),
        "para": " ".join(words[:mid] + other.split()[:40] + words[mid:]),
    }


def test_tokens_and_shingles_match_the_reference(texts):
    tricky = [
        "İstanbul'da ÇOK güzel don't e-mail foo_bar 3.14",
        "हिन्दी भाषा 日本語のテキスト ภาษาไทย 中文abc123 emoji 🙂 𠀋𠀌 x",
        "lone \ud800 surrogate and ß Straße",
        "",
    ]
    batch = tricky + texts[:20]
    sh, off = MH.shingle_hashes(batch)
    assert off[-1] == sh.size
    for i, t in enumerate(batch):
        w = tokens(t)
        assert off[i + 1] - off[i] == max(len(w) - 4, 0)
        # the vectorised tokenizer splits exactly where the reference does
        alone, _ = MH.shingle_hashes([" ".join(w)])
        assert np.array_equal(alone, sh[off[i] : off[i + 1]]), t[:60]
    assert tokens(tricky[1])[:4] == ["हिन्दी", "भाषा", "日", "本"]
    assert tokens(tricky[0])[:5] == ["i̇stanbul", "da", "çok", "güzel", "don"]


def test_batches_give_the_same_signatures_as_single_texts(texts):
    big = " ".join(texts[:12])  # more shingles than one block (_CHUNK): done in parts
    batch = [texts[0], "too short", big, *texts[1:30]]
    sigs = MH.signatures(batch)
    assert sigs[1] is None
    assert all(s is not None and len(s) == 4 * MH.perms for i, s in enumerate(sigs) if i != 1)
    assert sigs == [MH.signature(t) for t in batch]
    assert len(set(sigs[3:])) == len(texts[1:30])


def test_long_texts_in_pieces_give_the_same_shingles(texts, monkeypatch):
    from lib.neardup import minhash

    batch = [
        " ".join(texts[:3]),
        "ΟΔΟΣ " * 200 + "日本語のテキスト" * 100 + " tail words here and there",
        "x" * 700 + " after a blob of letters " * 20,  # a token longer than half a piece
        texts[3],
    ]
    whole = MH.shingle_hashes(batch)
    monkeypatch.setattr(minhash, "_GROUP_CHARS", 512)
    pieces = MH.shingle_hashes(batch)
    assert np.array_equal(whole[1][:3], pieces[1][:3])
    assert np.array_equal(whole[0][: whole[1][2]], pieces[0][: pieces[1][2]])  # exactly the same shingles
    # the letter blob (700 > 256) is cut in two tokens: one shingle more there; the next text the same
    assert np.diff(pieces[1]).tolist() == (np.diff(whole[1]) + [0, 0, 1, 0]).tolist()
    assert np.array_equal(whole[0][whole[1][3] :], pieces[0][pieces[1][3] :])


def test_short_pages_are_not_judged():
    words = [f"w{i}" for i in range(60)]
    assert MH.signature(" ".join(words[: MIN_SHINGLES + 3])) is None  # MIN_SHINGLES - 1 shingles
    assert MH.signature(" ".join(words[: MIN_SHINGLES + 4])) is not None
    assert MH.signature("") is None
    assert MinHasher(min_shingles=1).signature("a b c d e") is not None


def test_signatures_are_the_same_in_another_process(texts):
    code = (
        "import sys; from lib.neardup.minhash import MinHasher; "
        "sys.stdout.write(MinHasher(perms=64, seed=7).signature(sys.stdin.read()).hex())"
    )
    out = {}
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": ROOT}
        out[seed] = subprocess.run(
            [sys.executable, "-c", code], input=texts[0], capture_output=True, text=True, env=env, check=True
        ).stdout
    assert out["1"] == out["2"] == MinHasher(perms=64, seed=7).signature(texts[0]).hex()
    assert MinHasher(perms=64, seed=8).signature(texts[0]) != MinHasher(perms=64, seed=7).signature(texts[0])


def test_estimates_agree_with_datasketch_and_exact_jaccard(texts):
    datasketch = pytest.importorskip("datasketch")
    rng = random.Random(3)
    pairs = [(t, v) for t in texts[:10] for v in made_near_duplicates(t, texts[-1]).values()]
    pairs += [tuple(rng.sample(texts, 2)) for _ in range(10)]
    pairs += [(t, " ".join(t.split()[: len(t.split()) * 2 // 3])) for t in texts[10:20]]  # J about 0.67

    @functools.lru_cache(maxsize=None)
    def ds(text):
        m = datasketch.MinHash(num_perm=MH.perms, seed=1)
        m.update_batch([s.encode() for s in shingle_set(text)])
        return m

    ours, theirs, exact = [], [], []
    for a, b in pairs:
        sa, sb = MH.signatures([a, b])
        ours.append(estimate(sa, sb))
        theirs.append(ds(a).jaccard(ds(b)))
        exact.append(jaccard(a, b))
    ours, theirs, exact = map(np.array, (ours, theirs, exact))
    assert exact.min() < 0.1 and exact.max() > 0.9  # the pairs span the range
    # 128 permutations: standard error <= 0.045; both estimators within 4 of it of the truth
    assert np.abs(ours - exact).max() < 0.18 and np.abs(theirs - exact).max() < 0.18
    assert np.abs(ours - theirs).mean() < 0.04
    assert abs((ours - exact).mean()) < 0.02  # unbiased


def test_near_duplicates_made_on_purpose_join_the_original(texts):
    rows, kinds = [], {}  # (record id, capture, text)
    for i, t in enumerate(texts[:15]):
        rows.append((f"p{i}", "2026-01-15T01:00:00Z", t))
        for kind, v in made_near_duplicates(t, texts[-1 - i]).items():
            kinds[f"p{i}-{kind}"] = f"p{i}"
            rows.append((f"p{i}-{kind}", "2026-01-15T02:00:00Z", v))
    sigs = MH.signatures([t for _, _, t in rows])
    rep = clusters.day_clusters(clusters.Page(r, c, len(t), s) for (r, c, t), s in zip(rows, sigs))
    for vid, orig in kinds.items():
        assert rep[vid] == orig, (vid, jaccard(dict((r, t) for r, _, t in rows)[vid], texts[int(orig[1:])]))
    assert len(set(rep.values())) == 15  # the originals stay apart


def test_unrelated_pages_are_not_merged(texts):
    sigs = MH.signatures(texts)
    pages = [clusters.Page(f"h{i}", "2026-01-15T00:00:00Z", len(t), s) for i, (t, s) in enumerate(zip(texts, sigs))]
    rep = clusters.day_clusters(pages)
    groups: dict[str, list[int]] = {}
    for rid, r in rep.items():
        groups.setdefault(r, []).append(int(rid[1:]))
    same = [p for g in groups.values() for p in itertools.combinations(g, 2)]
    assert all(jaccard(texts[a], texts[b]) >= 0.5 for a, b in same)
    assert sum(len(g) == 1 for g in groups.values()) >= len(texts) - 10  # real pages: nearly all alone


def test_a_chain_of_weak_links_is_not_merged():
    # windows of 400 words shifted by 30: neighbours share J ~ 0.86, the ends ~ 0.45 down to 0.1
    words = [f"w{i}" for i in range(1000)]
    texts = [" ".join(words[30 * i : 30 * i + 400]) for i in range(8)]
    sigs = MH.signatures(texts)
    pages = [clusters.Page(f"c{i}", f"2026-01-15T0{i}:00:00Z", 400, s) for i, s in enumerate(sigs)]
    edges = set()
    for ids in clusters.candidate_buckets({p.record_id: p.signature for p in pages}):
        edges.update(clusters.verified_pairs((i, sigs[int(i[1:])]) for i in ids))
    assert set(clusters.components(edges).values()) == {"c0"}  # union-find alone would merge all eight
    rep = clusters.clusters(pages, edges)
    assert rep["c0"] != rep["c7"] and len(set(rep.values())) >= 2
    assert all(rep[r] == min(g for g in rep if rep[g] == rep[r]) for r in rep)  # earliest capture represents
    # every member within THRESHOLD of one centre: pairs at >= 2 * THRESHOLD - 1 (less the estimates' error)
    for a, b in itertools.combinations(range(8), 2):
        if rep[f"c{a}"] == rep[f"c{b}"]:
            assert jaccard(texts[a], texts[b]) >= 2 * clusters.THRESHOLD - 1 - 0.1


def test_representative_rule_and_large_buckets():
    text = " ".join(f"w{i}" for i in range(300))
    sig = MH.signature(text)
    pages = [
        clusters.Page("z", "2026-01-15T03:00:00Z", 10, sig),
        clusters.Page("b", "2026-01-15T01:00:00Z", 10, sig),
        clusters.Page("a", "2026-01-15T01:00:00Z", 10, sig),
        clusters.Page("c", "2026-01-15T01:00:00Z", 20, sig),  # as early as a and b, longer text
        clusters.Page("short", "2026-01-15T00:00:00Z", 5, None),
    ]
    assert clusters.day_clusters(pages) == {"z": "c", "b": "c", "a": "c", "c": "c", "short": "short"}
    # a bucket larger than max_bucket is compared against leaders: copies still join
    other = MH.signature(" ".join(f"v{i}" for i in range(300)))
    members = [(f"m{i:03d}", sig if i % 2 else other) for i in range(100)]
    pairs = clusters.verified_pairs(members, max_bucket=10)
    assert len(pairs) == 98 and {a for a, _ in pairs} == {"m000", "m001"}
    assert len(set(clusters.band_keys(sig))) == clusters.BANDS
    with pytest.raises(ValueError, match="16 bands of 4 rows"):
        clusters.band_keys(sig, 16, 4)


def test_real_crawl_clusters_against_exact_jaccard(corpus):
    """The shared samples' HTML responses (the same 2008 crawl as WARC and as ARC, plus four other
    collections; main text by our extractor): clusters against brute-force exact Jaccard, and
    every pair with one payload (judged) in one cluster."""
    import hashlib

    from warcio.archiveiterator import ArchiveIterator

    rows = []  # (record id, capture, text, payload digest)
    for path in sorted(corpus.glob("*/*.*")):
        if path.suffix == ".md" or path.name == "badexample.arc.gz":
            continue
        with open(path, "rb") as f:
            for n, rec in enumerate(ArchiveIterator(f, arc2warc=True)):
                ctype = rec.http_headers.get_header("Content-Type", "") if rec.http_headers else ""
                if rec.rec_type != "response" or "html" not in ctype:
                    continue
                body = rec.content_stream().read()
                text = extract(body.decode("utf-8", "replace"), rec.rec_headers.get_header("WARC-Target-URI")).text
                capture = rec.rec_headers.get_header("WARC-Date") or ""
                rows.append((f"{path.name}:{n}", capture, text, hashlib.sha1(body).hexdigest()))
    sh, off = MH.shingle_hashes([t for _, _, t, _ in rows])
    sigs = MH.signatures_of_hashes(sh, off)
    rep = clusters.day_clusters(clusters.Page(r, c, len(t), s) for (r, c, t, _), s in zip(rows, sigs))
    # exact shingle sets (of the 32-bit hashes: the tokens are checked against the reference above)
    judged = sorted(
        ((r[0], set(sh[off[i] : off[i + 1]].tolist())) for i, (r, s) in enumerate(zip(rows, sigs)) if s is not None),
        key=lambda x: len(x[1]),
    )
    want = good = found = 0
    for i, (a, x) in enumerate(judged):
        for b, y in judged[i + 1 :]:
            if len(x) < 0.5 * len(y):
                break  # sorted by size: Jaccard < 0.5 with every later one
            j = len(x & y) / len(x | y)
            together = rep[a] == rep[b]
            want += j >= 0.8
            found += j >= 0.8 and together
            good += together and j >= 0.5
    groups: dict[str, int] = {}
    for r in rep.values():
        groups[r] = groups.get(r, 0) + 1
    same = sum(n * (n - 1) // 2 for n in groups.values())
    assert want > 50 and found / want >= 0.95  # the targets
    assert same > 50 and good / same >= 0.95
    by_digest: dict[str, set[str]] = {}
    for (r, _, _, d), s in zip(rows, sigs):
        if s is not None and d:
            by_digest.setdefault(d, set()).add(rep[r])
    assert all(len(reps) == 1 for reps in by_digest.values())
