"""MinHash signatures of page texts, numpy-vectorised over a batch of pages (docs/dedup.md).

Tokens: the text is lowercased (``str.lower``); a token is a run of word characters (Unicode
categories L*, M*, N*), except that each character of a script written without spaces (Han,
Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) is a token of its own. Everything else
separates (``don't`` -> ``don``, ``t``). No stemming, no stopwords: a copy is judged on its words.

Shingles: every run of ``shingle`` consecutive tokens (default 5). A token's hash is a polynomial
over its code points (mod 2^64) put through the splitmix64 finalizer; a shingle's hash mixes its
tokens' hashes with one odd multiplier per position, again through the finalizer, keeping the top
32 bits. Nothing depends on Python's ``hash()``: the same text gives the same signature in any
process, on any machine.

Permutations: ``h_i(x) = (a_i * x + b_i) mod 2^32`` on the 32-bit shingle hash ``x`` (already
uniform: the finalizer's output), ``a_i`` odd, ``a_i`` and ``b_i`` drawn by splitmix64 from
``seed``; per permutation the minimum over the page's shingles is kept. The signature is
``perms`` uint32 values, little-endian, as ``bytes`` (4 * perms bytes). Measured on this machine
(docs/dedup.md): the same estimation error as 64-bit multiply-add-shift at 0.37 against
0.74 ns per shingle and permutation (datasketch's ``(a*x+b) mod (2^61-1)``: 3.3 ns); estimates
within 0.04 of datasketch's on average (tests/neardup/test_minhash.py).

Memory is bounded whatever a text's length: texts are tokenized in groups of about
``_GROUP_CHARS`` characters, a longer text in pieces whose shingles are exactly the text's.

Pages with fewer than ``min_shingles`` shingles get ``None``: too short to judge, marked, never
guessed (and never clustered).

The tokens' and shingles' hashes and the minima run in lib/neardup/native/minhash.c when it was built
(:data:`NATIVE`; the same bytes, issue 62: a seventh of the numpy path's CPU on real pages, from
several percent of a preprocess task to about one); ``DAILYSLICE_NATIVE_MINHASH=off`` or
``MinHasher(native=False)`` chooses the numpy path below.
"""

from __future__ import annotations

import importlib
import itertools
import os
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from types import ModuleType
from typing import Any

import numpy as np

from lib.html.walk import from_installed_project

SHINGLE = 5
PERMS = 128
SEED = 1
MIN_SHINGLES = 46  # = 50 words at shingle 5, the "pages with at least 50 words"
_GROUP_CHARS = 1 << 19  # characters tokenized at once
_CHUNK = 8192  # shingles per (perms x shingles) block: 4 MB of uint32 at 128 perms (measured best)

_M64 = (1 << 64) - 1
_U64 = np.uint64
# (first, last) code points of the scripts written without spaces: one token per character
_NOSPACE = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3005, 0x3006),  # 々〆
    (0x3040, 0x30FF),  # Hiragana, Katakana (with ー)
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B..
)
SEP, WORD, ALONE = 0, 1, 2  # character classes
_MAX_NATIVE_SHINGLE = 64  # the longest shingle minhash.c keeps (a ring of token hashes)

_native: ModuleType | None
try:
    _native = importlib.import_module("lib.neardup._minhash")
except ImportError:  # not built (no compiler at install time), or lib imported from a zip
    _native = from_installed_project("lib.neardup._minhash")
#: the compiled kernels (lib/neardup/native/minhash.c), None when not built or turned off
NATIVE = None if os.environ.get("DAILYSLICE_NATIVE_MINHASH", "").lower() in ("off", "0", "false") else _native


def _splitmix(state: int) -> tuple[int, int]:
    """One step of splitmix64 in Python integers: (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & _M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return state, z ^ (z >> 31)


def _draw(seed: int, n: int) -> np.ndarray:
    """``n`` uint64 values drawn from ``seed`` (stable across numpy versions, unlike its generators)."""
    out, state = [], seed & _M64
    for _ in range(n):
        state, z = _splitmix(state)
        out.append(z)
    return np.array(out, dtype=_U64)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, in place on a uint64 array (wrapping arithmetic)."""
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    return z


