"""PageRank and harmonic centrality of a real-shaped host graph: lib.links.ranks (python-igraph
underneath: PRPACK, one BFS per vertex) against python-igraph called directly and our own numpy
PageRank (the candidate it replaced), on the same graph in the same invocation, and networkx on a
sample (docs/links.md). Exits non-zero when the ranks differ from igraph's (PageRank by more than
1e-6, harmonic centrality at all).

The graph: the shared corpus's day through preprocess's task function and the index's one-task
graph, its followed host pairs (no self loops, no repeats) as the link database's host graph has
them; then scaled to at least ``--edges`` edges: each vertex's out-degree drawn from the real host graph's (zero
for most: hosts only linked to), its targets drawn by a weight drawn from the real in-degrees (the
few hubs). Each side runs in a forked child, one at a time (wall time and the child's peak RSS,
VmHWM); all get the same edge arrays; their ranks are compared. All are single-threaded.
Our multi-source BFS for harmonic centrality (numpy, then C) was measured here too and dropped:
2.5x and 4.5x igraph's time on this graph at a million edges (docs/links.md).

    python -m benchmarks.bench_ranks [--edges 1000000] [--sample 2000]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import pathlib
import resource
import tempfile
import time
from typing import Any, Callable

import numpy as np

from benchmarks.common import load, write_result
from lib.index.graph_tasks import GraphDirs, whole_day
from lib.links import ranks
from lib.preprocess.tasks import TaskSettings, process_task

CORPUS = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def real_host_graph(corpus: pathlib.Path) -> tuple[int, np.ndarray, np.ndarray]:
    """The corpus day's host graph: (vertices, src, dst) of its followed host pairs."""
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        files = sorted(p for p in corpus.rglob("*") if p.suffix in (".gz", ".warc") and p.is_file())
        res = process_task(
            [(str(p), p.stat().st_size) for p in files],
            TaskSettings(out_dir=f"{tmp}/pages", max_page_bytes=10 << 20, batch_rows=500, minhash=None),
        )
        dirs = GraphDirs.under(f"{tmp}/graph")
        for d in dirs[:3]:
            pathlib.Path(d).mkdir(parents=True)
        whole_day([o for r in res for o in (r.get("outputs") or []) if "_captures" not in o], dirs)
        pairs = duckdb.sql(
            f"SELECT DISTINCT lower(src_host), lower(dst_host) FROM read_parquet('{dirs.edges}/*.parquet') "
            "WHERE rel IS NULL AND lower(src_host) <> lower(dst_host)"
        ).fetchall()
    names = sorted({h for p in pairs for h in p})
    index = {h: i for i, h in enumerate(names)}
    return len(names), np.array([index[a] for a, _ in pairs]), np.array([index[b] for _, b in pairs])


def scaled(n: int, s: np.ndarray, d: np.ndarray, edges: int, seed: int = 56) -> tuple[int, np.ndarray, np.ndarray]:
    """A graph of at least ``edges`` edges (after repeats and self loops are dropped) with the real
    graph's out- and in-degree distributions: drawn at the size the real graph scales to, then
    drawn again larger by the share the dropped repeats cost, until it has enough."""
    outdeg, indeg = np.bincount(s, minlength=n), np.bincount(d, minlength=n)
    factor = edges / max(s.size, 1)
    while True:
        rng = np.random.default_rng(seed)
        big = max(n, int(n * factor))
        src = np.repeat(np.arange(big), rng.choice(outdeg, big))
        w = rng.choice(indeg, big).astype(float) + 0.1
        dst = rng.choice(big, src.size, p=w / w.sum())
        bs, bd = ranks.simple(big, src, dst)
        if bs.size >= edges or not s.size:
            return big, bs, bd
        factor *= edges / bs.size * 1.002  # repeats dropped: draw a little more than the shortfall


def numpy_pagerank(n: int, s: np.ndarray, d: np.ndarray, damping: float = 0.85, tol: float = 1e-14) -> np.ndarray:
    """The candidate: power iteration, uniform teleport, dangling rank spread uniformly."""
    out = np.bincount(s, minlength=n).astype(np.float64)
    dangling = out == 0
    w, x = np.zeros(n), np.full(n, 1.0 / n)
    for _ in range(10_000):
        np.divide(x, out, out=w, where=~dangling)
        nxt = damping * np.bincount(d, weights=w[s], minlength=n)
        nxt += (damping * x[dangling].sum() + (1.0 - damping)) / n
        nxt /= nxt.sum()
        delta, x = np.abs(nxt - x).sum(), nxt
        if delta < tol:
            break
    return x


