"""A static prior in search: BM25 plus a weight times the rank of the hit's host (or domain) in
the web graph published for a window of the link database (docs/serve.md, "Static prior").

    score = bm25 + weight * prior(host)
    prior(host) = log(1 + v / mean) / log(1 + max / mean)      in [0, 1]; 0 for a host not in the graph

``v`` is the host's ``pr_val`` (``pagerank``) or ``harmonicc_val`` (``harmonic``) in
``ROOT/webgraph/window=W/until=D/{host,domain}/ranks.parquet`` (lib.links.hostgraph), ``mean`` and
``max`` over that level's vertices; ``D`` is the newest published ``until`` on or before the
search's last day (a graph never looks ahead of the days searched). The logarithm damps the
ranks' heavy tail (a hub's PageRank is thousands of times the median's) and the division bounds
the prior by 1, so ``weight`` is the most BM25 points a rank can add.

Ranking is exact, not a re-ranking of a fixed top list (:func:`top_k`): BM25 candidates are
fetched in BM25 order until no document left out can reach the k-th combined score. Ties keep
BM25's order (then the engine's global docid order). Off by default: plain BM25 stays the default
until a measurement shows the prior better (no relevance judgments exist here yet).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import threading
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyarrow.parquet as pq

from lib.links import hostgraph, inlinks
from lib.pages.weburls import url_parts
from lib.serve.errors import NotFound, QueryError

KINDS = {"pagerank": "pr_val", "harmonic": "harmonicc_val"}
LEVELS = hostgraph.LEVELS
DEFAULT_WEIGHT = 1.0
DEFAULT_WINDOW = inlinks.DEFAULT_WINDOW  # the link database's default window (90 days), as the graph's
MAX_WEIGHT = 1000.0
FETCH_START = 4  # candidates first fetched: this many times the hits wanted, doubled while not enough
#: the most BM25 candidates one search ranks with a prior: a weight far above the query's BM25 spread
#: would otherwise rank every match (a clear refusal instead of a search that takes minutes)
MAX_CANDIDATES = 1 << 17


@dataclass(frozen=True)
class Prior:
    """Which rank, how much of it, of which level and window."""

    kind: str
    weight: float = DEFAULT_WEIGHT
    level: str = "host"
    window: int | None = DEFAULT_WINDOW  # None: the graph of all time (window=all)

    def describe(self) -> dict:
        """The prior as the answer's ``meta.prior`` names it."""
        return {"kind": self.kind, "weight": self.weight, "level": self.level, "window": self.window or "all"}


def parse(kind: str | None, weight: float | None = None, level: str | None = None, window: str | None = None):
    """The prior of a request's parameters; None when ``kind`` is absent or ``none`` (plain BM25).
    QueryError names a bad value."""
    if kind is None or kind.strip().lower() in ("", "none"):
        return None
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise QueryError(f"prior {kind!r} is not one of none, {', '.join(KINDS)}")
    w = DEFAULT_WEIGHT if weight is None else float(weight)
    if not (math.isfinite(w) and 0 <= w <= MAX_WEIGHT):
        raise QueryError(f"prior weight {weight} must be a number in [0, {MAX_WEIGHT:g}]")
    lv = (level or "host").strip().lower()
    if lv not in LEVELS:
        raise QueryError(f"prior level {level!r} is not one of {', '.join(LEVELS)}")
    return Prior(kind, w, lv, _window(window))


def _window(text: str | None) -> int | None:
    if text is None or str(text).strip() == "":
        return DEFAULT_WINDOW
    if str(text).strip().lower() == "all":
        return None
    try:
        n = int(str(text).strip())
    except ValueError:
        n = 0
    if n <= 0:
        raise QueryError(f"prior window {text!r} must be a positive number of days or 'all'")
    return n


def normalised(values: np.ndarray) -> np.ndarray:
    """The module doc's ``log(1 + v / mean) / log(1 + max / mean)`` of each value (zeros when all are 0)."""
    v = np.asarray(values, np.float64)
    if v.size == 0 or not v.max() > 0:
        return np.zeros(v.size)
    mean = v.mean()
    return np.log1p(v / mean) / math.log1p(v.max() / mean)


