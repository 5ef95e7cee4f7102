"""The three CIFF messages: dataclasses, exact protobuf encoding and a checking decoder.

Encoding writes fields in number order and omits proto3 default values, so the bytes equal what
the protobuf runtime serializes. Decoding is our own parser rather than the protobuf runtime
because the runtime silently truncates oversized int32 values and gives no byte positions: here
every wire-type mismatch, truncation or out-of-range value is a CiffError. Unknown fields are
skipped (forward compatibility, as protobuf does).
"""

from __future__ import annotations

import math
from itertools import accumulate
import struct
from dataclasses import dataclass, field

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.varint import (
    INT32_MAX,
    decode_varint,
    decode_varint_run,
    encode_postings,
    encode_varint,
    to_signed64,
)

INT32_MIN = -(2**31)
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
# One message (and so its length prefix) must stay below 2 GiB: protobuf's own limit.
MAX_MESSAGE = 2**31 - 1


@dataclass(frozen=True)
class Header:
    """CIFF Header (field numbers 1..8)."""

    version: int = 1
    num_postings_lists: int = 0
    num_docs: int = 0
    total_postings_lists: int = 0
    total_docs: int = 0
    total_terms_in_collection: int = 0
    average_doclength: float = 0.0
    description: str = ""


@dataclass
class PostingsList:
    """A decoded postings list with absolute docids."""

    term: str
    df: int
    cf: int
    docids: list[int] = field(default_factory=list)
    tfs: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class DocRecord:
    docid: int
    collection_docid: str
    doclength: int


# (name, kind) per field number; kind decides the wire type and the range check.
HEADER_FIELDS = {
    1: ("version", "int32"),
    2: ("num_postings_lists", "int32"),
    3: ("num_docs", "int32"),
    4: ("total_postings_lists", "int32"),
    5: ("total_docs", "int32"),
    6: ("total_terms_in_collection", "int64"),
    7: ("average_doclength", "double"),
    8: ("description", "string"),
}
DOC_FIELDS = {1: ("docid", "int32"), 2: ("collection_docid", "string"), 3: ("doclength", "int32")}
POSTINGS_LIST_FIELDS = {1: ("term", "string"), 2: ("df", "int64"), 3: ("cf", "int64"), 4: ("postings", "message")}
POSTING_FIELDS = {1: ("docid", "int32"), 2: ("tf", "int32")}
_WIRE = {"int32": 0, "int64": 0, "double": 1, "string": 2, "message": 2}
_DEFAULT = {"int32": 0, "int64": 0, "double": 0.0, "string": "", "message": None}


# ---------------------------------------------------------------------------------------------
# Encoding


def _int_field(num: int, v: int) -> bytes:
    return b"" if v == 0 else encode_varint(num << 3) + encode_varint(v)


def _str_field(num: int, s: str | bytes) -> bytes:
    b = s.encode("utf-8") if isinstance(s, str) else s
    return b"" if not b else encode_varint((num << 3) | 2) + encode_varint(len(b)) + b


def encode_header(h: Header) -> bytes:
    """Serialized Header message (without the length prefix)."""
    avg = b"" if h.average_doclength == 0.0 else b"\x39" + struct.pack("<d", h.average_doclength)
    return b"".join(
        (
            _int_field(1, h.version),
            _int_field(2, h.num_postings_lists),
            _int_field(3, h.num_docs),
            _int_field(4, h.total_postings_lists),
            _int_field(5, h.total_docs),
            _int_field(6, h.total_terms_in_collection),
            avg,
            _str_field(8, h.description),
        )
    )


def encode_doc(docid: int, collection_docid: str, doclength: int) -> bytes:
    """Serialized DocRecord message (without the length prefix)."""
    return _int_field(1, docid) + _str_field(2, collection_docid) + _int_field(3, doclength)


def postings_list_prefix(term: bytes, df: int, cf: int) -> bytes:
    """The term, df and cf fields of a PostingsList; the postings field bytes follow them."""
    return _str_field(1, term) + _int_field(2, df) + _int_field(3, cf)


def encode_postings_list(term: str, docids, tfs) -> bytes:
    """Serialized PostingsList (without the length prefix); df and cf computed from the postings."""
    body = encode_postings(docids, tfs)
    cf = int(tfs.sum()) if isinstance(tfs, np.ndarray) else sum(tfs)
    return postings_list_prefix(term.encode("utf-8"), len(docids), cf) + body


