"""Shortest paths of followed links over a window (lib/links/paths.py), through the function, the
catalogue CLI and the service: the length equals networkx's shortest path over the window's
followed links folded from the real days' edges, each hop is such a link with its days, and no
route, a bound too small and bad input are answered clearly."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from urllib.parse import quote

import networkx as nx
import pytest

from lib.catalogue.__main__ import main as cli
from lib.catalogue.query import to_json
from lib.links import inlinks, paths
from lib.links.urls import BadUrl, checked
from tests.links.conftest import HOSTS, fold


@pytest.fixture(scope="module")
def graphs(days):
    """The window's followed-link graph by normalised URL, for all time and for the last day."""
    tables = {d: t for d, (t, _) in days.items()}
    out = {}
    for name, first in (("all", None), ("1", max(days))):
        links = fold(tables, first, max(days))
        G = nx.DiGraph()
        G.add_edges_from((src, dst, v) for (dst, src), v in links.items() if v["rel"] is None and src != dst)
        out[name] = G
    return out


def _pairs(G: nx.DiGraph, length: int, k: int) -> list[tuple[str, str]]:
    """``k`` (source, target) pairs at exactly ``length`` hops, the first in URL order."""
    got = []
    for s in sorted(G):
        for t, d in sorted(nx.single_source_shortest_path_length(G, s, cutoff=length).items()):
            if d == length:
                got.append((s, t))
                break
        if len(got) == k:
            break
    return got


@pytest.mark.parametrize("window", ["all", "1"])
def test_paths_are_shortest_over_the_windows_followed_links(merged, graphs, window):
    G = graphs[window]
    for length in (1, 2, 3):
        for s, t in _pairs(G, length, 3):
            got = paths.request(merged["root"], s, t, window, None)
            hops = got["hops"]
            assert len(hops) == length == nx.shortest_path_length(G, s, t)
            assert hops[0]["src_url"].startswith("http") and checked(hops[0]["src_url"]) == s
            assert checked(hops[-1]["dst_url"]) == t
            for h in hops:
                e = G.edges[checked(h["src_url"]), checked(h["dst_url"])]
                assert (h["first_seen"].isoformat(), h["last_seen"].isoformat(), h["anchors"]) == (
                    e["first_seen"],
                    e["last_seen"],
                    e["anchors"],
                )


def test_no_route_and_bounds(merged, graphs, capsys):
    G = graphs["all"]
    s, t = _pairs(G, 3, 1)[0]
    with pytest.raises(paths.NoRoute, match="of at most 2 followed links"):
        paths.request(merged["root"], s, t, "all", None, max_hops=2)
    unlinked = next(u for u in sorted(G) if G.in_degree(u) == 0)
    with pytest.raises(paths.NoRoute, match="0 pages lead to the target|1 pages lead"):
        paths.request(merged["root"], t, unlinked, "all", None)
    assert paths.request(merged["root"], s, s, "all", None)["hops"] == []
    with pytest.raises(paths.NoRoute, match="found within 1e-09 s"):
        paths.request(merged["root"], s, t, "all", None, timeout=1e-9)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli(["--root", merged["root"], "--json", "path", s, t, "--window", "all"]) == 0
    assert len(json.loads(buf.getvalue())["hops"]) == 3
    assert cli(["--root", merged["root"], "path", t, unlinked, "--window", "all"]) == 1
    assert "no path from" in capsys.readouterr().err
    for args, reason in (
        ([s, t, "--max-hops", "0"], "max_hops must be between 1 and 8"),
        ([s, t, "--timeout", "0"], "timeout must be more than 0"),
        (["gopher://x/", t], "not an http(s) URL"),
    ):
        assert cli(["--root", merged["root"], "path", *args]) == 2
        assert reason in capsys.readouterr().err


def test_path_over_real_http(merged, graphs, tmp_path):
    from lib.serve.app import create_app
    from lib.serve.server import ServerThread
    from tests.catalogue.test_catalogue import _get

    G = graphs["all"]
    s, t = _pairs(G, 2, 1)[0]
    unlinked = next(u for u in sorted(G) if G.in_degree(u) == 0)
    srv = ServerThread(create_app({"dc1": merged["root"]}, cache_dir=str(tmp_path / "cache")))
    base = srv.url + "/catalogue/path"
    q = f"?from={quote(s, safe='')}&to={quote(t, safe='')}&window=all"
    try:
        want = json.loads(to_json(paths.request(merged["root"], s, t, "all", None)))
        assert _get(base, q) == (200, want)
        for bad, status, reason in (
            (f"?from={quote(t, safe='')}&to={quote(unlinked, safe='')}&window=all", 404, "no path from"),
            (q + "&max_hops=9", 400, "max_hops must be between"),
            (q + "&timeout=abc", 400, "timeout"),
            (f"?from={quote(s, safe='')}", 400, "give both URLs"),
            ("?from=http%3A%2F%2F%5B%3A%3A1%2F&to=" + quote(t, safe=""), 400, "cannot normalise URL"),
        ):
            code, err = _get(base, bad)
            assert code == status and reason in err["error"], (bad, code, err)
    finally:
        srv.stop()


def test_host_paths_are_shortest_in_the_windows_host_graph(merged, days, capsys):
    """The host graph folded from the edges (followed links, their hosts): path lengths equal
    networkx's, each hop's days and link count are those of the folded links between the hosts."""
    links = fold({d: t for d, (t, _) in days.items()}, None, max(days))
    H = nx.DiGraph()
    for k, v in links.items():
        s, d = HOSTS[k]
        if v["rel"] is None and s != d:
            e = H.get_edge_data(s, d) or {"first_seen": v["first_seen"], "last_seen": v["last_seen"], "links": 0}
            e["first_seen"], e["last_seen"] = min(e["first_seen"], v["first_seen"]), max(e["last_seen"], v["last_seen"])
            e["links"] += 1
            H.add_edge(s, d, **e)
    checked_pairs = 0
    for length in (1, 2, 3):
        for s, t in _pairs(H, length, 2):
            got = paths.request(merged["root"], s, f"https://{t}/any/page", "all", None, level="host")
            assert len(got["hops"]) == length == nx.shortest_path_length(H, s, t)
            assert got["hops"][0]["src_host"] == s and got["hops"][-1]["dst_host"] == t
            for h in got["hops"]:
                e = H.edges[h["src_host"], h["dst_host"]]
                assert (h["first_seen"].isoformat(), h["last_seen"].isoformat(), h["links"]) == (
                    e["first_seen"],
                    e["last_seen"],
                    e["links"],
                )
            checked_pairs += 1
    assert checked_pairs >= 4
    lonely = next(h for h in sorted(H) if H.in_degree(h) == 0)
    with pytest.raises(paths.NoRoute, match="hosts reached from the source"):
        paths.request(merged["root"], s, lonely, "all", None, level="host")
    assert cli(["--root", merged["root"], "path", s, lonely, "--hosts", "--window", "all"]) == 1
    assert "no path from host" in capsys.readouterr().err
    with pytest.raises(inlinks.BadInput, match="level must be url or host"):
        paths.request(merged["root"], s, t, "all", None, level="domain")
    with pytest.raises(BadUrl, match="no host"):
        paths.request(merged["root"], "http://", t, "all", None, level="host")
