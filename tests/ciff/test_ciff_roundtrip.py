"""CiffWriter -> CiffReader round trips, the writer's checks, atomic output and bounded memory."""

from __future__ import annotations

import gzip
import os
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.ciff import CiffError, CiffReader, CiffWriter, DocRecord, PostingsList, stream, validate_file


def write_index(path, lists, doclengths, collection_ids=None, description="roundtrip", **header):
    """Write lists [(term, docids, tfs)] and documents; header counts derived unless overridden."""
    total = sum(doclengths)
    kw = dict(
        num_postings_lists=len(lists),
        num_docs=len(doclengths),
        total_postings_lists=len(lists),
        total_docs=len(doclengths),
        total_terms_in_collection=total,
        average_doclength=total / len(doclengths) if doclengths else 0.0,
        description=description,
    )
    kw.update(header)
    ids = collection_ids or [f"doc-{i}" for i in range(len(doclengths))]
    with CiffWriter(str(path), **kw) as w:
        for term, docids, tfs in lists:
            w.add_postings(term, docids, tfs)
        for i, n in enumerate(doclengths):
            w.add_doc(i, ids[i], n)
    return w


# Code-point order differs from UTF-16 order for U+FFxx vs supplementary characters: both must work.
TERMS = ["Zeta", "alpha", "r\u00e9sum\u00e9", "\u4e2d\u6587", "\uff21", "\U0001f600"]


def _sample_lists():
    return [
        (TERMS[0], [0, 2], [1, 4]),
        (TERMS[1], [1], [2]),
        (TERMS[2], [0, 1, 2, 3], [1, 1, 1, 1]),
        (TERMS[3], [3], [7]),
        (TERMS[4], [2], [1]),
        (TERMS[5], list(range(4)), [1, 2, 1, 1]),
    ]


def _doclengths(lists, n):
    lengths = [0] * n
    for _, docids, tfs in lists:
        for d, t in zip(docids, tfs):
            lengths[d] += t
    return lengths


@pytest.mark.parametrize("name", ["x.ciff", "x.ciff.gz"])
def test_round_trip(tmp_path, name):
    lists = _sample_lists()
    lengths = _doclengths(lists, 4)
    path = tmp_path / name
    w = write_index(path, lists, lengths, collection_ids=["<urn:uuid:a>", "b", "c\u00e9", ""])
    assert w.bytes_written == path.stat().st_size > 0
    r = CiffReader(str(path))
    assert r.header.num_postings_lists == 6 and r.header.num_docs == 4
    assert r.header.total_terms_in_collection == sum(lengths) == 24
    assert r.header.average_doclength == pytest.approx(24 / 4) and r.header.description == "roundtrip"
    assert list(r.postings()) == [PostingsList(t, len(d), sum(f), d, f) for t, d, f in lists]
    assert list(r.docs()) == [
        DocRecord(0, "<urn:uuid:a>", lengths[0]),
        DocRecord(1, "b", lengths[1]),
        DocRecord(2, "c\u00e9", lengths[2]),
        DocRecord(3, "", lengths[3]),
    ]
    assert validate_file(str(path)).ok
    assert os.listdir(tmp_path) == [name]  # no temp file left
    if name.endswith(".gz"):
        assert gzip.decompress(path.read_bytes())[:1] != b""


def test_gzip_output_is_deterministic(tmp_path):
    lists = _sample_lists()
    a, b = tmp_path / "a" / "index-0.ciff.gz", tmp_path / "b" / "index-0.ciff.gz"
    for p in (a, b):
        write_index(p, lists, _doclengths(lists, 4))
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("level", [1, 2, 3, 6, 9])
def test_every_gzip_level_gives_the_same_messages_and_deterministic_bytes(tmp_path, level):
    """Levels 1-3 compress with ISA-L, 4-9 with zlib: the same gzip format and content."""
    lists = _sample_lists()
    plain, a, b = (
        tmp_path / "p" / "index-0.ciff",
        tmp_path / "a" / "index-0.ciff.gz",
        tmp_path / "b" / "index-0.ciff.gz",
    )
    write_index(plain, lists, _doclengths(lists, 4))
    for p in (a, b):
        write_index(p, lists, _doclengths(lists, 4), compresslevel=level)
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == plain.read_bytes()  # the stdlib reads every member


