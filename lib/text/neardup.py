"""Near-duplicate clusters of one day from MinHash signatures (lib/text/minhash.py; docs/dedup.md).

The three steps are plain functions a Spark stage partitioned by band calls in turn:

1. :func:`band_keys`: each signature's ``bands`` keys (``perms = bands * rows``); pages sharing
   one key are candidates (the shuffle key is ``(band, key)``);
2. :func:`verified_pairs`: within one bucket (the pages of one key), candidate pairs whose
   estimated Jaccard (share of equal slots) is at least ``threshold``; a bucket larger than
   ``max_bucket`` is not compared all-against-all but against leaders (each member against the
   leaders so far, joining the first it matches or becoming one), which bounds the work at
   members x leaders;
3. :func:`clusters`: union-find over the verified edges only; then, per connected component, the
   representative is the member that comes first by (earliest capture, longest text, smallest
   record id), and only members verified against it (estimate >= threshold) join its cluster;
   the rest form clusters among themselves by the same rule, until none is left. So every member
   is within ``threshold`` of its representative, and two members of one cluster are within
   ``2 * threshold - 1`` of each other (Jaccard distance obeys the triangle inequality): a chain
   of weak links never merges pages that do not resemble the representative.

A page without a signature (too short to judge) or without any verified pair points to itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import NamedTuple

import numpy as np

from lib.text.minhash import estimate

THRESHOLD = 0.7
BANDS, ROWS = 16, 8  # perms = 128
MAX_BUCKET = 64

_MUL = np.uint64(0x9E3779B97F4A7C15)


class Page(NamedTuple):
    """What choosing a representative needs to know of a page."""

    record_id: str
    capture: str  # warc_date (ISO 8601 strings sort as times)
    text_len: int
    signature: bytes | None


def band_keys(sig: bytes, bands: int = BANDS, rows: int = ROWS) -> list[int]:
    """The ``bands`` 64-bit keys of a signature (band ``i`` from slots ``i*rows .. i*rows+rows-1``);
    the band index is mixed in, so keys of different bands never collide by construction."""
    x = np.frombuffer(sig, dtype="<u4")
    if x.size != bands * rows:
        raise ValueError(f"a signature of {x.size} slots does not split into {bands} bands of {rows} rows")
    h = np.arange(bands, dtype=np.uint64) * _MUL
    with np.errstate(over="ignore"):
        for r in range(rows):
            h = (h ^ x[r::rows].astype(np.uint64)) * _MUL
            h ^= h >> np.uint64(29)
    return h.tolist()


def candidate_buckets(sigs: Mapping[Hashable, bytes | None], bands: int = BANDS, rows: int = ROWS) -> list[list]:
    """Buckets (of two or more ids) sharing a band key; the in-memory equivalent of the shuffle."""
    buckets: dict[tuple[int, int], list] = {}
    for rid, sig in sigs.items():
        if sig is None:
            continue
        for band, key in enumerate(band_keys(sig, bands, rows)):
            buckets.setdefault((band, key), []).append(rid)
    return [ids for ids in buckets.values() if len(ids) > 1]


def verified_pairs(
    members: Iterable[tuple[Hashable, bytes]], threshold: float = THRESHOLD, max_bucket: int = MAX_BUCKET
) -> list[tuple[Hashable, Hashable]]:
    """Pairs (a, b), a < b, of one bucket whose estimated Jaccard is at least ``threshold``."""
    items = sorted(members, key=lambda m: m[0])
    if len(items) <= max_bucket:
        mat = np.frombuffer(b"".join(s for _, s in items), dtype="<u4").reshape(len(items), -1)
        out = []
        for i in range(len(items) - 1):
            share = (mat[i + 1 :] == mat[i]).mean(axis=1)
            out.extend((items[i][0], items[i + 1 + j][0]) for j in np.flatnonzero(share >= threshold).tolist())
        return out
    leaders: list[tuple[Hashable, bytes]] = []
    out = []
    for rid, sig in items:
        for lid, lsig in leaders:
            if estimate(sig, lsig) >= threshold:
                out.append((lid, rid))
                break
        else:
            leaders.append((rid, sig))
    return out


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, x):
        p = self.parent.setdefault(x, x)
        while p != x:
            self.parent[x] = self.parent.setdefault(p, p)
            x, p = p, self.parent[x]
        return x

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def rank(page: Page) -> tuple:
    """The representative rule: earliest capture, then longest text, then smallest record id."""
    return (page.capture, -page.text_len, page.record_id)


def clusters(pages: Iterable[Page], edges: Iterable[tuple[str, str]], threshold: float = THRESHOLD) -> dict[str, str]:
    """record_id -> its cluster's representative record_id, for every page (a lone page: itself)."""
    by_id = {p.record_id: p for p in pages}
    uf = _UnionFind()
    for a, b in edges:
        uf.union(a, b)
    components: dict[str, list[Page]] = {}
    for rid in list(uf.parent):
        components.setdefault(uf.find(rid), []).append(by_id[rid])
    out = {rid: rid for rid in by_id}
    for members in components.values():
        out.update(split_component(members, threshold))
    return out


def split_component(members: list[Page], threshold: float = THRESHOLD) -> dict[str, str]:
    """Clusters of one connected component: the first by :func:`rank` takes every member verified
    against it; the rest again, until none is left."""
    left = sorted(members, key=rank)
    out = {}
    while left:
        rep = left[0]
        out[rep.record_id] = rep.record_id
        rest = []
        for p in left[1:]:
            if estimate(p.signature, rep.signature) >= threshold:
                out[p.record_id] = rep.record_id
            else:
                rest.append(p)
        left = rest
    return out


def day_clusters(
    pages: Iterable[Page], bands: int = BANDS, rows: int = ROWS, threshold: float = THRESHOLD
) -> dict[str, str]:
    """All three steps in memory (tests, benchmarks, small days): record_id -> representative."""
    pages = list(pages)
    sigs = {p.record_id: p.signature for p in pages}
    edges: set[tuple[str, str]] = set()
    for ids in candidate_buckets(sigs, bands, rows):
        edges.update(verified_pairs(((i, sigs[i]) for i in ids), threshold))
    return clusters(pages, edges, threshold)
