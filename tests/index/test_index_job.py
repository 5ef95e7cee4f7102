"""jobs/index.py end to end on a small preprocessed day built here (known pages, links)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import pathlib
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.ciff.reader import CiffReader
from lib.ciff.validate import validate_file
from lib.pages.keyspace import partition_of
from lib.pages.schema import PAGE_SCHEMA
from lib.text.analysis import analyzer_from_description, get_analyzer

DAY = dt.date(2026, 1, 15)
OPTS = ["--docs-per-shard", "4", "--min-group-docs", "3"]

WORDS = "river mountain valley forest meadow harbour bridge castle garden market".split()


def _page(i: int, url: str, suffix: str, lang: str, title: str, text: str, links=()) -> dict:
    host = url.split("/")[2]
    return {
        "id": hashlib.sha256(url.encode()).hexdigest(),
        "record_id": f"<urn:uuid:00000000-0000-0000-0000-{i:012d}>",
        "url": url,
        "url_scheme": url.split(":")[0],
        "url_host": host,
        "url_path": "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/",
        "url_query": "",
        "url_subdomain": "",
        "url_domain": host,
        "url_suffix": suffix,
        "title": title,
        "description": None,
        "plain_text": text,
        "language": lang,
        "language_score": 0.9,
        "html_lang": None,
        "canonical_url": None,
        "http_status": 200,
        "mime_type": "text/html",
        "charset": "utf-8",
        "charset_source": "http",
        "http_server": None,
        "content_length": len(text),
        "payload_digest": None,
        "warc_date": dt.datetime(2026, 1, 15, 12, 0, tzinfo=dt.timezone.utc),
        "warc_ip": None,
        "warc_file": f"file:///crawl/{i % 3}.warc.gz",
        "warc_offset": 1000 * i,
        "warc_length": 500 + i,
        "outgoing_links": [{"url": u, "anchor_text": a} for u, a in links],
        "valid": bool(text),
    }


def sample_pages() -> list[dict]:
    """26 pages: eng/com (12, 4 shards at 4 docs/shard), deu/de (6), eng/uk (3), and groups
    under the 3-page minimum that go to other/: fra/fr, zho/cn, an IP host, an empty page."""
    pages = []
    for i in range(12):
        w1, w2 = WORDS[i % 10], WORDS[(i * 3 + 1) % 10]
        links = [("https://news.example.de/artikel", "German news"), (f"https://shop{i % 2}.example.com/", "the shop")]
        pages.append(
            _page(
                i,
                f"https://site{i}.example.com/page",
                "com",
                "eng",
                f"About the {w1}",
                f"The {w1} near the {w2} is running. Walkers walked along the {w1}.",
                links,
            )
        )
    pages[3]["plain_text"] += " A quokka lives here."  # a rare term on one known page
    pages[5]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "Quokka island"})
    pages[7]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "Quokka island"})
    pages[8]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "cute animal"})
    de = [
        "Die Häuser am Fluss sind schön",
        "Der Bäcker verkauft frisches Brot",
        "Die Straße führt zum Schloss",
        "Ein Garten mit vielen Blumen",
        "Das Wetter ist heute sonnig",
        "Die Kinder spielen im Park",
    ]
    for j, t in enumerate(de):
        pages.append(
            _page(
                100 + j,
                f"https://www.beispiel{j}.de/seite",
                "de",
                "deu",
                f"Seite {j}",
                t,
                [("https://site3.example.com/page", "Englische Seite")],
            )
        )
    for j in range(3):
        pages.append(
            _page(
                200 + j,
                f"https://shop{j}.example.co.uk/",
                "co.uk",
                "eng",
                "British shop",
                f"Tea and biscuits, shop number {j}",
            )
        )
    pages.append(
        _page(300, "https://www.exemple.fr/a", "fr", "fra", "L'homme", "L'homme et l'enfant aiment le fromage")
    )
    pages.append(_page(301, "https://www.exemple.fr/b", "fr", "fra", "Fromage", "Le fromage de chèvre"))
    pages.append(_page(400, "https://www.example.cn/", "cn", "zho", "北京大学", "北京大学是一所大学"))
    pages.append(_page(500, "http://192.0.2.7/index.html", "", "eng", "Router", "Router admin page login"))
    pages.append(_page(600, "https://empty.example.com/", "com", "und", None, ""))
    return pages


def write_day(root: pathlib.Path, pages: list[dict], complete: bool = True) -> pathlib.Path:
    """A preprocessed day as jobs/preprocess.py writes it (language= partitions, _captures, _SUCCESS)."""
    out = root / "preprocessed" / f"{DAY:%Y-%m}" / f"{DAY:%d}"
    schema = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])
    by_lang: dict[str, list[dict]] = {}
    for p in pages:
        by_lang.setdefault(p["language"], []).append({k: v for k, v in p.items() if k != "language"})
    for lang, rows in by_lang.items():
        d = out / f"language={lang}"
        d.mkdir(parents=True)
        half = len(rows) // 2  # two files per language, one of them possibly empty
        pq.write_table(pa.Table.from_pylist(rows[:half], schema=schema), d / "part-00000.parquet")
        pq.write_table(pa.Table.from_pylist(rows[half:], schema=schema), d / "part-00001.parquet")
    (out / "_captures").mkdir(parents=True, exist_ok=True)
    (out / "_captures" / "part-00000.parquet").write_bytes(b"not parquet: must be skipped")
    if complete:
        (out / "_SUCCESS").write_bytes(b"")
    return out


def run_index(spark, inp, out, *extra: str) -> int:
    from jobs import index

    return index.main(["--input", str(inp), "--output", str(out), *OPTS, *extra], spark=spark)


def ciff_files(out: pathlib.Path) -> list[pathlib.Path]:
    return sorted(out.rglob("index-*.ciff.gz"))


@pytest.fixture(scope="module")
def indexed(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("idx")
    inp = write_day(root, sample_pages())
    out = root / "index" / "2026-01" / "15"
    assert run_index(spark, inp, out, "--date", DAY.isoformat()) == 0
    return out


def test_layout_and_every_ciff_valid(indexed):
    out = indexed
    assert (out / "_SUCCESS").exists()
    rel = sorted(str(p.relative_to(out)) for p in ciff_files(out))
    assert {r.rsplit("/", 1)[0] for r in rel} == {
        "com/eng",
        "de/deu",
        "uk/eng",
        "other/fra",
        "other/zho",
        "other/eng",
        "other/und",
    }
    assert len(rel) == 4 + 6
    for p in ciff_files(out):
        report = validate_file(str(p))
        assert report.ok, report
        meta = p.with_name(p.name.replace("index-", "metadata-").replace(".ciff.gz", ".parquet"))
        assert meta.exists()
    stats = json.loads((out / "_stats.json").read_text())
    assert stats["totals"]["docs"] == stats["totals"]["pages_in"] == len(sample_pages())
    eng_com = [g for g in stats["groups"] if (g["tld"], g["lang"]) == ("com", "eng")][0]
    assert eng_com["k"] == 4 and eng_com["docs"] == 12
    for s in stats["shards"]:
        p = out / s["tld"] / s["lang"] / f"index-{s['shard']}.ciff.gz"
        assert p.stat().st_size == s["ciff_bytes"]


def test_shard_placement_follows_md5_keyspace(indexed):
    out = indexed
    for p in sorted((out / "com" / "eng").glob("metadata-*.parquet")):
        n = int(p.stem.split("-")[1])
        urls = pq.read_table(p).column("url").to_pylist()
        assert urls and all(partition_of(u, 4) == n for u in urls)


def test_metadata_in_docid_order_matches_ciff(indexed):
    day = indexed.parent.parent.parent / "preprocessed" / "2026-01" / "15"
    input_order = [
        r
        for f in sorted(day.glob("language=*/part-*.parquet"))
        for r in pq.read_table(f, columns=["record_id"]).column(0).to_pylist()
    ]
    for p in ciff_files(indexed):
        meta = pq.read_table(str(p).replace("index-", "metadata-").replace(".ciff.gz", ".parquet"))
        r = CiffReader(str(p))
        docs = list(r.docs())
        assert meta.column("docid").to_pylist() == list(range(len(docs)))
        assert meta.column("collection_docid").to_pylist() == [d.collection_docid for d in docs]
        assert meta.column("doclength").to_pylist() == [d.doclength for d in docs]
        # docids follow the day's input order (files by sorted path, then rows), so re-runs
        # number documents identically
        ids = meta.column("collection_docid").to_pylist()
        assert ids == sorted(ids, key=input_order.index)


def _postings_of(out: pathlib.Path, url: str) -> tuple[str, dict[str, int]]:
    """(ciff path, {term: tf}) of one page, read back from the index files."""
    for meta in out.rglob("metadata-*.parquet"):
        t = pq.read_table(meta).to_pylist()
        hit = [r for r in t if r["url"] == url]
        if hit:
            docid = hit[0]["docid"]
            ciff = str(meta).replace("metadata-", "index-").replace(".parquet", ".ciff.gz")
            terms = {}
            for pl in CiffReader(ciff).postings():
                for d, tf in zip(pl.docids, pl.tfs):
                    if d == docid:
                        terms[pl.term] = int(tf)
            return ciff, terms
    raise AssertionError(f"{url} not indexed")


def _assert_postings(spark, out: pathlib.Path, url: str, lang: str, text: str) -> dict[str, int]:
    from chispa import assert_df_equality

    _, terms = _postings_of(out, url)
    expected = Counter(get_analyzer(lang).tokens(text))
    schema = "term string, tf int"
    assert_df_equality(
        spark.createDataFrame(sorted(terms.items()), schema),
        spark.createDataFrame(sorted(expected.items()), schema),
        ignore_row_order=True,
    )
    return terms


def test_postings_of_known_pages(spark, indexed):
    page = sample_pages()[3]
    terms = _assert_postings(spark, indexed, page["url"], "eng", f"{page['title']}\n{page['plain_text']}")
    assert terms["quokka"] == 1 and terms["run"] == 1 and "the" not in terms
    de_terms = _assert_postings(
        spark, indexed, "https://www.beispiel0.de/seite", "deu", "Seite 0\nDie Häuser am Fluss sind schön"
    )
    assert de_terms == {"seit": 1, "0": 1, "haus": 1, "fluss": 1, "schon": 1}
    zh_terms = _assert_postings(spark, indexed, "https://www.example.cn/", "zho", "北京大学\n北京大学是一所大学")
    assert zh_terms["北京"] == 2 and zh_terms["大学"] == 3
    _, empty = _postings_of(indexed, "https://empty.example.com/")
    assert empty == {}


def test_rare_term_has_one_posting(indexed):
    ciff, _ = _postings_of(indexed, sample_pages()[3]["url"])
    lists = {pl.term: pl for pl in CiffReader(ciff).postings()}
    assert lists["quokka"].df == 1
    header = CiffReader(ciff).header
    assert analyzer_from_description(header.description) is get_analyzer("eng")
    assert "shard" in header.description and "date=2026-01-15" in header.description


def test_graph_links_and_anchor_texts(indexed):
    g = indexed / "graph"
    edges = pq.read_table(g / "edges").to_pylist()
    assert len(edges) == sum(len(p["outgoing_links"]) for p in sample_pages())
    assert {
        "src_url": "https://site5.example.com/page",
        "dst_url": "https://site3.example.com/page",
        "anchor_text": "Quokka island",
        "src_host": "site5.example.com",
        "dst_host": "site3.example.com",
        "rel": None,
    } in edges
    inl = {r["dst_url"]: r for r in pq.read_table(g / "inlinks").to_pylist()}
    q = inl["https://site3.example.com/page"]
    # 6 German pages + 3 English ones; anchors by frequency, then text
    assert (q["inlinks"], q["source_pages"], q["source_hosts"]) == (9, 9, 9)
    assert q["anchor_texts"] == ["Englische Seite", "Quokka island", "cute animal"]
    assert inl["https://news.example.de/artikel"]["inlinks"] == 12
    hosts = {(r["src_host"], r["dst_host"]): r["links"] for r in pq.read_table(g / "hosts").to_pylist()}
    assert hosts[("site5.example.com", "site3.example.com")] == 1
    assert sum(hosts.values()) == len(edges)


def test_anchor_ciffs_hold_each_pages_inlink_anchors(indexed):
    """Beside each shard, anchors-{n}.ciff.gz: the same documents, each the analyzed anchor texts
    of its URL's in-links row (Python counts from the published inlinks table)."""
    inl = {r["dst_url"]: r["anchor_texts"] for r in pq.read_table(indexed / "graph" / "inlinks").to_pylist()}
    stats = json.loads((indexed / "_stats.json").read_text())
    files = sorted(indexed.rglob("anchors-*.ciff.gz"))
    assert len(files) == len(ciff_files(indexed)) == stats["anchors"]["files"]
    with_anchors = 0
    for f in files:
        assert validate_file(str(f)).ok
        index, r = CiffReader(str(f.parent / f.name.replace("anchors-", "index-"))), CiffReader(str(f))
        assert [d.collection_docid for d in r.docs()] == [d.collection_docid for d in index.docs()]
        analyzer = analyzer_from_description(index.header.description)
        meta = pq.read_table(f.parent / f.name.replace("anchors-", "metadata-").replace(".ciff.gz", ".parquet"))
        got: dict[int, Counter] = {}
        for pl in r.postings():
            for d, tf in zip(pl.docids, pl.tfs):
                got.setdefault(d, Counter())[pl.term] += tf
        for d, url in zip(meta.column("docid").to_pylist(), meta.column("url").to_pylist()):
            want = Counter(t for a in inl.get(url) or [] for t in analyzer.tokens(a))
            assert got.get(d, Counter()) == want, url
            with_anchors += bool(want)
    assert with_anchors == stats["anchors"]["docs_with_anchors"] > 0