@st.composite
def collections(draw):
    n_docs = draw(st.integers(1, 30))
    vocab = draw(st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=25))
    lists = []
    for term in sorted(vocab):
        docids = sorted(draw(st.sets(st.integers(0, n_docs - 1), min_size=1, max_size=n_docs)))
        tfs = draw(st.lists(st.integers(1, 1000), min_size=len(docids), max_size=len(docids)))
        lists.append((term, docids, tfs))
    return lists, n_docs


@settings(max_examples=60, deadline=None)
@given(collections(), st.booleans())
def test_write_read_property(tmp_path_factory, coll, gz):
    lists, n_docs = coll
    path = tmp_path_factory.mktemp("prop") / ("p.ciff.gz" if gz else "p.ciff")
    lengths = _doclengths(lists, n_docs)
    write_index(path, lists, lengths)
    r = CiffReader(str(path))
    assert [(p.term, p.docids, p.tfs) for p in r.postings()] == lists
    assert [d.doclength for d in r.docs()] == lengths
    report = validate_file(str(path))
    assert report.ok, report.error
    assert report.stats["postings"] == sum(len(d) for _, d, _ in lists)


def _header(n_lists=2, n_docs=2, total=3):
    """CiffWriter's header counts for ``n_lists`` lists (None: counted mode), ``n_docs`` documents
    and ``total`` terms."""
    return dict(
        num_postings_lists=n_lists,
        num_docs=n_docs,
        total_postings_lists=n_lists,
        total_docs=n_docs,
        total_terms_in_collection=total,
        average_doclength=total / n_docs,
    )


@pytest.mark.parametrize(
    "steps,reason",
    [
        ([("p", "b", [0], [1]), ("p", "a", [1], [2])], "terms not in code-point order: after 'b'"),
        ([("p", "a", [0], [1]), ("p", "a", [1], [2])], "duplicate term"),
        # short lists are encoded in batches: their posting-level errors surface at the next flush
        (
            [("p", "a", [1, 0], [1, 1]), ("close",)],
            "PostingsList #0, term 'a': posting 1: docids not strictly ascending",
        ),
        ([("p", "a", [0, 2], [1, 2])], "docid 2 >= num_docs 2"),
        (
            [("p", "a", [0], [1]), ("p", "b", [1], [2**31]), ("close",)],
            "PostingsList #1, term 'b': posting 0: tf 2147483648 exceeds int32",
        ),
        ([("p", "a", [], [])], "empty postings list"),
        ([("p", "a", [0], [1]), ("d", 0, "x", 1)], "doc record before all postings lists: 1 of 2 written"),
        ([("p", "a", [0], [1]), ("p", "b", [1], [2]), ("d", 1, "x", 1)], "docid 1 != its position 0"),
        (
            [("p", "a", [0], [1]), ("p", "b", [1], [2]), ("d", 0, "x", 2)],
            "doclength 2 but the postings give docid 0 1 terms",
        ),
        ([("p", "a", [0], [1]), ("p", "b", [1], [2]), ("d", 0, "x", -1)], "doclength = -1 outside 0..2147483647"),
        (
            [("p", "a", [0], [1]), ("p", "b", [1], [2]), ("d", 0, "x", 1), ("d", 1, "y", 2), ("p", "c", [0], [1])],
            "postings list added after doc records",
        ),
        (
            [("p", "a", [0], [1]), ("p", "b", [1], [2]), ("d", 0, "x", 1), ("close",)],
            "1 doc records written but the header announces 2",
        ),
        ([("p", "a", [0], [1]), ("close",)], "1 postings lists written but the header announces 2"),
    ],
)
def test_writer_rejects_and_leaves_no_file(tmp_path, steps, reason):
    path = tmp_path / "w.ciff.gz"
    w = CiffWriter(str(path), **_header())
    with pytest.raises(CiffError) as e:
        for kind, *args in steps:
            {"p": w.add_postings, "d": w.add_doc, "close": w.close}[kind](*args)
    assert reason in str(e.value) and str(path) in str(e.value)
    assert os.listdir(tmp_path) == []
    with pytest.raises(CiffError, match="writer is closed"):
        w.add_postings("zzz", [0], [1])


