"""Encoding many postings lists at once: whole PostingsList messages, length prefixes included.

Most postings lists of a text collection are short (Zipf: most terms occur in one or two
documents), so encoding them one by one costs mostly per-call overhead. Here a batch of lists is
encoded with a fixed number of numpy passes over all its bytes: each message is
``varint(size) 0x0a varint(len(term)) term 0x10 varint(df) 0x18 varint(cf) postings``, built
as four segments (fixed-width rows with a mask of the bytes in use, the term bytes, a second row
segment, the postings) that are then interleaved list by list. The bytes equal per-list encoding.
"""

from __future__ import annotations

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.varint import INT32_MAX, _bad_postings, posting_rows

_THRESHOLDS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


def _nbytes64(x: np.ndarray) -> np.ndarray:
    """Varint length of each uint64 value."""
    return 1 + np.searchsorted(_THRESHOLDS, x, side="right")


def _pack(n: int, parts: list) -> tuple[np.ndarray, np.ndarray]:
    """Rows of constant tag bytes (int parts) and varints (uint64 array parts); returns (bytes, row lengths).

    A part may be ``(part, mask)``: its bytes are left out of the rows where mask is False
    (protobuf omits fields that hold their default value)."""
    specs: list[tuple[int | np.ndarray, np.ndarray | None, int, np.ndarray | None]] = []
    width = 0
    for part in parts:
        mask: np.ndarray | None
        p, mask = part if isinstance(part, tuple) else (part, None)
        if isinstance(p, int):
            specs.append((p, None, 1, mask))
            width += 1
        else:
            lens = _nbytes64(p)
            w = int(lens.max()) if n else 1
            specs.append((p, lens, w, mask))
            width += w
    rows = np.empty((n, width), np.uint8)
    valid = np.empty((n, width), bool)
    col = 0
    for value, nb, w, mask in specs:
        if nb is None:
            rows[:, col] = value
            valid[:, col] = True
        else:
            for k in range(w):
                byte = (value >> np.uint64(7 * k)) & np.uint64(0x7F)
                rows[:, col + k] = byte | ((nb > k + 1).astype(np.uint64) << np.uint64(7))
                valid[:, col + k] = nb > k
        if mask is not None:
            valid[:, col : col + w] &= mask[:, None]
        col += w
    return rows[valid], valid.sum(axis=1)


def _interleave(segments: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Concatenate, list by list, segment 0 of list 0, segment 1 of list 0, ..., segment 0 of list 1, ...

    Every segment's bytes keep their order in the output, so labelling each output byte with its
    segment (one run-length expansion) and assigning through boolean masks places them all.
    """
    lens = np.stack([np.asarray(ln, np.int64) for _, ln in segments], axis=1)
    label = np.repeat(np.tile(np.arange(len(segments), dtype=np.uint8), len(lens)), lens.ravel())
    out = np.empty(len(label), np.uint8)
    if len(segments) == 2:
        first = label == 0
        out[first] = segments[0][0]
        out[~first] = segments[1][0]
        return out
    for k, (flat, _) in enumerate(segments):
        out[label == k] = flat
    return out


def encode_lists(terms: list[bytes], counts, docids, tfs) -> tuple[bytes, np.ndarray]:
    """Length-delimited PostingsList messages for consecutive lists; returns (bytes, cf of each list).

    ``terms`` are UTF-8 bytes; list i has ``counts[i]`` >= 1 postings, taken in order from the
    concatenated absolute ``docids`` and ``tfs``. A bad posting raises CiffError whose
    ``message_index`` is the index of its list in this batch.
    """
    counts = np.asarray(counts, dtype=np.int64)
    d = np.asarray(docids, dtype=np.int64)
    t = np.asarray(tfs, dtype=np.int64)
    b = len(terms)
    if b == 0:
        return b"", np.zeros(0, np.int64)
    starts = np.cumsum(counts) - counts
    first = np.zeros(len(d), bool)
    first[starts] = True
    gaps = np.empty_like(d)
    gaps[0] = d[0]
    np.subtract(d[1:], d[:-1], out=gaps[1:])
    gaps[starts] = d[starts]
    bad = (t < 1) | (t > INT32_MAX) | (d < 0) | (d > INT32_MAX) | ((gaps <= 0) & ~first)
    if bad.any():
        i = int(np.searchsorted(starts, int(np.argmax(bad)), side="right")) - 1
        lo, hi = int(starts[i]), int(starts[i] + counts[i])
        raise CiffError(_bad_postings(d[lo:hi].tolist(), t[lo:hi].tolist()), message_index=i)
    rows, valid, sizes = posting_rows(gaps.astype(np.uint32), t.astype(np.uint32))
    postings = rows[valid]
    psize = np.add.reduceat(sizes.astype(np.int64), starts)
    cf = np.add.reduceat(t, starts)
    term_len = np.array(list(map(len, terms)), dtype=np.int64)
    term_bytes = np.frombuffer(b"".join(terms), dtype=np.uint8)
    c_flat, c_len = _pack(b, [0x10, counts.astype(np.uint64), 0x18, cf.astype(np.uint64)])
    size = 1 + _nbytes64(term_len.astype(np.uint64)) + term_len + c_len + psize
    if size.max() > INT32_MAX:
        raise CiffError("postings list message exceeds the 2 GiB limit", message_index=int(np.argmax(size > INT32_MAX)))
    a_flat, a_len = _pack(b, [size.astype(np.uint64), 0x0A, term_len.astype(np.uint64)])
    # two levels: the short per-list heads (size, term, df, cf) first, then heads with postings
    heads = _interleave([(a_flat, a_len), (term_bytes, term_len), (c_flat, c_len)])
    out = _interleave([(heads, a_len + term_len + c_len), (postings, psize)])
    return out.tobytes(), cf


def encode_docs(docids, collection_docids: list[bytes], doclengths) -> bytes:
    """Length-delimited DocRecord messages for many documents at once (values already checked:
    docids and doclengths in 0..INT32_MAX); the bytes equal encoding them one by one."""
    n = len(collection_docids)
    if n == 0:
        return b""
    d = np.asarray(docids, dtype=np.int64).astype(np.uint64)
    dl = np.asarray(doclengths, dtype=np.int64).astype(np.uint64)
    slen = np.fromiter(map(len, collection_docids), np.int64, n)
    has_d, has_s, has_l = d > 0, slen > 0, dl > 0
    size = (
        has_d * (1 + _nbytes64(d))
        + has_s * (1 + _nbytes64(slen.astype(np.uint64)) + slen)
        + has_l * (1 + _nbytes64(dl))
    )
    a_flat, a_len = _pack(
        n, [size.astype(np.uint64), (0x08, has_d), (d, has_d), (0x12, has_s), (slen.astype(np.uint64), has_s)]
    )
    c_flat, c_len = _pack(n, [(0x18, has_l), (dl, has_l)])
    ids = np.frombuffer(b"".join(collection_docids), dtype=np.uint8)
    return _interleave([(a_flat, a_len), (ids, slen), (c_flat, c_len)]).tobytes()
