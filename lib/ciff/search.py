"""BM25 over one CIFF shard: the quickest sanity check of an index slice.

Scoring follows Anserini (Lucene's BM25Similarity): for each query term t,
``idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``,
k1 = 0.9, b = 0.4, N = header total_docs, avgdl = header average_doclength and dl the exact document
length from the DocRecord. A query term that occurs twice counts twice (Anserini's bag of words).

One streaming pass: postings lists of non-query terms are skipped undecoded; the query terms' lists
are folded one at a time into a per-document table of their tfs; the doc records that follow give
each candidate's length and collection_docid, and a heap keeps the top k.
"""

from __future__ import annotations

import functools
import heapq
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

import pyarrow.parquet as pq

from lib.ciff.errors import CiffError
from lib.ciff.reader import iter_docs, iter_postings, read_header
from lib.ciff.stream import MessageStream
from lib.store import layout, locations
from lib.text.analysis import analyzer_from_description

K1 = 0.9
B = 0.4


class AnalyzerLike(Protocol):
    name: str

    def tokens(self, text: str) -> list[str]: ...


class PlainAnalyzer:
    """Lowercased word tokens, no stopwords, no stemming: for CIFF files from other tools."""

    name = "plain:lower"
    _WORD = re.compile(r"\w+")

    def tokens(self, text: str) -> list[str]:
        return self._WORD.findall(text.lower())


@dataclass(frozen=True)
class Hit:
    collection_docid: str
    docid: int
    score: float
    url: str | None = None


def analyzer_for(description: str) -> AnalyzerLike:
    """The analyzer named in a CIFF header description (see lib.text.analysis)."""
    try:
        return analyzer_from_description(description)
    except ValueError as e:
        raise CiffError(
            f"no known analyzer in the header description {description!r} ({e}); use --plain for files from other tools"
        ) from None


def search(
    path: str, query: str, k: int = 10, *, analyzer: AnalyzerLike | None = None, k1: float = K1, b: float = B
) -> list[Hit]:
    """Top-k documents of a CIFF file for a query, best first (ties: collection_docid ascending)."""
    return search_many(path, [query], k, analyzer=analyzer, k1=k1, b=b)[0]


class _Query:
    """One query's state during the pass: its terms' weights and each candidate's tfs."""

    def __init__(self, qtf: Counter, n_docs: int):
        self.qtf, self.n_docs = qtf, n_docs
        self.terms = sorted(qtf)
        self.slot = {t: i for i, t in enumerate(self.terms)}
        self.weights = [0.0] * len(self.terms)
        self.table: dict[int, list[int]] = {}  # docid -> tf of each query term

    def fold(self, term: str, df: int, docids, tfs) -> None:
        j = self.slot[term]
        self.weights[j] = self.qtf[term] * math.log(1 + (self.n_docs - df + 0.5) / (df + 0.5))
        zero = [0] * len(self.terms)
        table = self.table
        for d, tf in zip(docids, tfs):
            row = table.get(d)
            if row is None:
                row = table[d] = zero.copy()
            row[j] = tf

    def rank(self, norms: list[float], ids: list[str], k: int) -> list[Hit]:
        heap: list[tuple[float, _Desc, int]] = []
        for d, row in self.table.items():
            norm = norms[d]
            score = sum(w * tf / (tf + norm) for w, tf in zip(self.weights, row) if tf)
            # heap of the k best: smallest score first; among equal scores the larger id goes first
            item = (score, _Desc(ids[d]), d)
            if len(heap) < k:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
        return [Hit(cd.s, docid, score) for score, cd, docid in sorted(heap, reverse=True)]


def search_many(
    path: str, queries: list[str], k: int = 10, *, analyzer: AnalyzerLike | None = None, k1: float = K1, b: float = B
) -> list[list[Hit]]:
    """:func:`search` for many queries in one pass over the file (the same scores and order)."""
    with MessageStream(path) as s:
        h = read_header(s)
        if analyzer is None:
            analyzer = analyzer_for(h.description)
        qs = [_Query(Counter(analyzer.tokens(q)), h.total_docs) for q in queries]
        live = [q for q in qs if q.qtf and k > 0]
        by_term: dict[str, list[_Query]] = {}
        for q in live:
            for t in q.terms:
                by_term.setdefault(t, []).append(q)
        if by_term:
            for _, _, raw, docids in iter_postings(s, h, decode=False, select=frozenset(by_term), num_docs=h.total_docs):
                if raw.term not in by_term or docids is None:
                    continue
                d, tf = docids.tolist(), raw.tfs.tolist()
                for q in by_term[raw.term]:
                    q.fold(raw.term, raw.df, d, tf)
        norms: list[float] = []  # per docid up to the last candidate
        ids: list[str] = []
        if any(q.table for q in live):
            last = max(max(q.table) for q in live if q.table)
            avgdl = h.average_doclength or 1.0
            for _, _, doc in iter_docs(s, h, check=False):
                norms.append(k1 * (1 - b + b * doc.doclength / avgdl))
                ids.append(doc.collection_docid)
                if doc.docid >= last:
                    break
    return [q.rank(norms, ids, k) if q.table and k > 0 else [] for q in qs]


@functools.total_ordering
class _Desc:
    """Reverses string order so that a max-heap on (score, _Desc(id)) prefers smaller ids on ties."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: "_Desc") -> bool:
        return self.s > other.s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.s == other.s


def metadata_beside(path: str) -> str | None:
    """``.../index-{n}.ciff[.gz]`` -> ``.../metadata-{n}.parquet`` if that file exists."""
    local = locations.local_path(str(path))
    name = layout.metadata_for(os.path.basename(local))
    if not name:
        return None
    candidate = os.path.join(os.path.dirname(local), name)
    return candidate if os.path.exists(candidate) else None


def attach_urls(hits: list[Hit], metadata: str) -> list[Hit]:
    """Fill in each hit's url from a metadata Parquet file (columns collection_docid, url)."""
    if not hits:
        return hits
    ids = [h.collection_docid for h in hits]
    table = pq.read_table(metadata, columns=["collection_docid", "url"], filters=[("collection_docid", "in", ids)])
    urls = dict(zip(table.column("collection_docid").to_pylist(), table.column("url").to_pylist()))
    return [Hit(h.collection_docid, h.docid, h.score, urls.get(h.collection_docid)) for h in hits]
