"""lib.serve.engine: exact global BM25 over every shard of a day or range, held against a brute-force
scorer over the union of the shards' postings (read with ciff-toolkit's protobuf classes, not lib.ciff)."""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import math
import pathlib
import shutil
from collections import Counter, defaultdict

import pyarrow.parquet as pq
import pytest
from ciff_toolkit.ciff_pb2 import DocRecord, Header, PostingsList
from google.protobuf.internal.decoder import _DecodeVarint32

from jobs.index import IndexJob
from jobs.preprocess import PreprocessJob
from lib.serve.engine import MAX_QUERY_CHARS, Engine
from lib.serve.errors import QueryError
from lib.text.analysis import analyzer_from_description
from lib.warc.sample import write_sample_crawl
from tests.helpers_day import index_corpus_small_shards

DAY = dt.date(2026, 1, 15)
DAY2 = dt.date(2026, 1, 16)
QUERIES = [
    "library budget",
    "public libraries budget",
    "Haushalt Bibliotheken",
    "the",
    "museum exhibition history",
    "bicycle tyre",
    "图书馆 预算",
    "musée exposition",
    "bibliotecas públicas",
    "museum",
    "new",
    "бюджет",
    "Ausstellung Museum Geschichte",
    "regio oogst",
]


def _messages(path: pathlib.Path):
    data = gzip.decompress(path.read_bytes())
    pos = 0
    while pos < len(data):
        n, pos = _DecodeVarint32(data, pos)
        yield data[pos : pos + n]
        pos += n


def read_shard(path: pathlib.Path):
    """(analyzer description, {term: [(docid, tf)]}, [(collection_docid, doclength)]) via protobuf."""
    msgs = _messages(path)
    h = Header()
    h.ParseFromString(next(msgs))
    lists = {}
    for _ in range(h.num_postings_lists):
        pl = PostingsList()
        pl.ParseFromString(next(msgs))
        d, out = 0, []
        for p in pl.postings:
            d += p.docid
            out.append((d, p.tf))
        lists[pl.term] = out
    docs = []
    for _ in range(h.num_docs):
        dr = DocRecord()
        dr.ParseFromString(next(msgs))
        docs.append((dr.collection_docid, dr.doclength))
    return h.description, lists, docs


@functools.lru_cache(maxsize=512)
def _read_shard_cached(path: str, size: int, mtime_ns: int):
    return read_shard(pathlib.Path(path))


def brute_force(index_days: list[pathlib.Path], q: str, k: int, k1=0.9, b=0.4, langs=None, exclude=()):
    """Merged index of every shard of the given index day folders (in global order), but those whose
    path below their day folder is in ``exclude``; top-k (score, record_id)."""
    shards = []
    for day in index_days:
        for p in sorted(
            day.glob("*/*/index-*.ciff.gz"),
            key=lambda p: (p.parent.parent.name, p.parent.name, int(p.name.split("-")[1].split(".")[0])),
        ):
            if (langs and p.parent.name not in langs) or p.relative_to(day).as_posix() in exclude:
                continue
            st = p.stat()
            shards.append(_read_shard_cached(str(p), st.st_size, st.st_mtime_ns))
    n = sum(len(docs) for _, _, docs in shards)
    avgdl = sum(dl for _, _, docs in shards for _, dl in docs) / n
    df = Counter()
    for _, lists, _ in shards:
        for t, ps in lists.items():
            df[t] += len(ps)
    scored = []
    order = 0
    for desc, lists, docs in shards:
        qtf = Counter(analyzer_from_description(desc).tokens(q))
        acc = defaultdict(float)
        for t, c in qtf.items():
            if t not in lists:
                continue
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            for d, tf in lists[t]:
                acc[d] += c * idf * tf / (tf + k1 * (1 - b + b * docs[d][1] / avgdl))
        for d, s in acc.items():
            scored.append((-s, order, d, docs[d][0]))
        order += 1
    scored.sort()
    return [(-s, rid) for s, _, _, rid in scored[:k]]


