"""The web graph across two data centers: outbound links, the exchange merge and anchor CIFFs.

Two real index days (jobs/index.py on pages of two crawls that link to each other) and a
Python oracle of the merged in-links computed from the pages alone."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections import Counter, defaultdict

import pyarrow.dataset as ds
import pytest

from lib.ciff.reader import CiffReader
from lib.ciff.validate import validate_file
from lib.store import storage
from lib.text.analysis import get_analyzer
from lib.index.graph_exchange import exchange_day, write_outbound
from tests.index.test_index_job import _page, run_index, write_day

D15, D14 = dt.date(2026, 1, 15), dt.date(2026, 1, 14)


def _pages_a() -> list[dict]:
    """Data center A crawls *.alpha.com; its pages link to A's and B's hosts and to nobody's."""
    out = []
    for i in range(6):
        links = [(f"https://www{(i + 1) % 6}.alpha.com/", "next page"), ("https://www0.beta.org/", "Beta  home"),
                 ("https://nobody.example/x", "elsewhere")]
        if i % 2:
            links.append(("https://www1.beta.org/deep", f"deep {i % 3}"))
        out.append(_page(i, f"https://www{i}.alpha.com/", "com", "eng", f"alpha {i}", f"river valley number {i}", links))
    return out


def _pages_b(n: int = 5, offset: int = 0) -> list[dict]:
    """Data center B crawls *.beta.org; its pages link to A's pages, among them one URL that no
    A page links to (its in-links exist only through the exchange)."""
    out = []
    for i in range(n):
        links = [("https://www2.alpha.com/", "Alpha\ttwo"), ("https://www2.alpha.com/", f"alpha {i % 2}"),
                 ("https://www0.alpha.com/only-from-beta", "Hidden gem"), (f"https://www{i % 2}.beta.org/", "beta"),
                 ("https://nobody.example/x", "elsewhere")]
        out.append(_page(1000 + offset + i, f"https://www{i}.beta.org/", "org", "eng", f"beta {i}", f"forest {i}", links))
    return out


def _index(spark, root, pages, day):
    inp = write_day(root / f"in{day:%d}", pages)
    out = root / "index" / f"{day:%Y-%m}" / f"{day:%d}"
    assert run_index(spark, inp, out, "--date", day.isoformat()) == 0
    return out


def _edges(pages) -> list[tuple]:
    return [(p["url"], u, a, p["url_host"], re.match(r"https?://([^/:]*)", u)[1].lower())
            for p in pages for u, a in ((x["url"], x["anchor_text"]) for x in p["outgoing_links"]) if u]


def _oracle(local_pages, partner_pages) -> dict[str, tuple]:
    """dst_url -> (dst_host, inlinks, source_pages, source_hosts, anchors) of the merged table:
    the local edges, plus the partner's edges to hosts the local crawl holds."""
    hosts = {p["url_host"] for p in local_pages}
    edges = _edges(local_pages) + [e for e in _edges(partner_pages) if e[4] in hosts]
    by = defaultdict(list)
    for e in edges:
        by[e[1]].append(e)
    out = {}
    for url, es in by.items():
        texts = Counter(t for t in (re.sub(r"[ \t\n\x0b\f\r]+", " ", e[2] or "").strip(" ") for e in es) if t)
        top = [t for t, _ in sorted(texts.items(), key=lambda kv: (-kv[1], kv[0].encode()))][:10]
        out[url] = (es[0][4], len(es), len({e[0] for e in es}), len({e[3] for e in es}), top)
    return out


