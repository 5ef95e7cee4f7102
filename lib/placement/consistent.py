"""Consistent hashing with virtual nodes (as the document key store of Bui's Node.js crawler store, SJSU CS 297).

Each node is hashed onto a 128-bit ring ``vnodes`` times (MD5 of ``"NODE#i"``); a key
belongs to the first virtual node at or after MD5(key), wrapping around. Adding or
removing a node moves only the keys of the arcs it gains or loses (about 1/N of them);
more virtual nodes even out the load (benchmarks/bench_placement.py measures both).
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import Iterable

from lib.pages.keyspace import md5_int


class ConsistentHashRing:
    """A hash ring of named nodes, each with ``vnodes`` points (weight scales that)."""

    def __init__(self, nodes: Iterable[str] = (), vnodes: int = 100):
        if vnodes < 1:
            raise ValueError(f"vnodes must be >= 1, got {vnodes}")
        self.vnodes = vnodes
        self._points: list[int] = []
        self._owner: list[str] = []
        self._weights: dict[str, int] = {}
        for n in nodes:
            self.add_node(n)

    @property
    def nodes(self) -> list[str]:
        return sorted(self._weights)

    def __len__(self) -> int:
        return len(self._weights)

    def _node_points(self, node: str, weight: int) -> list[int]:
        return [md5_int(f"{node}#{i}") for i in range(self.vnodes * weight)]

    def add_node(self, node: str, weight: int = 1) -> None:
        """Put ``node`` on the ring with ``vnodes * weight`` virtual nodes."""
        if node in self._weights:
            raise ValueError(f"node {node!r} is already on the ring")
        if weight < 1:
            raise ValueError(f"weight must be >= 1, got {weight}")
        self._weights[node] = weight
        # sorting by (point, node) keeps the ring deterministic even if two points collide
        pairs = sorted([*zip(self._points, self._owner), *((p, node) for p in self._node_points(node, weight))])
        self._points = [p for p, _ in pairs]
        self._owner = [o for _, o in pairs]

    def remove_node(self, node: str) -> None:
        """Take ``node`` and all its virtual nodes off the ring."""
        if node not in self._weights:
            raise KeyError(f"node {node!r} is not on the ring")
        del self._weights[node]
        keep = [(p, o) for p, o in zip(self._points, self._owner) if o != node]
        self._points = [p for p, _ in keep]
        self._owner = [o for _, o in keep]

    def lookup_hash(self, h: int) -> str:
        """The node owning 128-bit hash value ``h``."""
        if not self._points:
            raise LookupError("the ring has no nodes")
        i = bisect.bisect_left(self._points, h)
        return self._owner[i if i < len(self._points) else 0]

    def lookup(self, key: str) -> str:
        """The node owning ``key``."""
        return self.lookup_hash(md5_int(key))

    def preference_list(self, key: str, r: int) -> list[str]:
        """The first ``r`` distinct nodes clockwise from ``key`` (replica placement)."""
        if not self._points:
            raise LookupError("the ring has no nodes")
        r = min(r, len(self._weights))
        i = bisect.bisect_left(self._points, md5_int(key))
        out: list[str] = []
        for j in range(len(self._points)):
            o = self._owner[(i + j) % len(self._points)]
            if o not in out:
                out.append(o)
                if len(out) == r:
                    break
        return out


def load(ring: ConsistentHashRing, keys: Iterable[str]) -> Counter[str]:
    """Keys per node (nodes with no keys are listed with 0)."""
    c: Counter[str] = Counter({n: 0 for n in ring.nodes})
    c.update(ring.lookup(k) for k in keys)
    return c


def imbalance(counts: Counter[str]) -> float:
    """max/mean load: 1.0 is perfect balance."""
    total = sum(counts.values())
    return max(counts.values()) * len(counts) / total if total else 1.0


def moved_fraction(before: list[str], after: list[str]) -> float:
    """Share of keys whose owner differs between two assignments of the same keys."""
    if len(before) != len(after):
        raise ValueError("assignments must cover the same keys")
    return sum(a != b for a, b in zip(before, after)) / len(before) if before else 0.0
