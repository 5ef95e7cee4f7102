"""Near-duplicate signatures and clusters (lib/neardup/minhash.py, lib/neardup/clusters.py) against
datasketch (MinHash + MinHashLSH, the reference) and rensa (RMinHash + RMinHashLSH, Rust), in one
invocation on the same pages and the same shingles, permutations and bands.

    python -m benchmarks.bench_minhash [--variants 80] [--repeat 3] [--grid] [--day DIR]

Pages: the main texts of real pages, as preprocess writes them (``plain_text``), from a day's
archives (``--day``: a real-shaped day of devtools/realday.py, either cut) or by default:

* every HTML response of the shared samples (../shared/corpus, read with
  lib.preprocess.archive_pages.FileProcessor, whose text is lib.html.content.extract's);
* the heavy pages (tests/data/heavy_pages) and the ScrapingHub article benchmark's pages
  (../shared/extraction/scrapinghub/html), through lib.html.content.extract, each HTML file once;
* near-duplicates made on purpose from ``--variants`` real pages of >= 100 words (seeded): a
  changed date line, the boilerplate reordered (the first and last tenth of the words swapped),
  one paragraph (40 words of another page) added in the middle.

Ground truth: the exact Jaccard of the word 5-shingle sets (strings of lib.neardup.minhash.tokens)
of every pair of judged pages (the pair skipped only when the sizes alone bound it below 0.5).
Recall: pairs with Jaccard >= 0.8 whose pages end in one cluster; cluster precision: same-cluster
pairs with Jaccard >= 0.5. Each implementation's signatures and candidates go through the same
verification and cluster rule (lib.neardup.clusters), so the rows differ by signatures and LSH only.

Times are CPU seconds of this process per page (one core; rensa's batch calls may use threads,
whose CPU is counted), the median of ``--repeat`` runs:

The ``oph`` row is a prototype, not the library: one permutation hashing (Li, Owen and Zhang
2012) with rotation densification (Shrivastava and Li 2014) on our shingle hashes: each shingle
hashed once into one of ``perms`` bins, O(shingles) instead of O(shingles x perms).

* ``shingles``: text -> shingles (ours: the numpy hashes; peers: the shingle strings, built as a
  user would, regex tokens joined five at a time);
* ``sig``: shingles -> signatures; ``lsh``: signatures -> candidate buckets (band keys, insert,
  query); ``clusters``: verification + clusters (same code for all).

``--grid`` also prints recall, precision and candidates of ours over shingles, permutations,
bands and thresholds, and over the minimum of shingles (what chose the defaults, docs/dedup.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import glob
import gzip
import itertools
import os
import platform
import random
import resource
import statistics
import time

import numpy as np
import regex

from benchmarks.common import write_result
from devtools.heavypages import HEAVY
from lib.neardup import clusters
from lib.neardup.minhash import _NOSPACE, MinHasher, tokens

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("DAILYSLICE_SHARED") or os.path.join(os.path.dirname(ROOT), "shared")
_NS = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in _NOSPACE)
PEER_TOKEN = regex.compile(rf"(?V1)[{_NS}]|[[\p{{L}}\p{{M}}\p{{N}}]--[{_NS}]]+")


# ------------------------------------------------------------------ pages
def archive_pages(paths: list[str], cost: dict | None = None) -> list[tuple]:
    """(record_id, warc_date, text) of every page of ``paths`` through the preprocess loop;
    ``cost`` gets the loop's CPU seconds and pages (what a signature adds to)."""
    from lib.preprocess.archive_pages import FileProcessor

    out, ids = [], set()
    c0 = time.process_time()
    for path in paths:
        try:
            with open(path, "rb") as f:
                for row in FileProcessor(path).pages(f):
                    rid = row["record_id"]
                    while rid in ids:  # a record id written twice in a day (realday's repeats)
                        rid += "+"
                    ids.add(rid)
                    out.append((rid, row.get("warc_date") or "", row.get("plain_text") or ""))
        except Exception as e:  # a deliberately broken sample: say so, keep the rest
            print(f"  skipped {os.path.relpath(path, SHARED)}: {type(e).__name__}: {e}")
    if cost is not None:
        cost.update(cpu=time.process_time() - c0, pages=len(out))
    return out


