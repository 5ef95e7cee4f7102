"""jobs/ondemand.py end to end over two small published days: the sub-index equals indexing the
same pages directly with jobs/index.py, document for document; re-runs give the same bytes;
bad requests fail with a clear reason and publish nothing."""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.ciff.validate import validate_file
from lib.index.shard_digests import shard_digests
from lib.pages import hostindex
from lib.store import update_log
from tests.helpers_warc import good_pages, gz
from tests.index.test_index_job import _page, run_index, sample_pages, write_day

RID = "gov-test"


def day2_pages() -> list[dict]:
    """The second day: three eng/com pages crawled again (new text, new offsets), a new German
    page linking to one of them, and one page that says noindex."""
    pages = [
        _page(700 + i, f"https://site{i}.example.com/page", "com", "eng", f"Again {i}", f"The bridge {i} is new.")
        for i in (1, 2, 3)
    ]
    pages.append(
        _page(
            710,
            "https://www.beispiel1.de/neu",
            "de",
            "deu",
            "Neu",
            "Die Brücke ist neu",
            [("https://site2.example.com/page", "Brücke"), ("https://elsewhere.example.org/", "weg")],
        )
    )
    hidden = _page(720, "https://site9.example.com/hidden", "com", "eng", "Hidden", "Do not index this page")
    hidden["ows_index"] = False
    pages.append(hidden)
    pages.append(_page(730, "https://www.exemple.fr/c", "fr", "fra", "Encore", "Le pont est neuf"))
    return pages


def publish_days(root: pathlib.Path) -> None:
    """Two days; the first with its host index (as preprocess writes it), the second without
    (a day preprocessed before the index existed): one is read through it, the other scanned."""
    hostindex.write(str(write_day(root, sample_pages())))
    other = root.parent / (root.name + "-d2")
    day = write_day(other, day2_pages())
    shutil.move(str(day), str(root / "preprocessed" / "2026-01" / "16"))
    shutil.rmtree(other)


def write_request(root: pathlib.Path, rid: str, config: dict | str, patterns: str = "") -> pathlib.Path:
    folder = root / "on_demand" / rid
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    (folder / "url_patterns.txt").write_text(patterns)
    return folder


CONFIG = {
    "days": {"from": "2026-01-15", "to": "2026-01-16"},
    "languages": ["eng", "deu"],
    "where": "http_status = 200 AND url NOT LIKE '%site5.%'",
    "outputs": ["ciff", "edges"],
    "requester": "tests",
    "purpose": "equality with the index job",
    "docs_per_shard": 4,
}
PATTERNS = "# example.com hosts and one German site\nexample.com\nde,beispiel1)/\n"
TAKEN_DOWN = "https://site7.example.com/page"  # on ROOT/_exclusions.jsonl: left out of sub-indices too


def expected(pages: list[dict]) -> list[dict]:
    """The pages the request selects, by hand: eng/deu, an example.com host or www.beispiel1.de,
    not site5, not noindex (no Python of the job's own)."""
    return [
        p
        for p in pages
        if p["language"] in ("eng", "deu")
        and (p["url_host"].endswith(".example.com") or p["url_host"] == "www.beispiel1.de")
        and "site5." not in p["url"]
        and p["url"] != TAKEN_DOWN
        and p.get("ows_index") is not False
    ]


def _run(spark, folder: pathlib.Path, *extra: str) -> int:
    from jobs import ondemand

    return ondemand.main(["--request", str(folder), *extra], spark=spark)


