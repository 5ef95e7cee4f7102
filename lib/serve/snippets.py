"""Snippets: a window of a page's plain text around the query terms, terms wrapped in ``<em>``.

A word matches when the page's analyzer turns it into one of the query's terms (so ``Houses``
matches ``house`` under an English stemmer); everything else is HTML-escaped.
"""

from __future__ import annotations

import html
import re
import unicodedata

from lib.text.analysis import Analyzer

CHARS = 240  # characters in a snippet (about 35 words)
SCAN = 20_000  # characters of a page searched for the window
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_FOLD: dict[str, str] = {}


def _fold_same_length(text: str) -> str:
    """Case and accents folded, one character for one (so positions stay those of ``text``)."""
    out = []
    for c in text:
        f = _FOLD.get(c)
        if f is None:
            g = _fold(c)
            f = _FOLD[c] = g[0] if g else c
        out.append(f)
    return "".join(out)


def _fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s.casefold()) if not unicodedata.combining(c))


def snippet(text: str, query: str, analyzer: Analyzer, chars: int = CHARS) -> str:
    """The ``chars``-character window of ``text`` with the most query-term words, highlighted and escaped."""
    if not text:
        return ""
    text = text[:SCAN]
    wanted = set(analyzer.tokens(query))
    hits: list[tuple[int, int]] = []
    if wanted:
        # a stem starts like its word (after case and accent folding): the words that contain a query
        # term's first letters (found by one regex over the folded text) go through the analyzer
        heads = sorted({_fold(t)[:3] for t in wanted if t})
        find = re.compile("|".join(map(re.escape, heads)))
        ftext = text.lower() if text.isascii() else _fold_same_length(text)
        seen: dict[str, bool] = {}
        last = -1
        for m in find.finditer(ftext):
            a = m.start()
            while a > 0 and (ftext[a - 1].isalnum() or ftext[a - 1] == "_"):
                a -= 1
            if a < last:
                continue
            word = _WORD.match(text, a)
            if word is None:
                continue
            last = word.end()
            w = word.group().lower()
            h = seen.get(w)
            if h is None:
                h = seen[w] = not wanted.isdisjoint(analyzer.tokens(w))
            if h:
                hits.append(word.span())
    start = 0
    if hits:
        best, j = (0, 0), 0
        for i, (a, _) in enumerate(hits):  # the window starting at a hit that holds the most hits
            while j < len(hits) and hits[j][1] <= a + chars:
                j += 1
            if j - i > best[0]:
                best = (j - i, a)
        start = best[1]
        start = max(0, start - chars // 6)
        while start > 0 and text[start - 1].isalnum() and text[start].isalnum():
            start -= 1
    end = min(len(text), start + chars)
    while end < len(text) and text[end - 1].isalnum() and text[end].isalnum() and end - start < chars + 40:
        end += 1
    out, pos = [], start
    for a, e in hits:
        if a < start or e > end:
            continue
        out.append(html.escape(text[pos:a]))
        out.append(f"<em>{html.escape(text[a:e])}</em>")
        pos = e
    out.append(html.escape(text[pos:end]))
    prefix = "… " if start > 0 else ""
    suffix = " …" if end < len(text) else ""
    return prefix + _SPACE.sub(" ", "".join(out)).strip() + suffix