@pytest.fixture(scope="module")
def root(spark, tmp_path_factory) -> pathlib.Path:
    """The sample crawl preprocessed and indexed into several shards and languages, on two days."""
    root = tmp_path_factory.mktemp("serve") / "root"
    write_sample_crawl(str(root), DAY, 3, 60)
    common = ["--date", DAY.isoformat(), "--root", str(root)]
    assert PreprocessJob().main(common, spark=spark) == 0
    assert IndexJob().main(common + ["--docs-per-shard", "15", "--min-group-docs", "5", "--no-graph"], spark=spark) == 0
    # a second day: the same pages published again (every URL id repeats)
    for kind in ("index", "preprocessed"):
        shutil.copytree(root / kind / "2026-01" / "15", root / kind / "2026-01" / "16")
    return root


@pytest.fixture(scope="module")
def engine(root, tmp_path_factory) -> Engine:
    return Engine({"dc1": str(root)}, cache_dir=str(tmp_path_factory.mktemp("cache")))


def test_index_has_several_shards_and_languages(engine, root):
    info = engine.index_info()
    assert info["days"] == ["2026-01-15", "2026-01-16"]
    assert info["shards"] >= 2 * 6 and len(info["languages"]) >= 3
    assert info["shards"] == 2 * len(list((root / "index" / "2026-01" / "15").glob("*/*/index-*.ciff.gz")))


@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (1.2, 0.75)])
def test_global_bm25_equals_brute_force_over_the_union(engine, root, k1, b):
    day = root / "index" / "2026-01" / "15"
    checked = 0
    for q in QUERIES:
        want = brute_force([day], q, 100, k1, b)
        got = engine.search(q, DAY, k=100, k1=k1, b=b)
        assert [h.record_id for h in got.hits] == [rid for _, rid in want], q
        for h, (s, _) in zip(got.hits, want):
            assert abs(h.score - s) <= 1e-5
        checked += len(want)
    assert checked > 100


def test_language_filter_selects_shards_before_top_k(engine, root):
    day = root / "index" / "2026-01" / "15"
    for q in ["library budget", "Haushalt Bibliotheken", "museum", "new"]:
        want = brute_force([day], q, 10, langs={"deu"})
        got = engine.search(q, DAY, langs=["deu"])
        assert [h.record_id for h in got.hits] == [rid for _, rid in want]
        assert all(h.language == "deu" for h in got.hits)
        assert got.shards == len(list(day.glob("*/deu/index-*.ciff.gz")))
    # German pages are found though other languages' pages fill the unfiltered top 5
    unfiltered = engine.search("museum", DAY, k=5).hits
    assert any(h.language != "deu" for h in unfiltered)
    assert len(engine.search("museum", DAY, langs=["deu"], k=5).hits) == 5


def test_hits_carry_the_archive_pointer_and_a_highlighted_snippet(engine, root):
    res = engine.search("library budget", DAY, k=3)
    assert res.days == ["2026-01-15"] and res.total_results >= len(res.hits) > 0
    h = res.hits[0]
    assert h.url.startswith("http") and h.warc_file and h.warc_length > 0 and h.warc_offset >= 0
    assert h.record_id.startswith("urn:uuid:") and h.day == "2026-01-15" and h.dc == "dc1"
    assert "<em>libraries</em>" in h.snippet and "<em>budget</em>" in h.snippet
    assert "<" not in h.snippet.replace("<em>", "").replace("</em>", "")


def test_date_range_keeps_each_url_once_newest_day_wins(engine, root):
    one = engine.search("library budget", DAY, k=10)
    both = engine.search("library budget", DAY, DAY2, k=10)
    assert both.days == ["2026-01-15", "2026-01-16"]
    urls = [h.url for h in both.hits]
    assert len(urls) == len(set(urls))
    assert {h.day for h in both.hits} == {"2026-01-16"}
    assert sorted(urls) == sorted(h.url for h in one.hits)
    # statistics cover both days before de-duplication: every df and N double, avgdl unchanged
    days = [root / "index" / "2026-01" / d for d in ("15", "16")]
    want = brute_force(days, "library budget", 20)
    assert [round(s, 9) for s, _ in want[::2]] == [round(h.score, 9) for h in both.hits]


