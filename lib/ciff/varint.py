"""Protobuf base-128 varints, scalar and vectorised, and the encoding of CIFF postings.

The hot path of writing CIFF is turning a postings list (absolute docids, tfs) into the bytes of
the repeated ``Posting postings = 4`` field. Going through the protobuf runtime costs one Python
object per posting; here short lists use precomputed byte tables and long lists are encoded with
numpy in a handful of whole-array operations (see benchmarks/bench_ciff_encode.py). The bytes are
exactly what a protobuf serializer writes (fields in number order, proto3 zero values omitted).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from lib.ciff.errors import CiffError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
_U64 = 1 << 64

# Lists up to this length are encoded in plain Python: numpy's per-call overhead would dominate.
SMALL_LIST = 48
# Long lists are encoded in chunks so temporary arrays stay bounded whatever the list length.
CHUNK = 1 << 18

_TABLE_SIZE = 1 << 14  # every value with a varint of at most 2 bytes


def _varint_slow(v: int) -> bytes:
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


_VARINT = [_varint_slow(v) for v in range(_TABLE_SIZE)]
# A whole Posting field for a small value: docid gap (field 1; 0 is omitted, as proto3 does) / tf (field 2).
_GAP_FIELD = [b""] + [b"\x08" + _VARINT[v] for v in range(1, _TABLE_SIZE)]
_TF_FIELD = [b""] + [b"\x10" + _VARINT[v] for v in range(1, _TABLE_SIZE)]
# Field 4 (wire type 2) tag + the one-byte length of a Posting (at most 2 + 5 + 5 bytes).
_POSTING_HEAD = [bytes((0x22, n)) for n in range(128)]


def encode_varint(v: int) -> bytes:
    """Varint bytes of an int64/uint64 value; negative values take 10 bytes, as protobuf writes int32/int64."""
    if 0 <= v < _TABLE_SIZE:
        return _VARINT[v]
    if v < 0:
        if v < -(2**63):
            raise CiffError(f"value {v} does not fit in int64")
        v += _U64
    elif v >= _U64:
        raise CiffError(f"value {v} does not fit in 64 bits")
    return _varint_slow(v)


def decode_varint(buf: bytes | memoryview, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode one varint at ``pos``; returns (unsigned value, position after it).

    Raises CiffError when the buffer ends inside the varint or the varint is longer than 10 bytes.
    """
    if end is None:
        end = len(buf)
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise CiffError(f"truncated varint at relative offset {start}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & (_U64 - 1), pos
        shift += 7
        if shift >= 70:
            raise CiffError(f"varint longer than 10 bytes at relative offset {start}")


def to_signed64(v: int) -> int:
    """Interpret an unsigned 64-bit varint value as int64 (protobuf's int32/int64 decoding)."""
    return v - _U64 if v >= 1 << 63 else v


# ---------------------------------------------------------------------------------------------
# Postings: (absolute docids, tfs) -> bytes of the repeated Posting field.


def _bad_postings(docids: Sequence[int], tfs: Sequence[int]) -> str:
    """The first reason why a postings list is not encodable (slow path: only called on failure)."""
    prev = -1
    for i, (d, t) in enumerate(zip(docids, tfs)):
        d, t = int(d), int(t)
        if d < 0:
            return f"posting {i}: negative docid {d}"
        if d > INT32_MAX:
            return f"posting {i}: docid {d} exceeds int32"
        if d <= prev:
            return f"posting {i}: docids not strictly ascending ({prev} then {d})"
        if t < 1:
            return f"posting {i}: tf {t} < 1"
        if t > INT32_MAX:
            return f"posting {i}: tf {t} exceeds int32"
        prev = d
    return "invalid postings"


def _encode_small(docids: Sequence[int], tfs: Sequence[int]) -> bytes:
    parts: list[bytes] = []
    append = parts.append
    prev = -1
    for d, t in zip(docids, tfs):
        if d <= prev or t < 1 or d > INT32_MAX or t > INT32_MAX:
            raise CiffError(_bad_postings(docids, tfs))
        g = d - (prev if prev >= 0 else 0)
        prev = d
        body = (_GAP_FIELD[g] if g < _TABLE_SIZE else b"\x08" + _varint_slow(g)) + (
            _TF_FIELD[t] if t < _TABLE_SIZE else b"\x10" + _varint_slow(t)
        )
        append(_POSTING_HEAD[len(body)])
        append(body)
    return b"".join(parts)


def _nbytes(x: np.ndarray) -> np.ndarray:
    """Varint length of each non-negative value (x < 2**32)."""
    n = np.ones(x.shape, np.int8)
    for limit in (1 << 7, 1 << 14, 1 << 21, 1 << 28):
        n += x >= limit
    return n


def _put_varints(out: np.ndarray, col: int, x: np.ndarray, nb: np.ndarray, width: int, valid: np.ndarray) -> None:
    """Write the varint of x into columns col..col+width-1 and mark the bytes in use."""
    for k in range(width):
        byte = (x >> (7 * k)) & 0x7F
        more = nb > k + 1
        out[:, col + k] = byte | (more.astype(np.uint32) << 7)
        valid[:, col + k] = nb > k


def encode_varints(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Varints of many non-negative values (< 2**32) at once: (the bytes, concatenated, as
    uint8; the byte length of each value)."""
    x = np.asarray(x).astype(np.uint32)
    if len(x) == 0:
        return np.zeros(0, np.uint8), np.zeros(0, np.int8)
    nb = _nbytes(x)
    width = int(nb.max())
    if width == 1:  # all below 128 (most tfs): the bytes are the values
        return x.astype(np.uint8), nb
    rows = np.empty((len(x), width), np.uint8)
    valid = np.empty((len(x), width), bool)
    _put_varints(rows, 0, x, nb, width, valid)
    return rows[valid], nb


def posting_rows(gaps: np.ndarray, tfs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Posting messages in fixed-width rows: (row bytes, mask of the bytes in use, bytes per posting).

    Each row is tag, length, gap field, tf field (gaps and tfs as checked uint32 arrays); the
    masked row-major gather ``rows[valid]`` gives the concatenated messages.
    """
    n = len(gaps)
    has_gap = gaps > 0
    ng = _nbytes(gaps)
    nt = _nbytes(tfs)
    wg = int(ng.max()) if n else 1
    wt = int(nt.max()) if n else 1
    width = 2 + 1 + wg + 1 + wt
    rows = np.empty((n, width), np.uint8)
    valid = np.empty((n, width), bool)
    inner = has_gap * (1 + ng) + 1 + nt
    rows[:, 0] = 0x22
    rows[:, 1] = inner
    rows[:, 2] = 0x08
    valid[:, :2] = True
    valid[:, 2] = has_gap
    _put_varints(rows, 3, gaps, ng, wg, valid)
    valid[:, 3 : 3 + wg] &= has_gap[:, None]
    rows[:, 3 + wg] = 0x10
    valid[:, 3 + wg] = True
    _put_varints(rows, 4 + wg, tfs, nt, wt, valid)
    return rows, valid, inner + 2


def _encode_chunk(gaps: np.ndarray, tfs: np.ndarray) -> bytes:
    rows, valid, _ = posting_rows(gaps, tfs)
    return rows[valid].tobytes()


def encode_postings(docids: Sequence[int] | np.ndarray, tfs: Sequence[int] | np.ndarray) -> bytes:
    """Bytes of the repeated ``postings`` field of a PostingsList: docids gap-encoded, first absolute.

    ``docids`` must be strictly ascending, >= 0 and int32; ``tfs`` >= 1 and int32; same length.
    Raises CiffError (reason only; the caller adds the term) otherwise.
    """
    n = len(docids)
    if n != len(tfs):
        raise CiffError(f"{n} docids but {len(tfs)} tfs")
    if n <= SMALL_LIST:
        return _encode_small(
            docids.tolist() if isinstance(docids, np.ndarray) else docids,
            tfs.tolist() if isinstance(tfs, np.ndarray) else tfs,
        )
    d = np.asarray(docids, dtype=np.int64)
    t = np.asarray(tfs, dtype=np.int64)
    if d.ndim != 1 or t.ndim != 1:
        raise CiffError("docids and tfs must be one-dimensional")
    if n == 0:
        return b""
    gaps = np.empty(n, np.int64)
    gaps[0] = d[0]
    np.subtract(d[1:], d[:-1], out=gaps[1:])
    if d[0] < 0 or d[-1] > INT32_MAX or (n > 1 and gaps[1:].min() <= 0) or t.min() < 1 or t.max() > INT32_MAX:
        raise CiffError(_bad_postings(d.tolist(), t.tolist()))
    g32 = gaps.astype(np.uint32)
    t32 = t.astype(np.uint32)
    if n <= CHUNK:
        return _encode_chunk(g32, t32)
    return b"".join(_encode_chunk(g32[i : i + CHUNK], t32[i : i + CHUNK]) for i in range(0, n, CHUNK))


# ---------------------------------------------------------------------------------------------
# Decoding a run of varints at once.


def decode_varint_run(data: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
    """Decode a buffer that is entirely a sequence of varints.

    Returns (values as uint64, byte length of each varint). Raises CiffError if the buffer ends
    inside a varint or a varint is longer than 10 bytes.
    """
    b = np.frombuffer(data, dtype=np.uint8)
    if len(b) == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    ends = np.flatnonzero(b < 0x80)
    if len(ends) == 0 or ends[-1] != len(b) - 1:
        raise CiffError("truncated varint at the end of a message")
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    lens = ends - starts + 1
    if lens.max() > 10:
        raise CiffError(f"varint longer than 10 bytes at relative offset {int(starts[np.argmax(lens > 10)])}")
    if lens.max() == 1:
        return b.astype(np.uint64), lens
    shift = (np.arange(len(b), dtype=np.int64) - np.repeat(starts, lens)) * 7
    parts = (b & 0x7F).astype(np.uint64) << shift.astype(np.uint64)
    return np.add.reduceat(parts, starts), lens
