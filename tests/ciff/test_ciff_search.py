"""BM25 search over one CIFF shard (python -m lib.ciff search)."""

from __future__ import annotations

import math
import shutil

import pytest

from lib.ciff import CiffError
from lib.ciff.__main__ import main
from lib.ciff.search import PlainAnalyzer, search
from tests.fixtures_ciff import corpus, good_messages, index_corpus, write_raw


def expected_bm25(counts, query_terms, k1=0.9, b=0.4):
    """BM25 computed directly from the documents' term counts (Lucene's formula)."""
    n = len(counts)
    lengths = [sum(c.values()) for c in counts]
    avgdl = sum(lengths) / n
    scores = {}
    for term in query_terms:  # a repeated query term counts again
        df = sum(1 for c in counts if term in c)
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for d, c in enumerate(counts):
            tf = c.get(term, 0)
            if tf:
                scores[d] = scores.get(d, 0.0) + idf * tf / (tf + k1 * (1 - b + b * lengths[d] / avgdl))
    return scores


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shard")
    docs = corpus()
    path, analyzer, counts = index_corpus(folder, docs, n=7)
    return path, analyzer, counts, docs


def test_rare_term_page_ranks_first(shard):
    path, analyzer, counts, docs = shard
    hits = search(str(path), "ZANZIBAR")
    assert [h.collection_docid for h in hits] == [docs[17][0]]
    assert hits[0].docid == 17


def test_scores_equal_bm25_computed_from_the_documents(shard):
    path, analyzer, counts, docs = shard
    query = "winter harbor Zanzibar winters"  # 'winters' stems like 'winter': that term counts twice
    terms = analyzer.tokens(query)
    assert len(terms) == 4 and len(set(terms)) == 3
    expected = expected_bm25(counts, terms)
    hits = search(str(path), query, k=100)
    assert len(hits) == len(expected) > 10
    for h in hits:
        assert h.score == pytest.approx(expected[h.docid], rel=1e-9)
    ranked = sorted(expected.items(), key=lambda kv: (-kv[1], docs[kv[0]][0]))
    assert [h.docid for h in hits] == [d for d, _ in ranked]
    assert [h.docid for h in search(str(path), query, k=5)] == [d for d, _ in ranked[:5]]


def test_search_many_equals_search_per_query(shard):
    from lib.ciff.search import search_many

    path, analyzer, _, docs = shard
    queries = ["ZANZIBAR", "", "zzzz unknown", *[" ".join(d[2].split()[:4]) for d in docs[:6]], docs[3][2]]
    for k in (1, 3, 10):
        assert search_many(str(path), queries, k, analyzer=analyzer) == [
            search(str(path), q, k, analyzer=analyzer) for q in queries
        ]


def test_ties_break_on_collection_docid(tmp_path):
    docs = [(f"id-{c}", f"https://x/{c}", "same words here") for c in "dbca"] + [("id-e", "https://x/e", "other")]
    path, _, _ = index_corpus(tmp_path, docs)
    hits = search(str(path), "same words", k=3)
    assert [h.collection_docid for h in hits] == ["id-a", "id-b", "id-c"]
    assert len({h.score for h in hits}) == 1


def test_cli_prints_id_url_score(shard, capsys, tmp_path):
    path, analyzer, counts, docs = shard
    assert main(["search", str(path), "zanzibar", "-k", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    cid, url, score = out[0].split("\t")
    assert (cid, url) == (docs[17][0], "https://example.org/page/17")
    assert float(score) == pytest.approx(expected_bm25(counts, analyzer.tokens("zanzibar"))[17], abs=1e-4)
    # elsewhere, without metadata beside it: ids only, unless --metadata names the file
    moved = tmp_path / "index-7.ciff.gz"
    shutil.copy(path, moved)
    assert main(["search", str(moved), "zanzibar"]) == 0
    assert capsys.readouterr().out.split("\t")[1] == "-"
    assert main(["search", str(moved), "zanzibar", "--metadata", str(path.parent / "metadata-7.parquet")]) == 0
    assert capsys.readouterr().out.split("\t")[1] == "https://example.org/page/17"
    assert main(["search", str(moved), "qwertyuiop"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no matching documents" in captured.err


def test_files_from_other_tools_need_plain(tmp_path, capsys):
    path = tmp_path / "other.ciff"
    write_raw(path, good_messages())  # description "hand-made": no analyzer named
    with pytest.raises(CiffError, match="no known analyzer in the header description 'hand-made'"):
        search(str(path), "apple")
    assert main(["search", str(path), "apple"]) == 1
    assert "use --plain" in capsys.readouterr().err
    hits = search(str(path), "Apple cherry", analyzer=PlainAnalyzer())
    assert {h.collection_docid for h in hits} == {"d0", "d1", "d2"}
    assert hits[0].collection_docid == "d1"  # cherry is rarer than apple: idf wins