def _digests(out: pathlib.Path) -> dict[str, str]:
    """The shards and metadata (the graph and the anchor texts, which come from it, left out)."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in out.rglob("*")
        if p.is_file() and "graph" not in p.parts and p.name != "_stats.json" and not p.name.startswith("anchors-")
    }


def test_rerun_is_idempotent(spark, indexed):
    before = _digests(indexed)
    crashed = indexed.parent / "15.tmp-deadbeef"  # what a killed run leaves behind
    (crashed / "com" / "eng").mkdir(parents=True)
    (crashed / "com" / "eng" / "index-0.ciff.gz").write_bytes(b"partial")
    inp = indexed.parent.parent.parent / "preprocessed" / "2026-01" / "15"
    assert run_index(spark, inp, indexed, "--date", DAY.isoformat()) == 0
    assert _digests(indexed) == before  # byte-identical shards and metadata
    assert (indexed / "_SUCCESS").exists()
    assert not list(indexed.parent.glob("15.*"))  # no temp or .old folders left beside it


def test_no_graph_writes_the_same_shards_and_no_graph(spark, indexed, tmp_path):
    inp = indexed.parent.parent.parent / "preprocessed" / "2026-01" / "15"
    out = tmp_path / "index"
    assert run_index(spark, inp, out, "--date", DAY.isoformat(), "--no-graph") == 0
    assert _digests(out) == _digests(indexed)
    assert not (out / "graph").exists()
    stats = json.loads((out / "_stats.json").read_text())
    assert stats["graph"] is None and "graph" not in stats["seconds"] and "anchors" not in stats
    assert not list(out.rglob("anchors-*"))


def test_no_anchors_writes_the_same_shards_and_graph_without_anchor_ciffs(spark, indexed, tmp_path):
    inp = indexed.parent.parent.parent / "preprocessed" / "2026-01" / "15"
    out = tmp_path / "index"
    assert run_index(spark, inp, out, "--date", DAY.isoformat(), "--no-anchors") == 0
    assert _digests(out) == _digests(indexed)
    for part in ("edges", "inlinks", "hosts"):
        assert pq.read_table(out / "graph" / part).to_pylist() == pq.read_table(indexed / "graph" / part).to_pylist()
    stats = json.loads((out / "_stats.json").read_text())
    assert "anchors" not in stats and stats["args"]["anchors"] is False and stats["graph"]["edges"] > 0
    assert not list(out.rglob("anchors-*")) and list(indexed.rglob("anchors-*"))


def test_incomplete_input_is_refused(spark, tmp_path):
    inp = write_day(tmp_path, sample_pages()[:3], complete=False)
    out = tmp_path / "out"
    assert run_index(spark, inp, out) == 1
    assert not out.exists()


def test_empty_day_to_s3(spark, tmp_path, s3_bucket):
    from lib.store import storage

    inp = tmp_path / "pre"
    inp.mkdir()
    (inp / "_SUCCESS").write_bytes(b"")
    dest = f"s3://{s3_bucket}/index/2026-01/15"
    assert run_index(spark, inp, dest, "--staging", str(tmp_path / "stage")) == 4  # no pages: nothing published
    assert storage.list_files(dest) == []
    assert run_index(spark, inp, dest, "--staging", str(tmp_path / "stage"), "--allow-empty") == 0
    names = [f.uri[len(dest) + 1 :] for f in storage.list_files(dest)]
    assert names[-1] == "_SUCCESS" or "_SUCCESS" in names
    assert not [n for n in names if n.endswith(".ciff.gz")]
    stats = json.loads(storage.read_bytes(dest + "/_stats.json"))
    assert stats["totals"]["docs"] == 0 and stats["graph"] == {"edges": 0, "inlinks": 0, "hosts": 0}
    assert any(n.startswith("graph/edges/") and n.endswith(".parquet") for n in names)
    assert not list((tmp_path / "stage").iterdir())  # staging cleaned up


def test_day_without_links_has_empty_aggregates_with_their_columns(spark, tmp_path):
    pages = [dict(p, outgoing_links=[]) for p in sample_pages()]
    inp = write_day(tmp_path, pages)
    out = tmp_path / "index"
    assert run_index(spark, inp, out) == 0
    g = out / "graph"
    assert pq.read_table(g / "edges").num_rows == 0
    inl, hosts = pq.read_table(g / "inlinks"), pq.read_table(g / "hosts")
    assert (inl.num_rows, hosts.num_rows) == (0, 0)
    assert inl.column_names == [
        "dst_url",
        "dst_host",
        "inlinks",
        "source_pages",
        "source_hosts",
        "anchor_texts",
        "nofollow_inlinks",
    ]
    assert hosts.column_names == ["src_host", "dst_host", "links", "pages", "nofollow_links"]
    assert json.loads((out / "_stats.json").read_text())["totals"]["docs"] == len(pages)


def test_real_crawls_preprocessed_then_indexed(spark, corpus, tmp_path):
    """Two real crawl files through jobs/preprocess.py, then the index; every CIFF valid."""
    import pyarrow.dataset as ds

    from jobs import preprocess

    warc = tmp_path / "warc"
    warc.mkdir()
    for name in ("aut/example.warc.gz", "resiliparse/warcfile.warc.gz"):
        (warc / name.replace("/", "-")).write_bytes((corpus / name).read_bytes())
    pre, out = tmp_path / "pre", tmp_path / "idx"
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    assert run_index(spark, pre, out) == 0
    pages = ds.dataset(pre, format="parquet", partitioning="hive", ignore_prefixes=["_", "."]).to_table().to_pylist()
    stats = json.loads((out / "_stats.json").read_text())
    # the one page of these archives that says noindex (meta robots) is left out, and listed
    noindex = [p["record_id"] for p in pages if p["ows_index"] is False]
    assert len(noindex) == stats["signals"]["noindex"] == stats["signals"]["left_out"] == 1
    assert pq.read_table(out / "_left_out.parquet").column("record_id").to_pylist() == noindex
    assert stats["totals"]["docs"] == len(pages) - 1 > 100
    files = ciff_files(out)
    assert len(files) == stats["totals"]["shards"]
    for p in files:
        assert validate_file(str(p)).ok
    # a Russian page (its own other/rus group) and an English archive.org page, term by term
    for url in ("http://01spb.ru/company/", "http://www.archive.org/about/credits.php"):
        page = next(p for p in pages if p["url"] == url)
        text = "\n".join(x for x in (page["title"], page["description"], page["plain_text"]) if x)
        terms = _assert_postings(spark, out, url, page["language"], text)
        assert terms
    assert {"компан", "пожарн"} <= set(_postings_of(out, "http://01spb.ru/company/")[1])
    inl = pq.read_table(out / "graph" / "inlinks", filters=[("dst_url", "=", "http://www.archive.org/")]).to_pylist()
    assert len(inl) == 1 and inl[0]["source_hosts"] == 1 and inl[0]["inlinks"] > 50
    assert "Internet Archive home page" in inl[0]["anchor_texts"]


def test_day_from_s3_to_s3(spark, tmp_path, s3_bucket):
    from lib.store import storage

    local = write_day(tmp_path / "local", sample_pages()[:4])
    src = f"s3://{s3_bucket}/preprocessed/2026-01/15"
    for p in sorted(local.rglob("*")):
        if p.is_file():
            storage.write_bytes(f"{src}/{p.relative_to(local)}", p.read_bytes())
    dest = f"s3://{s3_bucket}/index/2026-01/15"
    stage = tmp_path / "stage"
    assert run_index(spark, src, dest, "--staging", str(stage)) == 0
    names = {f.uri[len(dest) + 1 :] for f in storage.list_files(dest)}
    assert {"_SUCCESS", "_stats.json", "com/eng/index-0.ciff.gz", "com/eng/metadata-0.parquet"} <= names
    got = tmp_path / "index-0.ciff.gz"
    got.write_bytes(storage.read_bytes(f"{dest}/com/eng/index-0.ciff.gz"))
    assert validate_file(str(got)).ok and CiffReader(str(got)).header.num_docs == 4
    assert not list(stage.iterdir())  # staged output and downloaded input removed
