"""PageRank and harmonic centrality of every vertex of a directed graph, by python-igraph.

A graph is ``n`` vertices ``0..n-1`` and edge arrays ``src``, ``dst``; repeated edges count once
and self loops are left out (Common Crawl's host graphs have neither).

- :func:`pagerank`: igraph's PRPACK (damping 0.85, uniform teleport, dangling vertices' rank spread
  uniformly: what networkx computes too).
- :func:`harmonic`: in-harmonic centrality, sum over u != v of 1 / d(u, v) (paths *to* v;
  networkx's ``harmonic_centrality``), exact distances by one breadth-first search per vertex in C.

Why igraph rather than our own: both were written and measured against it on the same real-shaped
host graph of a million edges (benchmarks/bench_ranks.py, docs/links.md): a numpy power iteration
and a numpy multi-source BFS (256 sources as bits) took 2.5x igraph's time for harmonic centrality,
a multi-source BFS in C 4.5x (its bit sets cost a cache miss per edge and a vertex re-scanned at
each level it gains sources, where igraph's per-source search stays in cache), and PageRank 2-10x.
igraph is in the ``webgraph`` extra (a node without it fails here, naming the extra).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.errors import require_extra

DAMPING = 0.85


def simple(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges without repeats and self loops, sorted by (src, dst)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise ValueError(f"edge ids must be in 0..{n - 1}")
    keep = src != dst
    pairs = np.unique(src[keep] * n + dst[keep])
    return pairs // n, pairs % n


def graph(n: int, src: np.ndarray, dst: np.ndarray) -> Any:
    """The igraph directed graph of the simple edges."""
    require_extra("the web graph's ranks (lib.links.ranks)", "webgraph", "igraph")
    import igraph  # the webgraph extra: only the ranks need it

    s, d = simple(n, src, dst)
    return igraph.Graph(n=n, edges=np.stack([s, d], 1), directed=True)


def pagerank(n: int, src: np.ndarray, dst: np.ndarray, damping: float = DAMPING, g: Any = None) -> np.ndarray:
    """PageRank of each vertex (sums to 1); ``g``: the graph already built by :func:`graph`."""
    if n == 0:
        return np.zeros(0)
    g = g if g is not None else graph(n, src, dst)
    return np.asarray(g.pagerank(directed=True, damping=damping, implementation="prpack"), np.float64)


def harmonic(n: int, src: np.ndarray, dst: np.ndarray, g: Any = None) -> np.ndarray:
    """In-harmonic centrality of each vertex: sum over u != v of 1 / d(u, v), unnormalised."""
    if n == 0:
        return np.zeros(0)
    g = g if g is not None else graph(n, src, dst)
    return np.asarray(g.harmonic_centrality(mode="in", normalized=False), np.float64)


def positions(values: np.ndarray) -> np.ndarray:
    """1-based rank positions by value, highest first, ties by vertex id (Common Crawl's ``_pos``)."""
    order = np.lexsort((np.arange(values.size), -values))
    pos = np.empty(values.size, np.int64)
    pos[order] = np.arange(1, values.size + 1)
    return pos
