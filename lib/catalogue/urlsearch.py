"""Free-text search over URLs (WarcManager's "Query for URL's based on a free-text string"): the
words of a URL's host and path, ranked, not only a prefix or a substring.

A URL's words are the runs of letters and the runs of digits of its host (``www`` left out) and
of its path and query, lower-cased and percent-decoded (``/Library-Budget_2026.html`` gives
``library budget 2026 html``). A query's words are found the same way; the URLs holding at least
one are ranked by BM25 (k1 1.2, b 0.75) over those words, a host word counting as two (the
site a user names matters more than a word deep in a path); ties go to the shorter URL, then
the URL's order. A URL holding every query word always ranks above one holding fewer
(:func:`UrlIndex.search` sorts on the number of words matched first).

The index is held in memory (one posting list of URL numbers per word, numpy arrays): built once
per state of its source (the URL database's version and the capture index's), in about a second
per 200,000 URLs.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Iterable
from urllib.parse import unquote, urlsplit

import numpy as np

K1, B = 1.2, 0.75
HOST_WEIGHT = 2
MAX_QUERY_WORDS = 16
_WORD = re.compile(r"[^\W\d_]+|\d+")


def url_words(url: str) -> tuple[list[str], list[str]]:
    """(host words, path and query words) of ``url``."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return [], _WORD.findall(unquote(url).lower())
    host = [w for w in _WORD.findall((parts.hostname or "").lower()) if w != "www"]
    rest = unquote(f"{parts.path} {parts.query}").lower()
    return host, _WORD.findall(rest)


def query_words(text: str) -> list[str]:
    """The distinct words of a query, in order."""
    return list(dict.fromkeys(_WORD.findall(unquote(text).lower())))


class UrlIndex:
    """The word index of a list of URLs (module doc)."""

    def __init__(self, urls: Iterable[str]) -> None:
        self.urls: list[str] = []
        postings: dict[str, dict[int, int]] = defaultdict(dict)
        lengths: list[int] = []
        for n, url in enumerate(sorted(set(urls))):  # URL order: the last tie-break is the URL number
            self.urls.append(url)
            host, rest = url_words(url)
            for w in host:
                postings[w][n] = postings[w].get(n, 0) + HOST_WEIGHT
            for w in rest:
                postings[w][n] = postings[w].get(n, 0) + 1
            lengths.append(HOST_WEIGHT * len(host) + len(rest))
        self.lengths = np.asarray(lengths, dtype=np.float64)
        self.avgdl = float(self.lengths.mean()) if len(lengths) else 1.0
        self.postings = {
            w: (np.fromiter(p.keys(), np.int64, len(p)), np.fromiter(p.values(), np.float64, len(p)))
            for w, p in postings.items()
        }

    def __len__(self) -> int:
        return len(self.urls)

    def search(self, text: str, limit: int = 20, offset: int = 0) -> tuple[int, list[dict]]:
        """(URLs matching at least one word, the ranked hits ``offset..offset+limit``: ``url``,
        ``score``, ``matched`` words). ValueError for a query without a word or with too many."""
        words = query_words(text)
        if not words:
            raise ValueError("the query has no word (letters or digits)")
        if len(words) > MAX_QUERY_WORDS:
            raise ValueError(f"at most {MAX_QUERY_WORDS} words in a query, got {len(words)}")
        n = len(self.urls)
        scores = np.zeros(n)
        matched = np.zeros(n, dtype=np.int64)
        for w in words:
            if w not in self.postings:
                continue
            docs, tf = self.postings[w]
            idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            norm = K1 * (1 - B + B * self.lengths[docs] / self.avgdl)
            scores[docs] += idf * tf * (K1 + 1) / (tf + norm)
            matched[docs] += 1
        hit = np.flatnonzero(matched)
        # more words matched first, then the score, then the shorter URL, then the URL (its number)
        url_len = np.fromiter((len(self.urls[d]) for d in hit), np.int64, len(hit))
        order = hit[np.lexsort((hit, url_len, -scores[hit], -matched[hit]))]
        out = []
        for d in order[offset : offset + limit].tolist():
            have = set(sum(url_words(self.urls[d]), []))
            out.append(
                {"url": self.urls[d], "score": round(float(scores[d]), 4), "matched": [w for w in words if w in have]}
            )
        return len(hit), out
