"""lib/index/shards.py, lib/index/invert.py and lib/index/write.py without Spark: shard
planning, and the map and reduce steps run on real Parquet files (the driver's part, the
grouping of the map reports, done as the job does it)."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import pyarrow as pa
import pyarrow.compute  # loads pa.compute
import pyarrow.parquet as pq
import pytest

from lib.ciff.reader import CiffReader
from lib.ciff.validate import validate_file
from lib.index.invert import (
    MAP_SCHEMA,
    READ_COLUMNS,
    MapPlan,
    index_files,
    page_text,
    segment_path,
    shard_of,
    write_arrow,
)
from lib.index.shards import OTHER, count_pages, lang_label, plan_groups, shard_count, tld_label
from lib.index.write import ShardSpec, shard_inputs, write_shards
from lib.pages.keyspace import partition_of
from lib.pages.schema import PAGE_SCHEMA
from lib.text.analysis import get_analyzer


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
    counts = {
        ("com", "eng"): 25,
        ("co.uk", "eng"): 2,
        ("", "eng"): 1,
        ("de", "deu"): 4,
        ("at", "deu"): 3,
        ("com", "deu"): 1,
        ("fr", None): 2,
    }
    groups, assign = plan_groups(counts, docs_per_shard=10, min_group_docs=3)
    got = {(g.tld, g.lang): (g.docs, g.k) for g in groups}
    # uk/eng (2) and the IP host go to other/eng; com/deu (1) to other/deu; fr/und (2) to other/und
    assert got == {
        ("com", "eng"): (25, 4),
        ("other", "eng"): (3, 1),
        ("de", "deu"): (4, 1),
        ("at", "deu"): (3, 1),
        ("other", "deu"): (1, 1),
        ("other", "und"): (2, 1),
    }
    # groups sorted by (tld, lang); com/eng (second) takes 4 consecutive global shard ordinals
    assert [g.base for g in groups] == [0, 1, 5, 6, 7, 8]
    assert [(g.tld, g.lang) for g in groups] == sorted((g.tld, g.lang) for g in groups)
    name = {g.gid: (g.tld, g.lang) for g in groups}
    assert name[assign[("co.uk", "eng")]] == ("other", "eng") and name[assign[("", "eng")]] == ("other", "eng")
    assert name[assign[("fr", "")]] == ("other", "und")
    assert sum(g.docs for g in groups) == sum(counts.values())


WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda river".split()
#: the test's page files: these columns of the page schema, typed as the preprocess job writes them
COLUMNS = (
    "record_id url url_suffix title description plain_text warc_file warc_offset warc_length warc_date id url_host"
)
SCHEMA = pa.schema([PAGE_SCHEMA.field(n) for n in COLUMNS.split()])
# three files: two English ones (shards 0 and 1 of com/eng), one undetermined (shard 2)
PLAN_GROUPS = {("com", "eng"): (0, 1), ("", "eng"): (0, 1), ("com", "und"): (2, 0)}


def _pages(n: int, lang: str, seed: int) -> list[dict]:
    rnd = random.Random(seed)
    rows = []
    for i in range(n):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 30)))
        rows.append(
            dict(
                record_id=f"<urn:uuid:{lang}-{seed}-{i:05d}>",
                url=f"https://h{i % 7}.example.com/{seed}/{i}",
                url_suffix="com" if i % 5 else None,
                title=None if i % 4 else "Title words",
                description=None,
                plain_text=text,
                warc_file="file:///x.warc.gz",
                warc_offset=i * 100,
                warc_length=99,
                warc_date=dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc),
                id=f"id{seed}-{i}",
                url_host=f"h{i % 7}.example.com",
            )
        )
    if lang == "und":
        for r in rows:
            r["url_suffix"] = "com"
    return rows


def _day(tmp_path) -> list[tuple[int, str, str, list[dict]]]:
    """(t, path, language, pages) of a small preprocessed day, in file (docid) order."""
    files = []
    for lang, name, n, seed in [("eng", "part-a", 40, 1), ("eng", "part-b", 33, 2), ("und", "part-a", 12, 3)]:
        d = tmp_path / "day" / f"language={lang}"
        d.mkdir(parents=True, exist_ok=True)
        rows = _pages(n, lang, seed)
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), d / f"{name}.parquet")
        files.append((len(files), str(d / f"{name}.parquet"), lang, rows))
    return files


def _map(files, spill, runs=None, **plan) -> list[dict]:
    """The map of ``files``, one task per run of consecutive files (``runs``: lists of
    indexes; one file a run by default)."""
    p = MapPlan(groups=PLAN_GROUPS, spill=str(spill), **plan)
    runs = runs or [[i] for i in range(len(files))]
    todo = [(files[r[0]][0], [(files[i][1], files[i][2]) for i in r]) for r in runs]
    out = []
    for i in reversed(range(len(todo))):  # task order does not matter: t is the docid order
        out += list(index_files(iter([pa.record_batch([pa.array([i])], names=["id"])]), p, todo))
    return pa.Table.from_batches(out, schema=MAP_SCHEMA).to_pylist()


def _reduce(reports, spill, out) -> list[dict]:
    inputs = shard_inputs(reports)
    todo = sorted(inputs)
    specs = {p: ShardSpec(folder=str(out / f"g{p}"), shard=p, description="x") for p in todo}
    rows = pa.record_batch([pa.array(list(range(len(todo))))], names=["id"])
    return pa.Table.from_batches(list(write_shards(iter([rows]), todo, inputs, specs, str(spill)))).to_pylist()


def _inverted(pages: list[dict], analyzer) -> tuple[dict[str, list[tuple[int, int]]], list[int]]:
    """The postings (term -> [(docid, tf)]) and doc lengths of ``pages`` in order, counted in Python."""
    inv: dict[str, list[tuple[int, int]]] = {}
    lengths = []
    for docid, r in enumerate(pages):
        c = Counter(analyzer.tokens(page_text(r["title"], r["description"], r["plain_text"])))
        lengths.append(sum(c.values()))
        for term, n in c.items():
            inv.setdefault(term, []).append((docid, n))
    return inv, lengths


def _expected(files) -> dict[int, list[dict]]:
    """Each shard's pages in docid order: file by file, row by row."""
    shards: dict[int, list[dict]] = {}
    for _, _, lang, rows in files:
        for r in rows:
            base, bits = PLAN_GROUPS[(r["url_suffix"] or "", lang)]
            shards.setdefault(shard_of(r["url"], base, bits), []).append(dict(r, language=lang))
    return shards


