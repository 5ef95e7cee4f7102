"""Search over every shard of a day or a date range, with exact global BM25 (docs/serve.md, "Search engine").

Scores are Lucene's BM25 (as Anserini and lib.ciff.search): for each query term t,
``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``,
computed over the selected shards as if they were one index: N = their documents, avgdl = their
average length, df of a term string = the sum of its list lengths over them. Each shard analyzes
the query with the analyzer named in its CIFF header; a ``langs`` filter selects shards before
retrieval, so the statistics are those of the selected languages' shards. Across days (and data
centers) a URL id is kept once, from the newest day (then the first data center by name); the
statistics cover the selected shards before this de-duplication. Ties are broken by the global
docid: day, data center, TLD, language, shard number, docid.

Near-duplicates (the metadata's ``dup_cluster``, docs/dedup.md) are collapsed on request
(``collapse=True``; the HTTP API's default, lib.serve.app): the
top ``4k`` hits are ranked as above, then the hits of one day's cluster are folded into one
(its representative when found, else its best-ranked member, at the best member's rank and
score), which says in ``copies`` how many other hits it stands for; the first ``k`` are
returned. ``collapse=False`` returns the top ``k`` unfolded. Scores and statistics are the same.

A shard that cannot be served (missing, truncated, not the manifest's sha256, undecodable: see
lib.serve.day_manifest) is left out when its day is built; the rest of the day is served, every
answer names the shard in ``warnings``, and the statistics are those of the served shards. Such
a day is listed again every ``recheck_seconds``; a repaired file (new size, mtime or ETag, or a
new manifest) gives a new key and the day is rebuilt.
"""

from __future__ import annotations

import datetime as dt
import heapq
import math
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Hashable

import numpy as np
import pyarrow.compute as pc

from lib.pages import exclusions as excl_mod
from lib.pages.exclusions import Exclusions
from lib.serve import _maxscore
from lib.serve import prior as prior_mod
from lib.serve.errors import DayNotPublished, QueryError
from lib.serve.serving_index import DayIndex, Shard, day_key, default_cache, ensure_built, published_days
from lib.serve.snippets import snippet

MAX_QUERY_CHARS = 512  # longer queries are refused
MAX_QUERY_TERMS = 32  # distinct terms per analyzer; the kernel takes at most 64
MAX_K = 1000
MAX_RANGE_DAYS = 31
COLLAPSE_FETCH = 4  # a collapsed search ranks this many times k candidates (at most MAX_K)
EXCLUSIONS_TTL = 30.0  # seconds between two reads of the roots' exclusion lists
RECHECK_SECONDS = 30.0  # seconds between two listings of a day served without some of its shards
# words that are query syntax, not terms: a query made only of these (and punctuation) has nothing to
# look up. The search is an OR of terms with no proximity operator, so "near" is a word like any other.
OPERATORS = {"and", "or", "not"}
_WORD = re.compile(r"\w+")


@dataclass
class Hit:
    score: float
    record_id: str
    url: str | None
    title: str | None
    snippet: str
    language: str
    warc_date: str | None
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    day: str
    dc: str
    copies: int = 0  # other hits of its near-duplicate cluster folded into it (collapse)


@dataclass
class SearchResult:
    query_time_ms: float
    total_results: int  # documents matching at least one term: a lower bound (see docs/serve.md)
    days: list[str]
    shards: int
    hits: list[Hit] = field(default_factory=list)
    excluded: int = 0  # documents of the selected shards withheld by the exclusion list (take-downs)
    warnings: list[str] = field(default_factory=list)  # selected shards not served, and why
    prior: dict | None = None  # the static prior applied (lib.serve.prior), with the graph's window
    parts: list[tuple[float, float]] | None = None  # with a prior: each hit's (bm25, prior)