def test_writer_totals_and_header_limits(tmp_path):
    path = tmp_path / "t.ciff"
    with pytest.raises(CiffError, match="sum of tf 3 != total_terms_in_collection 4"):
        write_index(
            path, [("a", [0], [1]), ("b", [1], [2])], [1, 2], total_terms_in_collection=4, average_doclength=2.0
        )
    with pytest.raises(CiffError, match=r"num_docs = 2147483648 outside 0..2147483647 \(int32 limit\)"):
        CiffWriter(str(path), **{**_header(), "num_docs": 2**31, "total_docs": 2**31})
    with pytest.raises(CiffError, match="average_doclength 9.0 inconsistent"):
        CiffWriter(str(path), **{**_header(), "average_doclength": 9.0})
    assert os.listdir(tmp_path) == []


def test_exception_inside_with_block_leaves_no_file(tmp_path):
    path = tmp_path / "x.ciff.gz"
    with pytest.raises(RuntimeError):
        with CiffWriter(str(path), **_header()) as w:
            w.add_postings("a", [0], [1])
            raise RuntimeError("task failed")
    assert os.listdir(tmp_path) == []


def test_numpy_inputs_and_long_lists(tmp_path):
    n = 5000
    docids = np.arange(0, 2 * n, 2, dtype=np.int64)
    tfs = (np.arange(n) % 7 + 1).astype(np.int32)
    lengths = [0] * (2 * n)
    for d, t in zip(docids.tolist(), tfs.tolist()):
        lengths[d] = t
    lengths = [x if x else 1 for x in lengths]
    filler = [i for i in range(2 * n) if i % 2]
    path = tmp_path / "long.ciff.gz"
    write_index(path, [("common", docids, tfs), ("odd", filler, [1] * len(filler))], lengths)
    lists = list(CiffReader(str(path)).postings())
    assert lists[0].docids == docids.tolist() and lists[0].tfs == tfs.tolist() and lists[0].cf == int(tfs.sum())
    assert lists[1].docids == filler
    assert validate_file(str(path)).ok


def test_short_and_long_lists_interleave_across_batches(tmp_path, monkeypatch):
    from lib.ciff import writer

    monkeypatch.setattr(writer, "BATCH_POSTINGS", 10)  # many flushes, between and around long lists
    rng = np.random.default_rng(5)
    n_docs = 2000
    lists = []
    for i, size in enumerate([1, 300, 2, 3, 7, 999, 1, 1, 12, 256, 257, 4, 1]):
        docids = np.sort(rng.choice(n_docs, size=size, replace=False))
        lists.append((f"term{i:03d}", docids.tolist(), rng.integers(1, 9, size).tolist()))
    lengths = [max(x, 0) for x in _doclengths(lists, n_docs)]
    path = tmp_path / "mixed.ciff.gz"
    write_index(path, lists, lengths)
    assert [(p.term, p.docids, p.tfs) for p in CiffReader(str(path)).postings()] == lists
    assert validate_file(str(path)).ok


def _random_lists(seed: int, n_docs: int, sizes: list[int]) -> list[tuple[str, list[int], list[int]]]:
    """Postings lists of the given sizes over n_docs documents, terms w00, w01, ..."""
    rng = np.random.default_rng(seed)
    lists = []
    for i, size in enumerate(sizes):
        docids = np.sort(rng.choice(n_docs, size=size, replace=False))
        lists.append((f"w{i:02d}", docids.tolist(), rng.integers(1, 5, size).tolist()))
    return lists