def _class_of(cp: int) -> int:
    if any(lo <= cp <= hi for lo, hi in _NOSPACE):
        return ALONE
    return WORD if unicodedata.category(chr(cp))[0] in "LMN" else SEP


@lru_cache(maxsize=1)
def _bmp_classes() -> np.ndarray:
    """Class of every code point below 0x10000 (built once: ~30 ms)."""
    return np.array([_class_of(cp) for cp in range(0x10000)], dtype=np.uint8)


def _classes(cps: np.ndarray) -> np.ndarray:
    table = _bmp_classes()
    high = cps >= 0x10000
    if not high.any():
        return table[cps]
    cls = table[np.where(high, 0, cps)]
    uniq, inv = np.unique(cps[high], return_inverse=True)  # rare: emoji, historic scripts, CJK ext B
    cls[high] = np.array([_class_of(int(c)) for c in uniq], dtype=np.uint8)[inv]
    return cls


def _cut(text: str, pos: int) -> int:
    """A position at or before ``pos`` (not before its half-group) where no token spans the cut:
    not between two word characters; ``pos`` itself when the stretch has none (a blob of letters
    longer than half a group is cut, as the index drops such tokens anyway)."""
    for p in range(pos, pos - _GROUP_CHARS // 2, -1):
        if _class_of(ord(text[p - 1])) != WORD or _class_of(ord(text[p])) != WORD:
            return p
    return pos


def _last_tokens(piece: str, k: int) -> list[str]:
    """The last ``k`` complete tokens of ``piece`` (fewer if it has fewer)."""
    n = 64
    while True:
        tail = piece[-n:]
        toks = tokens(tail)
        if n >= len(piece):
            return toks[-k:]
        if len(toks) > k:  # the first may be cut short: keep only tokens after it
            return toks[-k:]
        n *= 4


def tokens(text: str) -> list[str]:
    """The tokens of ``text``, one character at a time: the reference the vectorised path matches
    (tests) and the shingles the benchmark gives the peers."""
    out: list[str] = []
    cur: list[str] = []
    for ch in text.lower():
        c = _class_of(ord(ch))
        if c == WORD:
            cur.append(ch)
            continue
        if cur:
            out.append("".join(cur))
            cur = []
        if c == ALONE:
            out.append(ch)
    if cur:
        out.append("".join(cur))
    return out


@dataclass(frozen=True)
class MinHasher:
    """Signatures with fixed options; build once, call :meth:`signatures` on batches of texts."""

    shingle: int = SHINGLE
    perms: int = PERMS
    seed: int = SEED
    min_shingles: int = MIN_SHINGLES
    native: bool = field(default=True, compare=False)  # the compiled kernels when built (same bytes)
    _a: np.ndarray = field(init=False, repr=False, compare=False)
    _b: np.ndarray = field(init=False, repr=False, compare=False)
    _mult: np.ndarray = field(init=False, repr=False, compare=False)
    _kernel: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.shingle < 1 or self.perms < 1 or self.min_shingles < 1:
            raise ValueError(f"shingle, perms and min_shingles must be >= 1: {self}")
        drawn = (_draw(self.seed, 2 * self.perms) >> _U64(32)).astype(np.uint32)
        object.__setattr__(self, "_a", drawn[: self.perms] | np.uint32(1))
        object.__setattr__(self, "_b", drawn[self.perms :])
        # one odd multiplier per position of a shingle
        object.__setattr__(self, "_mult", _draw(self.seed ^ 0x5348494E474C45, self.shingle) | _U64(1))
        use = self.native and NATIVE is not None and self.shingle <= _MAX_NATIVE_SHINGLE
        object.__setattr__(self, "_kernel", NATIVE if use else None)

    def shingle_hashes(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(uint32 hashes of every shingle of every text, offsets): text ``i``'s shingles
        are ``hashes[offsets[i]:offsets[i+1]]``, in text order (repeats kept)."""
        owner: list[int] = []  # the text of each piece
        parts: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        group: list[str] = []
        size = 0
        pieces = (p for i, t in enumerate(texts) for p in self._pieces(t, owner, i))
        for t in itertools.chain(pieces, [None]):
            # groups of about _GROUP_CHARS: the per-character arrays stay in cache (2-3x faster)
            if t is None or (group and size + len(t) > _GROUP_CHARS):
                if group:
                    sh, off = self._group_hashes(group)
                    parts.append(sh)
                    counts.append(np.diff(off))
                group, size = [], 0
            if t is not None:
                group.append(t)
                size += len(t)
        per_text = np.zeros(len(texts), np.int64)
        if counts:
            np.add.at(per_text, np.array(owner), np.concatenate(counts))
        return np.concatenate(parts or [np.empty(0, np.uint32)]), np.concatenate(([0], np.cumsum(per_text)))

    def _pieces(self, text: str, owner: list[int], i: int) -> Iterator[str]:
        """``text`` in pieces of about _GROUP_CHARS (memory stays bounded whatever a text's length),
        cut where no token spans the cut; each piece after the first starts with the previous
        pieces' last ``shingle - 1`` tokens, so the pieces' shingles are exactly the text's."""
        start = 0
        carry: list[str] = []
        while True:
            end = len(text) if len(text) - start <= _GROUP_CHARS else _cut(text, start + _GROUP_CHARS)
            owner.append(i)
            piece = text[start:end]
            yield " ".join([*carry, piece]) if carry else piece
            if end >= len(text):
                return
            if self.shingle > 1:
                carry = (carry + _last_tokens(piece, self.shingle - 1))[-(self.shingle - 1) :]
            start = end

    def _group_hashes(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        n = len(texts)
        lows = [t.lower() for t in texts]  # lowercasing can change a length (İ -> i̇): after it
        if self._kernel is not None:  # one pass in C over each text's characters
            out = np.empty(sum(map(len, lows)), np.uint32)  # a token has a character at least
            counts = np.zeros(n, np.int64)
            m = self._kernel.shingles(lows, _bmp_classes(), _class_of, self._mult, out, counts)
            return out[:m], np.concatenate(([0], np.cumsum(counts)))
        # one separator between texts: no token spans two of them
        joined = " ".join(lows)
        try:
            raw = joined.encode("utf-32-le")
        except UnicodeEncodeError:  # a lone surrogate (the strict codec is the fast one)
            raw = joined.encode("utf-32-le", "surrogatepass")
        cps = np.frombuffer(raw, dtype=np.uint32)
        starts = np.cumsum([0] + [len(t) + 1 for t in lows[:-1]])  # each text's first character
        cls = _classes(cps)
        word = cls != SEP
        prev = np.concatenate(([SEP], cls[:-1]))
        start = word & ((prev == SEP) | (cls == ALONE) | (prev == ALONE))
        idx = np.flatnonzero(word)
        if idx.size == 0:
            return np.empty(0, np.uint32), np.zeros(n + 1, np.int64)
        tok_start = np.flatnonzero(start[idx])  # token starts, as positions in idx
        lens = np.diff(np.append(tok_start, idx.size))
        pos = np.arange(idx.size) - np.repeat(tok_start, lens)
        powers = np.ones(int(lens.max()), _U64)
        powers[1:] = np.cumprod(np.full(powers.size - 1, _U64(0x100000001B3), dtype=_U64))
        th = _mix(np.add.reduceat(cps[idx].astype(_U64) * powers[pos], tok_start))
        tok_text = np.searchsorted(starts, idx[tok_start], side="right") - 1  # the text of each token
        tok_off = np.searchsorted(tok_text, np.arange(n + 1))
        k = self.shingle
        m = th.size - k + 1
        if m <= 0:
            return np.empty(0, np.uint32), np.zeros(n + 1, np.int64)
        mult = self._mult
        sh = th[:m] * mult[0]
        for j in range(1, k):
            sh += th[j : j + m] * mult[j]
        keep = tok_text[:m] == tok_text[k - 1 :]  # shingles within one text
        sh = (_mix(sh[keep]) >> _U64(32)).astype(np.uint32)
        counts = np.maximum(np.diff(tok_off) - k + 1, 0)
        return sh, np.concatenate(([0], np.cumsum(counts)))

    def signatures(self, texts: Sequence[str]) -> list[bytes | None]:
        """One signature per text (``None``: fewer than ``min_shingles`` shingles)."""
        sh, off = self.shingle_hashes(texts)
        return self.signatures_of_hashes(sh, off)

    def signature(self, text: str) -> bytes | None:
        """The signature of one text (batches are faster: :meth:`signatures`)."""
        return self.signatures([text])[0]

    def signatures_of_hashes(self, sh: np.ndarray, off: np.ndarray) -> list[bytes | None]:
        """Signatures from :meth:`shingle_hashes`' output."""
        counts = np.diff(off)
        judged = np.flatnonzero(counts >= self.min_shingles)
        out: list[bytes | None] = [None] * counts.size
        if judged.size == 0:
            return out
        # only the judged texts' shingles: they are then contiguous and none is empty
        sh = sh[np.repeat(counts >= self.min_shingles, counts)]
        sigs = self._minima(sh, np.concatenate(([0], np.cumsum(counts[judged]))))
        for i, row in zip(judged.tolist(), sigs.astype("<u4", copy=False)):
            out[i] = row.tobytes()
        return out

    def _minima(self, sh: np.ndarray, off: np.ndarray) -> np.ndarray:
        """(texts, perms) minima of ``a*x+b`` (mod 2^32) over each text's shingles (none empty),
        in (perms x ~_CHUNK shingles) blocks: several small texts per block, a large one in parts.
        Permutations are rows so that the minima run along contiguous memory (4x faster)."""
        n = off.size - 1
        out = np.empty((n, self.perms), np.uint32)
        if self._kernel is not None:  # shingles outer, permutations inner: the minima stay in cache
            self._kernel.minima(
                np.ascontiguousarray(sh, np.uint32), np.ascontiguousarray(off, np.int64), self._a, self._b, out
            )
            return out
        a, b = self._a[:, None], self._b[:, None]
        block = np.empty((self.perms, _CHUNK), np.uint32)
        i = 0
        while i < n:
            lo, hi = int(off[i]), int(off[i + 1])
            if hi - lo >= _CHUNK:  # one large text, block by block
                acc = np.full(self.perms, 0xFFFFFFFF, np.uint32)
                for s in range(lo, hi, _CHUNK):
                    blk = block[:, : min(hi - s, _CHUNK)]
                    np.multiply(a, sh[s : s + blk.shape[1]], out=blk)
                    np.add(blk, b, out=blk)
                    np.minimum(acc, blk.min(axis=1), out=acc)
                out[i] = acc
                i += 1
                continue
            j = i + 1  # texts i..j-1 together, their shingles within one block
            while j < n and off[j + 1] - lo <= _CHUNK:
                j += 1
            blk = block[:, : int(off[j]) - lo]
            np.multiply(a, sh[lo : int(off[j])], out=blk)
            np.add(blk, b, out=blk)
            out[i:j] = np.minimum.reduceat(blk, off[i:j] - lo, axis=1).T
            i = j
        return out


def estimate(sig1: bytes, sig2: bytes) -> float:
    """Estimated Jaccard of two signatures: the share of equal slots."""
    if len(sig1) != len(sig2):
        raise ValueError(f"signatures of different lengths: {len(sig1)} and {len(sig2)} bytes")
    x = np.frombuffer(sig1, dtype="<u4")
    return float(np.count_nonzero(x == np.frombuffer(sig2, dtype="<u4"))) / x.size