def _candidate(n: int, s: np.ndarray, d: np.ndarray) -> dict[str, Any]:
    t = time.perf_counter()
    pr = numpy_pagerank(n, s, d)
    return {"pagerank_s": time.perf_counter() - t, "pr": pr}


def _ours(n: int, s: np.ndarray, d: np.ndarray) -> dict[str, Any]:
    t = time.perf_counter()
    g = ranks.graph(n, s, d)
    t_build = time.perf_counter() - t
    t = time.perf_counter()
    pr = ranks.pagerank(n, s, d, g=g)
    t_pr = time.perf_counter() - t
    t = time.perf_counter()
    hc = ranks.harmonic(n, s, d, g)
    return {"build_s": t_build, "pagerank_s": t_pr, "harmonic_s": time.perf_counter() - t, "pr": pr, "hc": hc}


def _igraph(n: int, s: np.ndarray, d: np.ndarray) -> dict[str, Any]:
    """The peer: python-igraph called directly on the edge list (no repeats, self loops: none to drop)."""
    import igraph

    t = time.perf_counter()
    g = igraph.Graph(n=n, edges=list(zip(s.tolist(), d.tolist())), directed=True)
    t_build = time.perf_counter() - t
    t = time.perf_counter()
    pr = np.asarray(g.pagerank(directed=True, damping=0.85, implementation="prpack"))
    t_pr = time.perf_counter() - t
    t = time.perf_counter()
    hc = np.asarray(g.harmonic_centrality(mode="in", normalized=False))
    return {"build_s": t_build, "pagerank_s": t_pr, "harmonic_s": time.perf_counter() - t, "pr": pr, "hc": hc}


def _child(fn: Callable, args: tuple, q: Any) -> None:
    out = fn(*args)
    hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
    out["peak_rss_mib"] = int(hwm.split()[1]) / 1024
    ru = resource.getrusage(resource.RUSAGE_SELF)  # the child's CPU: steadier than wall time on a loaded machine
    out["cpu_s"] = ru.ru_utime + ru.ru_stime
    q.put(out)


def forked(fn: Callable, *args: Any) -> dict[str, Any]:
    """``fn(*args)`` in a forked child; its result with the child's peak RSS."""
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(fn, args, q))
    p.start()
    out = q.get()
    p.join()
    return out


def sample_vertices(s: np.ndarray, d: np.ndarray, k: int) -> np.ndarray:
    """About ``k`` vertices that hold edges: the sources in id order, each with its targets, until
    ``k`` are taken (the first ``k`` ids alone would be mostly hosts without out-links)."""
    starts = np.searchsorted(s, np.unique(s))  # s is sorted (ranks.simple)
    seen: dict[int, None] = {}
    for i, a in enumerate(starts):
        b = starts[i + 1] if i + 1 < starts.size else s.size
        for v in (int(s[a]), *d[a:b].tolist()):
            seen.setdefault(v)
        if len(seen) >= k:
            break
    return np.fromiter(seen, np.int64)[:k]


