"""The collision check between servers: no path may be a file on one slice and a directory on another.

A PUT that creates a new file or new directories first *claims* them here (pending), then asks
every other holder of the collection whether it holds (or has claimed) the opposite kind. Two
servers that claim colliding paths at the same time both see the other's claim; the claim with
the smaller token (time, server) wins: the other side's answer is "no conflict" and its own
claim is marked lost, so exactly one of two racing PUTs writes. Once a claim is committed (its
server decided to write) every colliding check is refused, whatever its token.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

PENDING, COMMITTED, LOST = "pending", "committed", "lost"

Token = tuple[int, str]


@dataclass
class Claim:
    collection: str
    file: str | None  # a new file path, or None when only directories are new
    dirs: frozenset[str]
    token: Token
    state: str = PENDING


def collides(file_a: str | None, dirs_a: frozenset[str], file_b: str | None, dirs_b: frozenset[str]) -> bool:
    """Whether one side wants as a file what the other wants as a directory."""
    return (file_a is not None and file_a in dirs_b) or (file_b is not None and file_b in dirs_a)


@dataclass
class ClaimTable:
    """The claims of one server's PUTs in flight (one event loop, so no locks)."""

    claims: list[Claim] = field(default_factory=list)
    #: directories known to be directories in the network (peers' answers), per collection
    known_dirs: dict[str, set[str]] = field(default_factory=dict)

    def answer(self, collection: str, file: str | None, dirs: frozenset[str], token: Token) -> str | None:
        """Answer a check against the claims here: None (no conflict) or the reason. A pending claim
        with a larger token than the asker's loses."""
        for c in self.claims:
            if c.collection != collection or c.state == LOST or not collides(file, dirs, c.file, c.dirs):
                continue
            if c.state == COMMITTED or c.token < token:
                what = c.file if c.file is not None and c.file in dirs else file
                return f"{what!r} is being written as the other kind on another slice"
            c.state = LOST
        return None

    def add(self, claim: Claim) -> str | None:
        """Register a claim of this server after checking it against the others here."""
        reason = self.answer(claim.collection, claim.file, claim.dirs, claim.token)
        if reason is None:
            self.claims.append(claim)
        return reason

    def commit(self, claim: Claim) -> bool:
        """Turn a pending claim into a committed one; False if it lost meanwhile."""
        if claim.state == LOST:
            return False
        claim.state = COMMITTED
        return True

    def release(self, claim: Claim) -> None:
        if claim in self.claims:
            self.claims.remove(claim)

    def forget(self, collection: str) -> None:
        """Drop the cached directories of a collection (after a delete somewhere)."""
        self.known_dirs.pop(collection, None)


def local_conflict(slice_dirs: list[str], file: str | None, dirs: frozenset[str]) -> str | None:
    """Check the slice folders held here: is ``file`` a directory, or one of ``dirs`` a file?"""
    for top in slice_dirs:
        if file is not None and os.path.isdir(os.path.join(top, *file.split("/"))):
            return f"{file!r} is a directory on another slice"
        for d in sorted(dirs):
            if os.path.isfile(os.path.join(top, *d.split("/"))):
                return f"{d!r} is a file on another slice"
    return None


def local_dirs(slice_dirs: list[str], dirs: frozenset[str]) -> list[str]:
    """Which of ``dirs`` are directories in the slice folders held here (cacheable answers)."""
    return sorted(d for d in dirs if any(os.path.isdir(os.path.join(t, *d.split("/"))) for t in slice_dirs))