def delimited(message: bytes) -> bytes:
    """A message with its varint length prefix, as writeDelimitedTo writes it."""
    if len(message) > MAX_MESSAGE:
        raise CiffError(f"message of {len(message)} bytes exceeds the 2 GiB limit")
    return encode_varint(len(message)) + message


# ---------------------------------------------------------------------------------------------
# Decoding


def _typed(kind: str, name: str, wire: int, value, buf, start: int):
    """Convert a raw field value to its declared type, with range checks."""
    if wire != _WIRE[kind]:
        raise CiffError(f"field {name} has wire type {wire}, expected {_WIRE[kind]}")
    if kind == "int32":
        v = to_signed64(value)
        if not INT32_MIN <= v <= INT32_MAX:
            raise CiffError(f"field {name} = {v} out of int32 range")
        return v
    if kind == "int64":
        return to_signed64(value)
    if kind == "double":
        return struct.unpack_from("<d", buf, start)[0]
    if kind == "string":
        lo, hi = value
        try:
            return bytes(buf[lo:hi]).decode("utf-8")
        except UnicodeDecodeError as e:
            raise CiffError(f"field {name} is not valid UTF-8 ({e.reason} at {e.start})") from None
    return value  # message: (lo, hi) span


def iter_fields(buf, pos: int, end: int):
    """Yield (field number, wire type, value, offset of the tag) for the fields in buf[pos:end].

    value: unsigned int for varints, (lo, hi) span for length-delimited fields, the start offset for
    fixed64/fixed32 fields.
    """
    while pos < end:
        tag_at = pos
        tag, pos = decode_varint(buf, pos, end)
        num, wire = tag >> 3, tag & 7
        if num == 0:
            raise CiffError(f"invalid field number 0 at relative offset {tag_at}")
        if wire == 0:
            value, pos = decode_varint(buf, pos, end)
        elif wire == 2:
            n, pos = decode_varint(buf, pos, end)
            if pos + n > end:
                raise CiffError(f"field {num} claims {n} bytes but the message ends after {end - pos}")
            value = (pos, pos + n)
            pos += n
        elif wire == 1:
            if pos + 8 > end:
                raise CiffError(f"truncated fixed64 field {num}")
            value = pos
            pos += 8
        elif wire == 5:
            if pos + 4 > end:
                raise CiffError(f"truncated fixed32 field {num}")
            value = pos
            pos += 4
        else:
            raise CiffError(f"unsupported wire type {wire} for field {num} at relative offset {tag_at}")
        yield num, wire, value, tag_at


def decode_fields(buf, schema: dict, pos: int = 0, end: int | None = None) -> dict:
    """Decode a message with scalar/string fields into {name: value}; absent fields get defaults."""
    if end is None:
        end = len(buf)
    out = {name: _DEFAULT[kind] for name, kind in schema.values()}
    for num, wire, value, at in iter_fields(buf, pos, end):
        spec = schema.get(num)
        if spec is not None:
            out[spec[0]] = _typed(spec[1], spec[0], wire, value, buf, value)
    return out


def decode_header(buf) -> Header:
    return Header(**decode_fields(buf, HEADER_FIELDS))


def decode_doc(buf) -> DocRecord:
    return DocRecord(**decode_fields(buf, DOC_FIELDS))


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


def check_header(h: Header) -> None:
    """Header-only checks: version, non-negative counts, num <= total, average consistent."""
    if h.version != 1:
        raise CiffError(f"version = {h.version}, expected 1")
    for name in ("num_postings_lists", "num_docs", "total_postings_lists", "total_docs", "total_terms_in_collection"):
        if getattr(h, name) < 0:
            raise CiffError(f"{name} = {getattr(h, name)} is negative")
    if h.num_postings_lists > h.total_postings_lists:
        raise CiffError(f"num_postings_lists {h.num_postings_lists} > total_postings_lists {h.total_postings_lists}")
    if h.num_docs > h.total_docs:
        raise CiffError(f"num_docs {h.num_docs} > total_docs {h.total_docs}")
    expected = h.total_terms_in_collection / h.total_docs if h.total_docs else 0.0
    if not math.isfinite(h.average_doclength) or not math.isclose(h.average_doclength, expected, rel_tol=1e-6, abs_tol=1e-9):
        raise CiffError(
            f"average_doclength {h.average_doclength!r} inconsistent with total_terms_in_collection / total_docs"
            f" = {h.total_terms_in_collection} / {h.total_docs} = {expected!r}"
        )