def real_pages(cost: dict | None = None) -> list[tuple]:
    """The shared samples' pages (:func:`archive_pages`), then the heavy and ScrapingHub pages."""
    from lib.html.content import extract

    corpus = sorted(p for p in glob.glob(os.path.join(SHARED, "corpus", "*", "*")) if not p.endswith(".md"))
    out = archive_pages(corpus, cost)
    seen = set()
    files = sorted(glob.glob(os.path.join(HEAVY, "*.html.gz")))
    files += sorted(glob.glob(os.path.join(SHARED, "extraction", "scrapinghub", "html", "*.html.gz")))
    for path in files:
        name = os.path.basename(path)
        if name in seen:  # both sets hold some of the same files
            continue
        seen.add(name)
        with gzip.open(path) as g:
            html = g.read().decode("utf-8", "replace")
        out.append((f"file:{name[:16]}", "2026-01-15T12:00:00Z", extract(html, f"https://example.org/{name}").text))
    return out


def variants(pages: list[tuple], n: int, seed: int = 47) -> list[tuple]:
    """Near-duplicates made on purpose (each with a new id and a later capture)."""
    rng = random.Random(seed)
    long = [p for p in pages if len(p[2].split()) >= 100]
    out = []
    for rid, date, text in rng.sample(long, min(n, len(long))):
        words = text.split()
        other = rng.choice(long)[2].split()
        k = max(1, len(words) // 10)
        day = rng.randint(1, 28)
        out.append((f"{rid}#date", date, f"Updated {day} January 2026, 10:{day:02d}. " + text))
        out.append((f"{rid}#order", date, " ".join(words[-k:] + words[k:-k] + words[:k])))
        mid = len(words) // 2
        para = other[: min(40, len(other))]
        out.append((f"{rid}#para", date, " ".join(words[:mid] + para + words[mid:])))
        # graded edits: a share of the words replaced (J from ~0.95 down to ~0.4), the pairs near
        # the 0.8 line that decide recall and precision
        share = rng.uniform(0.005, 0.1)
        edited = [rng.choice(other) if rng.random() < share else w for w in words]
        out.append((f"{rid}#edit", date, " ".join(edited)))
    return out


# ------------------------------------------------------------------ ground truth
def exact_pairs(shingles: dict[str, frozenset], floor: float = 0.5) -> dict[tuple[str, str], float]:
    """Exact Jaccard of every pair at or above ``floor`` (pairs the sizes bound below it skipped)."""
    ids = sorted(shingles, key=lambda i: len(shingles[i]))
    out = {}
    for x, a in enumerate(ids):
        sa = shingles[a]
        for b in ids[x + 1 :]:
            sb = shingles[b]
            if len(sa) < floor * len(sb):
                break  # sorted by size: every later one is larger still
            inter = len(sa & sb)
            j = inter / (len(sa) + len(sb) - inter)
            if j >= floor:
                out[(min(a, b), max(a, b))] = j
    return out


def score(rep: dict[str, str], truth: dict, judged: set[str]) -> dict:
    """Recall of pairs >= 0.8, precision (same-cluster pairs >= 0.5), cluster counts."""
    want = [p for p, j in truth.items() if j >= 0.8 and p[0] in judged and p[1] in judged]
    found = sum(rep[a] == rep[b] for a, b in want)
    near = [p for p in want if truth[p] < 0.95]  # the hard ones: not (nearly) exact copies
    groups: dict[str, list[str]] = {}
    for rid, r in rep.items():
        groups.setdefault(r, []).append(rid)
    same = [tuple(sorted(p)) for g in groups.values() if len(g) > 1 for p in itertools.combinations(g, 2)]
    good = sum(truth.get(p, 0.0) >= 0.5 for p in same)
    return {
        "recall": found / len(want) if want else 1.0,
        "pairs08": len(want),
        "near": sum(rep[a] == rep[b] for a, b in near) / len(near) if near else 1.0,
        "pairs_near": len(near),
        "precision": good / len(same) if same else 1.0,
        "same_pairs": len(same),
        "clusters": sum(len(g) > 1 for g in groups.values()),
        "in_clusters": sum(len(g) for g in groups.values() if len(g) > 1),
    }


# ------------------------------------------------------------------ implementations
def peer_shingles(texts: list[str], k: int) -> list[list[str]]:
    out = []
    for t in texts:
        w = PEER_TOKEN.findall(t.lower())
        out.append([" ".join(w[i : i + k]) for i in range(len(w) - k + 1)])
    return out


def run_ours(texts, mh: MinHasher, bands: int, rows: int) -> tuple[list, dict, dict]:
    t = {}
    c0 = time.process_time()
    sh, off = mh.shingle_hashes(texts)
    c1 = time.process_time()
    sigs = mh.signatures_of_hashes(sh, off)
    c2 = time.process_time()
    buckets = clusters.candidate_buckets(dict(enumerate(sigs)), bands, rows)
    t.update(shingles=c1 - c0, sig=c2 - c1, lsh=time.process_time() - c2)
    return sigs, buckets, t


def run_datasketch(shingles: list[list[str]], perms: int, bands: int, rows: int, min_sh: int):
    from datasketch import MinHash, MinHashLSH

    c0 = time.process_time()
    mhs = []
    for s in shingles:
        if len(s) < min_sh:
            mhs.append(None)
            continue
        m = MinHash(num_perm=perms, seed=1)
        m.update_batch([x.encode() for x in s])
        mhs.append(m)
    c1 = time.process_time()
    lsh = MinHashLSH(num_perm=perms, params=(bands, rows))
    for i, m in enumerate(mhs):
        if m is not None:
            lsh.insert(i, m)
    buckets = [[i, *[j for j in lsh.query(m) if j != i]] for i, m in enumerate(mhs) if m is not None]
    c2 = time.process_time()
    sigs = [None if m is None else m.hashvalues.astype("<u4").tobytes() for m in mhs]
    return sigs, [b for b in buckets if len(b) > 1], {"sig": c1 - c0, "lsh": c2 - c1}


def run_rensa(shingles: list[list[str]], perms: int, bands: int, rows: int, min_sh: int):
    from rensa import RMinHash, RMinHashLSH

    c0 = time.process_time()
    keep = [i for i, s in enumerate(shingles) if len(s) >= min_sh]
    mhs = RMinHash.from_token_sets([shingles[i] for i in keep], perms, 1)
    c1 = time.process_time()
    lsh = RMinHashLSH(0.5, perms, bands)
    for i, m in zip(keep, mhs):
        lsh.insert(i, m)
    buckets = [[i, *[j for j in lsh.query(m) if j != i]] for i, m in zip(keep, mhs)]
    c2 = time.process_time()
    sigs: list = [None] * len(shingles)
    for i, m in zip(keep, mhs):
        sigs[i] = np.asarray(m.digest(), dtype="<u4").tobytes()
    return sigs, [b for b in buckets if len(b) > 1], {"sig": c1 - c0, "lsh": c2 - c1}


def rensa_on_our_hashes(mh: MinHasher, sh: np.ndarray, off: np.ndarray) -> float:
    """CPU seconds of rensa's fastest entry (pre-hashed tokens, flat) on our shingle hashes."""
    from rensa import RMinHash

    c0 = time.process_time()
    RMinHash.digest_matrix_from_flat_token_hashes(sh.astype(np.uint64), off.astype(np.uint64), mh.perms, 1)
    return time.process_time() - c0


def distinct_pairs(buckets) -> int:
    return len({(min(a, b), max(a, b)) for bk in buckets for a, b in itertools.combinations(bk, 2)})


def oph_signatures(mh: MinHasher, sh: np.ndarray, off: np.ndarray) -> list[bytes | None]:
    """The one-permutation prototype (perms a power of two); ``None`` as the library's."""
    from lib.neardup.minhash import _mix

    perms, bits = mh.perms, mh.perms.bit_length() - 1
    counts = np.diff(off)
    judged = np.flatnonzero(counts >= mh.min_shingles)
    x = sh[np.repeat(counts >= mh.min_shingles, counts)].astype(np.uint64)
    page = np.repeat(np.arange(judged.size), counts[judged])
    h = _mix(x * np.uint64(0x9E3779B97F4A7C15))
    empty = np.uint64(1 << 63)
    sig = np.full(judged.size * perms, empty, np.uint64)
    np.minimum.at(sig, page * perms + (h >> np.uint64(64 - bits)).astype(np.int64), h & np.uint64(0xFFFFFFFF))
    sig = sig.reshape(judged.size, perms)
    hole = sig == empty
    t = 1
    while hole.any():  # an empty bin takes the next filled one to its right, marked by the distance
        src = np.roll(sig, -t, axis=1)
        fill = hole & (src < empty)
        sig[fill] = src[fill] + np.uint64(t << 32)
        hole &= ~fill
        t += 1
    raw = (_mix(sig.copy()) >> np.uint64(32)).astype("<u4")
    out: list[bytes | None] = [None] * counts.size
    for i, row in zip(judged.tolist(), raw):
        out[i] = row.tobytes()
    return out


def cluster(pages, sigs, buckets, threshold) -> tuple[dict, float]:
    c0 = time.process_time()
    edges = set()
    for b in buckets:
        edges.update(clusters.verified_pairs(((i, sigs[i]) for i in b), threshold))
    recs = [clusters.Page(str(i), p[1], len(p[2]), sigs[i]) for i, p in enumerate(pages)]
    rep = clusters.clusters(recs, ((str(a), str(b)) for a, b in edges), threshold)
    return {pages[int(k)][0]: pages[int(v)][0] for k, v in rep.items()}, time.process_time() - c0


# ------------------------------------------------------------------ main
def day_variant(day: str | None) -> str:
    """The result's variant for a realday cut (``.../NAME/CUT/warc/YYYY-MM/DD``: "NAME CUT"), else ""."""
    parts = os.path.normpath(day).split(os.sep) if day else []
    return f"{parts[-5]} {parts[-4]}" if len(parts) >= 5 and parts[-3] == "warc" else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=80)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--day", help="a day's folder of archives (devtools/realday.py: CUT/warc/YYYY-MM/DD) instead")
    a = ap.parse_args()
    load0 = os.getloadavg()
    cost: dict = {}
    if a.day:
        files = sorted(glob.glob(os.path.join(a.day, "**", "*.*"), recursive=True))
        pages = archive_pages([f for f in files if f.endswith((".warc.gz", ".arc.gz", ".warc"))], cost)
        print(f"day {a.day}: {len(files)} archives")
    else:
        pages = real_pages(cost)
    real = len(pages)
    pages += variants(pages, a.variants)
    texts = [p[2] for p in pages]
    k, perms, bands, rows, thr = 5, 128, clusters.BANDS, clusters.ROWS, clusters.THRESHOLD
    mh = MinHasher(shingle=k, perms=perms)
    strs = [tokens(t) for t in texts]
    sets = {p[0]: frozenset(" ".join(w[i : i + k]) for i in range(len(w) - k + 1)) for p, w in zip(pages, strs)}
    judged = {rid for rid, s in sets.items() if len(s) >= mh.min_shingles}
    truth = exact_pairs({r: sets[r] for r in judged})
    words = np.array([len(w) for w in strs])
    print(
        f"# bench_minhash {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()}, "
        f"{os.cpu_count()} cores, load {' '.join(f'{x:.2f}' for x in load0)}"
    )
    print(
        f"pages: {real} real + {len(pages) - real} made near-duplicate; {len(judged)} judged "
        f"(>= {mh.min_shingles} shingles); words per page median {int(np.median(words))}, "
        f"mean {words.mean():.0f}; pairs with exact Jaccard >= 0.8: "
        f"{sum(j >= 0.8 for j in truth.values())}, >= 0.5: {len(truth)}"
    )
    print(f"options: shingle {k}, perms {perms}, bands {bands} x rows {rows}, threshold {thr}\n")
    # the ground truth's millions of objects would make every timed run's full collections slow
    gc.collect()
    gc.freeze()
    rows_out = {}
    for name in ("ours", "datasketch", "rensa", "oph"):
        runs = []
        for _ in range(a.repeat):
            if name == "ours":
                sigs, buckets, t = run_ours(texts, mh, bands, rows)
            elif name == "oph":
                c0 = time.process_time()
                sh, off = mh.shingle_hashes(texts)
                c1 = time.process_time()
                sigs = oph_signatures(mh, sh, off)
                c2 = time.process_time()
                buckets = clusters.candidate_buckets(dict(enumerate(sigs)), bands, rows)
                t = {"shingles": c1 - c0, "sig": c2 - c1, "lsh": time.process_time() - c2}
            else:
                c0 = time.process_time()
                sh = peer_shingles(texts, k)
                cs = time.process_time() - c0
                fn = run_datasketch if name == "datasketch" else run_rensa
                sigs, buckets, t = fn(sh, perms, bands, rows, mh.min_shingles)
                t["shingles"] = cs
            rep, t["clusters"] = cluster(pages, sigs, buckets, thr)
            runs.append(t)
        med = {key: statistics.median(r[key] for r in runs) * 1e6 / len(pages) for key in runs[0]}
        rows_out[name] = (med, score(rep, truth, judged), distinct_pairs(buckets))
    sh, off = mh.shingle_hashes(texts)
    fast = statistics.median(rensa_on_our_hashes(mh, sh, off) for _ in range(a.repeat)) * 1e6 / len(pages)
    print(
        "| | shingles µs/page | sig µs/page | lsh µs/page | clusters µs/page | total | candidates "
        "| recall J>=0.8 | of them J<0.95 | precision J>=0.5 | clusters (pages) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, (m, s, cand) in rows_out.items():
        total = sum(m.values())
        print(
            f"| {name} | {m['shingles']:.1f} | {m['sig']:.1f} | {m['lsh']:.1f} | {m['clusters']:.1f} | "
            f"{total:.1f} | {cand} | {s['recall']:.3f} ({s['pairs08']}) | {s['near']:.3f} ({s['pairs_near']}) | "
            f"{s['precision']:.3f} "
            f"({s['same_pairs']}) | {s['clusters']} ({s['in_clusters']}) |"
        )
    ours = rows_out["ours"][0]
    for peer in ("datasketch", "rensa"):
        m = rows_out[peer][0]
        both = (m["shingles"] + m["sig"]) / (ours["shingles"] + ours["sig"])
        print(
            f"{peer} / ours: signatures incl. shingles {both:.2f}x, sig alone {m['sig'] / ours['sig']:.2f}x, "
            f"total {sum(m.values()) / sum(ours.values()):.2f}x"
        )
    pre = cost["cpu"] * 1e6 / cost["pages"]
    print(
        f"preprocess loop (FileProcessor) on the archives: {pre:.0f} µs/page CPU; ours adds "
        f"{sum(ours.values()):.0f} µs/page ({sum(ours.values()) / pre:.0%})"
    )
    print(f"rensa's flat pre-hashed entry on our shingle hashes: {fast:.1f} µs/page (ours: {ours['sig']:.1f})")
    print(
        f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
        f"load at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    write_result(
        "bench_minhash",
        {
            "ours_us_per_page": {key: round(v, 1) for key, v in ours.items()},
            "ours_share_of_preprocess_cpu": round(sum(ours.values()) / pre, 3),
            "recall_j08": rows_out["ours"][1]["recall"],
            "precision_j05": rows_out["ours"][1]["precision"],
        },
        what=f"near-duplicate signatures ({perms} perms) and clusters ({bands} x {rows} bands, verified at {thr})"
        " per page per core; recall and precision against exact Jaccard of all pairs",
        peer="datasketch (MinHash + MinHashLSH), rensa (RMinHash + RMinHashLSH), same shingles, perms and bands",
        peers={n: round(sum(rows_out[n][0].values()), 1) for n in ("datasketch", "rensa")},
        ratio={
            f"ours / {n} (total CPU)": round(sum(ours.values()) / sum(rows_out[n][0].values()), 3)
            for n in ("datasketch", "rensa")
        },
        shape={"day": a.day or "real pages", "pages": real, "made_near_duplicates": len(pages) - real},
        variant=day_variant(a.day),
        load_before=list(load0),
    )
    if a.grid:
        grid(pages, texts, truth, judged, sets)


def grid(pages, texts, truth, judged, sets) -> None:
    print(
        "\n| shingle | perms | bands x rows | threshold | candidates | recall J>=0.8 | of them J<0.95 "
        "| precision J>=0.5 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for perms, br in ((64, ((16, 4), (8, 8))), (128, ((32, 4), (16, 8))), (256, ((32, 8), (64, 4)))):
        mh = MinHasher(perms=perms)
        sigs = mh.signatures(texts)
        for (bands, rows), thr in itertools.product(br, (0.7, 0.75, 0.8)):
            buckets = clusters.candidate_buckets(dict(enumerate(sigs)), bands, rows)
            rep, _ = cluster(pages, sigs, buckets, thr)
            s = score(rep, truth, judged)
            cand = distinct_pairs(buckets)
            print(
                f"| 5 | {perms} | {bands} x {rows} | {thr} | {cand} | {s['recall']:.3f} | {s['near']:.3f} | "
                f"{s['precision']:.3f} |"
            )
    print("\n| min shingles | judged pages | recall J>=0.8 | of them J<0.95 | precision J>=0.5 | short pages |")
    print("|---|---|---|---|---|---|")
    all_truth = exact_pairs({r: s for r, s in sets.items() if len(s) >= 5})
    for least in (5, 20, 46, 100):
        mh = MinHasher(min_shingles=least)
        sigs = mh.signatures(texts)
        rep, _ = cluster(pages, sigs, clusters.candidate_buckets(dict(enumerate(sigs))), clusters.THRESHOLD)
        ok = {r for r, s in sets.items() if len(s) >= least}
        s = score(rep, all_truth, ok)
        short = {r: v for r, v in rep.items() if len(sets[r]) < 46 or len(sets[v]) < 46}
        s2 = score({**{r: r for r in rep}, **short}, all_truth, ok)
        print(
            f"| {least} | {len(ok)} | {s['recall']:.3f} | {s['near']:.3f} | {s['precision']:.3f} | "
            f"{s2['precision']:.3f} "
            f"({s2['same_pairs']} pairs) |"
        )


if __name__ == "__main__":
    main()
