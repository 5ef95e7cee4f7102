"""Log-structured sorted runs: which runs a commit merges (the policy the signature store,
lib.neardup.sigstore, and the capture index, lib.catalogue.capindex, share).

A store keeps its entries as immutable sorted runs, oldest first, each naming the sources (day
folders) whose entries it holds and how many. A commit adds the new source as a run of its own
after merging the newest runs while the older one is at most twice the newer: sizes then more than
double from newer to older, so N similar sources make about log2(N) + 1 runs and an entry is
rewritten O(log N) times. Plain Python, no I/O.
"""

from __future__ import annotations

from typing import Any


def merging(kept: list[dict[str, Any]], live: set[str]) -> int:
    """How many of the newest runs a commit merges into one (1: none): while the older run holds
    at most twice the keys of the newer (merged so far), it joins: the runs' sizes then more than
    double from newer to older, so N similar days make about log2(N) + 1 merged runs. Sizes count
    live days only; a run of unknown size (an old store's) counts 0, so a store's first commit
    merges them all."""

    def size(r: dict[str, Any]) -> int:
        return sum(n or 0 for f, n in r["days"].items() if f in live)

    k, top = 1, size(kept[-1]) if kept else 0
    while k < len(kept) and size(kept[-k - 1]) <= 2 * top:
        top += size(kept[-k - 1])
        k += 1
    return k
