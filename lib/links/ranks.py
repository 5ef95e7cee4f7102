"""PageRank and harmonic centrality of every vertex of a directed graph (numpy; no graph library).

A graph is ``n`` vertices ``0..n-1`` and edge arrays ``src``, ``dst``; repeated edges count once
and self loops are left out (Common Crawl's host graphs have neither).

- :func:`pagerank`: power iteration with uniform teleport and dangling vertices' rank spread
  uniformly (what igraph's PRPACK and networkx compute), damping 0.85, until the L1 change is
  below ``tol``.
- :func:`harmonic`: in-harmonic centrality, sum over u != v of 1 / d(u, v) (paths *to* v; networkx's
  ``harmonic_centrality``, igraph's ``harmonic_centrality(mode="in", normalized=False)``). Exact
  distances by breadth-first search from every source, 64 x ``words`` sources at once as bits of
  ``words`` uint64 per vertex: a level ORs the frontier's bits along its vertices' out-edges into
  their targets (sorted and reduced per target), so a batch costs the edges its sources reach, once
  each, whatever its depth. Sources
  without out-edges reach nobody and are skipped. The counts of vertices at each distance are kept
  as integers and summed as ``count / d`` by increasing d, so the result does not depend on the
  batch size (:func:`distance_counts` returns them).
"""

from __future__ import annotations

import numpy as np

DAMPING = 0.85


def simple(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges without repeats and self loops, sorted by (src, dst)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"edge ids must be in 0..{n - 1}")
    keep = src != dst
    pairs = np.unique(src[keep] * n + dst[keep])
    return pairs // n, pairs % n


def pagerank(
    n: int, src: np.ndarray, dst: np.ndarray, damping: float = DAMPING, tol: float = 1e-14, max_iter: int = 10_000
) -> np.ndarray:
    """PageRank of each vertex (sums to 1)."""
    if n == 0:
        return np.zeros(0)
    s, d = simple(n, src, dst)
    out = np.bincount(s, minlength=n).astype(np.float64)
    dangling = out == 0
    w = np.zeros(n)
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        np.divide(x, out, out=w, where=~dangling)
        nxt = damping * np.bincount(d, weights=w[s], minlength=n)
        nxt += (damping * x[dangling].sum() + (1.0 - damping)) / n
        nxt /= nxt.sum()  # keep the sum at 1 against rounding drift
        delta = np.abs(nxt - x).sum()
        x = nxt
        if delta < tol:
            break
    return x


def distance_counts(n: int, src: np.ndarray, dst: np.ndarray, words: int = 4) -> np.ndarray:
    """``c[v, k]``: how many vertices u != v have d(u, v) = k + 1 (an n x max-distance int64 array)."""
    s, d = simple(n, src, dst)  # sorted by source: the out-edges of u are d[indptr[u]:indptr[u + 1]]
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(s, minlength=n), out=indptr[1:])
    sources = np.flatnonzero(np.diff(indptr))  # vertices with out-edges: the others reach nobody
    counts: list[np.ndarray] = []
    lanes = 64 * words
    bit = np.uint64(1) << np.arange(64, dtype=np.uint64)
    reach = np.zeros((n, words), np.uint64)  # the batch's sources that reached each vertex, as bits
    for b in range(0, sources.size, lanes):
        # the frontier is sparse (its vertices and their bits), so a level costs its out-edges, not n
        active = sources[b : b + lanes]
        i = np.arange(active.size)
        bits = np.zeros((active.size, words), np.uint64)
        bits[i, i // 64] = bit[i % 64]
        reach[active] = bits
        touched = [active]
        level = 0
        while active.size:
            starts, deg = indptr[active], indptr[active + 1] - indptr[active]
            idx = np.repeat(starts - np.cumsum(deg) + deg, deg) + np.arange(int(deg.sum()))
            targets, vals = d[idx], np.repeat(bits, deg, axis=0)
            order = np.argsort(targets, kind="stable")
            targets, vals = targets[order], vals[order]
            first = np.flatnonzero(np.r_[True, targets[1:] != targets[:-1]]) if targets.size else targets
            targets = targets[first]
            vals = np.bitwise_or.reduceat(vals, first, axis=0) if first.size else vals
            vals &= ~reach[targets]
            hit = np.bitwise_count(vals).sum(axis=1, dtype=np.int64)
            new = hit > 0
            active, bits, hit = targets[new], vals[new], hit[new]
            if not active.size:
                break
            reach[active] |= bits
            touched.append(active)
            if level == len(counts):
                counts.append(np.zeros(n, np.int64))
            counts[level][active] += hit  # targets are distinct within a level
            level += 1
        reach[np.concatenate(touched)] = 0
    return np.stack(counts, axis=1) if counts else np.zeros((n, 0), np.int64)


def harmonic(n: int, src: np.ndarray, dst: np.ndarray, words: int = 4) -> np.ndarray:
    """In-harmonic centrality of each vertex: sum over u != v of 1 / d(u, v), unnormalised."""
    c = distance_counts(n, src, dst, words)
    h = np.zeros(n)
    for k in range(c.shape[1]):  # by increasing distance: one summation order, whatever the batches
        h += c[:, k] / (k + 1)
    return h


def positions(values: np.ndarray) -> np.ndarray:
    """1-based rank positions by value, highest first, ties by vertex id (Common Crawl's ``_pos``)."""
    order = np.lexsort((np.arange(values.size), -values))
    pos = np.empty(values.size, np.int64)
    pos[order] = np.arange(1, values.size + 1)
    return pos
