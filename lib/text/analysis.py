"""Text analysis for the index: one analyzer per language (ISO 639-3, as preprocess writes it).

Every analyzer (scheme ``dailyslice-v1``) does the same tokenization:

1. the text is lowercased and split at Unicode whitespace by Arrow (C++, the whole batch of
   pages at once); each distinct piece is then NFKC-normalized and casefolded (full Unicode
   lowercasing: ``ß`` -> ``ss``) once per batch, not once per occurrence;
2. tokens are runs of letters, marks and digits (``\\p{L}\\p{M}\\p{N}``); an apostrophe between
   two such runs stays inside the token (``don't``), anything else separates;
3. scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) become
   overlapping bigrams of grapheme clusters (a lone character stays a unigram), whatever the
   page's language: language identification is too often wrong to rely on for this;
4. tokens longer than :data:`MAX_TOKEN_CHARS` characters are dropped (base64, hashes, junk).

Then, per language where a well-kept resource covers it: elided articles are stripped
(French, Italian, Catalan, Irish: ``l'homme`` -> ``homme``), stopwords are removed (lists of
the ``stopwords`` package, casefolded, or a version of the language's list in
ROOT/shared/auxiliary/models: :mod:`lib.text.stoplists`) and Snowball stemming is applied
(PyStemmer). Bigram tokens are neither stopped nor stemmed.

The analyzer's :attr:`Analyzer.name` (``dailyslice-v1:eng:lower+stop+snowball-english``; with a
shared list ``...:lower+stop@VERSION+snowball-english``) is written into each CIFF header's
description; :func:`analyzer_from_description` rebuilds the same analyzer for queries (given the
day's shared lists) and refuses a name this code would not reproduce.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections import Counter
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Mapping, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex
import Stemmer
import stopwords as sw_pkg

from lib.store.layout import UNKNOWN_LANG
from lib.text.stoplists import StopList

SCHEME = "dailyslice-v1"
MAX_TOKEN_CHARS = 64
_CACHE_LIMIT = 200_000  # piece -> terms entries per analyzer: ~40 MB, bounded for many languages
TABLE_PIECES = 2_000_000  # pieces in an analyzer's batch lookup table (~150 MB) before it starts anew

# U+3005/3006 (々〆) and U+30FC (ー) are script "Common" but live inside Japanese words
_NOSPACE = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\u3005\u3006\u30fc"
_WORDCH = rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{_NOSPACE}]]"
# group 1: a run of a no-space script (with its combining marks); group 2: a word
_TOKEN = regex.compile(rf"(?V1)([{_NOSPACE}][{_NOSPACE}\p{{M}}]*)|({_WORDCH}+(?:'{_WORDCH}+)*)")
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}\p{N}]+)*")  # no no-space script here
_FAST_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")  # no marks, no no-space script here
_HAS_MARK = regex.compile(r"\p{M}")
_HAS_NOSPACE = regex.compile(rf"[{_NOSPACE}]")
_GRAPHEME = regex.compile(r"\X")

#: ISO 639-3 -> Snowball algorithm of PyStemmer (only languages it ships).
SNOWBALL: dict[str, str] = {
    "ara": "arabic",
    "hye": "armenian",
    "eus": "basque",
    "cat": "catalan",
    "ces": "czech",
    "dan": "danish",
    "nld": "dutch",
    "eng": "english",
    "epo": "esperanto",
    "est": "estonian",
    "fin": "finnish",
    "fra": "french",
    "deu": "german",
    "ell": "greek",
    "hin": "hindi",
    "hun": "hungarian",
    "ind": "indonesian",
    "gle": "irish",
    "ita": "italian",
    "lit": "lithuanian",
    "nep": "nepali",
    "npi": "nepali",
    "nor": "norwegian",
    "nob": "norwegian",
    "nno": "norwegian",
    "fas": "persian",
    "pes": "persian",
    "pol": "polish",
    "por": "portuguese",
    "ron": "romanian",
    "rus": "russian",
    "srp": "serbian",
    "sot": "sesotho",
    "spa": "spanish",
    "swe": "swedish",
    "tam": "tamil",
    "tur": "turkish",
    "yid": "yiddish",
}

#: ISO 639-3 -> language key of the ``stopwords`` package (ISO 639-1 where it has one).
STOPLIST: dict[str, str] = {
    "ara": "ar",
    "hye": "hy",
    "eus": "eu",
    "bul": "bg",
    "cat": "ca",
    "ces": "cs",
    "dan": "da",
    "nld": "nl",
    "eng": "en",
    "fin": "fi",
    "fra": "fr",
    "glg": "gl",
    "deu": "de",
    "ell": "el",
    "hin": "hi",
    "hun": "hu",
    "ind": "id",
    "gle": "ga",
    "ita": "it",
    "kur": "ku",
    "lav": "lv",
    "lat": "la",
    "lit": "lt",
    "mar": "mr",
    "nor": "no",
    "nob": "no",
    "nno": "no",
    "fas": "fa",
    "pes": "fa",
    "pol": "pl",
    "por": "pt",
    "ron": "ro",
    "rus": "ru",
    "slk": "sk",
    "slv": "sl",
    "spa": "es",
    "swe": "sv",
    "tur": "tr",
    "ukr": "uk",
    "urd": "ur",
}

#: languages whose elided articles/prepositions (``l'``, ``dell'``, ``qu'``) are stripped
ELISION = frozenset({"fra", "ita", "cat", "gle"})


def _nfkc_casefold(text: str) -> str:
    # NFKC first so compatibility forms (ﬁ, full-width letters) fold like their plain forms
    return unicodedata.normalize("NFKC", text).casefold()


def _bigrams(run: str) -> list[str]:
    g = _GRAPHEME.findall(run)
    if len(g) < 2:
        return g
    return [g[i] + g[i + 1] for i in range(len(g) - 1)]


def _piece_tokens(piece: str) -> list[str]:
    """Scheme-level tokens of one whitespace-free piece (steps 1-3 of the module doc)."""
    if piece.isascii():
        return [piece] if piece.isalnum() else _FAST_WORD.findall(piece.lower())
    text = _nfkc_casefold(piece).replace("\u2019", "'")
    # Most pieces need neither marks nor bigrams: look at the distinct characters above
    # U+0300 once and take the stdlib regex (3x faster) when none of them needs more.
    high = "".join(c for c in set(text) if c >= "\u0300")
    if high and _HAS_NOSPACE.search(high):
        out: list[str] = []
        for run, word in _TOKEN.findall(text):
            if run:
                out.extend(_bigrams(run))
            else:
                out.append(word)
        return out
    if high and _HAS_MARK.search(high):
        return _WORD.findall(text)
    return _FAST_WORD.findall(text)


def pieces(texts: Any) -> Any:
    """Arrow ``list<string>``: each text lowercased and split at whitespace (step 1)."""
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = pa.array(texts, pa.string())
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return pc.utf8_split_whitespace(pc.utf8_lower(texts))


def _ascii_pieces(texts: Any) -> Any:
    """Like :func:`pieces`, split at ASCII whitespace only (faster): a piece may then hold
    other Unicode whitespace (no-break, ideographic spaces), which NFKC and the token pattern
    treat as separators, so the pieces' tokens are the same; and NFKC never composes across
    whitespace (a starter)."""
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        texts = pa.array(texts, pa.string())
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return pc.ascii_split_whitespace(pc.utf8_lower(texts))


def raw_tokens(text: str) -> list[str]:
    """Scheme-level tokens of ``text`` (steps 1-3 of the module doc), before per-language
    filters, in text order."""
    return [t for p in pieces([text])[0].as_py() or () for t in _piece_tokens(p)]


def _stopwords(lang: str) -> frozenset[str]:
    key = STOPLIST.get(lang)
    if key is None:
        return frozenset()
    return frozenset(_nfkc_casefold(w).replace("\u2019", "'") for w in sw_pkg.get_stopwords(key) if w.strip())


@lru_cache(maxsize=1)
def data_record() -> dict[str, str]:
    """Which analyzers' data the index and the service use, for a day's ``_stats.json``: the
    ``stopwords`` package's lists (version, and the sha256 over its files by path) and the
    Snowball stemmers' package; both packaged (no shared copy under ROOT/shared/auxiliary yet)."""
    base = os.path.join(os.path.dirname(sw_pkg.__file__), "languages")
    h = hashlib.sha256()
    for dirpath, dirs, names in sorted(os.walk(base)):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(dirpath, n)
            h.update(os.path.relpath(path, base).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    versions = {}
    for dist in ("stopwords", "PyStemmer"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = "unknown"
    return {
        "version": f"stopwords-{versions['stopwords']}+pystemmer-{versions['PyStemmer']}",
        "sha256": h.hexdigest(),
        "source": "packaged",
        "file": base,
    }


class Analyzer:
    """Turns text into index terms for one language. Build with :func:`get_analyzer`."""

    def __init__(self, lang: str, stoplist: StopList | None = None):
        self.lang = lang
        self.stoplist = stoplist  # a shared list (its version in the name), else the packaged one
        self.stopwords = stoplist.words if stoplist is not None else _stopwords(lang)
        self.algorithm = SNOWBALL.get(lang)
        self.elision = lang in ELISION
        steps = ["lower"]
        if self.elision:
            steps.append("elision")
        if stoplist is not None:  # named even when empty: the version says which list built a CIFF
            steps.append(f"stop@{stoplist.version}")
        elif self.stopwords:
            steps.append("stop")
        if self.algorithm:
            steps.append(f"snowball-{self.algorithm}")
        self.name = f"{SCHEME}:{lang}:{'+'.join(steps)}"
        self._stem = self._stem_words = None
        if self.algorithm:
            # no PyStemmer cache (maxCacheSize 0): ours caches whole pieces, and its small LRU
            # thrashes on web vocabularies, making stemming 4x slower
            stemmer = Stemmer.Stemmer(self.algorithm, 0)
            self._stem, self._stem_words = stemmer.stemWord, stemmer.stemWords
        self._cache: dict[str, tuple[str, ...]] = {}
        self._table: _PieceTable | None = None

    def __repr__(self) -> str:
        return f"Analyzer({self.name!r})"

    def term(self, token: str) -> str | None:
        """Index term of one raw token, or ``None`` when the token is not indexed."""
        if len(token) > MAX_TOKEN_CHARS:
            return None
        if not token.isascii() and _HAS_NOSPACE.search(token):  # a bigram: no stopping, no stemming
            return token
        if self.elision and "'" in token:
            head, _, tail = token.partition("'")
            if (
                len(head) <= 2
                or head.endswith("qu")
                or head in ("dell", "dall", "nell", "sull", "all", "coll", "pell", "quell", "bell", "dev")
            ):
                token = tail
        if token in self.stopwords:
            return None
        if self._stem is not None:
            token = self._stem(token)
        return token or None

    def _uncached_expand(self, piece: str) -> tuple[str, ...]:
        return tuple(t for t in map(self.term, _piece_tokens(piece)) if t is not None)

    def expand_many(self, pieces_: list[str]) -> list[tuple[str, ...]]:
        """``_uncached_expand`` of each piece. Most new pieces are plain ASCII words (one token,
        the piece itself: no apostrophe, so no elision): those are stopped here and stemmed a
        list at a time by PyStemmer's C loop; the rest go through :meth:`term` one by one."""
        out: list[tuple[str, ...]] = [()] * len(pieces_)
        plain_at: list[int] = []
        plain: list[str] = []
        stop = self.stopwords
        for i, p in enumerate(pieces_):
            if p.isascii() and p.isalnum() and len(p) <= MAX_TOKEN_CHARS:
                if p not in stop:
                    plain_at.append(i)
                    plain.append(p)
            else:
                out[i] = self._uncached_expand(p)
        stems = self._stem_words(plain) if self._stem_words is not None else plain
        for i, t in zip(plain_at, stems):
            if t:  # a stem may be empty: no term, as in term()
                out[i] = (t,)
        return out

    def _expand(self, piece: str) -> tuple[str, ...]:
        """Index terms of one whitespace-free piece (cached: pieces repeat a lot)."""
        got = self._cache.get(piece)
        if got is None:
            got = self._uncached_expand(piece)
            if len(piece) <= MAX_TOKEN_CHARS:  # long pieces (unspaced scripts) rarely repeat
                if len(self._cache) >= _CACHE_LIMIT:
                    self._cache.clear()
                self._cache[piece] = got
        return got

    def tokens(self, text: str) -> list[str]:
        """Index terms of ``text`` in text order (queries use this too)."""
        return [t for p in pieces([text])[0].as_py() or () for t in self._expand(p)]

    def term_counts(self, text: str) -> dict[str, int]:
        """``{term: tf}`` of ``text``; ``sum(values)`` is the document length."""
        return dict(Counter(self.tokens(text)))

    def batch_tokens(self, texts: Any) -> BatchTokens:
        """Index terms of many documents at once, one entry per occurrence (the indexer's hot
        path): splitting is done by Arrow over the batch, the batch's
        distinct pieces are looked up in this analyzer's piece table by Arrow, only pieces
        never seen before are analyzed in Python, the rest is numpy.

        Term ids index ``BatchTokens.vocab``, the analyzer's vocabulary: the same list object
        (ids stable) from batch to batch until the table is reset for size."""
        lists = _ascii_pieces(texts)
        n = len(lists)
        lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        flat = lists.flatten()
        table = self._table
        if table is None or table.full():
            table = self._table = _PieceTable(self)
        if len(flat) == 0:
            empty = np.zeros(0, np.int32)
            return BatchTokens(empty, empty, table.terms, np.zeros(n, np.int64))
        enc = flat.dictionary_encode()
        slot = table.lookup(enc.dictionary)  # distinct piece of the batch -> row of the table
        per = table.count[slot]
        start = table.start[slot]
        ids = table.flat_ids()
        # per distinct piece: its one term id, -1 (no term: a stopword) or -2 (several terms), so
        # that one gather gives every occurrence's term
        single = np.full(len(slot), -1, np.int32)
        one = per == 1
        single[one] = ids[start[one]]
        many = per > 1
        single[many] = -2
        tok = enc.indices.to_numpy(zero_copy_only=False)  # int32: fewer bytes to move
        occ = single[tok]
        occ_doc = np.repeat(np.arange(n, dtype=np.int32), lengths)
        keep = occ >= 0
        term, doc = occ[keep], occ_doc[keep]
        if many.any():  # few occurrences (hyphenated words, unspaced scripts): expanded apart
            multi = np.flatnonzero(occ == -2)
            r = per[tok[multi]]
            within = np.arange(int(r.sum())) - np.repeat(np.cumsum(r) - r, r)
            term = np.concatenate([term, ids[np.repeat(start[tok[multi]], r) + within].astype(np.int32)])
            doc = np.concatenate([doc, np.repeat(occ_doc[multi], r)])
        return BatchTokens(doc, term, table.terms, np.bincount(doc, minlength=n).astype(np.int64))

    def analyze_batch(self, texts: Any) -> BatchTerms:
        """Term frequencies of many documents at once: the same as :meth:`term_counts` per
        text, from :meth:`batch_tokens`, counted by one numpy sort."""
        bt = self.batch_tokens(texts)
        n = len(bt.doclength)
        # one sort by (term, doc) gives the tfs and the order the inverted lists need
        key = np.sort(bt.term.astype(np.int64) * max(n, 1) + bt.doc)
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        tf = np.diff(np.r_[first, len(key)]).astype(np.int64)
        terms, docs = np.divmod(key[first], max(n, 1))
        return BatchTerms(docs, terms, tf, bt.vocab, bt.doclength)


class _PieceTable:
    """An analyzer's memory of pieces: piece -> its term ids, looked up a batch at a time.

    ``row`` maps a piece to its row; ``start``/``count`` locate each row's term ids in
    ``flat``; ``terms`` is the vocabulary (id -> term). A batch's distinct pieces (from
    Arrow's dictionary encoding: tens of thousands for millions of occurrences) are looked
    up in the dict, which costs less than hashing the whole table into an Arrow value set
    every batch. A table that grew past :data:`TABLE_PIECES` is replaced by a new one (new
    ids), so memory stays bounded on any vocabulary."""

    def __init__(self, analyzer: "Analyzer"):
        self.analyzer = analyzer
        self.row: dict[str, int] = {}
        self.start = np.zeros(0, np.int64)
        self.count = np.zeros(0, np.int64)
        self._flat: list[Any] = []
        self._flat_arr = np.zeros(0, np.int64)
        self._flat_len = 0
        self.terms: list[str] = []
        self.term_id: dict[str, int] = {}

    def full(self) -> bool:
        return len(self.row) >= TABLE_PIECES

    def flat_ids(self) -> Any:
        if self._flat:
            self._flat_arr = np.concatenate([self._flat_arr, *self._flat])
            self._flat = []
        return self._flat_arr

    def lookup(self, distinct: Any) -> Any:
        """Row of each of the batch's distinct pieces, adding the new ones."""
        pieces_ = distinct.to_pylist()
        get = self.row.get
        slot = np.fromiter((get(p, -1) for p in pieces_), np.int64, len(pieces_))
        missing = np.flatnonzero(slot < 0)
        if not len(missing):
            return slot
        base = len(self.row)
        slot[missing] = np.arange(base, base + len(missing))
        term_id, terms, row = self.term_id, self.terms, self.row
        new = [pieces_[k] for k in missing.tolist()]
        counts = np.empty(len(missing), np.int64)
        ids: list[int] = []
        for i, (piece, got) in enumerate(zip(new, self.analyzer.expand_many(new))):
            row[piece] = base + i
            counts[i] = len(got)
            for t in got:
                j = term_id.get(t)
                if j is None:
                    j = term_id[t] = len(terms)
                    terms.append(t)
                ids.append(j)
        starts = self._flat_len + np.r_[0, np.cumsum(counts)[:-1]]
        self._flat.append(np.asarray(ids, np.int64))
        self._flat_len += len(ids)
        self.start = np.concatenate([self.start, starts])
        self.count = np.concatenate([self.count, counts])
        return slot


class BatchTokens(NamedTuple):
    """One entry per term occurrence of a batch (in no particular order): ``doc`` (row of the
    batch) and ``term`` (int32 ids into ``vocab``); ``doclength[doc]`` the document's number
    of terms."""

    doc: Any
    term: Any
    vocab: list[str]
    doclength: Any


class BatchTerms(NamedTuple):
    """(doc, term, tf) triples of a batch, sorted by (term id, doc); ``vocab[term]`` is the
    term; ``doclength[doc]`` the document's length (sum of its tfs)."""

    doc: Any
    term: Any
    tf: Any
    vocab: list[str]
    doclength: Any


def get_analyzer(lang: str | None, stoplists: Mapping[str, StopList] | None = None) -> Analyzer:
    """The analyzer of an ISO 639-3 language code (``'und'``, empty or malformed codes get the
    language-independent one: tokenization and lowercasing only), with the code's list in
    ``stoplists`` (shared lists by language, :mod:`lib.text.stoplists`) when it has one, else
    the packaged one. One instance per code and list."""
    code = (lang or UNKNOWN_LANG).strip().lower()
    if not regex.fullmatch(r"[a-z]{2,8}", code):
        code = UNKNOWN_LANG
    return _analyzer(code, stoplists.get(code) if stoplists else None)


@lru_cache(maxsize=None)
def _analyzer(code: str, stoplist: StopList | None) -> Analyzer:
    return Analyzer(code, stoplist)


_NAME = regex.compile(
    rf"{regex.escape(SCHEME.split('-v')[0])}-v\d+:([a-z]{{2,8}}):([a-z0-9+\-_]+(?:@[A-Za-z0-9_.\-]+)?[a-z0-9+\-_]*)"
)


def analyzer_from_description(desc: str, stoplists: Mapping[str, StopList] | None = None) -> Analyzer:
    """The analyzer named in a CIFF header description (as written by jobs/index.py);
    ``stoplists``: the shared lists of the day the CIFF belongs to (its ``_stats.json``).

    Raises ``ValueError`` when the description names no analyzer, or one that this version
    of the code, with these lists, would not reproduce exactly (a different scheme version or
    steps, a shared list's version that is not given)."""
    m = _NAME.search(desc or "")
    if not m:
        raise ValueError(f"no {SCHEME.split('-v')[0]} analyzer name in CIFF description {desc!r}")
    a = get_analyzer(m.group(1), stoplists)
    if a.name != m.group(0):
        given = (stoplists or {}).get(a.lang)
        why = f" (stop-word list given: {given.version})" if given else ""
        if "@" in m.group(2) and not given:
            why = f" (no shared stop-word list of {a.lang} given: the day's _stats.json built_with names it)"
        raise ValueError(f"index was built with analyzer {m.group(0)!r}; this code provides {a.name!r}{why}")
    return a