def _table(folder) -> dict[str, tuple]:
    t = ds.dataset(str(folder), format="parquet", ignore_prefixes=["_", "."]).to_table().to_pylist()
    assert len({r["dst_url"] for r in t}) == len(t)
    return {r["dst_url"]: (r["dst_host"], r["inlinks"], r["source_pages"], r["source_hosts"], r["anchor_texts"])
            for r in t}


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _anchor_docs(day) -> dict[str, Counter]:
    """url -> anchor term counts, read back from every anchors CIFF (after validating it)."""
    import pyarrow.parquet as pq

    out = {}
    for f in sorted(day.rglob("anchors-*.ciff.gz")):
        assert validate_file(str(f)).ok
        meta = pq.read_table(f.parent / f.name.replace("anchors-", "metadata-").replace(".ciff.gz", ".parquet"))
        index = CiffReader(str(f.parent / f.name.replace("anchors-", "index-")))
        r = CiffReader(str(f))
        assert r.header.num_docs == index.header.num_docs == meta.num_rows
        assert r.header.description.startswith(index.header.description.split(";")[0] + ";")
        assert [d.collection_docid for d in r.docs()] == [d.collection_docid for d in index.docs()]
        per_doc: dict[int, Counter] = defaultdict(Counter)
        for pl in r.postings():
            for d, tf in zip(pl.docids, pl.tfs):
                per_doc[d][pl.term] += tf
        for d, url in zip(meta.column("docid").to_pylist(), meta.column("url").to_pylist()):
            out[url] = per_doc.get(d, Counter())
    return out


