"""Snippets: a window of a page's plain text around the query terms, terms wrapped in ``<em>``.

A word matches when the page's analyzer turns it into one of the query's terms (so ``Houses``
matches ``house`` under an English stemmer); everything else is HTML-escaped.
"""

from __future__ import annotations

import html
import re
import unicodedata

from lib.core.analysis import Analyzer

WINDOW = 32  # words in a snippet
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
SCAN = 20_000  # characters of a page searched for the window


def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s.casefold()) if not unicodedata.combining(c))


def snippet(text: str, query: str, analyzer: Analyzer, words: int = WINDOW) -> str:
    """The ``words``-word window of ``text`` with the most query-term words, highlighted and escaped."""
    if not text:
        return ""
    wanted = set(analyzer.tokens(query))
    spans = [(m.start(), m.end()) for m in _WORD.finditer(text[:SCAN])]
    if not spans:
        return html.escape(text[:300])
    # a stem starts like its word (after case and accent folding): only words that contain the
    # first letters of a query term go through the analyzer, which keeps a snippet under a millisecond
    heads = {_fold(t)[:3] for t in wanted}
    seen: dict[str, bool] = {}
    hit = []
    for a, e in spans:
        w = text[a:e].lower()
        h = seen.get(w)
        if h is None:
            fw = _fold(w)
            h = seen[w] = any(x in fw for x in heads) and not wanted.isdisjoint(analyzer.tokens(w))
        hit.append(h)
    best, count = 0, sum(hit[:words])
    run = count
    for i in range(1, max(1, len(spans) - words + 1)):
        run += hit[i + words - 1] - hit[i - 1]
        if run > count:
            best, count = i, run
    lo, hi = best, min(len(spans), best + words)
    out, pos = [], spans[lo][0]
    for i in range(lo, hi):
        a, e = spans[i]
        out.append(html.escape(text[pos:a]))
        word = html.escape(text[a:e])
        out.append(f"<em>{word}</em>" if hit[i] else word)
        pos = e
    prefix = "… " if lo > 0 else ""
    suffix = " …" if hi < len(spans) else ""
    return prefix + _SPACE.sub(" ", "".join(out)).strip() + suffix
