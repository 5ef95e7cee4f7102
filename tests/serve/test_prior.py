"""The static prior in search (lib.serve.prior): BM25 plus a weight times the host's rank in the
published web graph, through the engine, the service over real HTTP and ``dailyslice search``.

The demo day (tests/serve/fixtures_http.py) is linked into a root of its own, its graph merged
into a link database and the window's host and domain graphs published (lib.links), as a night
and ``dailyslice webgraph`` would. Expected scores are computed here from the published ranks
file and the plain BM25 scores alone: the formula in plain Python, hosts by urllib.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import urllib.error
import urllib.parse
import urllib.request

import pyarrow.parquet as pq
import pytest

from lib.links import hostgraph, linkdb
from lib.serve import search_command
from lib.serve.app import create_app
from lib.serve.engine import Engine
from lib.serve.errors import NotFound, QueryError
from lib.serve.prior import Prior
from lib.serve.server import ServerThread
from tests.serve.fixtures_http import DEMO_DAY

QUERY = "budget public libraries walking memory"
COLUMN = {"pagerank": "pr_val", "harmonic": "harmonicc_val"}


@pytest.fixture(scope="module")
def ranked_root(published_root, tmp_path_factory) -> pathlib.Path:
    """The demo day's published folders (linked, read only) beside its own linkdb/ and webgraph/."""
    root = tmp_path_factory.mktemp("prior") / "root"
    root.mkdir()
    for kind in ("preprocessed", "index", "catalogue"):
        os.symlink(published_root / kind, root / kind)
    index_day = str(published_root / "index" / f"{DEMO_DAY:%Y-%m}" / f"{DEMO_DAY:%d}")
    edges = linkdb.edges_of(index_day)
    assert edges, "the demo day has a graph"
    with linkdb.lock(str(root / "urldb"), "test", 30):
        linkdb.merge_day(str(root / "linkdb"), DEMO_DAY, edges)
    hostgraph.publish(str(root), 90)
    return root


@pytest.fixture(scope="module")
def engine(ranked_root, tmp_path_factory) -> Engine:
    return Engine({"dc1": str(ranked_root)}, cache_dir=str(tmp_path_factory.mktemp("prior-cache")))


def expected_priors(root: pathlib.Path, kind: str, level: str) -> dict[str, float]:
    """Reversed name -> log(1 + v / mean) / log(1 + max / mean), from the published ranks file."""
    folder = root / "webgraph" / "window=90" / f"until={DEMO_DAY.isoformat()}" / level
    t = pq.read_table(folder / "ranks.parquet").to_pylist()
    values = [r[COLUMN[kind]] for r in t]
    mean, top = sum(values) / len(values), max(values)
    return {r["name"]: math.log(1 + r[COLUMN[kind]] / mean) / math.log(1 + top / mean) for r in t}


def host_name(url: str, level: str) -> str:
    host = urllib.parse.urlsplit(url).hostname or ""
    if level == "domain":  # the sample crawl's hosts are name.tld: the registered domain is the last two labels
        host = ".".join(host.split(".")[-2:])
    return ".".join(reversed(host.split(".")))


def expected_ranking(engine: Engine, root: pathlib.Path, kind: str, level: str, weight: float) -> list[tuple]:
    """Every matching page as (combined, bm25, prior, record_id), by the combined score, ties in BM25's order."""
    plain = engine.search(QUERY, DEMO_DAY, k=1000, collapse=False)
    assert plain.total_results < 1000  # every match is in the plain list
    priors = expected_priors(root, kind, level)
    rows = []
    for i, h in enumerate(plain.hits):
        p = priors.get(host_name(h.url, level), 0.0)
        rows.append((h.score + weight * p, i, h.score, p, h.record_id))
    rows.sort(key=lambda r: (-r[0], r[1]))
    return [(c, s, p, rid) for c, _, s, p, rid in rows]


@pytest.mark.parametrize(("kind", "level", "weight"), [("pagerank", "host", 3.0), ("harmonic", "host", 2.0)])
def test_the_order_changes_exactly_as_the_formula_says(engine, ranked_root, kind, level, weight):
    want = expected_ranking(engine, ranked_root, kind, level, weight)
    plain = [h.record_id for h in engine.search(QUERY, DEMO_DAY, k=10, collapse=False).hits]
    assert [r[3] for r in want[:10]] != plain, "the prior must move some page in the top 10"
    for k in (1, 3, 10):  # k=1 makes the candidates' fetch grow: the exactness of the stop rule
        res = engine.search(QUERY, DEMO_DAY, k=k, collapse=False, prior=Prior(kind, weight, level))
        assert [h.record_id for h in res.hits] == [r[3] for r in want[:k]]
        for h, (bm25, p), (c, s, ep, _) in zip(res.hits, res.parts or [], want):
            assert h.score == pytest.approx(c, abs=1e-9) and bm25 == pytest.approx(s, abs=1e-12)
            assert p == pytest.approx(ep, abs=1e-12)
        assert res.prior and res.prior["kind"] == kind and res.prior["window"] == 90


def test_domain_level_takes_the_registered_domains_rank(engine, ranked_root):
    want = expected_ranking(engine, ranked_root, "pagerank", "domain", 4.0)
    res = engine.search(QUERY, DEMO_DAY, k=10, collapse=False, prior=Prior("pagerank", 4.0, "domain"))
    assert [h.record_id for h in res.hits] == [r[3] for r in want[:10]]
    assert [p for _, p in res.parts or []] == pytest.approx([r[2] for r in want[:10]], abs=1e-12)


