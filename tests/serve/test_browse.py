"""Browsing collections (lib.serve.browse_api): files, a file's records, a URL's versions, URL
search, one capture, as JSON and as linked pages, over the two real days of
tests/fixtures_days.py (read only) and a root holding only a registered file; answers held to
warcio's reading of the archives and to the CDX server; the pages walked in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html import unescape

import httpx
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.catalogue import query, register
from lib.catalogue.urlsearch import query_words, url_words
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.helpers_browser import chromium

AUT = "2026-04/01/aut-example.warc.gz"  # published on day 1 (and, as another file, on day 2)


def warcio_records(path: str) -> list[tuple]:
    """(offset, type, URL, digest) of the capture records of an archive, as warcio reads them."""
    out = []
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=True)
        for rec in it:
            off = it.get_record_offset()
            it.read_to_end(rec)
            if rec.rec_type in ("response", "revisit", "resource"):
                h = rec.rec_headers
                out.append((off, rec.rec_type, h.get_header("WARC-Target-URI"), h.get_header("WARC-Payload-Digest")))
    return out


@pytest.fixture(scope="module")
def svc(corpus_days, corpus, tmp_path_factory):
    reg = tmp_path_factory.mktemp("browse-reg")
    day = reg / "warc" / "2026-05" / "03"
    day.mkdir(parents=True)
    shutil.copy(corpus / "aut" / "example.arc.gz", day)
    register.register(str(reg), str(day / "example.arc.gz"), [str(reg / "warc")])
    with ServerThread(create_app({"c1": corpus_days, "reg": str(reg)})) as srv:
        yield {"url": srv.url, "root": corpus_days, "reg": str(reg), "arc": str(day / "example.arc.gz")}


def get(svc, path: str, **params) -> httpx.Response:
    return httpx.get(svc["url"] + path, params=params or None, timeout=60)


def test_files_paged_and_a_files_records_as_warcio_reads_them(svc):
    whole = get(svc, "/collections/c1/files", size=1000).json()
    want = sorted(f["warc_file"] for d in query.list_days(svc["root"]) for f in query.files(svc["root"], d))
    assert whole["total"] == len(want) == 4 and all(not f["registered"] for f in whole["files"])
    pages = [get(svc, "/collections/c1/files", page=p, size=3).json() for p in range(2)]
    assert pages[0]["pages"] == 2 and [f for p in pages for f in p["files"]] == whole["files"]
    assert [f["day"] for f in whole["files"]] == sorted((f["day"] for f in whole["files"]), reverse=True)
    ans = get(svc, "/collections/c1/file", name=AUT).json()
    got = [(r["warc_offset"], r["record_type"], r["url"], r["payload_digest"]) for r in ans["records"]]
    assert ans["day"] == "2026-04-01" and got == warcio_records(os.path.join(svc["root"], "warc", AUT))
    # a registered file, in no published day: listed first, its records read from the archive
    reg = get(svc, "/collections/reg/files").json()
    assert reg["total"] == 1 and reg["files"][0] == {
        "filename": "2026-05/03/example.arc.gz",
        "day": "2026-05-03",
        "records": 299,
        "registered": True,
    }
    ans = get(svc, "/collections/reg/file", name="2026-05/03/example.arc.gz").json()
    got = [(r["warc_offset"], r["record_type"], r["url"]) for r in ans["records"]]
    assert got == [r[:3] for r in warcio_records(svc["arc"])] and ans["registered"]
    for name, status in [("2026-04/01/nope.warc.gz", 404), ("../etc/passwd", 404)]:
        r = get(svc, "/collections/c1/file", name=name)
        assert r.status_code == status and "no archive file" in r.json()["error"]
    assert get(svc, "/collections/c1/files", size=0).status_code == 400


def test_a_urls_versions_are_the_cdx_servers_captures_with_duplicates(svc):
    url = "http://www.archive.org/robots.txt"  # aut's WARC on both days: the same payload twice
    ans = get(svc, "/collections/c1/url", url=url).json()
    cdx = [json.loads(ln) for ln in get(svc, "/cdx/c1", url=url, output="json").text.splitlines()]
    assert [(c["timestamp"], c["digest"], c["filename"], str(c["offset"])) for c in ans["captures"]] == [
        (c["timestamp"], c.get("digest"), c["filename"], c["offset"]) for c in cdx
    ]
    assert len(ans["captures"]) >= 2
    first = ans["captures"][0]
    dups = [c for c in ans["captures"] if c["digest"] == first["digest"]][1:]
    assert dups and all(c["duplicate"] and c["duplicate_of"] == first["timestamp"] for c in dups)
    assert not first["duplicate"] and ans["versions"] == len({c["digest"] for c in ans["captures"]})
    assert get(svc, "/collections/c1/url", url="http://example.com:99999/").status_code == 400


def test_url_search_ranks_urls_by_the_words_of_host_and_path(svc):
    every = [r["url"] for r in query.search(svc["root"], prefix="http", limit=100_000)]
    every += [r["url"] for r in query.search(svc["root"], prefix="dns", limit=100_000)]
    q = "archive images gif"
    ans = get(svc, "/collections/c1/search", q=q, limit=1000).json()
    words = query_words(q)
    brute = [u for u in set(every) if set(words) & set(sum(url_words(u), []))]
    assert ans["total"] == len(brute) > 20 and sorted(h["url"] for h in ans["hits"]) == sorted(brute)
    keys = [(-len(h["matched"]), -h["score"]) for h in ans["hits"]]
    assert keys == sorted(keys)  # every word matched before some, then by score
    top = ans["hits"][0]
    assert set(top["matched"]) == set(words) and "archive" in top["url"] and top["url"].endswith(".gif")
    assert not any(h["url"].startswith("http://www.archive.org/images/") for h in ans["hits"][-3:])
    r = get(svc, "/collections/c1/search", q="!!! ...")
    assert r.status_code == 400 and "no word" in r.json()["error"]
    reg = get(svc, "/collections/reg/search", q="go button gateway").json()  # a registered file's URLs
    assert reg["hits"][0]["url"] == "http://www.archive.org/images/go-button-gateway.gif"


def _dom(cmd: list[str], url: str) -> str:
    return unescape(
        subprocess.run(cmd + ["--dump-dom", url], capture_output=True, text=True, timeout=120, check=True).stdout
    )


def _shot(cmd: list[str], url: str, path) -> None:
    subprocess.run(
        cmd + [f"--screenshot={path}", "--window-size=1200,900", url], capture_output=True, timeout=120, check=True
    )
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    print(f"browse screenshot: {path}")


def test_linked_pages_in_headless_chromium(svc, tmp_path):
    cmd = chromium(tmp_path)
    base = svc["url"]
    # collection -> file -> record
    dom = _dom(cmd, f"{base}/browse/c1/files")
    links = re.findall(r'class="file" href="([^"]+)"', dom)
    assert len(links) == 4 and f"/browse/c1/file?name={AUT.replace('/', '%2F')}&day=2026-04-01" in links
    dom = _dom(cmd, base + f"/browse/c1/file?name={AUT.replace('/', '%2F')}")
    records = re.findall(r'class="record" href="([^"]+)"', dom)
    assert len(records) == len(warcio_records(os.path.join(svc["root"], "warc", AUT)))
    assert dom.count('class="url" href="/browse/c1/url?url=') == len(records)
    row = r'class="record" href="([^"]+)">\d+</a></td><td>response</td><td><a class="url" href="[^"]+">(http[^<]+)<'
    response, page_url = re.search(row, dom).groups()
    dom = _dom(cmd, base + response)
    assert "WARC-Record-ID" in dom or "warc-record-id" in dom
    payload = re.search(r'class="payload" href="([^"]+)"', dom).group(1)
    got = get(svc, payload)  # the page as crawled: the payload the record's digest covers
    assert got.status_code == 200 and got.content and got.headers["x-archive-file"].endswith(AUT)
    assert page_url in dom and f'href="/browse/c1/url?url={page_url.replace(":", "%3A").replace("/", "%2F")}' in dom
    # URL -> versions -> capture
    dom = _dom(cmd, f"{base}/browse/c1/url?url=http%3A%2F%2Fwww.archive.org%2Frobots.txt")
    caps = re.findall(r'class="capture" href="([^"]+)"', dom)
    assert len(caps) >= 2 and "duplicate of" in dom
    dom = _dom(cmd, base + caps[-1])
    assert "http://www.archive.org/robots.txt" in dom and "User-agent" not in dom  # headers, not the body
    for name, url in [
        ("files", "/browse/c1/files"),
        ("versions", "/browse/c1/url?url=http%3A%2F%2Fwww.archive.org%2Frobots.txt"),
    ]:
        _shot(cmd, base + url, tmp_path / f"browse-{name}.png")
