"""Types of the C extension built from lib/serve/native/maxscore.c (see its header comment)."""

import numpy as np
from _typeshed import ReadableBuffer

def top_k(
    docids: np.ndarray,
    tfs: np.ndarray,
    starts: np.ndarray,
    lens: np.ndarray,
    weights: np.ndarray,
    bounds: np.ndarray,
    norms: np.ndarray,
    deleted: np.ndarray | None,
    k: int,
    threshold: float,
    /,
) -> tuple[list[float], list[int]]:
    """(scores, docs) of at most k documents scoring above ``threshold``, best first, ties by docid."""

def decode_lists(
    buf: ReadableBuffer, pos: int, count: int, num_docs: int, /
) -> tuple[int, list[str], bytes, bytes, bytes]:
    """(end, terms, lens as int64 bytes, docids as uint32 bytes, tfs as uint32 bytes) of ``count`` lists."""
