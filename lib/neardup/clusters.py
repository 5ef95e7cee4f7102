"""Near-duplicate clusters of one day from MinHash signatures (lib/neardup/minhash.py; docs/dedup.md).

The three steps are plain functions a Spark stage partitioned by band calls in turn:

1. :func:`band_keys`: each signature's ``bands`` keys (``perms = bands * rows``); pages sharing
   one key are candidates (the shuffle key is ``(band, key)``);
2. :func:`verified_pairs`: within one bucket (the pages of one key), candidate pairs whose
   estimated Jaccard (share of equal slots) is at least ``threshold``; a bucket larger than
   ``max_bucket`` is not compared all-against-all but against leaders (each member against the
   leaders so far, joining the first it matches or becoming one), which bounds the work at
   members x leaders;
3. :func:`clusters` (:func:`components`, then :func:`split_component` per component): union-find
   over the verified edges only; then, per connected component, a
   centre (the member with the most verified edges) takes the members verified against it
   (estimate >= threshold), and the rest are clustered again the same way, until none is left.
   Every member is within ``threshold`` of its cluster's centre, so two members of one cluster
   are at Jaccard >= ``2 * threshold - 1`` (Jaccard distance obeys the triangle inequality): a
   chain of weak links never merges pages that do not resemble one page of the cluster. The
   cluster's representative (what ``dup_cluster`` names) is its member first by :func:`rank`:
   earliest capture, then longest text, then smallest record id.

A page without a signature (too short to judge) or without any verified pair points to itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from lib.neardup.minhash import estimate

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
    return band_matrix(np.frombuffer(sig, dtype="<u4")[None, :], bands, rows)[0].tolist()


def band_matrix(sigs: np.ndarray, bands: int = BANDS, rows: int = ROWS) -> np.ndarray:
    """(pages, bands) uint64 keys of a (pages, perms) uint32 matrix of signatures, at once."""
    if sigs.shape[1] != bands * rows:
        raise ValueError(f"a signature of {sigs.shape[1]} slots does not split into {bands} bands of {rows} rows")
    x = sigs.reshape(sigs.shape[0], bands, rows).astype(np.uint64)
    h = np.broadcast_to(np.arange(bands, dtype=np.uint64) * _MUL, x.shape[:2]).copy()
    for r in range(rows):
        h ^= x[:, :, r]
        h *= _MUL
        h ^= h >> np.uint64(29)
    return h


def candidate_buckets(sigs: Mapping[str, bytes | None], bands: int = BANDS, rows: int = ROWS) -> list[list[str]]:
    """Buckets (of two or more ids) sharing a band key; the in-memory equivalent of the shuffle."""
    judged = {rid: sig for rid, sig in sigs.items() if sig is not None}
    ids = list(judged)
    if not ids:
        return []
    mat = np.frombuffer(b"".join(judged.values()), dtype="<u4").reshape(len(ids), -1)
    keys = band_matrix(mat, bands, rows)
    buckets: dict[tuple[int, int], list[str]] = {}
    for rid, row in zip(ids, keys.tolist()):
        for band, key in enumerate(row):
            buckets.setdefault((band, key), []).append(rid)
    return [b for b in buckets.values() if len(b) > 1]


def verified_pairs(
    members: Iterable[tuple[str, bytes]], threshold: float = THRESHOLD, max_bucket: int = MAX_BUCKET
) -> list[tuple[str, str]]:
    """Pairs (a, b), a < b, of one bucket whose estimated Jaccard is at least ``threshold``."""
    items = sorted(members, key=lambda m: m[0])
    if len(items) <= max_bucket:
        mat = np.frombuffer(b"".join(s for _, s in items), dtype="<u4").reshape(len(items), -1)
        out: list[tuple[str, str]] = []
        for i in range(len(items) - 1):
            share = (mat[i + 1 :] == mat[i]).mean(axis=1)
            out.extend((items[i][0], items[i + 1 + j][0]) for j in np.flatnonzero(share >= threshold).tolist())
        return out
    leaders: list[tuple[str, bytes]] = []
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


def components(edges: Iterable[tuple[str, str]]) -> dict[str, str]:
    """record_id -> its connected component's id (the smallest record id in it), for every page
    of an edge (union-find; in Spark, edges are few: one per verified near-duplicate pair)."""
    uf = _UnionFind()
    for a, b in edges:
        uf.union(a, b)
    return {rid: uf.find(rid) for rid in list(uf.parent)}


def clusters(pages: Iterable[Page], edges: Iterable[tuple[str, str]], threshold: float = THRESHOLD) -> dict[str, str]:
    """record_id -> its cluster's representative record_id, for every page (a lone page: itself)."""
    by_id = {p.record_id: p for p in pages}
    edges = list(edges)
    comp = components(edges)
    members: dict[str, list[Page]] = {}
    for rid, c in comp.items():
        members.setdefault(c, []).append(by_id[rid])
    inner: dict[str, list[tuple[str, str]]] = {}
    for a, b in edges:
        inner.setdefault(comp[a], []).append((a, b))
    out = {rid: rid for rid in by_id}
    for c, group in members.items():
        out.update(split_component(group, inner[c], threshold))
    return out


def split_component(
    members: list[Page], edges: Iterable[tuple[str, str]], threshold: float = THRESHOLD
) -> dict[str, str]:
    """Clusters of one connected component (its pages and the verified edges among them, as a
    Spark stage grouped by component passes them). The centre is the member with the most verified
    edges to the members left (ties: :func:`rank`); it takes every member left whose estimate
    against it is at least ``threshold``; the cluster's representative is its first member by
    :func:`rank`; then again with the members left, until none is.

    Centre and representative differ on purpose: a page chosen for its capture time can sit at
    the edge of its copies (a copy with one paragraph added is the longest text), and verifying
    against it would split pages that are copies of each other."""
    adj: dict[str, set[str]] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    left = {p.record_id: p for p in members}
    out = {}
    while left:
        centre = min(left.values(), key=lambda p: (-sum(n in left for n in adj.get(p.record_id, ())), rank(p)))
        c = centre.signature
        cluster = [
            p
            for p in left.values()
            if p is centre or (p.signature is not None and c is not None and estimate(p.signature, c) >= threshold)
        ]
        rep = min(cluster, key=rank).record_id
        for p in cluster:
            out[p.record_id] = rep
            del left[p.record_id]
    return out


def day_clusters(
    pages: Iterable[Page], bands: int = BANDS, rows: int = ROWS, threshold: float = THRESHOLD
) -> dict[str, str]:
    """All three steps in memory (tests, benchmarks, small days): record_id -> representative."""
    pages = list(pages)
    sigs = {p.record_id: p.signature for p in pages if p.signature is not None}  # too short to judge: alone
    edges: set[tuple[str, str]] = set()
    for ids in candidate_buckets(dict(sigs), bands, rows):
        edges.update(verified_pairs(((i, sigs[i]) for i in ids), threshold))
    return clusters(pages, edges, threshold)