@pytest.mark.parametrize("q", ["", "   ", "AND OR", "+-!?", "x" * (MAX_QUERY_CHARS + 1)])
def test_bad_queries_are_refused(engine, q):
    with pytest.raises(QueryError):
        engine.search(q, DAY)


def test_unknown_day_language_and_wide_range_are_refused(engine):
    with pytest.raises(QueryError, match="no published index day"):
        engine.search("library", dt.date(2020, 1, 1))
    with pytest.raises(QueryError, match="unknown language"):
        engine.search("library", DAY, langs=["xxx"])
    with pytest.raises(QueryError, match="wider than"):
        engine.search("library", DAY, DAY + dt.timedelta(days=40))
    with pytest.raises(QueryError, match="before it starts"):
        engine.search("library", DAY2, DAY)
    assert engine.languages(DAY) == sorted(
        {p.name for p in (pathlib.Path(engine.roots["dc1"]) / "index" / "2026-01" / "15").glob("*/*")}
    )


def test_global_bm25_on_the_real_crawl_samples(spark, corpus, tmp_path):
    """The shared real crawl samples, preprocessed and indexed into 17 shards of 9 languages:
    the top-100 equals the brute force over the union for queries of their own titles."""
    root = tmp_path / "root"
    warc, pre, out = tmp_path / "warc", root / "preprocessed" / "2026-01" / "15", root / "index" / "2026-01" / "15"
    index_corpus_small_shards(spark, corpus, warc, pre, out)
    eng = Engine({"dc1": str(root)}, cache_dir=str(tmp_path / "cache"))
    assert len(eng.languages(DAY)) >= 5
    titles = [
        t
        for p in sorted(pre.glob("language=*/*.parquet"))
        for t in pq.read_table(p, columns=["title"]).column(0).to_pylist()
        if t
    ]
    qs = ["archive web", "internet archive collection", "the", "Москва", "数据"] + titles[:: max(1, len(titles) // 12)][
        :12
    ]
    compared = 0
    for q in qs:
        want = brute_force([out], q, 100)
        got = eng.search(q, DAY, k=100)
        assert [h.record_id for h in got.hits] == [rid for _, rid in want], q
        assert all(abs(h.score - s) <= 1e-5 for h, (s, _) in zip(got.hits, want))
        compared += len(want)
    assert compared > 300
    # snippets come from the plain text (the metadata's, or the preprocessed day's joined by record_id)
    hit = eng.search("archive", DAY, k=1).hits[0]
    assert "<em>" in hit.snippet.lower()


def test_build_cli_reports_cost_and_rebuilds_a_republished_day(root, tmp_path, capsys):
    import json

    from lib.serve import prewarm

    cache = tmp_path / "cache"
    assert prewarm.main(["--root", str(root), "--date", "2026-01-15", "--to", "2026-01-16", "--cache", str(cache)]) == 0
    first = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["day"] for r in first] == ["2026-01-15", "2026-01-16"] and all(
        r["built"] and r["bytes"] > 0 for r in first
    )
    assert prewarm.main(["--root", str(root), "--date", "2026-01-15", "--cache", str(cache)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert not again["built"] and again["path"] == first[0]["path"]
    # a re-published day (new _stats.json) gets a new folder; the old one is removed
    copy = tmp_path / "root"
    shutil.copytree(root / "index" / "2026-01" / "15", copy / "index" / "2026-01" / "15")
    assert prewarm.main(["--root", str(copy), "--date", "2026-01-15", "--cache", str(cache), "--dc", "x"]) == 0
    before = json.loads(capsys.readouterr().out)
    stats = copy / "index" / "2026-01" / "15" / "_stats.json"
    stats.write_text(stats.read_text() + " ")
    assert prewarm.main(["--root", str(copy), "--date", "2026-01-15", "--cache", str(cache), "--dc", "x"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["built"] and after["path"] != before["path"] and not pathlib.Path(before["path"]).exists()
    assert prewarm.main(["--root", str(copy), "--date", "2020-01-01", "--cache", str(cache)]) == 2