def test_batch_api_writes_the_same_bytes(tmp_path, monkeypatch):
    from lib.ciff import writer

    monkeypatch.setattr(writer, "BATCH_POSTINGS", 50)
    n_docs = 1500
    lists = _random_lists(9, n_docs, [3, 1, 700, 2, 40, 1000, 1, 260, 5])
    lengths = _doclengths(lists, n_docs)
    one_by_one = tmp_path / "a" / "index-0.ciff.gz"
    write_index(one_by_one, lists, lengths)
    batched = tmp_path / "b" / "index-0.ciff.gz"
    total = sum(lengths)
    with CiffWriter(str(batched), **_header(9, n_docs, total), description="roundtrip") as w:
        w.add_postings(*lists[0])  # mixing both APIs keeps the order
        part = lists[1:]
        w.add_postings_batch(
            [t for t, _, _ in part],
            [len(d) for _, d, _ in part],
            np.concatenate([d for _, d, _ in part]),
            np.concatenate([f for _, _, f in part]),
        )
        for i, n in enumerate(lengths):
            w.add_doc(i, f"doc-{i}", n)
    assert batched.read_bytes() == one_by_one.read_bytes()


@pytest.mark.parametrize(
    "terms,counts,docids,tfs,reason",
    [
        (["a", "c", "b"], [1, 1, 1], [0, 1, 0], [1, 1, 1], "PostingsList #2, term 'b': terms not in code-point order"),
        (
            ["a", "b"],
            [1, 2],
            [0, 1, 1],
            [1, 1, 1],
            "PostingsList #1, term 'b': posting 1: docids not strictly ascending",
        ),
        (["a", "b"], [1, 1], [0, 2], [1, 1], "term 'b': docid 2 >= num_docs 2"),
        (["a", "b"], [1, 2], [0, 1], [1, 1], "bad batch: 2 terms, 2 counts (min 1) summing to 3, 2 docids, 2 tfs"),
    ],
)
def test_batch_api_rejects(tmp_path, terms, counts, docids, tfs, reason):
    path = tmp_path / "x.ciff"
    w = CiffWriter(str(path), **_header(n_lists=3))
    with pytest.raises(CiffError) as e:
        w.add_postings_batch(terms, counts, docids, tfs)
    assert reason in str(e.value)
    assert os.listdir(tmp_path) == []


def _peak_reading(path) -> int:
    tracemalloc.start()
    try:
        for _ in CiffReader(str(path)).postings():
            pass
        for _ in CiffReader(str(path)).docs():
            pass
        assert validate_file(str(path)).ok
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_memory_does_not_grow_with_file_size(tmp_path, monkeypatch):
    """Same documents, 4x the postings lists: peak memory of reading and validating stays flat."""
    monkeypatch.setattr(stream, "READ_CHUNK", 1 << 16)  # small read chunk: small files show the bound
    n_docs, per_list = 600, 50
    peaks, sizes = [], []
    for n_terms in (800, 3200):
        lists, lengths = [], np.zeros(n_docs, np.int64)
        for i in range(n_terms):
            docids = np.arange(i % 12, n_docs, 12)[:per_list]
            tfs = np.full(len(docids), 1 + i % 3)
            lengths[docids] += tfs
            lists.append((f"t{i:06d}", docids, tfs))
        path = tmp_path / f"m{n_terms}.ciff"
        write_index(path, lists, lengths.tolist())
        sizes.append(path.stat().st_size)
        peaks.append(_peak_reading(path))
    assert sizes[1] > 3.5 * sizes[0] > 700_000
    # bounded by one read chunk plus small change, not by the file
    assert peaks[1] < 1.2 * peaks[0] + 50_000, (peaks, sizes)
    assert peaks[1] < sizes[1] / 4, (peaks, sizes)


