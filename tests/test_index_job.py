"""jobs/index.py end to end on a small preprocessed day built here (known pages, links)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.analysis import get_analyzer
from lib.ciff.reader import CiffReader
from lib.ciff.validate import validate_file
from lib.placement.keyspace import partition_of
from lib.schema import PAGE_SCHEMA

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
    """30 pages: eng/com (12, 4 shards at 4 docs/shard), deu/de (6), eng/uk (3), and groups
    under the 3-page minimum that go to other/: fra/fr, zho/cn, an IP host, an empty page."""
    pages = []
    for i in range(12):
        w1, w2 = WORDS[i % 10], WORDS[(i * 3 + 1) % 10]
        links = [("https://news.example.de/artikel", "German news"), (f"https://shop{i % 2}.example.com/", "the shop")]
        pages.append(_page(i, f"https://site{i}.example.com/page", "com", "eng", f"About the {w1}",
                           f"The {w1} near the {w2} is running. Walkers walked along the {w1}.", links))
    pages[3]["plain_text"] += " A quokka lives here."  # a rare term on one known page
    pages[5]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "Quokka island"})
    pages[7]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "Quokka island"})
    pages[8]["outgoing_links"].append({"url": "https://site3.example.com/page", "anchor_text": "cute animal"})
    de = ["Die Häuser am Fluss sind schön", "Der Bäcker verkauft frisches Brot", "Die Straße führt zum Schloss",
          "Ein Garten mit vielen Blumen", "Das Wetter ist heute sonnig", "Die Kinder spielen im Park"]
    for j, t in enumerate(de):
        pages.append(_page(100 + j, f"https://www.beispiel{j}.de/seite", "de", "deu", f"Seite {j}", t,
                           [("https://site3.example.com/page", "Englische Seite")]))
    for j in range(3):
        pages.append(_page(200 + j, f"https://shop{j}.example.co.uk/", "co.uk", "eng", "British shop",
                           f"Tea and biscuits, shop number {j}"))
    pages.append(_page(300, "https://www.exemple.fr/a", "fr", "fra", "L'homme", "L'homme et l'enfant aiment le fromage"))
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
        "com/eng", "com/und", "de/deu", "uk/eng", "other/fra", "other/zho", "other/eng"
    } - {"com/und"} | {"other/und"}
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
    for p in ciff_files(indexed):
        meta = pq.read_table(str(p).replace("index-", "metadata-").replace(".ciff.gz", ".parquet"))
        r = CiffReader(str(p))
        docs = list(r.docs())
        assert meta.column("docid").to_pylist() == list(range(len(docs)))
        assert meta.column("collection_docid").to_pylist() == [d.collection_docid for d in docs]
        assert meta.column("doclength").to_pylist() == [d.doclength for d in docs]
        # docids follow record_id order, so re-runs number documents identically
        assert meta.column("collection_docid").to_pylist() == sorted(meta.column("collection_docid").to_pylist())


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


def test_postings_of_known_pages(indexed):
    page = sample_pages()[3]
    _, terms = _postings_of(indexed, page["url"])
    expected: dict[str, int] = {}
    for t in get_analyzer("eng").tokens(f"{page['title']}\n{page['plain_text']}"):
        expected[t] = expected.get(t, 0) + 1
    assert terms == expected
    assert terms["quokka"] == 1 and terms["run"] == 1 and "the" not in terms
    _, de_terms = _postings_of(indexed, "https://www.beispiel0.de/seite")
    assert de_terms == {"seit": 1, "0": 1, "haus": 1, "fluss": 1, "schon": 1}
    _, zh_terms = _postings_of(indexed, "https://www.example.cn/")
    assert zh_terms["北京"] == 2 and zh_terms["大学"] == 3


def test_rare_term_has_one_posting(indexed):
    ciff, _ = _postings_of(indexed, sample_pages()[3]["url"])
    lists = {pl.term: pl for pl in CiffReader(ciff).postings()}
    assert lists["quokka"].df == 1
    assert "dailyslice-v1:eng:lower+stop+snowball-english" in CiffReader(ciff).header.description
