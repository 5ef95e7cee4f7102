"""The three CIFF messages: dataclasses, exact protobuf encoding and a checking decoder.

Encoding writes fields in number order and omits proto3 default values, so the bytes equal what
the protobuf runtime serializes. Decoding is our own parser rather than the protobuf runtime
because the runtime silently truncates oversized int32 values and gives no byte positions: here
every wire-type mismatch, truncation or out-of-range value is a CiffError. Unknown fields are
skipped (forward compatibility, as protobuf does).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

from lib.ciff.errors import CiffError
from lib.ciff.varint import (
    INT32_MAX,
    decode_varint,
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
    value: int | tuple[int, int]
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
    if not math.isfinite(h.average_doclength) or not math.isclose(
        h.average_doclength, expected, rel_tol=1e-6, abs_tol=1e-9
    ):
        raise CiffError(
            f"average_doclength {h.average_doclength!r} inconsistent with total_terms_in_collection / total_docs"
            f" = {h.total_terms_in_collection} / {h.total_docs} = {expected!r}"
        )
