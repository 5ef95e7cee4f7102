"""Varint and postings encoding: property tests against the protobuf runtime's own serializer."""

from __future__ import annotations

import numpy as np
import pytest
from ciff_toolkit.ciff_pb2 import PostingsList as PbPostingsList
from google.protobuf.internal.decoder import _DecodeVarint
from google.protobuf.internal.encoder import _VarintBytes
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.ciff import varint
from lib.ciff.errors import CiffError
from lib.ciff.messages import encode_postings_list
from lib.ciff.postings import check_postings, decode_postings_list
from lib.ciff.varint import INT32_MAX, decode_varint, decode_varint_run, encode_postings, encode_varint, to_signed64

U64 = st.integers(min_value=0, max_value=2**64 - 1)
I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(I64)
def test_varint_round_trip_and_matches_protobuf(v):
    b = encode_varint(v)
    assert b == _VarintBytes(v) if v >= 0 else len(b) == 10
    value, end = decode_varint(b, 0)
    assert end == len(b) and to_signed64(value) == v
    assert _DecodeVarint(b, 0)[0] == (v & (2**64 - 1))


@given(st.lists(U64, max_size=40))
def test_varint_run_decodes_every_value(values):
    data = b"".join(encode_varint(v) for v in values)
    decoded, lens = decode_varint_run(data)
    assert decoded.tolist() == values
    assert lens.tolist() == [len(encode_varint(v)) for v in values]


def test_varint_errors():
    with pytest.raises(CiffError, match="truncated"):
        decode_varint(b"\x80\x80", 0)
    with pytest.raises(CiffError, match="longer than 10 bytes"):
        decode_varint(b"\xff" * 11 + b"\x01", 0)
    with pytest.raises(CiffError, match="truncated"):
        decode_varint_run(b"\x01\x80")


# Postings: sorted unique docids (dense or sparse, up to int32) with tfs (mostly small, some huge).
_docids = st.one_of(
    st.sets(st.integers(0, 300), min_size=1, max_size=120),
    st.sets(st.integers(0, INT32_MAX), min_size=1, max_size=120),
).map(sorted)


@st.composite
def postings(draw):
    docids = draw(_docids)
    tfs = draw(
        st.lists(st.one_of(st.integers(1, 5), st.integers(1, INT32_MAX)), min_size=len(docids), max_size=len(docids))
    )
    return docids, tfs


def _protobuf_bytes(term, docids, tfs):
    pl = PbPostingsList(term=term, df=len(docids), cf=sum(tfs))
    prev = 0
    for d, t in zip(docids, tfs):
        p = pl.postings.add()
        p.docid, p.tf = d - prev, t
        prev = d
    return pl.SerializeToString()


@settings(max_examples=150, deadline=None)
@given(postings(), st.text(min_size=1, max_size=8))
def test_postings_encoding_equals_protobuf_and_decodes_back(pair, term):
    docids, tfs = pair
    expected = _protobuf_bytes(term, docids, tfs)
    # the Python path (lists) and the numpy path (arrays) agree with protobuf byte for byte
    assert encode_postings_list(term, docids, tfs) == expected
    assert encode_postings_list(term, np.array(docids), np.array(tfs)) == expected
    raw = decode_postings_list(expected)
    assert (raw.term, raw.df, raw.cf) == (term, len(docids), sum(tfs))
    assert check_postings(raw).tolist() == docids and raw.tfs.tolist() == tfs


@settings(max_examples=30, deadline=None)
@given(postings())
def test_chunked_encoding_is_seamless(pair):
    docids, tfs = pair
    whole = _protobuf_bytes("t", docids, tfs)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(varint, "CHUNK", 7)  # gaps must carry over chunk boundaries
        assert encode_postings_list("t", np.array(docids), np.array(tfs)) == whole


def test_other_field_orders_decode_the_same():
    # tf before docid inside each Posting and an unknown field: legal protobuf, not our layout
    body = (
        b"\x0a\x01x\x10\x02\x18\x05" + b"\x22\x04\x10\x02\x08\x03" + b"\x22\x06\x10\x03\x08\x04\x28\x01" + b"\x30\x07"
    )
    raw = decode_postings_list(body)
    assert (raw.term, raw.df, raw.cf) == ("x", 2, 5)
    assert check_postings(raw).tolist() == [3, 7] and raw.tfs.tolist() == [2, 3]


@pytest.mark.parametrize(
    "docids,tfs,reason",
    [
        ([3, 3], [1, 1], "posting 1: docids not strictly ascending (3 then 3)"),
        ([5, 2], [1, 1], "posting 1: docids not strictly ascending"),
        ([-1, 2], [1, 1], "posting 0: negative docid -1"),
        ([0, 2**31], [1, 1], "posting 1: docid 2147483648 exceeds int32"),
        ([0, 1], [1, 0], "posting 1: tf 0 < 1"),
        ([0, 1], [1, 2**31], "posting 1: tf 2147483648 exceeds int32"),
        ([0, 1], [1], "2 docids but 1 tfs"),
    ],
)
@pytest.mark.parametrize("as_array", [False, True])
def test_encoding_rejects_bad_postings(docids, tfs, reason, as_array):
    if as_array:
        docids, tfs = np.array(docids), np.array(tfs)
    with pytest.raises(CiffError) as e:
        encode_postings(docids, tfs)
    assert reason in str(e.value)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(postings(), st.text(min_size=1, max_size=30)), min_size=1, max_size=12))
def test_batch_encoding_equals_list_by_list(batch):
    from lib.ciff.batch import encode_lists
    from lib.ciff.messages import delimited

    terms = [t.encode("utf-8") for _, t in batch]
    counts = [len(d) for (d, _), _ in batch]
    docids = [x for (d, _), _ in batch for x in d]
    tfs = [x for (_, f), _ in batch for x in f]
    data, cf = encode_lists(terms, counts, docids, tfs)
    assert data == b"".join(delimited(_protobuf_bytes(t, d, f)) for (d, f), t in batch)
    assert cf.tolist() == [sum(f) for (_, f), _ in batch]


def test_batch_encoding_names_the_bad_list():
    from lib.ciff.batch import encode_lists

    with pytest.raises(CiffError) as e:
        encode_lists([b"a", b"b", b"c"], [2, 2, 1], [0, 5, 3, 3, 0], [1, 1, 1, 1, 1])
    assert e.value.message_index == 1 and "posting 1: docids not strictly ascending (3 then 3)" in e.value.reason


def test_batch_encoding_long_terms_and_large_values():
    from lib.ciff.batch import encode_lists
    from lib.ciff.messages import delimited

    lists = [
        ("\u00e9" * 150, [0, 2**31 - 1], [2**31 - 1, 1]),  # 300-byte term: two-byte length varint
        ("\U0001f600" * 40, list(range(0, 4000, 3)), [1] * 1334),  # message longer than 2^14 bytes
        ("z", [7], [128]),
    ]
    data, cf = encode_lists(
        [t.encode() for t, _, _ in lists],
        [len(d) for _, d, _ in lists],
        [x for _, d, _ in lists for x in d],
        [x for _, _, f in lists for x in f],
    )
    assert data == b"".join(delimited(_protobuf_bytes(t, d, f)) for t, d, f in lists)
    assert cf.tolist() == [2**31, 1334, 128]