@pytest.mark.parametrize("slice_postings", [1 << 22, 5])
@pytest.mark.parametrize("flush_postings,batch_rows", [(4_000_000, 4096), (25, 7)])
def test_map_reduce_equals_a_naive_inverted_index(tmp_path, monkeypatch, slice_postings, flush_postings, batch_rows):
    from lib.index import write as index_write

    monkeypatch.setattr(index_write, "SLICE_POSTINGS", slice_postings)  # 5: many slices per shard
    files = _day(tmp_path)
    spill = tmp_path / "spill"
    reports = _map(files, spill, flush_postings=flush_postings, batch_rows=batch_rows)
    if flush_postings == 25:  # the buffer was flushed many times: a term has rows in several segments of a file
        assert max(r["segments"] for r in reports) > 3
    else:
        assert {r["segments"] for r in reports} == {1}
    stats = _reduce(reports, spill, tmp_path / "out")
    expected = _expected(files)
    assert [s["pidx"] for s in stats] == [0, 1, 2] == sorted(expected)
    for p, pages in expected.items():
        inv, lengths = _inverted(pages, get_analyzer(pages[0]["language"]))
        path = tmp_path / "out" / f"g{p}" / f"index-{p}.ciff.gz"
        assert validate_file(str(path)).ok
        r = CiffReader(str(path))
        assert {pl.term: list(zip(pl.docids, pl.tfs)) for pl in r.postings()} == inv
        assert [(d.collection_docid, d.doclength) for d in r.docs()] == list(
            zip([x["record_id"] for x in pages], lengths)
        )
        assert r.header.num_postings_lists == len(inv) and r.header.total_terms_in_collection == sum(lengths)
        meta = pq.read_table(tmp_path / "out" / f"g{p}" / f"metadata-{p}.parquet").to_pylist()
        assert [m["docid"] for m in meta] == list(range(len(pages)))
        assert [(m["collection_docid"], m["url"], m["language"], m["warc_offset"], m["doclength"]) for m in meta] == [
            (x["record_id"], x["url"], x["language"], x["warc_offset"], n) for x, n in zip(pages, lengths)
        ]
        assert meta[0]["warc_date"] == "2026-01-15T00:00:00Z"  # schema 0.1.0: a string
        s = stats[p]
        assert (s["docs"], s["terms"], s["postings"], s["total_terms"]) == (
            len(pages),
            len(inv),
            sum(len(v) for v in inv.values()),
            sum(lengths),
        )


@pytest.mark.parametrize("runs", [[[0, 1, 2]], [[0, 1], [2]], [[0], [1, 2]]])
@pytest.mark.parametrize("flush_postings,batch_rows", [(4_000_000, 7), (25, 7), (4_000_000, 4096)])
def test_runs_of_files_write_the_shards_of_one_task_a_file(tmp_path, runs, flush_postings, batch_rows):
    """Files packed into one task (consecutive runs; batches spanning the files of a language)
    give the same docids, byte for byte the same CIFF and metadata files as one task a file;
    a run reports under its first file."""
    files = _day(tmp_path)
    out = {}
    for name, cut in (("one", None), ("runs", runs)):
        reports = _map(files, tmp_path / f"spill-{name}", cut, flush_postings=flush_postings, batch_rows=batch_rows)
        assert {r["t"] for r in reports} <= {files[r[0]][0] for r in (cut or [[0], [1], [2]])}
        _reduce(reports, tmp_path / f"spill-{name}", tmp_path / name)
        out[name] = {
            f.relative_to(tmp_path / name): f.read_bytes() for f in (tmp_path / name).rglob("*") if f.is_file()
        }
    assert len(out["one"]) == 6 and out["runs"] == out["one"]
    segments = {n: len(list((tmp_path / f"spill-{n}").rglob("*.post.arrow"))) for n in out}
    if flush_postings == 4_000_000 and [0, 1] in runs:  # the two English files share a buffer
        assert segments["runs"] < segments["one"]


