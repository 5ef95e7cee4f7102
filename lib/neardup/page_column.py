"""The ``minhash`` page column: each page's MinHash signature of its main text, computed per
batch of pages in the preprocess task that extracted them (lib.neardup.minhash; docs/dedup.md).

One numpy pass per batch (the task's ``--batch-rows`` pages): the batch bounds the memory
(4 bytes a shingle, 512 bytes a signature). A page with too few shingles gets null: too short
to judge, never guessed; the index job's clusters leave it alone (it points to itself).
"""

from __future__ import annotations

import time
from typing import Any

from lib.errors import UsageError
from lib.neardup.minhash import MinHasher

COLUMN = "minhash"


def hasher(shingle: int, perms: int) -> MinHasher | None:
    """The run's hasher from the job's options; ``perms`` 0: no signatures (the column is null)."""
    if shingle < 1 or perms < 0:
        raise UsageError(f"--minhash-shingle must be >= 1 and --minhash-perms >= 0, got {shingle} and {perms}")
    return MinHasher(shingle=shingle, perms=perms) if perms else None


def add_signatures(rows: list[dict[str, Any]], minhash: MinHasher | None) -> float:
    """Set ``rows[i]["minhash"]`` to the signature of its ``plain_text`` (None: too short, or no
    hasher); returns the CPU seconds it took."""
    c0 = time.process_time()
    if minhash is None:
        for r in rows:
            r[COLUMN] = None
    else:
        for r, sig in zip(rows, minhash.signatures([r.get("plain_text") or "" for r in rows])):
            r[COLUMN] = sig
    return time.process_time() - c0
