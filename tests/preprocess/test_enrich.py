"""Enrichment plugins (lib.preprocess.enrich): the hook, its failure counting, the microdata
plugin against extruct (Resilipipe's own call), and a real preprocess + index run on real
archives with plugins found through a real entry point."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import shutil

import extruct
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator

from jobs import index as index_job
from jobs import preprocess
from lib.errors import UsageError
from lib.pages.schema import PAGE_SCHEMA
from lib.preprocess import enrich
from lib.preprocess.enrich import Enrichment, PageInput, enricher
from lib.preprocess.microdata import microdata
from lib.store import update_log
from lib.text import analysis
from tests.preprocess.enrich_plugins import installed

HEAVY = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "heavy_pages"
DAY = "2026-05-06"
FILES = ["dolma/sample-0000.warc.gz", "resiliparse/warcfile.warc.gz", "aut/example.warc.gz"]


def resilipipe_microdata(html: str) -> str | None:
    """Resilipipe's microdata column (warc_preprocessing.apply_extruct_extractors)."""
    v = extruct.extract(html, syntaxes=["microdata"])["microdata"]
    return str(v) if len(v) > 0 else None


def test_microdata_plugin_writes_what_resilipipe_writes():
    pages = sorted(HEAVY.glob("*.html.gz"))
    with_items = 0
    for p in pages:
        html = gzip.decompress(p.read_bytes()).decode("utf-8", "replace")
        got = microdata(PageInput("https://example.org/", html, "", {}, {}))["microdata"]
        assert got == resilipipe_microdata(html), p.name
        with_items += got is not None
    assert len(pages) == 138 and with_items == 45


@enricher(n=pa.int32())
def _ok(page):
    return {"n": len(page.text)}


@enricher(a=pa.string(), b=pa.int32())
def _picky(page):
    if "boom" in page.text:
        raise KeyError("boom")
    if "wide" in page.text:
        return {"b": 1 << 40}
    if "extra" in page.text:
        return {"a": "x", "zzz": 1}
    if "list" in page.text:
        return ["a"]
    return {"a": page.tree.css_first("p").text()}


def test_enrichment_counts_each_failure_and_keeps_the_other_columns():
    plugins = [
        enrich.Plugin("ok", _ok, tuple(pa.field(c, t) for c, t in _ok.enrich_columns.items())),
        enrich.Plugin("picky", _picky, tuple(pa.field(c, t) for c, t in _picky.enrich_columns.items())),
    ]
    e = Enrichment(plugins)
    texts = ["fine", "boom", "wide", "extra", "list", "also fine"]
    rows = [e.run(PageInput(f"http://e.org/{i}", f"<p>{t}</p>", t, {}, {})) for i, t in enumerate(texts)]
    assert rows == [
        {"n": 4, "a": "fine", "b": None},
        {"n": 4, "a": None, "b": None},
        {"n": 4, "a": None, "b": None},
        {"n": 5, "a": None, "b": None},
        {"n": 4, "a": None, "b": None},
        {"n": 9, "a": "also fine", "b": None},
    ]
    r = e.report()
    assert r["ok"]["pages"] == 6 and r["ok"]["failed"] == 0 and r["ok"]["seconds"] > 0
    assert r["picky"]["failed_by_reason"] == {"KeyError": 1, "bad_value:b": 1, "undeclared_column": 1, "not_a_dict": 1}
    assert [s["url"] for s in r["picky"]["samples"]] == [f"http://e.org/{i}" for i in (1, 2, 3, 4)]
    total = enrich.merge_reports({}, r)
    enrich.merge_reports(total, r)
    assert total["picky"]["failed"] == 8 and total["picky"]["failed_by_reason"]["KeyError"] == 2
    assert len(total["picky"]["samples"]) == enrich.MAX_SAMPLES
    schema = enrich.schema_with(pa.schema([("id", pa.string())]), plugins)
    assert schema.names == ["id", "n", "a", "b"] and schema.field("a").metadata == {b"dailyslice.enricher": b"picky"}


def test_load_refuses_unknown_names_and_clashing_columns(plugin_dist):
    assert enrich.load(["microdata"])[0].fields == (pa.field("microdata", pa.string()),)
    with pytest.raises(UsageError, match="unknown enrichment plugin.*nope; installed: .*flaky.*microdata"):
        enrich.load(["nope"])
    with pytest.raises(UsageError, match="column 'title' is already a page column"):
        enrich.load(["clash"], PAGE_SCHEMA.names)
    with pytest.raises(TypeError):
        enricher(x=int)


@pytest.fixture(scope="module")
def plugin_dist(tmp_path_factory):
    """A distribution that registers the test plugins under dailyslice.enrichers, as pip would."""
    plugins = {
        "flaky": "tests.preprocess.enrich_plugins:flaky",
        "wrong_type": "tests.preprocess.enrich_plugins:wrong_type",
        "clash": "tests.preprocess.test_enrich:_clash",
    }
    with installed(tmp_path_factory.mktemp("site"), "dailyslice-test-plugins", "1.0", plugins) as site:
        yield site