def test_counted_mode_writes_the_same_messages(tmp_path):
    """num_postings_lists=None: same messages as with the count given; the header is a gzip
    member of its own in front of the body, which every gzip reader concatenates."""
    import zlib

    n_docs = 300
    lists = _random_lists(3, n_docs, [1, 5, 120, 2, 299, 7])
    lengths = _doclengths(lists, n_docs)
    known = tmp_path / "a" / "index-0.ciff.gz"
    write_index(known, lists, lengths)
    counted = tmp_path / "b" / "index-0.ciff.gz"
    total = sum(lengths)
    with CiffWriter(str(counted), **_header(None, n_docs, total), description="roundtrip") as w:
        w.add_postings_batch(
            [t for t, _, _ in lists],
            [len(d) for _, d, _ in lists],
            np.concatenate([d for _, d, _ in lists]),
            np.concatenate([f for _, _, f in lists]),
        )
        for i, n in enumerate(lengths):
            w.add_doc(i, f"doc-{i}", n)
    assert w.header.num_postings_lists == w.header.total_postings_lists == len(lists)
    assert gzip.decompress(counted.read_bytes()) == gzip.decompress(known.read_bytes())
    d = zlib.decompressobj(wbits=31)
    d.decompress(counted.read_bytes())
    assert d.unused_data[:2] == b"\x1f\x8b"  # a second member follows the header's
    assert validate_file(str(counted)).ok
    assert list(counted.parent.iterdir()) == [counted]  # no temp files left


def test_counted_mode_checks_still_hold(tmp_path):
    path = tmp_path / "index-0.ciff.gz"
    with pytest.raises(ValueError):
        CiffWriter(str(path), **{**_header(None, 1, 1), "total_postings_lists": 3})
    w = CiffWriter(str(path), **_header(None))
    w.add_postings("a", [0, 1], [1, 1])  # one term missing: doc 1 should have length 2
    w.add_doc(0, "x", 1)
    with pytest.raises(CiffError, match="doclength 2 but the postings give docid 1 1 terms"):
        w.add_doc(1, "y", 2)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("counted", [False, True])
def test_add_docs_writes_the_same_bytes_as_add_doc(tmp_path, counted):
    n_docs = 400
    lists = _random_lists(4, n_docs, [n_docs, 3, 90])  # the first list makes every doclength > 0
    lengths = _doclengths(lists, n_docs)
    batched = tmp_path / "b" / "index-0.ciff.gz"
    total = sum(lengths)
    k = None if counted else len(lists)
    with CiffWriter(str(batched), **_header(k, n_docs, total), description="roundtrip") as w:
        for t, d, f in lists:
            w.add_postings(t, d, f)
        ids = [f"doc-{i}" if i % 7 else "" for i in range(n_docs)]  # empty ids: protobuf omits the field
        w.add_docs(np.arange(0, 150), ids[:150], lengths[:150])
        w.add_docs(np.arange(150, n_docs), ids[150:], lengths[150:])
    got = [(d.docid, d.collection_docid, d.doclength) for d in CiffReader(str(batched)).docs()]
    assert got == [(i, ids[i], lengths[i]) for i in range(n_docs)]
    if not counted:
        plain = tmp_path / "c" / "index-0.ciff.gz"
        write_index(plain, lists, lengths, collection_ids=ids)
        assert batched.read_bytes() == plain.read_bytes()


@pytest.mark.parametrize(
    "docids,lengths,reason",
    [
        ([0, 2], None, "DocRecord #1: docid 2 != its position 1"),
        ([0, 1], [None, 5], "DocRecord #1: doclength 5 but the postings give docid 1"),
        ([0, 1, 2], None, "DocRecord #2: more doc records than the header's num_docs 2"),
    ],
)
def test_add_docs_names_the_first_bad_record(tmp_path, docids, lengths, reason):
    path = tmp_path / "index-0.ciff.gz"
    w = CiffWriter(str(path), **_header(1, 2, 2))
    w.add_postings("a", [0, 1], [1, 1])
    dl = [1 if x is None else x for x in (lengths or [None] * len(docids))]
    with pytest.raises(CiffError, match=reason):
        w.add_docs(docids, ["x"] * len(docids), dl)
    assert list(tmp_path.iterdir()) == []