def networkx_sample(n: int, s: np.ndarray, d: np.ndarray, k: int) -> dict[str, Any]:
    """networkx on the subgraph induced by :func:`sample_vertices` (relabelled 0..k-1): time and
    agreement (PageRank's largest difference; harmonic centrality's largest relative one)."""
    import networkx as nx

    keep_v = sample_vertices(s, d, k)
    k = keep_v.size
    new_id = np.full(n, -1, np.int64)
    new_id[keep_v] = np.arange(k)
    keep = (new_id[s] >= 0) & (new_id[d] >= 0)
    ss, dd = new_id[s[keep]], new_id[d[keep]]
    G = nx.DiGraph()
    G.add_nodes_from(range(k))
    G.add_edges_from(zip(ss.tolist(), dd.tolist()))
    t = time.perf_counter()
    pr = nx.pagerank(G, tol=1e-15, max_iter=10_000)
    hc = nx.harmonic_centrality(G)
    t_nx = time.perf_counter() - t
    t = time.perf_counter()
    our_pr, our_hc = ranks.pagerank(k, ss, dd), ranks.harmonic(k, ss, dd)
    t_ours = time.perf_counter() - t  # lib.links.ranks: igraph
    return {
        "vertices": k,
        "edges": int(ss.size),
        "networkx_s": t_nx,
        "ours_s": t_ours,
        "pr_max_diff": float(np.abs(our_pr - [pr[i] for i in range(k)]).max()),
        "hc_max_rel_diff": float(np.max(np.abs(our_hc - [hc[i] for i in range(k)]) / np.maximum(our_hc, 1e-300))),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", type=int, default=1_000_000, help="edges of the scaled graph (default %(default)s)")
    ap.add_argument("--sample", type=int, default=2000, help="vertices of networkx's sample (default %(default)s)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the shared real samples (default %(default)s)")
    a = ap.parse_args(argv)
    before = load()
    ranks.graph(2, np.array([0]), np.array([1]))  # igraph imported before any clock starts (about a second)
    n0, s0, d0 = real_host_graph(pathlib.Path(a.corpus))
    n, s, d = scaled(n0, s0, d0, a.edges)
    shape = {
        "real_host_vertices": n0,
        "real_host_edges": int(s0.size),
        "vertices": n,
        "edges": int(s.size),
        "vertices_with_out_links": int(np.unique(s).size),
        "max_in_degree": int(np.bincount(d, minlength=n).max()),
    }
    print(f"graph: {shape}", flush=True)
    ours = forked(_ours, n, s, d)
    peer = forked(_igraph, n, s, d)
    cand = forked(_candidate, n, s, d)
    pr_diff = float(np.abs(ours["pr"] - cand["pr"]).max())
    pr_igraph = float(np.abs(ours["pr"] - peer["pr"]).max())
    hc_igraph = float(np.abs(ours["hc"] - peer["hc"]).max())
    sample = networkx_sample(n, s, d, min(a.sample, n))
    figures = {k: round(ours[k], 3) for k in ("build_s", "pagerank_s", "harmonic_s", "cpu_s")} | {
        "peak_rss_mib": round(ours["peak_rss_mib"], 1)
    }
    peers = {f"igraph {k}": round(peer[k], 3) for k in ("build_s", "pagerank_s", "harmonic_s", "cpu_s")} | {
        "igraph peak_rss_mib": round(peer["peak_rss_mib"], 1),
        "numpy pagerank_s": round(cand["pagerank_s"], 3),
        "numpy peak_rss_mib": round(cand["peak_rss_mib"], 1),
        "networkx sample_s": round(sample["networkx_s"], 3),
    }
    ratio = {
        "ours/igraph pagerank": round(ours["pagerank_s"] / peer["pagerank_s"], 2),
        "ours/igraph harmonic": round(ours["harmonic_s"] / peer["harmonic_s"], 2),
        "ours/igraph cpu": round(ours["cpu_s"] / peer["cpu_s"], 2),
        "numpy/igraph pagerank": round(cand["pagerank_s"] / ours["pagerank_s"], 2),
        "networkx/ours sample": round(sample["networkx_s"] / max(sample["ours_s"], 1e-9), 1),
    }
    print(f"ours (igraph): {figures}\npeers: {peers}\nratio: {ratio}")
    print(f"agreement: pagerank max diff {pr_igraph:.2e} to igraph, {pr_diff:.2e} to numpy; harmonic max diff")
    print(f"  to igraph {hc_igraph:.2e}; networkx sample {sample}")
    if pr_igraph > 1e-6 or hc_igraph != 0.0:  # the bar: PageRank within 1e-6, harmonic exact
        raise SystemExit(f"ranks differ from igraph's: pagerank {pr_igraph:.2e}, harmonic {hc_igraph:.2e}")
    write_result(
        "bench_ranks",
        figures,
        what="PageRank and harmonic centrality of every vertex of a real-shaped host graph (lib.links.ranks: "
        "python-igraph), each side in a forked child on the same edge arrays, one core each",
        peer="python-igraph called directly on the same edge arrays (pagerank prpack, harmonic_centrality); "
        "our numpy PageRank (the candidate igraph replaced); networkx on a sample",
        peers=peers,
        ratio=ratio,
        shape=shape,
        load_before=before,
        details={
            "pagerank_max_diff_igraph": pr_igraph,
            "harmonic_max_diff_igraph": hc_igraph,
            "pagerank_max_diff_numpy": pr_diff,
            "networkx_sample": sample,
        },
    )


if __name__ == "__main__":
    main()
