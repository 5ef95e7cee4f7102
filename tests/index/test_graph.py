"""lib.index.graph's tables against the Spark SQL that computed them before (the oracle,
tests/index/spark_graph_oracle.py) and against counts in Python."""

from __future__ import annotations

import os
import random
from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from lib.index import graph, graph_tasks
from lib.index.page_files import input_files, read_links
from lib.pages.schema import PAGE_SCHEMA
from tests.index import spark_graph_oracle as oracle

ANCHORS = ["a", "b", "c", " b ", "", "b\x0b", "b\u00a0", "\tb\n", "Ä", "ä", "  x   y ", "z", None]
HOSTS = ["t0.example", "T1.Example", "user:pw@t2.example:8080", "[::1]:80", "t3.example"]


def _pages(rng: random.Random, n: int) -> list[dict]:
    """Pages as preprocess leaves them, with the cases where engines may differ: anchor texts
    with Java-only whitespace (\\x0B), no-break spaces, case, ties; hosts with userinfo,
    ports, IPv6, upper case; a page URL present twice; a missing host; null links."""
    out = []
    for i in range(n):
        src = f"https://h{rng.randrange(6)}.example/p{i % (n * 2 // 3)}"
        links = []
        for _ in range(rng.randrange(9)):
            dst = f"http://{rng.choice(HOSTS)}/{rng.randrange(6)}"
            for anchor in rng.sample(ANCHORS, rng.randrange(1, 4)):
                rel = rng.choice((None, None, None, None, "nofollow", "ugc sponsored"))  # nofollow: no in-link
                links.append({"url": dst, "anchor_text": anchor, "rel": rel})
        if rng.random() < 0.1:
            links.append({"url": None, "anchor_text": "no url"})
        out.append(
            {
                "url": src,
                "url_host": None if src.startswith("https://h5.") else src.split("/")[2],
                "outgoing_links": links if rng.random() > 0.05 else None,
            }
        )
    return out


def _write_day(root, pages: list[dict], files: int) -> str:
    schema = pa.schema([PAGE_SCHEMA.field(c) for c in ("url", "url_host", "outgoing_links")])
    d = root / "language=eng"
    d.mkdir(parents=True)
    for f in range(files):
        pq.write_table(pa.Table.from_pylist(pages[f::files], schema=schema), d / f"part-{f:05d}.parquet")
    return str(root)


def _rows(folder) -> list[tuple]:
    t = ds.dataset(str(folder), format="parquet", ignore_prefixes=["_", "."]).to_table()
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in r.values()) for r in t.to_pylist()), key=repr)


def _spark_rows(df) -> list[tuple]:
    return sorted((tuple(tuple(v) if isinstance(v, list) else v for v in r) for r in df.collect()), key=repr)


def _assert_equals_oracle(spark, inp: str, out, parts: int) -> dict:
    """The tables of ``inp`` equal the oracle's: ``parts`` key ranges of the two-stage plan,
    or (``parts`` 0) the single-task plan."""
    files = [f[0] for f in input_files(inp)]
    counts = graph.write_graph(spark, files, str(out), parts=parts, single_task_bytes=1 << 40)
    e = oracle.edges(read_links(spark, inp))
    want = {"edges": _spark_rows(e), "inlinks": _spark_rows(oracle.inlinks(e)), "hosts": _spark_rows(oracle.hosts(e))}
    for name, rows in want.items():
        got = _rows(out / name)
        assert got == rows, name
        assert counts[name] == len(rows)
        assert (out / name / "_SUCCESS").exists()
    for f in (out / "inlinks").glob("*.parquet"):  # each file sorted by dst_url
        urls = pq.read_table(f, columns=["dst_url"]).column(0).to_pylist()
        assert urls == sorted(urls, key=lambda u: u.encode())
    assert not (out / "_spill").exists()
    return counts


@pytest.mark.parametrize("parts", [0, 1, 4])  # 0: the single-task plan
def test_graph_equals_the_spark_sql_oracle(spark, tmp_path, parts):
    inp = _write_day(tmp_path / "day", _pages(random.Random(7), 300), files=5)
    counts = _assert_equals_oracle(spark, inp, tmp_path / "g", parts)
    assert counts["edges"] > 1000 and counts["inlinks"] > 20
    # the key ranges split the in-links: no dst_url in two files
    seen = [
        pq.read_table(f, columns=["dst_url"]).column(0).to_pylist()
        for f in (tmp_path / "g" / "inlinks").glob("*.parquet")
    ]
    assert len(seen) == max(1, parts)
    assert sum(len(s) for s in seen) == len(set().union(*map(set, seen)))


