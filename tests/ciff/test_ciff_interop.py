"""Interoperability with CIFF tools nobody here wrote: ciff-toolkit (reads and writes) and PISA."""

from __future__ import annotations

import struct
import sys
import types

import pytest
from ciff_toolkit.ciff_pb2 import DocRecord as PbDoc
from ciff_toolkit.ciff_pb2 import Header as PbHeader
from ciff_toolkit.ciff_pb2 import PostingsList as PbList
from ciff_toolkit.read import CiffReader as ToolkitReader
from ciff_toolkit.write import CiffWriter as ToolkitWriter

from lib.ciff import CiffReader, validate_file
from lib.ciff.search import search
from tests.fixtures_ciff import corpus, index_corpus


@pytest.mark.parametrize("gz,counted", [(False, False), (True, False), (True, True)])
def test_ciff_toolkit_reads_our_files(tmp_path, gz, counted):
    path, analyzer, counts = index_corpus(tmp_path, corpus(), counted=counted)
    if not gz:
        import gzip

        plain = tmp_path / "index-0.ciff"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    ours = CiffReader(str(path))
    with ToolkitReader(path) as theirs:
        h = theirs.header
        assert (h.version, h.num_postings_lists, h.num_docs, h.total_docs, h.total_terms_in_collection) == (
            1,
            ours.header.num_postings_lists,
            40,
            40,
            sum(sum(c.values()) for c in counts),
        )
        assert h.description == ours.header.description and analyzer.name in h.description
        lists = list(theirs.read_postings_lists())
        docs = list(theirs.read_documents())
    assert [pl.term for pl in lists] == sorted({t for c in counts for t in c})
    for pl, mine in zip(lists, ours.postings()):
        docids, prev = [], 0
        for p in pl.postings:  # the toolkit hands over the stored gaps
            prev += p.docid
            docids.append(prev)
        assert (pl.term, pl.df, pl.cf, docids, [p.tf for p in pl.postings]) == (
            mine.term,
            mine.df,
            mine.cf,
            mine.docids,
            mine.tfs,
        )
        assert all(counts[d][pl.term] == p.tf for d, p in zip(docids, pl.postings))
    assert [(d.docid, d.collection_docid, d.doclength) for d in docs] == [
        (i, f"<urn:uuid:{i:04d}>", sum(counts[i].values())) for i in range(40)
    ]