@pytest.fixture(scope="module")
def published(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("od") / "root"
    publish_days(root)
    rule = {"url": TAKEN_DOWN, "date": "2026-01-20", "reason": "owner request"}
    (root / "_exclusions.jsonl").write_text(json.dumps(rule) + "\n")
    folder = write_request(root, RID, CONFIG, PATTERNS)
    assert _run(spark, folder) == 0
    return root


def test_sub_index_equals_indexing_the_same_pages_directly(spark, published, tmp_path):
    want = expected(sample_pages()) + expected(day2_pages())
    direct_in = write_day(tmp_path / "direct", want)
    direct = tmp_path / "direct-index"
    assert run_index(spark, direct_in, direct, "--min-group-docs", str(10**9), "--no-graph") == 0
    pub = published / "public" / RID
    got = shard_digests(pub, canonical=True)
    ref = {k.removeprefix("other/"): v for k, v in shard_digests(direct, canonical=True).items()}
    assert got == ref and len(got) >= 4  # document for document: postings, lengths, metadata rows
    urls = sorted(u for m in pub.rglob("metadata-*.parquet") for u in pq.read_table(m).column("url").to_pylist())
    assert urls == sorted(p["url"] for p in want)
    assert {p.parent.name for p in pub.rglob("index-*.ciff.gz")} == {"eng", "deu"}
    for p in pub.rglob("index-*.ciff.gz"):
        assert validate_file(str(p)).ok


def test_documents_numbered_across_days_in_day_order(published):
    meta = pq.read_table(published / "public" / RID / "deu" / "metadata-0.parquet").to_pylist()
    assert [m["docid"] for m in meta] == list(range(len(meta)))
    day1 = [m for m in meta if m["warc_offset"] < 700_000]
    assert meta[: len(day1)] == day1 and meta[-1]["url"] == "https://www.beispiel1.de/neu"


def test_status_manifest_and_edges(published):
    status = json.loads((published / "on_demand" / RID / "status.json").read_text())
    want = expected(sample_pages()) + expected(day2_pages())
    assert status["state"] == "done" and status["counts"]["kept"] == len(want)
    assert status["counts"]["noindex"] == 1 and status["counts"]["index"]["docs"] == len(want)
    assert status["counts"]["excluded"] == 1
    assert status["counts"]["kept_by_day"]["2026-01-16"] == {"eng": 3, "deu": 1}
    pruned = status["counts"]["host_index"]
    assert pruned["days_by_host_index"] == 1 and pruned["days_scanned"] == {"no host index": 1}
    day1 = [p for p in sample_pages() if p["language"] in ("eng", "deu")]
    read_day1 = status["counts"]["rows"] - sum(1 for p in day2_pages() if p["language"] in ("eng", "deu"))
    assert pruned["pages_skipped"] == len(day1) - read_day1 >= 0
    pub = published / "public" / RID
    # the new sub-index is one line of logs.csv, what a subscriber of GET /feed sees
    subs = [(u.name, u.detail) for u in update_log.read(str(published)) if u.kind == "subindex"]
    assert subs == [(RID, str(pub))]
    manifest = json.loads((pub / "_manifest.json").read_text())
    files = {str(p.relative_to(pub)) for p in pub.rglob("*") if p.is_file()}
    assert set(manifest["files"]) == files - {"_manifest.json", "_SUCCESS"}
    for rel, f in manifest["files"].items():
        assert hashlib.sha256((pub / rel).read_bytes()).hexdigest() == f["sha256"]
    urls = {p["url"] for p in want}
    edges = sorted(
        (p["url"], link["url"], link["anchor_text"])
        for p in want
        for link in p["outgoing_links"]
        if link["url"] in urls
    )
    got = pq.read_table(pub / "edges.parquet").to_pylist()
    assert [(e["src_url"], e["dst_url"], e["anchor_text"]) for e in got] == sorted(set(edges))
    assert ("https://www.beispiel1.de/neu", "https://site2.example.com/page", "Brücke") in edges


def test_rerun_gives_the_same_bytes(spark, published):
    pub = published / "public" / RID
    before = {str(p.relative_to(pub)): p.read_bytes() for p in pub.rglob("*") if p.is_file()}
    assert _run(spark, published / "on_demand" / RID) == 0
    after = {str(p.relative_to(pub)): p.read_bytes() for p in pub.rglob("*") if p.is_file()}
    assert after == before
    assert not list(pub.parent.glob(f"{RID}.*"))  # no work folder left beside it


BAD = [
    ("malformed", '{"days": ["2026-01-15"],', "", "config.json: line 1 column 25: not JSON"),
    ("language", dict(CONFIG, languages=["eng", "xxq"]), "", "unknown language(s) 'xxq'"),
    ("pattern", CONFIG, "example.com\nhttps://example.com/page\n", "url_patterns.txt:2: 'https://example.com/page'"),
    ("days", dict(CONFIG, days=["2026-01-14", "2026-01-15", "2026-01-17"]), "", "not published"),
    ("where", dict(CONFIG, where="no_such_column = 1"), "", "where 'no_such_column = 1'"),
]


@pytest.mark.parametrize("rid,config,patterns,reason", BAD, ids=[b[0] for b in BAD])
def test_bad_request_fails_clearly_and_publishes_nothing(spark, published, rid, config, patterns, reason):
    folder = write_request(published, f"bad-{rid}", config, patterns)
    assert _run(spark, folder) == 2
    status = json.loads((folder / "status.json").read_text())
    assert status["state"] == "failed" and reason in status["reason"], status["reason"]
    if rid == "days":
        assert "2026-01-14, 2026-01-17" in status["reason"]
    assert not list((published / "public").glob(f"bad-{rid}*"))


def test_selection_matching_nothing_is_refused(spark, published):
    folder = write_request(published, "bad-nothing", CONFIG, "nowhere.example.net\n")
    assert _run(spark, folder) == 4
    status = json.loads((folder / "status.json").read_text())
    assert status["state"] == "failed" and "selects no page" in status["reason"]
    assert not list((published / "public").glob("bad-nothing*"))


def test_warc_records_copied_byte_exact_and_the_same_on_rerun(spark, tmp_path):
    root = tmp_path / "root"
    members = [(url, gz(rec)) for url, rec in good_pages(5, "records.example.com")]
    archive = tmp_path / "crawl.warc.gz"
    archive.write_bytes(b"".join(m for _, m in members))
    pages, offset = [], 0
    for i, (url, member) in enumerate(members):
        p = _page(800 + i, url, "com", "eng", f"Page {i}", f"page number {i}")
        p.update(warc_file=archive.as_uri(), warc_offset=offset, warc_length=len(member))
        pages.append(p)
        offset += len(member)
    write_day(root, pages)
    config = {k: v for k, v in CONFIG.items() if k != "where"} | {"days": ["2026-01-15"], "outputs": ["ciff", "warc"]}
    folder = write_request(root, "records", config, "http://records.example.com/page[13].html\n")
    assert _run(spark, folder) == 0
    out = root / "public" / "records" / "warc"
    (copied,) = [p for p in out.iterdir() if p.name.endswith(".warc.gz")]
    data = copied.read_bytes()
    want = members[1][1] + members[3][1]
    assert data.endswith(want)  # the two members as stored, after the archive's warcinfo record
    got = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(open(copied, "rb"))]
    assert got == [("warcinfo", None), ("response", members[1][0]), ("response", members[3][0])]
    status = json.loads((folder / "status.json").read_text())
    assert status["counts"]["warc"] == {"records": 2, "archives": 1, "pages_without_offsets": 0}
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert _run(spark, folder) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_the_service_lists_serves_and_searches_the_sub_index(published):
    from fastapi.testclient import TestClient

    from lib.serve.app import create_app

    client = TestClient(create_app({"dc1": str(published)}))
    listing = client.get("/public").json()
    (item,) = [s for s in listing["subindices"] if s["id"] == RID]  # the bad requests published nothing
    assert listing["count"] == 1 and item["request"]["requester"] == "tests"
    pub = published / "public" / RID
    for f in item["files"]:
        body = client.get(f["url"]).content
        assert (
            hashlib.sha256(body).hexdigest()
            == f["sha256"]
            == hashlib.sha256((pub / f["path"]).read_bytes()).hexdigest()
        )
    hits = client.get(f"/public/dc1/{RID}/search", params={"q": "quokka"}).json()["hits"]
    assert [h["url"] for h in hits] == ["https://site3.example.com/page"]  # the one page with the rare term
    de = client.get(f"/public/dc1/{RID}/search", params={"q": "neu brücke", "lang": "deu"}).json()["hits"]
    assert de[0]["url"] == "https://www.beispiel1.de/neu" and {h["lang"] for h in de} == {"deu"}
    assert client.get(f"/public/dc1/{RID}/files/../../preprocessed/2026-01/15/_SUCCESS").status_code == 404
    assert client.get("/public/dc1/bad-nothing/search", params={"q": "x"}).status_code == 404