def test_graph_of_real_preprocessed_pages_equals_the_oracle(spark, corpus, tmp_path):
    from jobs import preprocess  # a job, not a library dependency

    warc = tmp_path / "warc"
    warc.mkdir()
    for name in ("aut/example.warc.gz", "resiliparse/warcfile.warc.gz"):
        (warc / name.replace("/", "-")).write_bytes((corpus / name).read_bytes())
    pre = tmp_path / "pre"
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    for parts in (3, 0):
        counts = _assert_equals_oracle(spark, str(pre), tmp_path / f"g{parts}", parts=parts)
        assert counts["edges"] > 1000


def test_inlinks_and_hosts_count_links_distinct_pages_and_hosts(spark, tmp_path):
    pages = _pages(random.Random(5), 120)
    inp = _write_day(tmp_path / "day", pages, files=3)
    graph.write_graph(spark, [f[0] for f in input_files(inp)], str(tmp_path / "g"), parts=2)
    every = [
        (p["url"], ln["url"], ln["anchor_text"], p["url_host"], ln["rel"])
        for p in pages
        for ln in p["outgoing_links"] or []
        if ln["url"] is not None
    ]
    rows = [r for r in every if r[4] is None]  # followed links: the in-links and anchors
    assert 0 < len(rows) < len(every)
    got = {r["dst_url"]: r for r in pq.read_table(tmp_path / "g" / "inlinks").to_pylist()}
    by_dst = defaultdict(list)
    for r in rows:
        by_dst[r[1]].append(r)
    assert set(got) == {r[1] for r in every}
    for dst in set(got) - set(by_dst):  # reached by nofollow links only: counted apart, no anchors
        assert got[dst]["inlinks"] == 0 and got[dst]["anchor_texts"] == [] and got[dst]["nofollow_inlinks"] > 0
    for dst, rs in by_dst.items():
        g = got[dst]
        assert g["inlinks"] == len(rs)
        assert g["nofollow_inlinks"] == sum(1 for r in every if r[1] == dst and r[4] is not None)
        assert g["source_pages"] == len({r[0] for r in rs})
        assert g["source_hosts"] == len({r[3] for r in rs if r[3] is not None})
        assert g["dst_host"] == dst.split("/")[2].split("@")[-1].rsplit(":", 1)[0].lower() or dst.startswith("http://[")
        norm = [" ".join(r[2].replace("\u00a0", "\0").split()).replace("\0", "\u00a0") for r in rs if r[2] is not None]
        freq = Counter(a for a in norm if a)
        assert g["anchor_texts"] == sorted(freq, key=lambda a: (-freq[a], a.encode()))[: graph.MAX_ANCHORS]
    hosts = {
        (r["src_host"], r["dst_host"]): (r["links"], r["pages"], r["nofollow_links"])
        for r in pq.read_table(tmp_path / "g" / "hosts").to_pylist()
    }
    assert sum(v[0] for v in hosts.values()) == len(rows)
    assert sum(v[2] for v in hosts.values()) == len(every) - len(rows)
    edges = pq.read_table(tmp_path / "g" / "edges")
    assert sorted(map(repr, edges.column("rel").to_pylist())) == sorted(repr(r[4]) for r in every)