@enricher(title=pa.string())
def _clash(page):
    return {}


def _html_of(path: str, offset: int, charset: str) -> str:
    with open(path, "rb") as f:
        f.seek(offset)
        rec = next(iter(ArchiveIterator(f)))
        return rec.content_stream().read().decode(charset, "replace")


def test_plugins_in_a_real_run(spark, corpus, tmp_path, plugin_dist):
    root = str(tmp_path)
    folder = os.path.join(root, "warc", DAY[:7], DAY[8:])
    os.makedirs(folder)
    for rel in FILES:
        shutil.copyfile(corpus / rel, os.path.join(folder, rel.replace("/", "-")))
    job = preprocess.PreprocessJob()
    assert (
        job.main(
            [
                "--date",
                DAY,
                "--root",
                root,
                "--fail-on",
                "never",
                "--enrich",
                "microdata,flaky",
                "--enrich",
                "wrong_type",
                "--allow-unevaluated-plugins",  # flaky and wrong_type fail on purpose: the gate would refuse them
            ],
            spark=spark,
        )
        == 0
    )
    summary = job.last_result.summary
    day = os.path.join(root, "preprocessed", DAY[:7], DAY[8:])
    pages = pq.read_table(day).to_pylist()
    assert len(pages) == summary["pages_kept"] > 50
    rep = summary["enrich"]
    assert set(rep) == {"microdata", "flaky", "wrong_type"}
    assert all(r["pages"] == len(pages) and r["seconds"] > 0 for r in rep.values())
    # flaky: exactly the pages whose text length is divisible by 3 lost its columns, nothing else
    divisible = [p for p in pages if len(p["plain_text"]) % 3 == 0]
    assert rep["flaky"]["failed_by_reason"] == {"ValueError": len(divisible)} and 0 < len(divisible) < len(pages)
    assert all(p["title_chars"] is None and p["h1"] is None for p in divisible)
    # wrong_type: every page with a Server header failed on the value, the others got null
    served = [p for p in pages if p["http_server"]]
    assert rep["wrong_type"]["failed_by_reason"] == {"bad_value:server": len(served)} and served
    assert all(p["server"] is None for p in pages)
    # microdata: Resilipipe's value on the same HTML, read back by warcio at the page's offset
    assert rep["microdata"]["failed"] == 0
    with_items = 0
    for p in pages:
        html = _html_of(p["warc_file"][len("file://") :], p["warc_offset"], p["charset"])
        assert p["microdata"] == resilipipe_microdata(html), p["url"]
        with_items += p["microdata"] is not None
        if len(p["plain_text"]) % 3:  # flaky's values, from the tree of the HTML warcio read
            tree = LexborHTMLParser(html)
            assert p["h1"] == [n.text(strip=True) for n in tree.css("h1")], p["url"]
            assert p["title_chars"] == (len(tree.css_first("title").text()) if tree.css_first("title") else 0)
    assert with_items >= 2
    stats_enrich = json.load(open(os.path.join(day, "_stats.json")))["totals"]["enrich"]
    assert {k: v["failed"] for k, v in stats_enrich.items()} == {k: v["failed"] for k, v in rep.items()}
    # the index carries them into the metadata store: microdata in schema 0.1.0's column, the rest appended
    assert index_job.main(["--date", DAY, "--root", root], spark=spark) == 0
    # the index day says which analyzers' data built it (lib.text.analysis.data_record), as preprocess names its model
    built = json.load(open(os.path.join(root, "index", DAY[:7], DAY[8:], "_stats.json")))["built_with"]
    assert built["models"]["analyzers"] == analysis.data_record() and built["filters"]["takedown"] == {"source": "none"}
    assert [u.name for u in update_log.read(root)] == [
        f"preprocessed/{DAY[:7]}/{DAY[8:]}",
        f"index/{DAY[:7]}/{DAY[8:]}",
    ]
    meta = pq.read_table([str(f) for f in pathlib.Path(root, "index").rglob("metadata-*.parquet")])
    by_id = {r["record_id"]: r for r in meta.to_pylist()}
    indexed = [p for p in pages if p["ows_index"]]  # a page that says noindex is left out (docs/robots.md)
    assert len(by_id) == len(indexed) == len(pages) - 1
    for p in indexed:
        m = by_id[p["record_id"]]
        assert (m["microdata"], m["title_chars"], m["h1"], m["server"]) == (
            p["microdata"],
            p["title_chars"],
            p["h1"],
            p["server"],
        )
    names = meta.schema.names
    assert names.index("microdata") == 5 and names[-3:] == ["title_chars", "h1", "server"]