def test_weight_zero_is_the_bm25_order(engine):
    plain = engine.search(QUERY, DEMO_DAY, k=10, collapse=True)
    zero = engine.search(QUERY, DEMO_DAY, k=10, collapse=True, prior=Prior("pagerank", 0.0))
    assert [(h.record_id, h.score, h.copies) for h in zero.hits] == [
        (h.record_id, h.score, h.copies) for h in plain.hits
    ]


def test_no_graph_for_the_window_or_day_is_a_clear_not_found(engine):
    with pytest.raises(NotFound, match=r"window=30 .*published: none"):
        engine.search(QUERY, DEMO_DAY, prior=Prior("pagerank", 1.0, "host", 30))


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_service_without_prior_answers_as_before_and_with_it_as_the_engine(
    engine, ranked_root, service, tmp_path_factory
):
    app = create_app({"dc1": str(ranked_root)}, cache_dir=str(tmp_path_factory.mktemp("prior-http")))
    srv = ServerThread(app)
    try:
        q = urllib.parse.quote(QUERY)
        base = f"/search?q={q}&day={DEMO_DAY}&k=10"
        # off: the same bytes as the service over the root without any web graph (query time aside)
        outs = []
        for url in (srv.url + base, srv.url + base + "&prior=none", service + base):
            status, body = get(url)
            assert status == 200
            d = json.loads(body)
            d["meta"].pop("query_time_ms")
            outs.append(json.dumps(d, sort_keys=True))
        assert outs[0] == outs[1] == outs[2]
        assert "prior" not in outs[0]
        status, body = get(srv.url + base + "&prior=pagerank&prior_weight=3&collapse=false")
        assert status == 200
        d = json.loads(body)
        want = engine.search(QUERY, DEMO_DAY, k=10, collapse=False, prior=Prior("pagerank", 3.0))
        assert [r["record_id"] for r in d["results"]] == [h.record_id for h in want.hits]
        assert [(r["bm25"], r["prior"]) for r in d["results"]] == want.parts
        assert d["meta"]["prior"]["kind"] == "pagerank" and d["meta"]["prior"]["weight"] == 3.0
        for bad, status_want, words in [
            ("&prior=katz", 400, "not one of none, pagerank, harmonic"),
            ("&prior=pagerank&prior_weight=-1", 400, "prior weight"),
            ("&prior=pagerank&prior_level=page", 400, "prior level"),
            ("&prior=pagerank&prior_window=0", 400, "prior window"),
            ("&prior=harmonic&prior_window=all", 404, "no web graph of window=all"),
        ]:
            status, body = get(srv.url + base + bad)
            assert status == status_want and words in json.loads(body)["error"], (bad, body)
    finally:
        srv.stop()


def test_search_command_gives_the_engines_order(engine, ranked_root, capsys, tmp_path):
    args = ["--root", str(ranked_root), "--day", DEMO_DAY.isoformat(), "--no-collapse", "--cache", str(tmp_path)]
    assert search_command.main([QUERY, *args, "--prior", "harmonic", "--prior-weight", "2", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = engine.search(QUERY, DEMO_DAY, k=10, collapse=False, prior=Prior("harmonic", 2.0))
    assert [r["record_id"] for r in got["results"]] == [h.record_id for h in want.hits]
    assert got["meta"]["prior"]["kind"] == "harmonic"
    assert search_command.main([QUERY, *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    plain = engine.search(QUERY, DEMO_DAY, k=10, collapse=False)
    assert [ln.split("\t")[3] for ln in lines] == [h.url for h in plain.hits]
    assert search_command.main([QUERY, *args, "--prior", "katz"]) == 2
    assert "katz" in capsys.readouterr().err


def test_top_k_stops_only_when_no_left_out_page_can_enter(monkeypatch):
    """lib.serve.prior.top_k against brute force on drawn BM25 scores and priors (no index): the
    same order for any k and weight, fetching more only while a left-out page could still enter."""
    import random

    from lib.serve import prior as prior_mod

    rng = random.Random(56)
    for _ in range(200):
        n = rng.randrange(1, 300)
        bm25 = sorted((round(rng.uniform(0, 12), rng.choice([1, 6])) for _ in range(n)), reverse=True)
        pri = [rng.choice([0.0, 1.0, rng.random()]) for _ in range(n)]
        hits = [(s, i) for i, s in enumerate(bm25)]  # BM25 order: (score, position)
        k, w = rng.randrange(1, 20), rng.choice([0.0, 0.5, 3.0, 50.0])
        asked: list[int] = []

        def fetch(m: int) -> tuple[list[tuple], int]:
            asked.append(m)
            return hits[:m], n

        got, total, parts = prior_mod.top_k(fetch, k, w, lambda h: pri[h[1]])
        want = sorted(range(n), key=lambda i: (-(bm25[i] + w * pri[i]), i))[:k]
        assert [h[1] for h in got] == want and total == n
        assert [h[0] for h in got] == [bm25[i] + w * pri[i] for i in want]
        assert parts == [(bm25[i], pri[i]) for i in want]
        last = hits[: asked[-1]]
        # it stopped on the rule: every match fetched, or the k-th score out of a left-out page's reach
        assert len(last) < asked[-1] or got[-1][0] >= last[-1][0] + w
        if len(asked) > 1:  # and it fetched more only when the smaller fetch could not decide
            before = hits[: asked[-2]]
            kth = sorted((s + w * pri[i] for s, i in before), reverse=True)[k - 1]
            assert kth < before[-1][0] + w
    monkeypatch.setattr(prior_mod, "MAX_CANDIDATES", 8)
    many = [(10.0 - i / 100, i) for i in range(100)]
    with pytest.raises(QueryError, match="prior of weight 100 needs more than 8"):
        prior_mod.top_k(lambda m: (many[:m], 100), 1, 100.0, lambda h: 1.0 if h[1] == 99 else 0.0)