@pytest.mark.parametrize("single", [0, 1 << 40], ids=["two-stage", "single-task"])
@pytest.mark.parametrize("links", [True, False], ids=["no-links", "no-files"])
def test_a_day_without_links_gives_empty_tables_with_their_columns(spark, tmp_path, single, links):
    inp = _write_day(
        tmp_path / "day", [{"url": "https://a.example/", "url_host": "a.example", "outgoing_links": []}], 1
    )
    files = [f[0] for f in input_files(inp)] if links else []
    counts = graph.write_graph(spark, files, str(tmp_path / "g"), single_task_bytes=single)
    assert counts == {"edges": 0, "inlinks": 0, "hosts": 0}
    want = {
        "edges": [
            ("src_url", "string"),
            ("dst_url", "string"),
            ("anchor_text", "string"),
            ("src_host", "string"),
            ("dst_host", "string"),
            ("rel", "string"),
        ],
        "inlinks": [
            ("dst_url", "string"),
            ("dst_host", "string"),
            ("inlinks", "int64"),
            ("source_pages", "int64"),
            ("source_hosts", "int64"),
            ("anchor_texts", "list<element: string>"),
            ("nofollow_inlinks", "int64"),
        ],
        "hosts": [
            ("src_host", "string"),
            ("dst_host", "string"),
            ("links", "int64"),
            ("pages", "int64"),
            ("nofollow_links", "int64"),
        ],
    }
    for name, cols in want.items():
        t = pq.read_table(tmp_path / "g" / name)
        assert t.num_rows == 0 and [(f.name, str(f.type)) for f in t.schema] == cols, name
        assert (tmp_path / "g" / name / "_SUCCESS").exists()
    assert not (tmp_path / "g" / "_spill").exists()


def test_the_plan_follows_the_day_s_bytes(spark, tmp_path):
    """A day up to single_task_bytes is one task (one file per table), a larger one two stages
    (a file per key range); 0 never takes one task; an explicit ``parts`` takes two stages."""
    inp = _write_day(tmp_path / "day", _pages(random.Random(3), 80), files=4)
    files = [f[0] for f in input_files(inp)]
    size, slots = sum(os.path.getsize(f) for f in files), spark.sparkContext.defaultParallelism
    for single, parts, want in ((size, 0, 1), (size - 1, 0, slots), (0, 0, slots), (size, slots + 1, slots + 1)):
        out = tmp_path / f"g-{single}-{parts}"
        graph.write_graph(spark, files, str(out), parts=parts, single_task_bytes=single)
        assert len(list((out / "inlinks").glob("*.parquet"))) == want, (single, parts)
        assert len(list((out / "edges").glob("*.parquet"))) == (1 if want == 1 else len(graph.map_runs(files, slots)))


def test_partitions_grow_with_the_day_so_a_reduce_task_s_input_is_bounded():
    assert graph.partitions_for(0, 2) == 2
    assert graph.partitions_for(10 * graph.TARGET_PARTITION_BYTES + 1, 2) == 11
    assert graph_tasks.TASK_MEMORY.endswith("GB")


def test_map_of_a_run_of_files_is_the_map_of_each_file(tmp_path):
    """A map task reading a run of files as one writes the edges and spill rows that one task
    per file wrote (no Spark: the task functions themselves), and a page captured twice keeps
    one edge row per capture (docs/index.md, "Repeated rows")."""
    pages = _pages(random.Random(5), 60)
    pages.append(dict(pages[3]))  # the same page captured again
    inp = _write_day(tmp_path / "day", pages, 7)
    files = [f[0] for f in input_files(inp)]
    out = {}
    for name, runs in (("each", [[f] for f in files]), ("runs", [files[:4], files[4:]])):
        edges, spill = tmp_path / name / "edges", tmp_path / name / "spill"
        edges.mkdir(parents=True)
        dirs = graph_tasks.GraphDirs(str(edges), "", "", str(spill))  # a map task writes edges and spill only
        for fid, run in enumerate(runs):
            graph_tasks.map_file(run, fid, dirs, 3, threads=1 + fid % 2)
        hst = Counter()
        for k in range(3):  # the host spill is summed per task: compare the sums
            for src_host, dst_host, src_url, n, nf in (
                _rows(spill / "hst" / f"p={k}") if (spill / "hst" / f"p={k}").is_dir() else []
            ):
                hst[(k, src_host, dst_host, src_url)] += n + 1000 * nf
        out[name] = [_rows(edges), hst] + [_rows(spill / "inl" / f"p={k}") for k in range(3)]
    assert out["runs"] == out["each"] and len(out["each"][0]) > 100 and len(out["each"][1]) > 10
    links = [
        (p["url"], ln["url"], ln["anchor_text"])
        for p in pages
        for ln in (p["outgoing_links"] or [])
        if ln["url"] is not None
    ]
    assert sorted(((r[0], r[1], r[2]) for r in out["each"][0]), key=repr) == sorted(links, key=repr)
    assert Counter((r[0], r[1], r[2]) for r in out["each"][0])[links[-1]] >= 2  # the repeated capture's row
