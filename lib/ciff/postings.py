"""Decoding and checking PostingsList messages: the reading side's hot path.

Postings in the usual layout (every writer's: Posting fields in number order, nothing after the
postings) are decoded in one pass, in plain Python for short lists and with numpy for long ones;
any other legal layout goes through the general field-by-field parser of lib.ciff.messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.messages import POSTING_FIELDS, POSTINGS_LIST_FIELDS, _typed, decode_fields, iter_fields
from lib.ciff.varint import INT32_MAX, decode_varint, decode_varint_run


@dataclass
class RawPostings:
    """A PostingsList as stored: docid gaps and tfs as int64 arrays (values not yet range-checked)."""

    term: str
    df: int
    cf: int
    gaps: np.ndarray
    tfs: np.ndarray


def _postings_vectorized(buf, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Decode a run of Posting fields at once, or None if it is not in the plain layout.

    In the plain layout every varint of the run is half of a (tag, value) pair: (34, length)
    opens a Posting, (8, gap) and (16, tf) are its fields. When the tags and every Posting's
    length agree with that reading, it is exactly the sequential protobuf parse.
    """
    v, lens = decode_varint_run(memoryview(buf)[lo:hi])
    if len(v) % 2:
        return None
    tags, vals = v[0::2], v[1::2]
    if len(tags) == 0 or tags[0] != 34:
        return None
    is_head = tags == 34
    is_gap = tags == 8
    is_tf = tags == 16
    if not np.all(is_head | is_gap | is_tf):
        return None
    pidx = np.cumsum(is_head) - 1
    n = int(pidx[-1]) + 1
    pair_bytes = lens[0::2] + lens[1::2]
    inner = ~is_head
    inner_bytes = np.bincount(pidx[inner], weights=pair_bytes[inner], minlength=n)
    if not np.array_equal(inner_bytes.astype(np.uint64), vals[is_head]):
        return None
    gap_owner, tf_owner = pidx[is_gap], pidx[is_tf]
    if (len(gap_owner) and np.bincount(gap_owner).max() > 1) or (len(tf_owner) and np.bincount(tf_owner).max() > 1):
        return None  # a repeated field inside one Posting: leave last-wins semantics to the slow path
    gaps = np.zeros(n, np.uint64)
    tfs = np.zeros(n, np.uint64)
    gaps[gap_owner] = vals[is_gap]
    tfs[tf_owner] = vals[is_tf]
    return gaps.view(np.int64), tfs.view(np.int64)