class Engine:
    """Search over the published index days of one or more data centers (``roots``: name -> ROOT)."""

    def __init__(
        self,
        roots: dict[str, str],
        cache_dir: str | None = None,
        max_range_days: int = MAX_RANGE_DAYS,
        max_query_chars: int = MAX_QUERY_CHARS,
        exclusions: Exclusions | None = None,
        exclusions_ttl: float = EXCLUSIONS_TTL,
        recheck_seconds: float = RECHECK_SECONDS,
    ):
        if not roots:
            raise ValueError("Engine needs at least one root")
        self.roots = dict(sorted(roots.items()))
        self.cache_dir = cache_dir or default_cache()
        self.max_range_days = max_range_days
        self.max_query_chars = max_query_chars
        self._loaded: dict[tuple[str, dt.date], DayIndex] = {}
        self._checked: dict[tuple[str, dt.date], float] = {}  # when a day with skipped shards was last listed
        self.recheck_seconds = recheck_seconds
        self._masks: dict[tuple, dict] = {}
        self._excluded: dict[tuple, np.ndarray | None] = {}
        self._lock = threading.Lock()
        self._days = {dc: published_days(root) for dc, root in self.roots.items()}
        self.build_seconds: dict[str, float] = {}
        # the take-down lists: given, or each root's ROOT/_exclusions.jsonl, re-read every
        # exclusions_ttl seconds so a new take-down applies without a restart
        self._fixed_exclusions = exclusions
        self._ranks = prior_mod.RankTables()
        self._exclusions_ttl = exclusions_ttl
        self._exclusions_at = -1e18
        self.exclusions = exclusions or excl_mod.NONE
        self._refresh_exclusions()

    def _refresh_exclusions(self) -> None:
        if self._fixed_exclusions is not None or time.monotonic() - self._exclusions_at < self._exclusions_ttl:
            return
        uris = [excl_mod.default_uri(root) for root in self.roots.values()]
        rules = [r for uri in uris for r in excl_mod.load(uri).rules]
        with self._lock:
            self._exclusions_at = time.monotonic()
            if rules != self.exclusions.rules:
                self.exclusions = excl_mod.Exclusions(rules, ", ".join(uri for uri in uris if uri))
                self._masks = {}
                self._excluded = {}

    def _excluded_mask(self, p: DayIndex, s: Shard) -> np.ndarray | None:
        """1 for the shard's pages the exclusion list matches (None: none does)."""
        if not self.exclusions:
            return None
        key = (p.dc, p.day, p.folder, s.index)
        cache = self._excluded
        if key not in cache:
            m = np.asarray(self.exclusions.mask(s.table.column("url")).to_numpy(zero_copy_only=False), np.uint8)
            cache[key] = m if m.any() else None
        return cache[key]

    def days(self) -> list[dt.date]:
        """Complete published index days (in any data center), ascending."""
        return sorted(set().union(*self._days.values()))

    def _check_range(self, day_from: dt.date, day_to: dt.date | None) -> list[dt.date]:
        day_to = day_to or day_from
        if day_to < day_from:
            raise QueryError(f"the range ends ({day_to}) before it starts ({day_from})")
        width = (day_to - day_from).days + 1
        if width > self.max_range_days:
            raise QueryError(
                f"range {day_from}..{day_to} of {width} days is wider than the maximum: at most {self.max_range_days}"
            )
        days = [d for d in self.days() if day_from <= d <= day_to]
        if not days:
            raise DayNotPublished(
                f"no published index day in {day_from}..{day_to}; days: "
                + (", ".join(str(d) for d in self.days()) or "none")
            )
        return days

    def _partitions(self, days: list[dt.date]) -> list[DayIndex]:
        """Loaded day indexes in global order (day, data center), built on first use."""
        out = []
        for d in days:
            for dc, root in self.roots.items():
                if d in self._days[dc]:
                    out.append(self.load(dc, d))
        return out

    def load(self, dc: str, day: dt.date) -> DayIndex:
        """The serving index of one data center's day (built into the cache on first use). A day
        built without some of its shards is listed again after ``recheck_seconds`` (module doc)."""
        key = (dc, day)
        with self._lock:
            have = self._loaded.get(key)
            if have is not None and have.skipped and time.monotonic() - self._checked[key] >= self.recheck_seconds:
                self._checked[key] = time.monotonic()
                try:
                    changed = day_key(self.roots[dc], day)[0] != have.key
                except Exception:  # the root cannot be listed now: keep serving what was built
                    changed = False
                if changed:
                    have = None  # a file or the manifest changed: build the new version
            if have is None:
                rep = ensure_built(self.roots[dc], day, self.cache_dir, dc)
                self._loaded[key] = DayIndex(rep.path, dc, day)
                self._checked[key] = time.monotonic()
                self.build_seconds[f"{dc}/{day}"] = round(rep.seconds, 3)
                self._masks = {}
                self._excluded = {k: v for k, v in self._excluded.items() if k[:2] != key}
            return self._loaded[key]

    def languages(self, day_from: dt.date, day_to: dt.date | None = None) -> list[str]:
        """Languages with at least one shard in the range (served or not: a language whose only
        shard is broken is still a language of the day, searched with a warning)."""
        parts = self._partitions(self._check_range(day_from, day_to))
        return sorted({s.lang for p in parts for s in p.shards} | {k["lang"] for p in parts for k in p.skipped})

    def index_info(self) -> dict:
        """Days, shards, documents, terms, languages and build seconds of every published day (loads
        them); ``skipped_shards``: the shards not served, and why; ``warnings``: the same as text."""
        parts = self._partitions(self.days())
        skipped = [{"dc": p.dc, "day": p.day.isoformat(), **k} for p in parts for k in p.skipped]
        return {
            "days": [d.isoformat() for d in self.days()],
            "data_centers": list(self.roots),
            "shards": sum(len(p.shards) for p in parts),
            "docs": sum(s.docs for p in parts for s in p.shards),
            "terms": sum(p.terms for p in parts),
            "languages": sorted({s.lang for p in parts for s in p.shards} | {k["lang"] for k in skipped}),
            "build_seconds": dict(self.build_seconds),
            "skipped_shards": skipped,
            "warnings": _warnings(parts, None) + [f"{p.dc} {p.day}: {n}" for p in parts for n in p.notes],
        }

    def find_record(self, record_id: str, day: dt.date | None = None) -> dict | None:
        """The published page with ``record_id`` (its url, warc pointer, day and data center):
        the newest day first (``day``: that day only); None when no served day has it. A
        vectorised scan of each shard's id column: no per-record index to hold in memory."""
        self._refresh_exclusions()
        days = [day] if day is not None else sorted(self.days(), reverse=True)
        for p in self._partitions([d for d in days if d in self.days()]):
            for s in p.shards:
                row = pc.index(s.table.column("record_id"), record_id).as_py()
                if row >= 0:
                    r = {
                        c: s.table.column(c)[row].as_py()
                        for c in ("url", "warc_date", "warc_file", "warc_offset", "warc_length", "robots")
                        if c in s.table.column_names
                    }
                    return {
                        "record_id": record_id,
                        **r,
                        "day": p.day.isoformat(),
                        "dc": p.dc,
                        "excluded": self.exclusions.match(r.get("url")),
                    }
        return None

    def search(
        self,
        q: str,
        day_from: dt.date,
        day_to: dt.date | None = None,
        langs: list[str] | None = None,
        k: int = 10,
        k1: float = 0.9,
        b: float = 0.4,
        collapse: bool = False,
        prior: prior_mod.Prior | None = None,
    ) -> SearchResult:
        """Top-k pages of the selected days and languages for ``q`` (module doc: scores, filter, dedup, ties);
        ``collapse``: near-duplicates folded into one hit (:func:`collapse_hits`); ``prior``: BM25
        plus a weight times the host's rank (lib.serve.prior; None: plain BM25)."""
        t0 = time.perf_counter()
        q = check_query(q, self.max_query_chars)
        self._refresh_exclusions()
        if not 0 < k <= MAX_K:
            raise QueryError(f"k must be in 1..{MAX_K}")
        if not (k1 >= 0 and 0 <= b <= 1):
            raise QueryError("k1 must be >= 0 and b in [0, 1]")
        days = self._check_range(day_from, day_to)
        parts = self._partitions(days)
        t0 = time.perf_counter()  # a day's first query builds or loads its index: not query time
        known = {s.lang for p in parts for s in p.shards} | {k["lang"] for p in parts for k in p.skipped}
        if langs:
            bad = sorted(set(langs) - known)
            if bad:
                raise QueryError(
                    f"unknown language(s) {', '.join(bad)} in {days[0]}..{days[-1]} (known: {', '.join(sorted(known))})"
                )
        sel = [(p, s) for p in parts for s in p.shards if not langs or s.lang in langs]
        # collapsing folds hits together: more candidates are ranked so that k hits remain
        want = min(MAX_K, COLLAPSE_FETCH * k) if collapse else k
        if prior is None:
            hits, total = self._top_k(q, parts, sel, want, k1, b)
            used, split = None, None
        else:
            tables = {p.dc: self._ranks.get(self.roots[p.dc], prior, days[-1]) for p in parts}
            hits, total, bm_pr = prior_mod.top_k(
                lambda m: self._top_k(q, parts, sel, m, k1, b),
                want,
                prior.weight,
                lambda h: tables[h[1].dc].of_url(h[2].table.column("url")[h[3]].as_py()),
            )
            split = {(id(h[1]), h[2].index, h[3]): x for h, x in zip(hits, bm_pr)}
            used = prior.describe() | {"graphs": {dc: t.folder for dc, t in sorted(tables.items())}}
        if collapse:
            hits = collapse_hits(hits, _cluster, k)
            out = [self._hit(p, s, row, score, q, copies) for score, p, s, row, copies in hits]
        else:
            out = [self._hit(p, s, row, score, q) for score, p, s, row in hits]
        withheld = sum(int(m.sum()) for p, s in sel if (m := self._excluded_mask(p, s)) is not None)
        return SearchResult(
            round((time.perf_counter() - t0) * 1000, 3),
            total,
            [d.isoformat() for d in days],
            len(sel),
            out,
            withheld,
            _warnings(parts, langs),
            used,
            [split[(id(h[1]), h[2].index, h[3])] for h in hits] if split is not None else None,
        )

    def _top_k(self, q: str, parts: list[DayIndex], sel: list[tuple[DayIndex, Shard]], k: int, k1: float, b: float):
        n_docs = sum(s.docs for _, s in sel)
        if n_docs == 0:
            return [], 0
        avgdl = sum(s.length for _, s in sel) / n_docs or 1.0
        # query terms per analyzer; term ids per partition
        qterms: dict[str, Counter] = {}
        for _, s in sel:
            if s.analyzer.name not in qterms:
                qterms[s.analyzer.name] = Counter(s.analyzer.tokens(q))
        tids = {(id(p), t): p.vocab.get(t) for p in parts for c in qterms.values() for t in c}
        # df of a term string: over every selected shard, whichever analyzer produced the string
        every = {t for c in qterms.values() for t in c}
        df: Counter = Counter()
        for p in parts:
            rows = [s.index for q, s in sel if q is p]
            for t in every:
                tid = tids[(id(p), t)]
                if tid is not None and rows:
                    df[t] += int((p.offsets[rows, tid + 1] - p.offsets[rows, tid]).sum())
        df = Counter({t: d for t, d in df.items() if d})
        idf = {t: math.log(1 + (n_docs - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        deleted = self._hidden_masks(parts, sel)
        best: list[tuple[float, int, int, DayIndex, Shard]] = []  # (score, -order, ...): a min-heap of the k best
        theta, total = 0.0, 0
        plans = self._plans(parts, sel, qterms, tids, idf, k1, b, avgdl)
        for order, (p, s) in enumerate(sel):
            plan = plans.get((id(p), s.index))
            if plan is None:
                continue
            starts, lens, w, bounds = plan
            total += int(lens.max())
            scores, rows = _maxscore.top_k(
                s.docids,
                s.tfs,
                starts,
                lens,
                w,
                bounds,
                _norms(s, k1, b, avgdl),
                deleted.get((id(p), s.index)),
                k,
                theta,
            )
            for sc, row in zip(scores, rows):
                item = (sc, -order, -row, p, s)
                if len(best) < k:
                    heapq.heappush(best, item)
                elif item[:3] > best[0][:3]:
                    heapq.heapreplace(best, item)
            if len(best) == k:
                theta = best[0][0]
        ranked = sorted(best, key=lambda x: (-x[0], -x[1], -x[2]))
        return [(sc, p, s, -nrow) for sc, _, nrow, p, s in ranked], total

    @staticmethod
    def _plans(parts, sel, qterms, tids, idf, k1, b, avgdl) -> dict:
        """Per selected shard with postings for the query: (starts, lens, weights, bounds), computed
        for all shards of one day and analyzer at once (one numpy pass, not one per shard)."""
        groups: dict[tuple[int, str], list] = {}
        for p, s in sel:
            if s.docs:
                groups.setdefault((id(p), s.analyzer.name), [p, []])[1].append(s)
        plans = {}
        for (pid, name), (p, shards) in groups.items():
            terms = [(t, c, tids[(pid, t)]) for t, c in qterms[name].items()]
            terms = [(t, c, tid) for t, c, tid in terms if tid is not None and t in idf]
            if not terms:
                continue
            ids = np.array([tid for _, _, tid in terms], np.int64)
            rows = np.array([s.index for s in shards], np.int64)[:, None]
            starts = p.offsets[rows, ids].astype(np.int64)
            lens = p.offsets[rows, ids + 1].astype(np.int64) - starts
            w = np.array([c * idf[t] for t, c, _ in terms])
            mt = p.maxtf[rows, ids].astype(np.float64)
            md = p.mindl[rows, ids].astype(np.float64)
            bounds = w * mt / (mt + k1 * (1 - b + b * md / avgdl))
            for j, s in enumerate(shards):
                if lens[j].any():
                    plans[(pid, s.index)] = (starts[j], lens[j], w, bounds[j])
        return plans

    def _hidden_masks(self, parts: list[DayIndex], sel: list[tuple[DayIndex, Shard]]) -> dict:
        """Per (partition, shard): 1 for pages a search must not return: repeated in a newer day
        (:meth:`_dedup_masks`) or excluded (:meth:`_excluded_mask`)."""
        masks = dict(self._dedup_masks(parts)) if len(parts) > 1 else {}
        for p, s in sel:
            ex = self._excluded_mask(p, s)
            if ex is not None:
                key = (id(p), s.index)
                masks[key] = ex if key not in masks else (masks[key] | ex)
        return masks

    def _dedup_masks(self, parts: list[DayIndex]) -> dict:
        """Per (partition, shard): 1 for pages whose URL id a newer day (or earlier data center) has."""
        key = tuple((p.dc, p.day, p.folder) for p in parts)
        if key in self._masks:
            return self._masks[key]
        ranked = sorted(parts, key=lambda p: (-p.day.toordinal(), p.dc))
        seen = np.zeros(0, np.uint64)
        masks = {}
        for p in ranked:
            mine = [s.ids for s in p.shards]
            for s in p.shards:
                m = np.isin(s.ids, seen).astype(np.uint8) if len(seen) else np.zeros(s.docs, np.uint8)
                masks[(id(p), s.index)] = m
            if mine:
                seen = np.union1d(seen, np.concatenate(mine))
        with self._lock:
            self._masks = {key: masks}  # one selection cached: bounded memory
        return masks

    def _hit(self, p: DayIndex, s: Shard, row: int, score: float, q: str, copies: int = 0) -> Hit:
        r = {c: s.table.column(c)[row].as_py() for c in s.table.column_names}
        return Hit(
            score=score,
            record_id=r["record_id"],
            url=r.get("url"),
            title=r.get("title"),
            # a page that says nosnippet is listed without one (docs/robots.md)
            snippet="" if "nosnippet" in (r.get("robots") or "") else snippet(p.text(s, row), q, s.analyzer),
            language=r.get("language") or s.lang,
            warc_date=r.get("warc_date"),
            warc_file=r.get("warc_file"),
            warc_offset=r.get("warc_offset"),
            warc_length=r.get("warc_length"),
            day=p.day.isoformat(),
            dc=p.dc,
            copies=copies,
        )


def _cluster(p: DayIndex, s: Shard, row: int) -> tuple[Hashable, bool]:
    """The page's near-duplicate cluster (data center, day and its representative's record id:
    the page itself when the day has no ``dup_cluster``), and whether it is the representative."""
    rid = s.table.column("record_id")[row].as_py()
    c = s.table.column("dup_cluster")[row].as_py() if "dup_cluster" in s.table.column_names else None
    return (p.dc, p.day, c or rid), (c or rid) == rid


def collapse_hits(hits: list[tuple], cluster: Callable[..., tuple[Hashable, bool]], k: int) -> list[tuple]:
    """Ranked ``(score, p, s, row)`` hits with the near-duplicates of each cluster (the same key
    of ``cluster(p, s, row) -> (key, is the representative)``) folded into one hit:
    the cluster's representative when it is among the hits, else its best-ranked member, at the
    rank of the cluster's best-ranked member; each as ``(score, p, s, row, copies)``, ``copies``
    the other hits folded into it; the first ``k``. The scores and the ranking of the hits are
    the unfolded search's (BM25 statistics are the same either way)."""
    groups: dict[Hashable, list[tuple]] = {}
    reps: dict[Hashable, tuple] = {}
    for h in hits:
        key, is_rep = cluster(*h[1:])
        groups.setdefault(key, []).append(h)
        if is_rep:
            reps[key] = h
    out = []
    for key, members in groups.items():  # dicts keep the order of first insertion: the best rank
        rep = reps.get(key, members[0])
        out.append((members[0][0], rep[1], rep[2], rep[3], len(members) - 1))
    return out[:k]


def _norms(s: Shard, k1: float, b: float, avgdl: float) -> np.ndarray:
    key = (k1, b, avgdl)
    n = s.norms.get(key)
    if n is None:
        n = k1 * (1 - b + b * s.dl.astype(np.float64) / avgdl)
        s.norms.clear()  # one selection's norms per shard: bounded memory
        s.norms[key] = n
    return n


def _warnings(parts: list[DayIndex], langs: list[str] | None) -> list[str]:
    """One line per shard of the selection that is not served: which, why, and what it changes."""
    out = []
    for p in parts:
        for k in p.skipped:
            if not langs or k["lang"] in langs:
                docs = f", {k['docs']} documents" if k.get("docs") is not None else ""
                out.append(
                    f"{p.dc} {p.day} shard {k['path']} not served{docs}: {k['reason']}; "
                    "results and BM25 statistics (N, avgdl, df) cover the served shards only"
                )
    return out


def check_query(q: str | None, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query text, stripped; QueryError for an empty, over-long or operator-only query, or one of
    more than MAX_QUERY_TERMS distinct words."""
    text = q.strip() if isinstance(q, str) else ""
    if not text:
        raise QueryError("empty query: give q=some words")
    if len(text) > max_chars:
        raise QueryError(f"query too long: {len(text)} characters, at most {max_chars}")
    words = [w.lower() for w in _WORD.findall(text) if w.strip("_")]
    if all(w in OPERATORS for w in words):
        raise QueryError(f"query {text!r} has only operators or punctuation, no word to search for")
    if len(set(words)) > MAX_QUERY_TERMS:
        raise QueryError(f"query has more than {MAX_QUERY_TERMS} distinct words")
    return text
