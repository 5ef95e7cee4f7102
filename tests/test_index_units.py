"""lib/index_plan.py and lib/index_build.py without Spark: shard planning, and the two
executor steps run on Arrow batches with the sort Spark would do done by pyarrow."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest

from lib.analysis import get_analyzer
from lib.ciff.reader import CiffReader
from lib.ciff.validate import validate_file
from lib.index_build import (
    CHUNK_SCHEMA,
    INPUT_COLUMNS,
    ShardSpec,
    page_text,
    tokenize_partition,
    write_partition,
)
from lib.index_plan import OTHER, lang_label, plan_groups, shard_count, tld_label


def test_tld_label():
    assert tld_label("co.uk") == "uk"
    assert tld_label("DE") == "de"
    assert tld_label("") == OTHER and tld_label(None) == OTHER
    assert tld_label("рф") == "xn--p1ai"
    assert tld_label("xn--p1ai") == "xn--p1ai"
    assert tld_label("a_b") == OTHER
    assert tld_label("other") == OTHER


def test_lang_label():
    assert lang_label("eng") == "eng" and lang_label("DEU") == "deu"
    assert lang_label(None) == "und" and lang_label("") == "und" and lang_label("e/g") == "und"


def test_shard_count_is_a_power_of_two():
    assert [shard_count(n, 10) for n in (0, 1, 10, 11, 20, 21, 30, 41, 80, 81)] == [1, 1, 1, 2, 2, 4, 4, 8, 8, 16]
    with pytest.raises(ValueError):
        shard_count(5, 0)


def test_plan_groups_merges_small_groups_per_language():
    counts = {("com", "eng"): 25, ("co.uk", "eng"): 2, ("", "eng"): 1, ("de", "deu"): 4, ("at", "deu"): 3,
              ("com", "deu"): 1, ("fr", None): 2}
    groups, assign = plan_groups(counts, docs_per_shard=10, min_group_docs=3)
    got = {(g.tld, g.lang): (g.docs, g.k) for g in groups}
    # uk/eng (2) and the IP host go to other/eng; com/deu (1) to other/deu; fr/und (2) to other/und
    assert got == {("com", "eng"): (25, 4), ("other", "eng"): (3, 1), ("de", "deu"): (4, 1), ("at", "deu"): (3, 1),
                   ("other", "deu"): (1, 1), ("other", "und"): (2, 1)}
    # groups sorted by (tld, lang); com/eng (second) takes 4 consecutive global shard ordinals
    assert [g.base for g in groups] == [0, 1, 5, 6, 7, 8]
    assert [(g.tld, g.lang) for g in groups] == sorted((g.tld, g.lang) for g in groups)
    name = {g.gid: (g.tld, g.lang) for g in groups}
    assert name[assign[("co.uk", "eng")]] == ("other", "eng") and name[assign[("", "eng")]] == ("other", "eng")
    assert name[assign[("fr", "")]] == ("other", "und")
    assert sum(g.docs for g in groups) == sum(counts.values())


WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda river".split()


def _input_batch(rows: list[dict]) -> pa.RecordBatch:
    schema = pa.schema([
        ("pidx", pa.int32()), ("record_id", pa.string()), ("url", pa.string()), ("title", pa.string()),
        ("description", pa.string()), ("plain_text", pa.string()), ("language", pa.string()),
        ("warc_file", pa.string()), ("warc_offset", pa.int64()), ("warc_length", pa.int64()),
        ("warc_date", pa.timestamp("us", tz="UTC")), ("id", pa.string()), ("url_host", pa.string()),
    ])
    assert schema.names == INPUT_COLUMNS
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def _rows(n_shards: int, per_shard: int, seed: int = 3) -> list[dict]:
    rnd = random.Random(seed)
    rows = []
    for p in range(n_shards):
        for i in range(per_shard):
            text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 30)))
            rows.append(dict(pidx=p, record_id=f"<urn:uuid:{p}-{i:05d}>", url=f"https://h{p}.example/{i}",
                             title=None if i % 4 else "Title words", description=None, plain_text=text,
                             language="eng" if p % 2 == 0 else "und", warc_file="file:///x.warc.gz",
                             warc_offset=i * 100, warc_length=99, warc_date=dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc),
                             id=f"id{p}-{i}", url_host=f"h{p}.example"))
    return rows


def _sorted_like_spark(chunks: list[pa.RecordBatch]) -> list[pa.RecordBatch]:
    t = pa.Table.from_batches(chunks, schema=CHUNK_SCHEMA)
    # Spark sorts strings by UTF-8 bytes with nulls first; doc rows (kind 1) have null terms
    t = t.sort_by([("pidx", "ascending"), ("kind", "ascending"), ("term", "ascending"), ("first", "ascending")])
    return t.to_batches(max_chunksize=3)  # small batches: runs of one term span several batches


def test_tokenize_then_write_equals_a_naive_inverted_index(tmp_path):
    rows = _rows(n_shards=2, per_shard=40)
    batches = [_input_batch(rows[i : i + 13]) for i in range(0, len(rows), 13)]
    specs = {p: ShardSpec(folder=str(tmp_path / f"g{p}"), shard=p, description=get_analyzer("eng" if p == 0 else "und").name)
             for p in (0, 1)}
    chunks = list(tokenize_partition(iter(batches), specs))  # a partial list per term and input batch
    terms = [t for b in chunks for t, k in zip(b.column("term").to_pylist(), b.column("kind").to_pylist()) if k == 0]
    assert len(terms) > 2 * len(set(terms))  # terms do span several chunks: the writer merges them
    totals = {}
    expected: dict[int, dict[str, list[tuple[int, int]]]] = {}
    for p in (0, 1):
        mine = [r for r in rows if r["pidx"] == p]
        inv: dict[str, list[tuple[int, int]]] = {}
        total = 0
        for docid, r in enumerate(mine):
            c = Counter(get_analyzer(r["language"]).tokens(page_text(r["title"], r["description"], r["plain_text"])))
            total += sum(c.values())
            for t, n in c.items():
                inv.setdefault(t, []).append((docid, n))
        expected[p] = inv
        totals[p] = (len(mine), len(inv), total)
    stats_rows = [r for b in chunks for r in b.to_pylist() if r["kind"] == -1]
    assert {r["pidx"]: (r["n_docs"], r["n_terms"], r["n_tokens"]) for r in stats_rows} == totals
    stats = pa.Table.from_batches(list(write_partition(iter(_sorted_like_spark(chunks)), specs))).to_pylist()
    assert [s["pidx"] for s in stats] == [0, 1]
    for p in (0, 1):
        path = tmp_path / f"g{p}" / f"index-{p}.ciff.gz"
        assert validate_file(str(path)).ok
        r = CiffReader(str(path))
        got = {pl.term: list(zip(pl.docids, pl.tfs)) for pl in r.postings()}
        assert got == expected[p]
        meta = pq.read_table(tmp_path / f"g{p}" / f"metadata-{p}.parquet").to_pylist()
        mine = [x for x in rows if x["pidx"] == p]
        assert [m["collection_docid"] for m in meta] == [x["record_id"] for x in mine]
        assert [m["url"] for m in meta] == [x["url"] for x in mine]
        assert [m["doclength"] for m in meta] == [d.doclength for d in r.docs()]
        assert stats[p]["postings"] == sum(len(v) for v in expected[p].values())


def test_unsorted_input_is_refused(tmp_path):
    rows = _rows(n_shards=1, per_shard=3)
    rows[0], rows[1] = rows[1], rows[0]
    with pytest.raises(RuntimeError, match="not sorted by record_id"):
        list(tokenize_partition(iter([_input_batch(rows)]), {0: ShardSpec(str(tmp_path), 0, "x")}))
    assert list(tmp_path.iterdir()) == []  # no metadata file from a failed task


def test_failed_shard_leaves_no_files(tmp_path):
    rows = _rows(n_shards=1, per_shard=5)
    chunks = pa.Table.from_batches(list(tokenize_partition(iter([_input_batch(rows)]), {0: ShardSpec(str(tmp_path / "m"), 0, "x")})))
    # lose one postings chunk on the way: the header's counts no longer hold
    term = pa.compute.field("term")
    lost = chunks.filter(pa.compute.is_null(term) | pa.compute.not_equal(term, "alpha")).to_batches()
    assert len(lost) and sum(b.num_rows for b in lost) == chunks.num_rows - 1
    spec = ShardSpec(folder=str(tmp_path / "w"), shard=0, description="x")
    with pytest.raises(ValueError, match="doc record before all postings lists: 13 of 14"):
        list(write_partition(iter(_sorted_like_spark(lost)), {0: spec}))
    assert list((tmp_path / "w").iterdir()) == []


def test_rows_before_stats_row_are_refused(tmp_path):
    chunks = list(tokenize_partition(iter([_input_batch(_rows(n_shards=1, per_shard=3))]), {0: ShardSpec(str(tmp_path / "m"), 0, "x")}))
    no_stats = [b.filter(pa.compute.not_equal(b.column("kind"), -1)) for b in chunks]
    with pytest.raises(RuntimeError, match="before its stats row"):
        list(write_partition(iter(_sorted_like_spark(no_stats)), {0: ShardSpec(str(tmp_path), 0, "x")}))