def _postings_slow(buf, spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    gaps, tfs = [], []
    for i, (lo, hi) in enumerate(spans):
        try:
            f = decode_fields(buf, POSTING_FIELDS, lo, hi)
        except CiffError as e:
            raise CiffError(f"posting {i}: {e.reason}") from None
        gaps.append(f["docid"])
        tfs.append(f["tf"])
    return np.array(gaps, dtype=np.int64), np.array(tfs, dtype=np.int64)


def decode_postings_list(buf, *, postings: bool = True) -> RawPostings:
    """Decode a PostingsList message.

    With postings=False only term, df and cf are read, up to the first posting (cheap skipping; fields
    after the postings, legal but never written in practice, are then ignored).
    """
    term, df, cf = "", 0, 0
    spans: list[tuple[int, int]] = []
    fast = None
    end = len(buf)
    for num, wire, value, at in iter_fields(buf, 0, end):
        spec = POSTINGS_LIST_FIELDS.get(num)
        if spec is None:
            continue
        name, kind = spec
        if name == "postings":
            if wire != 2:
                raise CiffError(f"field postings has wire type {wire}, expected 2")
            if not postings:
                if term:
                    break  # writers put term, df, cf first: no need to walk every posting when skipping
                continue
            if not spans and fast is None:
                # the usual case: all postings, in the plain layout, up to the end of the message
                fast = _postings_plain(buf, at, end)
                if fast is not None:
                    break
            spans.append(value)
            continue
        v = _typed(kind, name, wire, value, buf, value)
        if name == "term":
            term = v
        elif name == "df":
            df = v
        else:
            cf = v
    if fast is not None:
        gaps, tfs = fast
    elif spans:
        gaps, tfs = _postings_slow(buf, spans)
    else:
        gaps = tfs = np.zeros(0, np.int64)
    return RawPostings(term, df, cf, gaps, tfs)


SMALL_RUN = 512  # bytes of postings below which a Python loop beats numpy's per-call overhead


def _postings_plain(buf, lo: int, end: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Decode postings lo..end in the plain layout, or None if they are laid out otherwise."""
    if end - lo > SMALL_RUN:
        return _postings_vectorized(buf, lo, end)
    gaps: list[int] = []
    tfs: list[int] = []
    pos = lo
    try:
        while pos < end:
            size = buf[pos + 1]
            if buf[pos] != 0x22 or size >= 0x80:
                return None
            pos += 2
            stop = pos + size
            if stop > end:
                return None
            g = t = 0
            if pos < stop and buf[pos] == 0x08:
                g = buf[pos + 1]
                if g < 0x80:
                    pos += 2
                else:
                    g, pos = decode_varint(buf, pos + 1, stop)
            if pos < stop and buf[pos] == 0x10:
                t = buf[pos + 1]
                if t < 0x80:
                    pos += 2
                else:
                    t, pos = decode_varint(buf, pos + 1, stop)
            if pos != stop:
                return None
            gaps.append(g)
            tfs.append(t)
    except (CiffError, IndexError):
        return None  # let the general parser name the problem
    return np.array(gaps, dtype=np.uint64).view(np.int64), np.array(tfs, dtype=np.uint64).view(np.int64)


def _plainly_valid(raw: RawPostings, num_docs: int | None) -> np.ndarray | None:
    """Absolute docids of a short list that passes every check of check_postings, else None.

    Plain Python for short lists (numpy's per-call overhead dominates there); any doubt is left
    to check_postings, which names the violation.
    """
    n = len(raw.gaps)
    if not raw.term or raw.df != n or n == 0:
        return None
    gl = raw.gaps.tolist()
    tl = raw.tfs.tolist()
    if gl[0] < 0 or min(tl) < 1 or max(tl) > INT32_MAX or sum(tl) != raw.cf:
        return None
    if n > 1 and min(gl[1:]) <= 0:
        return None
    docids = list(accumulate(gl))
    if docids[-1] > INT32_MAX or (num_docs is not None and docids[-1] >= num_docs):
        return None
    return np.array(docids, dtype=np.int64)


def check_postings(raw: RawPostings, num_docs: int | None = None) -> np.ndarray:
    """Check one postings list on its own; returns the absolute docids (int64).

    Raises CiffError naming the first violation: empty list, df != number of postings, negative
    or non-increasing docids (gap <= 0 after the first), values outside int32, tf < 1,
    cf != sum(tf), docid >= num_docs.
    """
    n = len(raw.gaps)
    if n <= 64:
        docids = _plainly_valid(raw, num_docs)
        if docids is not None:
            return docids
    if not raw.term:
        raise CiffError("empty term")
    if raw.df != n:
        raise CiffError(f"df = {raw.df} but the list has {n} postings")
    if n == 0:
        raise CiffError("postings list is empty")
    g, t = raw.gaps, raw.tfs
    if g[0] < 0:
        raise CiffError(f"posting 0: negative docid {int(g[0])}")
    if n > 1:
        bad = np.flatnonzero(g[1:] <= 0)
        if len(bad):
            i = int(bad[0]) + 1
            raise CiffError(f"posting {i}: docids not strictly ascending (gap {int(g[i])})")
    bad = np.flatnonzero(g > INT32_MAX)
    if len(bad):
        i = int(bad[0])
        raise CiffError(f"posting {i}: docid gap {int(g[i])} exceeds int32")
    bad = np.flatnonzero((t < 1) | (t > INT32_MAX))
    if len(bad):
        i = int(bad[0])
        raise CiffError(f"posting {i}: tf {int(t[i])} outside 1..2^31-1")
    docids = np.cumsum(g)
    if docids[-1] > INT32_MAX:
        i = int(np.argmax(docids > INT32_MAX))
        raise CiffError(f"posting {i}: docid {int(docids[i])} exceeds int32")
    if num_docs is not None and docids[-1] >= num_docs:
        i = int(np.argmax(docids >= num_docs))
        raise CiffError(f"posting {i}: docid {int(docids[i])} >= num_docs {num_docs}")
    cf = int(t.sum())
    if raw.cf != cf:
        raise CiffError(f"cf = {raw.cf} but the tfs sum to {cf}")
    return docids
