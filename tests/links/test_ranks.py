"""The window's host and domain graphs and their ranks (lib/links/hostgraph.py, ranks.py): the
published layout, the edges against the fold of the real days' edges, and the ranks against
networkx (an independent implementation) on the real domain and host graphs and on a real-shaped
graph 8 times larger: PageRank within 1e-12, harmonic centrality against the exact rational sums
of networkx's distances (within 1e-12 relative: a float sum of 1/d in another order)."""

from __future__ import annotations

import datetime as dt
import json
from fractions import Fraction

import networkx as nx
import numpy as np
import pyarrow.parquet as pq
import pytest

from lib.links import hostgraph, ranks
from lib.links.__main__ import main as links_cli
from tests.links.conftest import HOSTS, fold


@pytest.fixture(scope="module")
def published(merged, days):
    """The all-time host and domain graphs of the five merged days, through the command."""
    assert links_cli(["--root", merged["root"], "graph", "--window", "all"]) == 0
    folder = hostgraph.window_folder(merged["root"], None, dt.date.fromisoformat(max(days)))
    return folder, {
        lvl: {t: pq.read_table(f"{folder}/{lvl}/{t}.parquet").to_pydict() for t in ("vertices", "edges", "ranks")}
        for lvl in hostgraph.LEVELS
    }


def test_layout_and_edges_are_the_windows_followed_host_pairs(published, days):
    folder, g = published
    tables = {d: t for d, (t, _) in days.items()}
    want = set()
    for k, v in fold(tables, None, max(days)).items():
        s, d = HOSTS[k]
        if v["rel"] is None and s != d:
            want.add((hostgraph.reverse(s), hostgraph.reverse(d)))
    host = g["host"]
    names = host["vertices"]["name"]
    assert host["vertices"]["id"] == list(range(len(names))) and names == sorted(names)
    pairs = list(zip(host["edges"]["from_id"], host["edges"]["to_id"]))
    assert pairs == sorted(set(pairs))
    assert {(names[a], names[b]) for a, b in pairs} == want and len(want) > 300
    dom = g["domain"]
    dn = dom["vertices"]["name"]
    assert {(dn[a], dn[b]) for a, b in zip(dom["edges"]["from_id"], dom["edges"]["to_id"])} == {
        (x, y)
        for a, b in want
        if (x := hostgraph.reverse(hostgraph.domain_of(hostgraph.reverse(a))))
        != (y := hostgraph.reverse(hostgraph.domain_of(hostgraph.reverse(b))))
    }
    done = json.load(open(f"{folder}/_SUCCESS"))
    assert done["levels"]["host"] == {"vertices": len(names), "edges": len(pairs)}
    r = host["ranks"]
    assert sorted(r["pr_pos"]) == list(range(1, len(names) + 1)) and abs(sum(r["pr_val"]) - 1) < 1e-9
    order = sorted(range(len(names)), key=lambda i: (-r["harmonicc_val"][i], i))
    assert [r["harmonicc_pos"][i] for i in order] == list(range(1, len(names) + 1))


def _check(n: int, s: np.ndarray, d: np.ndarray, pr: np.ndarray, hc: np.ndarray) -> None:
    """``pr`` and ``hc`` against networkx on the same edges: PageRank within 1e-12; harmonic
    centrality against the exact sum of 1/d(u, v) over networkx's distances."""
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    theirs = nx.pagerank(G, tol=1e-15, max_iter=10_000)
    assert np.abs(pr - [theirs[i] for i in range(n)]).max() < 1e-12
    exact = [Fraction(0)] * n
    for u in G:
        for v, k in nx.single_source_shortest_path_length(G, u).items():
            if k:
                exact[v] += Fraction(1, k)
    want = np.array([float(x) for x in exact])
    assert np.allclose(hc, want, rtol=1e-12, atol=0) and (want > 0).sum() > n // 10


@pytest.mark.parametrize("level", hostgraph.LEVELS)
def test_published_ranks_equal_networkx_on_the_real_graphs(published, level):
    _, g = published
    t = g[level]
    n, s, d = len(t["vertices"]["id"]), np.array(t["edges"]["from_id"]), np.array(t["edges"]["to_id"])
    _check(n, s, d, np.array(t["ranks"]["pr_val"]), np.array(t["ranks"]["harmonicc_val"]))


def test_ranks_on_a_real_shaped_graph_8_times_larger(published):
    """Out- and in-degrees drawn from the real host graph's, sources among the vertices that link
    (a crawl's hosts), targets by in-degree weight (the linked-to hosts); repeats and self loops
    in the input, which the ranks leave out."""
    _, g = published
    host = g["host"]
    n, s, d = len(host["vertices"]["id"]), np.array(host["edges"]["from_id"]), np.array(host["edges"]["to_id"])
    rng = np.random.default_rng(56)
    outdeg, indeg = np.bincount(s, minlength=n), np.bincount(d, minlength=n)
    big = 8 * n
    src = np.repeat(np.arange(big), rng.choice(outdeg, big))
    w = rng.choice(indeg, big).astype(float) + 0.1
    dst = rng.choice(big, src.size, p=w / w.sum())
    src, dst = np.r_[src, src[:50], np.arange(20)], np.r_[dst, dst[:50], np.arange(20)]  # repeats, self loops
    bs, bd = ranks.simple(big, src, dst)
    assert bs.size > 5 * s.size and bs.size < src.size
    _check(big, bs, bd, ranks.pagerank(big, src, dst), ranks.harmonic(big, src, dst))