def test_shard_of_is_the_placement_partition():
    import hashlib

    for i in range(200):
        url = f"https://example.org/{i}"
        assert shard_of(url, 8, 3) == 8 + partition_of(url, 8)
        assert shard_of(url, 8, 3) == 8 + (hashlib.md5(url.encode()).digest()[0] >> 5)  # the first 3 bits
        assert shard_of(url, 5, 0) == 5
    assert shard_of(None, 0, 2) == partition_of("", 4)


def test_count_pages_and_missing_columns(tmp_path):
    files = _day(tmp_path)
    counts = count_pages([(path, lang) for _, path, lang, _ in files], READ_COLUMNS)
    want = Counter((r["url_suffix"] or "", lang) for _, _, lang, rows in files for r in rows)
    assert counts == dict(want)
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"url": ["x"], "url_suffix": ["com"]}), bad)
    with pytest.raises(ValueError, match=r"bad.parquet lack columns \['description'"):
        count_pages([(str(bad), "eng")], READ_COLUMNS)


def test_lost_segment_fails_the_shard_and_leaves_no_files(tmp_path):
    spill = tmp_path / "spill"
    reports = _map(_day(tmp_path), spill, flush_postings=25, batch_rows=7)
    r = next(r for r in reports if r["pidx"] == 0 and r["segments"] > 2)
    seg = segment_path(str(spill), 0, r["t"], 1)
    with pa.memory_map(seg) as src:
        rows = pa.ipc.open_file(src).read_all()
    write_arrow(seg, rows.slice(1))  # one term's postings of one segment lost
    with pytest.raises(ValueError, match="doclength .* but the postings give docid"):
        _reduce([x for x in reports if x["pidx"] == 0], spill, tmp_path / "w")
    assert list((tmp_path / "w" / "g0").iterdir()) == []


def test_file_reported_twice_is_refused(tmp_path):
    spill = tmp_path / "spill"
    reports = _map(_day(tmp_path), spill)
    with pytest.raises(RuntimeError, match="reported twice"):
        shard_inputs(reports + reports[:1])


def test_page_in_no_planned_group_is_refused(tmp_path):
    files = _day(tmp_path)
    p = MapPlan(groups={("com", "eng"): (0, 1)}, spill=str(tmp_path / "spill"))
    with pytest.raises(RuntimeError, match="is in no planned group"):
        list(index_files(iter([pa.record_batch([pa.array([0])], names=["id"])]), p, [(0, [(files[0][1], "eng")])]))


def test_repeated_record_ids_leave_one_document(tmp_path):
    """The same capture in two files (and twice in one): the first copy in docid order is the
    document; the CIFF and metadata hold it once, docids stay dense, duplicates are counted."""
    a, b = _pages(40, "eng", 1), _pages(33, "eng", 2)
    b[3:9] = [dict(r) for r in a[10:16]]  # six captures of file a again in file b
    a.append(dict(a[5]))  # and one twice in file a
    files = []
    for name, rows in (("part-a", a), ("part-b", b)):
        d = tmp_path / "day" / "language=eng"
        d.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), d / f"{name}.parquet")
        files.append((len(files), str(d / f"{name}.parquet"), "eng", rows))
    spill = tmp_path / "spill"
    stats = _reduce(_map(files, spill), spill, tmp_path / "out")
    assert sum(s["duplicates"] for s in stats) == 7
    assert sum(s["docs"] for s in stats) == len(a) + len(b) - 7
    for p, pages in _expected(files).items():
        seen, first = set(), []
        for r in pages:
            if r["record_id"] not in seen:
                seen.add(r["record_id"])
                first.append(r)
        inv, lengths = _inverted(first, get_analyzer("eng"))
        path = tmp_path / "out" / f"g{p}" / f"index-{p}.ciff.gz"
        assert validate_file(str(path)).ok
        r = CiffReader(str(path))
        assert {pl.term: list(zip(pl.docids, pl.tfs)) for pl in r.postings()} == inv
        assert [(d.collection_docid, d.doclength) for d in r.docs()] == [
            (x["record_id"], n) for x, n in zip(first, lengths)
        ]
        assert r.header.num_docs == len(first) and r.header.total_terms_in_collection == sum(lengths)
        meta = pq.read_table(tmp_path / "out" / f"g{p}" / f"metadata-{p}.parquet").to_pylist()
        assert [(m["docid"], m["record_id"], m["warc_offset"]) for m in meta] == [
            (i, x["record_id"], x["warc_offset"]) for i, x in enumerate(first)
        ]
        assert stats[[s["pidx"] for s in stats].index(p)]["duplicates"] == len(pages) - len(first)