def test_the_download_client_lists_and_fetches_the_sub_index_over_http(published, tmp_path):
    """``dailyslice download --list-public`` / ``--public ID`` against the service on a real socket:
    every file of the manifest byte-identical and sha256-checked, a cut copy resumed by Range, a
    re-run skips, an unknown id is refused by name, a file changed on the server fails the run."""
    import io

    from lib.serve import client
    from lib.serve.app import create_app
    from tests.serve.conftest import Served

    root = tmp_path / "root"  # a copy: the test changes a published file
    shutil.copytree(published / "public" / RID, root / "public" / RID)
    pub = root / "public" / RID
    srv = Served(create_app({"dc1": str(root)}))
    try:
        out = io.StringIO()
        assert client.run(client.parse_args(["--server", srv.url, "--list-public"]), out) == 0
        listed = out.getvalue()
        assert (
            f"dc1/{RID}  days 2026-01-15..2026-01-16  languages deu,eng  pages 15" in listed
            and "1 sub-indices" in listed
        )
        want = json.loads((pub / "_manifest.json").read_text())["files"]
        dest = tmp_path / "dest"
        first = sorted(want)[0]
        (dest / first).parent.mkdir(parents=True)
        (dest / (first + ".part")).write_bytes((pub / first).read_bytes()[: want[first]["bytes"] // 2])
        args = client.parse_args(["--server", srv.url, "--public", RID, "--dest", str(dest)])
        out = io.StringIO()
        assert client.run(args, out) == 0, out.getvalue()
        got = {p.relative_to(dest).as_posix(): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
        marker = json.loads(got.pop(client.MANIFEST))
        assert got == {rel: (pub / rel).read_bytes() for rel in want} and len(got) >= 5
        assert f"resumed  {first}" in out.getvalue()  # the server answered the Range: 206
        assert marker["subindex"]["id"] == RID and marker["subindex"]["counts"]["kept"] > 0
        assert {f["path"]: f["sha256"] for f in marker["files"]} == {p: f["sha256"] for p, f in want.items()}
        out = io.StringIO()
        assert client.run(args, out) == 0 and f"{len(want)} skipped" in out.getvalue()
        assert client.main(["--server", srv.url, "--public", "nope", "--dest", str(tmp_path / "x")]) == 2
        edges = pub / "edges.parquet"
        edges.write_bytes(edges.read_bytes()[:-1] + b"X")  # served bytes no longer the manifest's
        (dest / "edges.parquet").unlink()
        out = io.StringIO()
        assert client.run(args, out) == 1 and "INCOMPLETE: 1 of" in out.getvalue()
        assert not (dest / client.MANIFEST).exists()
    finally:
        srv.stop()
