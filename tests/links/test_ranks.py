"""The window's host and domain graphs and their ranks (lib/links/hostgraph.py, ranks.py): the
published layout, the edges against the fold of the real days' edges, and the ranks against
networkx (the real domain graph) and python-igraph (the real host graph, and a real-shaped one of
its degree distribution at a larger scale): PageRank within 1e-6 (1e-12 here), harmonic
centrality's distances exact and its sums equal up to the order of float additions."""

from __future__ import annotations

import datetime as dt
import json

import igraph
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
    best = r["harmonicc_pos"].index(1)
    assert r["harmonicc_val"][best] == max(r["harmonicc_val"])


def _nx_distance_counts(G: nx.DiGraph, n: int) -> np.ndarray:
    c: dict[tuple[int, int], int] = {}
    for u in G:
        for v, k in nx.single_source_shortest_path_length(G, u).items():
            if k:
                c[(v, k)] = c.get((v, k), 0) + 1
    out = np.zeros((n, max((k for _, k in c), default=0)), np.int64)
    for (v, k), m in c.items():
        out[v, k - 1] = m
    return out


def test_ranks_equal_networkx_on_the_real_domain_graph(published):
    _, g = published
    dom = g["domain"]
    n, s, d = len(dom["vertices"]["id"]), np.array(dom["edges"]["from_id"]), np.array(dom["edges"]["to_id"])
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from(zip(s.tolist(), d.tolist()))
    pr = nx.pagerank(G, tol=1e-15, max_iter=10_000)
    assert np.abs(np.array(dom["ranks"]["pr_val"]) - [pr[i] for i in range(n)]).max() < 1e-12
    assert np.array_equal(ranks.distance_counts(n, s, d, words=1), _nx_distance_counts(G, n))  # exact distances
    hc = nx.harmonic_centrality(G)
    assert np.allclose(dom["ranks"]["harmonicc_val"], [hc[i] for i in range(n)], rtol=1e-12, atol=0)


def _igraph_check(n: int, s: np.ndarray, d: np.ndarray) -> None:
    g = igraph.Graph(n=n, edges=np.stack([s, d], 1).tolist(), directed=True)
    assert np.abs(ranks.pagerank(n, s, d) - g.pagerank()).max() < 1e-12
    theirs = np.array(g.harmonic_centrality(mode="in", normalized=False))
    ours = ranks.harmonic(n, s, d)
    assert np.allclose(ours, theirs, rtol=1e-12, atol=0) and (ours > 0).sum() > n // 10
    # the distances behind the sums, exact: vertices reached, against igraph's own BFS counts
    reached = np.array([len(g.subcomponent(v, mode="in")) - 1 for v in range(n)])
    assert np.array_equal(ranks.distance_counts(n, s, d).sum(axis=1), reached)


def test_ranks_equal_igraph_on_the_real_host_graph_and_a_real_shaped_one(published):
    _, g = published
    host = g["host"]
    n, s, d = len(host["vertices"]["id"]), np.array(host["edges"]["from_id"]), np.array(host["edges"]["to_id"])
    _igraph_check(n, s, d)
    # real-shaped at 8x: out- and in-degrees drawn from the real host graph's, sources among the
    # vertices that link (a crawl's hosts), targets by in-degree weight (the linked-to hosts)
    rng = np.random.default_rng(56)
    outdeg, indeg = np.bincount(s, minlength=n), np.bincount(d, minlength=n)
    big = 8 * n
    src = np.repeat(np.arange(big), rng.choice(outdeg, big))
    w = rng.choice(indeg, big).astype(float) + 0.1
    dst = rng.choice(big, src.size, p=w / w.sum())
    bs, bd = ranks.simple(big, src, dst)
    assert bs.size > 5 * s.size
    _igraph_check(big, bs, bd)