def _toolkit_file(path, terms):
    """A CIFF written by ciff-toolkit's writer: 2 docs, one posting per term in doc 0 and 1 alternately."""
    header = PbHeader(
        version=1,
        num_postings_lists=len(terms),
        num_docs=2,
        total_postings_lists=len(terms),
        total_docs=2,
        total_terms_in_collection=len(terms),
        average_doclength=len(terms) / 2,
        description="written by ciff-toolkit",
    )
    lists = []
    for i, term in enumerate(terms):
        pl = PbList(term=term, df=1, cf=1)
        pl.postings.add(docid=i % 2, tf=1)
        lists.append(pl)
    docs = [
        PbDoc(docid=0, collection_docid="a", doclength=(len(terms) + 1) // 2),
        PbDoc(docid=1, collection_docid="b", doclength=len(terms) // 2),
    ]
    with ToolkitWriter(str(path)) as w:
        w.write_header(header)
        w.write_postings_lists(lists)
        w.write_documents(docs)


def test_validator_and_reader_on_ciff_toolkit_files(tmp_path):
    good = tmp_path / "toolkit.ciff.gz"
    _toolkit_file(good, ["alpha", "beta", "gamma"])
    report = validate_file(str(good))
    assert report.ok, report.error
    r = CiffReader(str(good))
    assert [(p.term, p.docids) for p in r.postings()] == [("alpha", [0]), ("beta", [1]), ("gamma", [0])]
    assert [d.collection_docid for d in r.docs()] == ["a", "b"]
    # the toolkit validates nothing: it writes unsorted terms happily, our validator names the spot
    bad = tmp_path / "toolkit-unsorted.ciff"
    _toolkit_file(bad, ["beta", "alpha", "gamma"])
    err = validate_file(str(bad)).error
    assert err.section == "PostingsList" and err.message_index == 1 and err.term == "alpha"


def _ciff_to_pisa(ciff_file, output) -> None:
    """CIFF -> PISA's uncompressed collection (basename.docs/.freqs/.sizes/.terms/.documents).

    Stands in for pyciff.ciff_to_pisa when pyciff is not installable (it has no wheel and builds
    from Rust sources fetched from crates.io). It parses the CIFF with ciff-toolkit, not with our
    reader, and writes PISA's documented format: binary sequences of little-endian uint32 prefixed
    by their length; .docs starts with the singleton [num_docs].
    """

    def seq(f, values):
        f.write(struct.pack(f"<I{len(values)}I", len(values), *values))

    with (
        ToolkitReader(str(ciff_file)) as r,
        open(f"{output}.docs", "wb") as docs,
        open(f"{output}.freqs", "wb") as freqs,
        open(f"{output}.terms", "w") as terms,
    ):
        seq(docs, [r.header.num_docs])
        for pl in r.read_postings_lists():
            ids, prev = [], 0
            for p in pl.postings:
                prev += p.docid
                ids.append(prev)
            seq(docs, ids)
            seq(freqs, [p.tf for p in pl.postings])
            terms.write(pl.term + "\n")
        sizes = []
        with open(f"{output}.documents", "w") as titles:
            for d in r.read_documents():
                sizes.append(d.doclength)
                titles.write(d.collection_docid + "\n")
    with open(f"{output}.sizes", "wb") as f:
        seq(f, sizes)


@pytest.mark.filterwarnings("ignore:Using stemmer:UserWarning")
def test_pisa_indexes_our_ciff_and_ranks_the_rare_term_first(tmp_path, monkeypatch):
    pisa = pytest.importorskip("pyterrier_pisa", reason="pyterrier-pisa (PISA wheel) is not installed here")
    try:
        import pyciff  # noqa: F401
    except ImportError:
        monkeypatch.setitem(sys.modules, "pyciff", types.SimpleNamespace(ciff_to_pisa=_ciff_to_pisa))
    docs = corpus()
    path, analyzer, counts = index_corpus(tmp_path, docs, counted=True)  # as the index job writes them
    index = pisa.PisaIndex.from_ciff(str(path), str(tmp_path / "pisa"), stemmer="none")
    assert index.num_docs() == 40
    assert index.num_terms() == CiffReader(str(path)).header.num_postings_lists
    bm25 = index.bm25(k1=0.9, b=0.4, num_results=10)
    (rare,) = analyzer.tokens("Zanzibar")
    results = bm25.search(rare)
    assert results.iloc[0]["docno"] == docs[17][0]
    assert len(results) == 1
    # a common term: PISA returns exactly the documents that contain it, in the order of our own BM25
    common = analyzer.tokens("harbor")[0]
    results = pisa.PisaIndex(str(tmp_path / "pisa"), stemmer="none").bm25(k1=0.9, b=0.4, num_results=40).search(common)
    containing = {docs[i][0] for i, c in enumerate(counts) if common in c}
    assert 5 < len(containing) < 40 and set(results["docno"]) == containing
    ours = {h.collection_docid: h.score for h in search(str(path), "harbor", k=40)}
    assert set(ours) == containing
    in_pisa_order = [ours[d] for d in results["docno"]]
    assert all(a >= b - 1e-9 for a, b in zip(in_pisa_order, in_pisa_order[1:])), in_pisa_order


@pytest.mark.parametrize("counted", [False, True])
def test_a_shard_without_postings_reads_everywhere(tmp_path, counted):
    """Pages without text (an ``und`` shard of a real day): documents, no postings lists. Our
    reader, our validator and ciff-toolkit read it as 7 documents of length 0 and no terms."""
    docs = [(f"<urn:uuid:{i:04d}>", f"https://example.org/empty/{i}", "") for i in range(7)]
    path, _, _ = index_corpus(tmp_path, docs, lang="und", counted=counted)
    report = validate_file(str(path))
    assert report.ok, report.error
    ours = CiffReader(str(path))
    h = ours.header
    assert (h.num_postings_lists, h.total_postings_lists, h.num_docs, h.total_terms_in_collection) == (0, 0, 7, 0)
    assert list(ours.postings()) == [] and list(ours.raw_postings()) == []
    assert [(d.docid, d.collection_docid, d.doclength) for d in ours.docs()] == [
        (i, d[0], 0) for i, d in enumerate(docs)
    ]
    with ToolkitReader(path) as theirs:
        assert (theirs.header.num_postings_lists, theirs.header.num_docs) == (0, 7)
        assert list(theirs.read_postings_lists()) == []
        assert [d.collection_docid for d in theirs.read_documents()] == [d[0] for d in docs]
