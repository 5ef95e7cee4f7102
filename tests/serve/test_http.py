"""The service over real HTTP on a published demo day: the JSON search contract (checked against the
preprocessed Parquet and the WARC records themselves), OpenSearch description and Atom results,
index info, the catalogue endpoints, the start command, and the search page in headless Chromium."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import httpx
import pyarrow.dataset as ds
from warcio.archiveiterator import ArchiveIterator

from lib.store import layout
from tests.helpers_browser import chromium
from tests.serve.fixtures_http import DEMO_DAY

OS = "{http://a9.com/-/spec/opensearch/1.1/}"
ATOM = "{http://www.w3.org/2005/Atom}"
DAY = DEMO_DAY.isoformat()


def _pages(root) -> dict[str, dict]:
    """record_id -> preprocessed page row (url, title, language, warc pointer) of the demo day."""
    folder = layout.day_path(str(root), layout.PREPROCESSED, DEMO_DAY)
    t = ds.dataset(
        folder, format="parquet", partitioning="hive", exclude_invalid_files=True, ignore_prefixes=["_", "."]
    ).to_table(columns=["record_id", "url", "title", "language", "warc_file", "warc_offset", "warc_length"])
    return {r["record_id"]: r for r in t.to_pylist()}


def _warc_record(warc_file: str, offset: int, length: int):
    path = warc_file.removeprefix("file://")
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    rec = next(iter(ArchiveIterator(io.BytesIO(data))))
    return rec.rec_headers.get_header("WARC-Record-ID").strip("<>"), rec.rec_headers.get_header("WARC-Target-URI")


def test_search_json_contract_matches_the_published_pages_and_warc(service, published_root):
    r = httpx.get(f"{service}/search", params={"q": "library budget", "day": DAY, "k": 10})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    meta = body["meta"]
    assert set(meta) >= {"query_time_ms", "total_results", "days", "shards"}
    assert meta["days"] == [DAY] and meta["query_time_ms"] >= 0
    shards_on_disk = len(
        [
            f
            for _, _, fs in os.walk(layout.day_path(str(published_root), layout.INDEX, DEMO_DAY))
            for f in fs
            if f.startswith("index-") and f.endswith(".ciff.gz")
        ]
    )
    assert meta["shards"] == shards_on_disk > 1
    hits = body["results"]
    assert 0 < len(hits) <= 10 and meta["total_results"] >= len(hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    pages = _pages(published_root)
    for h in hits:
        assert set(h) >= {
            "score",
            "record_id",
            "url",
            "title",
            "snippet",
            "language",
            "warc_file",
            "warc_offset",
            "warc_length",
            "id",
            "textSnippet",
            "warcDate",
        }
        page = pages[h["record_id"]]  # every hit is a published page, with its own url, title and pointer
        for key in ("url", "title", "language", "warc_file", "warc_offset", "warc_length"):
            assert h[key] == page[key], key
        assert "<em>" in h["snippet"] and h["textSnippet"] == h["snippet"]
        assert {"library", "budget"} & {w.lower() for w in h["snippet"].replace("</em>", "<em>").split("<em>")[1::2]}
        # the archive pointer reads back the very record in the WARC file
        assert _warc_record(h["warc_file"], h["warc_offset"], h["warc_length"]) == (h["record_id"], h["url"])


def test_language_filter_and_bm25_parameters(service):
    q = "library budget Haushalt Bibliotheken presupuesto bibliotecas"  # the same sentence in three languages
    all_langs = httpx.get(f"{service}/search", params={"q": q, "day": DAY, "k": 50}).json()
    assert {h["language"] for h in all_langs["results"]} >= {"eng", "deu", "spa"}
    deu = httpx.get(f"{service}/search", params={"q": q, "day": DAY, "lang": "deu", "k": 50}).json()
    assert deu["results"] and {h["language"] for h in deu["results"]} == {"deu"}
    assert deu["meta"]["shards"] < all_langs["meta"]["shards"]
    two = httpx.get(
        f"{service}/search", params=[("q", q), ("day", DAY), ("lang", "deu"), ("lang", "spa"), ("k", 50)]
    ).json()
    assert {h["language"] for h in two["results"]} == {"deu", "spa"}
    comma = httpx.get(f"{service}/search", params={"q": q, "day": DAY, "lang": "deu,spa", "k": 50}).json()
    assert [h["record_id"] for h in comma["results"]] == [h["record_id"] for h in two["results"]]
    lucene = httpx.get(f"{service}/search", params={"q": "library budget", "day": DAY, "k1": 1.2, "b": 0.75}).json()
    default = httpx.get(f"{service}/search", params={"q": "library budget", "day": DAY}).json()
    assert [h["score"] for h in lucene["results"]] != [h["score"] for h in default["results"]]
    top3 = httpx.get(f"{service}/search", params={"q": "library budget", "day": DAY, "k": 3}).json()
    assert [h["record_id"] for h in top3["results"]] == [h["record_id"] for h in default["results"][:3]]


def test_opensearch_description_is_valid(service):
    r = httpx.get(f"{service}/opensearch.xml")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/opensearchdescription+xml")
    root = ET.fromstring(r.content)
    assert root.tag == f"{OS}OpenSearchDescription"
    assert 0 < len(root.find(f"{OS}ShortName").text) <= 16  # the spec's limit
    urls = {u.get("type"): u.get("template") for u in root.findall(f"{OS}Url")}
    assert set(urls) >= {"text/html", "application/atom+xml", "application/json"}
    for kind, template in urls.items():
        assert template.startswith(service), template
        if kind == "application/opensearchdescription+xml":
            continue
        assert "{searchTerms}" in template
        # fill the template as a client does: optional parameters dropped, terms URL-encoded
        url = template.replace("{searchTerms}", "library%20budget").replace("&k={count?}", "")
        got = httpx.get(url)
        assert got.status_code == 200 and got.headers["content-type"].startswith(kind), (kind, got.text[:200])
    page = httpx.get(f"{service}/").text
    assert 'rel="search" type="application/opensearchdescription+xml"' in page


def test_atom_results_match_search(service):
    params = {"q": "city council meeting", "day": DAY, "k": 5}
    js = httpx.get(f"{service}/search", params=params).json()
    r = httpx.get(f"{service}/searchxml", params=params)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/atom+xml")
    feed = ET.fromstring(r.content)
    assert feed.tag == f"{ATOM}feed"
    assert int(feed.find(f"{OS}totalResults").text) == js["meta"]["total_results"]
    assert feed.find(f"{OS}startIndex").text == "1" and feed.find(f"{OS}itemsPerPage").text == "5"
    q = feed.find(f"{OS}Query")
    assert q.get("role") == "request" and q.get("searchTerms") == "city council meeting"
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == len(js["results"]) > 0
    for e, h in zip(entries, js["results"]):
        assert e.find(f"{ATOM}id").text == h["record_id"]
        assert e.find(f"{ATOM}link").get("href") == h["url"]
        assert e.find(f"{ATOM}title").text == (h["title"] or h["url"])
        assert e.find(f"{ATOM}summary").text == h["snippet"]


def test_index_info(service, published_root):
    info = httpx.get(f"{service}/index-info").json()
    assert info["days"] == [DAY]
    langs = sorted(os.listdir(os.path.join(layout.day_path(str(published_root), layout.INDEX, DEMO_DAY), "com")))
    assert set(langs) <= set(info["languages"])
    assert info["docs"] == len(_pages(published_root))


def test_openapi_describes_the_endpoints(service):
    spec = httpx.get(f"{service}/openapi.json").json()
    paths = set(spec["paths"])
    assert {
        "/search",
        "/searchxml",
        "/opensearch.xml",
        "/index-info",
        "/catalogue/days",
        "/catalogue/captures",
        "/catalogue/search",
        "/catalogue/files",
        "/catalogue/records",
        "/catalogue/stats",
    } <= paths
    assert {p["name"] for p in spec["paths"]["/search"]["get"]["parameters"]} >= {
        "q",
        "day",
        "to",
        "lang",
        "k",
        "k1",
        "b",
    }
    assert httpx.get(f"{service}/docs").status_code == 200


def test_catalogue_endpoints(service, published_root):
    from lib.catalogue import query

    root = str(published_root)
    assert httpx.get(f"{service}/catalogue/days").json() == [DAY]
    hit = httpx.get(f"{service}/search", params={"q": "library", "day": DAY, "k": 1}).json()["results"][0]
    caps = httpx.get(f"{service}/catalogue/captures", params={"url": hit["url"]}).json()
    assert [c["warc_offset"] for c in caps] == [c["warc_offset"] for c in query.captures(root, hit["url"])]
    assert hit["warc_offset"] in [c["warc_offset"] for c in caps]
    files = httpx.get(f"{service}/catalogue/files", params={"day": DAY}).json()
    assert len(files) == 3 and sum(f["records"] for f in files) == sum(f["records"] for f in query.files(root, DAY))
    recs = httpx.get(f"{service}/catalogue/records", params={"file": files[0]["warc_file"]}).json()
    assert len(recs) == files[0]["records"]
    stats = httpx.get(f"{service}/catalogue/stats", params={"day": DAY}).json()
    assert stats["captures"] == sum(f["records"] for f in files)
    found = httpx.get(f"{service}/catalogue/search", params={"prefix": hit["url"][:20], "limit": 5}).json()
    assert 0 < len(found) <= 5 and all(f["url"].startswith(hit["url"][:20]) for f in found)


def test_start_command_serves_and_prints_the_url(published_root, tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lib.serve",
            "--root",
            f"dc1={published_root}",
            "--port",
            "0",
            "--cache",
            str(tmp_path / "cache"),
            "--example",
            "library budget",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # "serving dc1=ROOT on http://127.0.0.1:PORT/"
        assert " on http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        base = line.strip().rsplit(" on ", 1)[1].rstrip("/")
        example = proc.stdout.readline().split("search: ", 1)[1].strip()
        assert example == f"{base}/?q=library%20budget"
        body = httpx.get(f"{base}/search", params={"q": "library budget"}, timeout=60).json()  # day: the newest
        assert body["meta"]["days"] == [DAY] and body["results"]
        assert httpx.get(f"{base}/catalogue/days").json() == [DAY]
    finally:
        proc.terminate()
        proc.wait(20)


def test_catalogue_cli_points_to_the_service(published_root, capsys):
    from lib.catalogue.__main__ import main

    assert main(["--root", str(published_root), "serve", "--port", "8080"]) == 2
    assert "python -m lib.serve --root ROOT" in capsys.readouterr().err


def test_search_page_in_headless_chromium(service, tmp_path):
    cmd = chromium(tmp_path, "--virtual-time-budget=15000")
    want = httpx.get(f"{service}/search", params={"q": "library budget", "day": DAY, "lang": "eng"}).json()
    url = f"{service}/?q=library+budget&day={DAY}&to={DAY}&lang=eng"
    dom = subprocess.run(cmd + ["--dump-dom", url], capture_output=True, text=True, timeout=120, check=True).stdout
    assert 'data-ready="1"' in dom, dom[:2000]
    assert f'data-total="{want["meta"]["total_results"]}"' in dom
    assert dom.count('<li class="hit">') == len(want["results"]) > 0
    for h in want["results"]:  # every hit, in order, with its highlighted snippet and capture link
        assert h["snippet"] in dom
    positions = [dom.index(f'href="{h["url"]}"') for h in want["results"]]
    assert positions == sorted(positions)
    assert dom.count('class="captures" href="/catalogue/captures?url=') == len(want["results"])
    for h in want["results"]:  # each hit links to its record and to its page's bytes
        assert f'class="capture" href="{h["capture_url"]}"' in dom
        assert f'class="content" href="{h["content_url"].replace("&", "&amp;")}"' in dom
    # following a hit's page link gives the page as crawled: its HTML, with the hit's title
    top = want["results"][0]
    page = httpx.get(service + top["content_url"])
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert top["title"] and top["title"].encode() in page.content
    assert f"{want['meta']['total_results']} results in" in dom
    assert '<input type="checkbox" name="lang" value="eng" checked="">' in dom  # the filter shows the query's
    shot = tmp_path / "search-page.png"
    subprocess.run(
        cmd + [f"--screenshot={shot}", "--window-size=1200,1400", url], capture_output=True, timeout=120, check=True
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    print(f"search page screenshot: {shot}")
    keep = os.environ.get("SERVE_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
