"""lib.index.graph's aggregates against the same numbers counted in Python."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from jobs.index import IndexJob
from lib.index import graph


def _edges(rng: random.Random) -> list[tuple]:
    """Edges as preprocess leaves them: a page links to a URL once per distinct anchor text,
    the same URL may be two pages of the day, a host may be missing."""
    pages = [(f"https://h{rng.randrange(6)}.example/p{i % 40}", None) for i in range(60)]  # 60 rows, 40 URLs
    pages = [(u, None if u.startswith("https://h5.") else u.split("/")[2]) for u, _ in pages]
    out = []
    for src, src_host in pages:
        for _ in range(rng.randrange(8)):
            dst = f"https://t{rng.randrange(4)}.example/{rng.randrange(5)}"
            for anchor in rng.sample(["a", "b", "c", " b ", ""], rng.randrange(1, 3)):
                out.append((src, dst, anchor, src_host, dst.split("/")[2]))
    return out


def test_inlinks_and_hosts_count_links_distinct_pages_and_hosts(spark):
    rows = _edges(random.Random(5))
    e = spark.createDataFrame(rows, "src_url string, dst_url string, anchor_text string, src_host string, dst_host string")
    got = {r["dst_url"]: r.asDict() for r in graph.inlinks(e).collect()}
    by_dst = defaultdict(list)
    for r in rows:
        by_dst[r[1]].append(r)
    assert set(got) == set(by_dst)
    for dst, rs in by_dst.items():
        g = got[dst]
        assert g["inlinks"] == len(rs)
        assert g["source_pages"] == len({r[0] for r in rs})
        assert g["source_hosts"] == len({r[3] for r in rs if r[3] is not None})
        assert g["dst_host"] == dst.split("/")[2]
        freq = Counter(" ".join(r[2].split()) for r in rs if r[2].strip())
        assert g["anchor_texts"] == sorted(freq, key=lambda a: (-freq[a], a))[: graph.MAX_ANCHORS]
    hosts = {(r["src_host"], r["dst_host"]): r for r in graph.hosts(e).collect()}
    want = defaultdict(list)
    for r in rows:
        want[(r[3], r[4])].append(r)
    assert {k: (h["links"], h["pages"]) for k, h in hosts.items()} == {
        k: (len(rs), len({r[0] for r in rs})) for k, rs in want.items()}


def test_the_index_job_keeps_the_jvm_s_full_jit_when_it_builds_the_graph():
    # the graph is Spark SQL: with C1 alone it was ~50% slower
    job = IndexJob()
    parser = job.parser()
    assert job.light(parser.parse_args(["--input", "i", "--output", "o", "--no-graph"]))
    assert not job.light(parser.parse_args(["--input", "i", "--output", "o"]))