@pytest.fixture(scope="module")
def days(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("dcs")
    a, b = base / "a", base / "b"
    built = {"a15": _index(spark, a, _pages_a(), D15), "b15": _index(spark, b, _pages_b(), D15),
             "b14": _index(spark, b, _pages_b(3, offset=50), D14)}
    return base, built


def _copy_days(base, tmp_path, which):
    for k in which:
        dc, day = k[0], int(k[1:])
        src = base / dc / "index" / "2026-01" / f"{day}"
        shutil.copytree(src, tmp_path / dc / "index" / "2026-01" / f"{day}")
    return tmp_path / "a", tmp_path / "b"


def test_two_data_centers_exchange_links_exactly_and_idempotently(days, tmp_path):
    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    da, db = a / "index/2026-01/15", b / "index/2026-01/15"
    local_a = _table(da / "graph/inlinks")
    assert "https://www0.alpha.com/only-from-beta" not in local_a

    # B first: A has published no outbound links yet, so B records A as missing and goes on
    rb = exchange_day(str(db), D15, {"a": str(a)})
    assert rb["partners"] == {"a": {"status": "missing"}} and rb["changed"]
    ra = exchange_day(str(da), D15, {"b": str(b)})
    assert ra["partners"]["b"]["status"] == "merged" and ra["partners"]["b"]["same_day"]
    rb = exchange_day(str(db), D15, {"a": str(a)})
    assert rb["partners"]["a"]["date"] == "2026-01-15"

    # outbound: the edges to hosts the day did not crawl
    out_a = ds.dataset(str(da / "graph/outbound"), ignore_prefixes=["_"]).to_table().to_pylist()
    assert {r["dst_host"] for r in out_a} == {"www0.beta.org", "www1.beta.org", "nobody.example"}
    assert json.loads((da / "graph/outbound/_SUCCESS").read_text())["rows"] == len(out_a)

    merged_a, merged_b = _table(da / "graph/inlinks"), _table(db / "graph/inlinks")
    assert merged_a == _oracle(_pages_a(), _pages_b())
    assert merged_b == _oracle(_pages_b(), _pages_a())
    assert _table(da / "graph/inlinks_local") == local_a == _oracle(_pages_a(), [])
    # in-links that exist only through the exchange
    assert merged_a["https://www0.alpha.com/only-from-beta"][:4] == ("www0.alpha.com", 5, 5, 5)
    assert merged_a["https://www2.alpha.com/"][1] == local_a["https://www2.alpha.com/"][1] + 10
    assert merged_a["https://nobody.example/x"] == local_a["https://nobody.example/x"]  # nobody's host: not merged
    assert ra["counts"]["incoming_edges"] == 15 and ra["counts"]["merged_urls"] == 2

    # anchor CIFFs: the merged anchors of every page, analyzed, against Python counts
    eng = get_analyzer("eng")
    got = _anchor_docs(da)
    assert set(got) == {p["url"] for p in _pages_a()}
    for url, c in got.items():
        want = Counter(t for a_ in (merged_a[url][4] if url in merged_a else []) for t in eng.tokens(a_))
        assert c == want, url
    assert got["https://www2.alpha.com/"]["alpha"] > 0  # an anchor found only in B's crawl

    # re-running changes nothing: no write at all, and a forced re-run writes the same bytes
    before = _files(da)
    again = exchange_day(str(da), D15, {"b": str(b)})
    assert not again["changed"] and _files(da) == before
    forced = exchange_day(str(da), D15, {"b": str(b)}, force=True)
    assert forced["changed"] and _files(da) == before


def test_a_late_partner_is_merged_from_its_latest_day_then_replaced(days, tmp_path):
    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b14"])
    da = a / "index/2026-01/15"
    write_outbound(str(b / "index/2026-01/14"))
    r = exchange_day(str(da), D15, {"b": str(b), "c": str(tmp_path / "c")}, lookback_days=3)
    assert r["partners"]["b"] == {**r["partners"]["b"], "status": "merged", "date": "2026-01-14", "same_day": False}
    assert r["partners"]["c"] == {"status": "missing"}
    assert _table(da / "graph/inlinks") == _oracle(_pages_a(), _pages_b(3, offset=50))
    # B's day 15 arrives: the merge is redone from the local table, not added to the earlier one
    shutil.copytree(base / "b/index/2026-01/15", b / "index/2026-01/15")
    write_outbound(str(b / "index/2026-01/15"))
    r = exchange_day(str(da), D15, {"b": str(b), "c": str(tmp_path / "c")}, lookback_days=3)
    assert r["changed"] and r["partners"]["b"]["date"] == "2026-01-15"
    assert _table(da / "graph/inlinks") == _oracle(_pages_a(), _pages_b())
    # beyond the lookback the older day is not taken
    assert exchange_day(str(da), D15 + dt.timedelta(days=5), {"b": str(b)}, lookback_days=3)["partners"]["b"] == \
        {"status": "missing"}


def test_exchange_between_days_on_s3(days, tmp_path, s3_bucket):
    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    ra, rb = f"s3://{s3_bucket}/dc-a", f"s3://{s3_bucket}/dc-b"
    storage.upload_tree(str(a / "index/2026-01/15"), f"{ra}/index/2026-01/15")
    storage.upload_tree(str(b / "index/2026-01/15"), f"{rb}/index/2026-01/15")
    write_outbound(f"{rb}/index/2026-01/15")
    rec = exchange_day(f"{ra}/index/2026-01/15", D15, {"b": rb}, work=str(tmp_path / "w1"))
    assert rec["changed"] and rec["partners"]["b"]["status"] == "merged"
    got = tmp_path / "got"
    for f in storage.list_files(f"{ra}/index/2026-01/15"):
        dest = got / f.uri[len(f"{ra}/index/2026-01/15/"):]
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(storage.read_bytes(f.uri))
    assert _table(got / "graph/inlinks") == _oracle(_pages_a(), _pages_b())
    assert (got / "graph/inlinks/_SUCCESS").exists() and (got / "graph/_exchange.json").exists()
    assert _anchor_docs(got)["https://www2.alpha.com/"]["alpha"] == 3  # "Alpha two", "alpha 0", "alpha 1" from B
    again = exchange_day(f"{ra}/index/2026-01/15", D15, {"b": rb}, work=str(tmp_path / "w2"))
    assert not again["changed"]


def test_cli_merges_and_refuses_an_unfinished_day(days, tmp_path, capsys):
    from jobs import exchange

    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    write_outbound(str(b / "index/2026-01/15"))
    assert exchange.main(["--root", str(a), "--date", "2026-01-15", "--partner", f"b={b}"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["partners"]["b"]["status"] == "merged" and rec["counts"]["merged_urls"] == 2
    assert json.loads((a / "index/2026-01/15/graph/_exchange.json").read_text())["partners"] == rec["partners"]
    assert exchange.main(["--root", str(a), "--date", "2026-01-16", "--partner", f"b={b}"]) == 2


@pytest.mark.filterwarnings("ignore:Using stemmer:UserWarning")
def test_anchor_ciffs_are_read_by_ciff_toolkit_and_pisa(days, tmp_path, monkeypatch):
    """Other tools take the anchor CIFFs, documents without anchors (length 0) included."""
    import sys
    import types

    from ciff_toolkit.read import CiffReader as ToolkitReader

    from tests.ciff.test_ciff_interop import _ciff_to_pisa

    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    write_outbound(str(a / "index/2026-01/15"))
    exchange_day(str(b / "index/2026-01/15"), D15, {"a": str(a)})
    files = sorted((b / "index/2026-01/15").rglob("anchors-*.ciff.gz"))
    with_empty = [f for f in files if any(d.doclength == 0 for d in CiffReader(str(f)).docs())]
    assert files and with_empty
    target = next(f for f in with_empty if any(pl.term == "beta" for pl in CiffReader(str(f)).postings()))
    with ToolkitReader(target) as theirs:
        docs = list(theirs.read_documents())
    assert [(d.docid, d.collection_docid, d.doclength) for d in docs] == \
        [(d.docid, d.collection_docid, d.doclength) for d in CiffReader(str(target)).docs()]
    pisa = pytest.importorskip("pyterrier_pisa", reason="pyterrier-pisa (PISA wheel) is not installed here")
    try:
        import pyciff  # noqa: F401
    except ImportError:
        monkeypatch.setitem(sys.modules, "pyciff", types.SimpleNamespace(ciff_to_pisa=_ciff_to_pisa))
    index = pisa.PisaIndex.from_ciff(str(target), str(tmp_path / "pisa"), stemmer="none")
    assert index.num_docs() == len(docs)
    hits = index.bm25(num_results=10).search("beta")
    want = {d.collection_docid for d in CiffReader(str(target)).docs()
            if any(pl.term == "beta" and d.docid in pl.docids for pl in CiffReader(str(target)).postings())}
    assert set(hits["docno"]) == want and want


def test_a_broken_partner_file_is_recorded_and_left_out_and_a_restored_table_is_merged_again(days, tmp_path):
    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    da, db = a / "index/2026-01/15", b / "index/2026-01/15"
    write_outbound(str(db))
    part = db / "graph/outbound/part-00000.parquet"
    good = part.read_bytes()
    part.write_bytes(good[:-40] + b"\0" * 40)
    r = exchange_day(str(da), D15, {"b": str(b)})
    assert r["partners"]["b"]["status"] == "invalid"
    assert "part-00000.parquet: SHA-256" in r["partners"]["b"]["error"] and str(db) in r["partners"]["b"]["error"]
    assert _table(da / "graph/inlinks") == _oracle(_pages_a(), [])  # the day goes on without it
    part.write_bytes(good)  # repaired (or a torn copy): a partner left out is tried again on the next run
    assert exchange_day(str(da), D15, {"b": str(b)})["partners"]["b"]["status"] == "merged"
    assert _table(da / "graph/inlinks") == _oracle(_pages_a(), _pages_b())
    merged = _files(da / "graph/inlinks")
    # someone puts the index job's table back (e.g. the job output staged again): merged again
    shutil.rmtree(da / "graph/inlinks")
    shutil.copytree(base / "a/index/2026-01/15/graph/inlinks", da / "graph/inlinks")
    r = exchange_day(str(da), D15, {"b": str(b)})
    assert r["changed"] and _files(da / "graph/inlinks") == merged


def test_incoming_links_to_an_excluded_page_are_left_out_and_a_new_list_merges_again(days, tmp_path):
    """A's take-down list names a page only B links to: the exchange merges none of those links
    (counted), the other merged in-links are the oracle's, and a changed list is a new input."""
    base, _ = days
    a, b = _copy_days(base, tmp_path, ["a15", "b15"])
    da, db = a / "index/2026-01/15", b / "index/2026-01/15"
    write_outbound(str(db))
    first = exchange_day(str(da), D15, {"b": str(b)})
    assert "https://www0.alpha.com/only-from-beta" in _table(da / "graph/inlinks")
    (a / "_exclusions.jsonl").write_text(json.dumps({"url": "https://www0.alpha.com/only-from-beta",
                                                     "date": "2026-01-16", "reason": "test"}) + "\n")
    r = exchange_day(str(da), D15, {"b": str(b)})
    assert r["changed"] and r["exclusions"] and first["exclusions"] is None
    assert r["counts"]["excluded_incoming"] == 5
    merged = _table(da / "graph/inlinks")
    want = {u: v for u, v in _oracle(_pages_a(), _pages_b()).items() if u != "https://www0.alpha.com/only-from-beta"}
    assert merged == want
    assert not exchange_day(str(da), D15, {"b": str(b)})["changed"]  # same list, same partners: nothing to do