class RankTable:
    """One level's normalised ranks of one published window: reversed name -> prior in [0, 1]."""

    def __init__(self, folder: str, prior: Prior):
        path = os.path.join(folder, prior.level, "ranks.parquet")
        t = pq.read_table(path, columns=["name", KINDS[prior.kind]])
        self.folder = folder
        self.until = folder.rsplit("until=", 1)[-1]
        self.values = dict(zip(t.column("name").to_pylist(), normalised(t.column(1).to_numpy()).tolist()))
        self.level = prior.level

    def of_url(self, url: str | None) -> float:
        """The prior of a URL's host (or its registered domain): 0 when the graph does not have it."""
        host = url_parts(url or "")["url_host"]
        if not host:
            return 0.0
        name = hostgraph.domain_of(host) if self.level == "domain" else host
        return self.values.get(hostgraph.reverse(name), 0.0)


class RankTables:
    """The published ranks of each root, loaded once per (folder, level, kind) and read again when
    a window's folder is replaced (its ``_SUCCESS`` changes)."""

    def __init__(self) -> None:
        self._cache: dict[tuple, tuple[float, RankTable]] = {}
        self._lock = threading.Lock()

    def get(self, root: str, prior: Prior, last_day: dt.date) -> RankTable:
        """The ranks of ``root``'s newest window on or before ``last_day``; NotFound says what exists."""
        folder = newest_window(root, prior.window, last_day)
        stamp = os.stat(os.path.join(folder, "_SUCCESS")).st_mtime_ns
        key = (folder, prior.level, prior.kind)
        with self._lock:
            have = self._cache.get(key)
            if have is None or have[0] != stamp:
                have = (stamp, RankTable(folder, prior))
                self._cache[key] = have
            return have[1]


def newest_window(root: str, window: int | None, last_day: dt.date) -> str:
    """``ROOT/webgraph/window=W/until=D`` with ``_SUCCESS``, the newest ``D`` <= ``last_day``."""
    if root.startswith("s3://"):
        raise NotFound(f"{root}: the search prior reads a local root's webgraph/ only")
    base = os.path.join(root, hostgraph.FOLDER, f"window={window or 'all'}")
    days = []
    for name in os.listdir(base) if os.path.isdir(base) else []:
        try:
            day = dt.date.fromisoformat(name.removeprefix("until="))
        except ValueError:
            continue
        if name.startswith("until=") and os.path.exists(os.path.join(base, name, "_SUCCESS")):
            days.append(day)
    fit = [d for d in days if d <= last_day]
    if not fit:
        have = ", ".join(str(d) for d in sorted(days)) or "none"
        raise NotFound(
            f"no web graph of window={window or 'all'} until {last_day} or before under {root}/{hostgraph.FOLDER} "
            f"(published: {have}); write one with `dailyslice webgraph --root ROOT --window {window or 'all'}`"
        )
    return os.path.join(base, f"until={max(fit).isoformat()}")


def top_k(
    fetch: Callable[[int], tuple[list[tuple], int]],
    k: int,
    weight: float,
    prior_of: Callable[[tuple], float],
) -> tuple[list[tuple], int, list[tuple[float, float]]]:
    """The exact top ``k`` by ``bm25 + weight * prior`` (prior in [0, 1]).

    ``fetch(m)`` gives the top ``m`` hits ``(bm25, ...)`` in BM25 order and the matching total;
    ``prior_of(hit)`` its prior. A document not among the ``m`` fetched scores at most the last
    fetched BM25 plus ``weight``, so once the k-th combined score reaches that bound (or fewer than
    ``m`` came back: none is left out) the order is final; else ``m`` doubles. Returns the hits
    with their combined score first, the total, and each hit's (bm25, prior). QueryError when the
    order is not final within :data:`MAX_CANDIDATES` candidates."""
    m = FETCH_START * k
    while True:
        hits, total = fetch(m)
        priors = [prior_of(h) for h in hits]
        combined = [h[0] + weight * p for h, p in zip(hits, priors)]
        order = sorted(range(len(hits)), key=lambda i: (-combined[i], i))[:k]  # ties: BM25's order
        done = len(hits) < m or (len(order) == k and combined[order[-1]] >= hits[-1][0] + weight)
        if done:
            out = [(combined[i], *hits[i][1:]) for i in order]
            return out, total, [(float(hits[i][0]), priors[i]) for i in order]
        if m >= MAX_CANDIDATES:
            raise QueryError(
                f"a prior of weight {weight:g} needs more than {MAX_CANDIDATES} BM25 candidates of this query "
                "to rank exactly: give a smaller prior_weight"
            )
        m = min(2 * m, MAX_CANDIDATES)
