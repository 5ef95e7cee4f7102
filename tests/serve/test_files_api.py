"""The slice API over real HTTP: manifests (exact file sets), sha256, Range semantics, bad input,
path traversal (nothing outside the root is read), an s3:// root."""

from __future__ import annotations

import hashlib
import http.client
import io
import os
import pathlib

import httpx
import pyarrow.parquet as pq
import pytest

from lib.store import s3
from lib.serve.files_api import create_app
from lib.serve.published import SliceStore
from tests.serve.conftest import DAYS, INCOMPLETE, Served


def rels(root: pathlib.Path, pattern: str) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.glob(pattern) if p.is_file()}


def day_dirs(kind: str) -> list[str]:
    return [f"{kind}/{d:%Y-%m}/{d:%d}" for d in DAYS]


def get_manifest(server, **params) -> dict:
    r = httpx.get(f"{server.url}/files", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_manifest_of_one_language_and_tld_over_three_days(server, published):
    m = get_manifest(server, day="2026-05-01", to="2026-05-03", lang="deu", tld="de")
    expected = set().union(*(rels(published, f"{d}/de/deu/*") for d in day_dirs("index")))
    assert {f["path"] for f in m["files"]} == expected
    assert {f["part"] for f in m["files"]} == {"ciff", "anchors", "metadata"} and len(expected) >= 6
    assert m["days"] == [d.isoformat() for d in DAYS] and m["count"] == len(expected)
    assert m["total_bytes"] == sum((published / p).stat().st_size for p in expected)
    for f in m["files"]:
        data = (published / f["path"]).read_bytes()
        assert f["size"] == len(data) and f["sha256"] == hashlib.sha256(data).hexdigest()
        assert (f["dc"], f["lang"], f["tld"], f["url"]) == ("dc1", "deu", "de", f"/download/dc1/{f['path']}")
        assert f["path"].startswith(f"index/{f['day'][:7]}/{f['day'][8:]}/")


def test_manifest_filter_rule_for_parts_without_the_dimension(server, published):
    # no filter: every data file of complete days, no side file, nothing of the incomplete day
    m = get_manifest(server, day="2026-05-01", to="2026-05-04")
    everything = set()
    for kind in ("index", "preprocessed", "catalogue"):
        for d in day_dirs(kind):
            everything |= rels(published, f"{d}/**/*")
    side = {p for p in everything if p.count("/") == 3 and p.rsplit("/", 1)[-1].startswith("_")}
    assert {"index/2026-05/01/_SUCCESS", "index/2026-05/01/_stats.json"} <= side
    everything -= side
    assert {f["path"] for f in m["files"]} == everything
    assert not any(INCOMPLETE.strftime("%Y-%m/%d") in f["path"] for f in m["files"])
    # a language filter drops graph and catalogue unless they are named; named, they come whole
    m = get_manifest(server, day="2026-05-02", lang="deu")
    assert {f["part"] for f in m["files"]} == {"ciff", "metadata", "preprocessed"}
    assert {f["path"] for f in m["files"] if f["part"] == "preprocessed"} == rels(published, "preprocessed/2026-05/02/language=deu/*")
    m = get_manifest(server, day="2026-05-01", lang="deu", part=["graph", "preprocessed"])
    graph = rels(published, "index/2026-05/01/graph/**/*")
    assert {p.split("/")[4] for p in graph} == {"edges", "inlinks", "hosts"}
    assert {f["path"] for f in m["files"]} == graph | rels(published, "preprocessed/2026-05/01/language=deu/*")
    # preprocessed has no TLD: a tld filter keeps it only when it is named (then by language only)
    m = get_manifest(server, day="2026-05-02", tld="de", part="preprocessed,ciff")
    assert {f["path"] for f in m["files"]} == rels(published, "preprocessed/2026-05/02/*/*") | rels(
        published, "index/2026-05/02/de/*/index-*.ciff.gz")
    # known values that no file combines: an empty manifest, not an error
    m = get_manifest(server, day="2026-05-01", lang="deu", tld="com")
    assert m["files"] == [] and m["count"] == 0 and m["total_bytes"] == 0
    # comma-separated and repeated values are the same request
    a = get_manifest(server, day="2026-05-03", lang="eng,deu", part="metadata")
    b = get_manifest(server, day="2026-05-03", lang=["eng", "deu"], part=["metadata"])
    assert a == b and {f["lang"] for f in a["files"]} == {"eng", "deu"}
    assert {f["path"] for f in a["files"]} == rels(published, "index/2026-05/03/*/eng/metadata-*") | rels(
        published, "index/2026-05/03/*/deu/metadata-*")


def test_repeated_manifest_uses_cached_sums(published, tmp_path):
    store = SliceStore({"dc1": str(published)}, cache_dir=str(tmp_path))
    first = store.list_files("2026-05-01", "2026-05-03")
    again = SliceStore({"dc1": str(published)}, cache_dir=str(tmp_path))
    calls = []
    again._chunks = lambda *a: calls.append(a) or iter(())  # type: ignore[method-assign]
    assert again.list_files("2026-05-01", "2026-05-03") == first and calls == []


@pytest.mark.parametrize("params,status,words", [
    ({"day": "2026-5-1"}, 400, "YYYY-MM-DD"),
    ({"day": "2026-05-03", "to": "2026-05-01"}, 400, "before"),
    ({"day": "2026-01-01", "to": "2026-03-01"}, 400, "wider"),
    ({"day": "2026-05-01", "part": "index"}, 400, "unknown part"),
    ({"day": "2026-05-01", "lang": "German"}, 400, "lang"),
    ({"day": "2026-05-01", "tld": ".de"}, 400, "tld"),
    ({"day": "2026-05-01", "dc": "mars"}, 400, "data center"),
    ({"day": "2025-05-01"}, 404, "no complete published day"),
    ({"day": INCOMPLETE.isoformat()}, 404, "no complete published day"),
    ({"day": "2026-05-01", "to": "2026-05-03", "lang": "deu,qqq"}, 404, "unknown lang qqq"),
    ({"day": "2026-05-01", "tld": "zz"}, 404, "unknown tld zz"),
])
def test_bad_manifest_requests_are_clear_4xx(server, params, status, words):
    r = httpx.get(f"{server.url}/files", params=params)
    assert r.status_code == status and words in r.json()["error"], r.text


def test_download_whole_and_ranges(server, published):
    f = get_manifest(server, day="2026-05-01", part="metadata", lang="eng", tld="com")["files"][0]
    data = (published / f["path"]).read_bytes()
    url = server.url + f["url"]
    r = httpx.get(url)
    assert r.status_code == 200 and r.content == data
    assert r.headers["accept-ranges"] == "bytes" and r.headers["etag"] == f'"{f["sha256"]}"'
    n = len(data)
    for header, lo, hi in [("bytes=0-9", 0, 10), (f"bytes=10-{n + 100}", 10, n), ("bytes=7-", 7, n),
                           ("bytes=-25", n - 25, n), (f"bytes=-{n * 2}", 0, n), (f"bytes={n - 1}-{n - 1}", n - 1, n)]:
        r = httpx.get(url, headers={"Range": header})
        assert r.status_code == 206, (header, r.text)
        assert r.content == data[lo:hi]
        assert r.headers["content-range"] == f"bytes {lo}-{hi - 1}/{n}"
        assert int(r.headers["content-length"]) == hi - lo
    for header in (f"bytes={n}-", f"bytes={n + 5}-{n + 9}", "bytes=-0"):
        r = httpx.get(url, headers={"Range": header})
        assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{n}" and "error" in r.json()
    for header in ("bytes=5-2", "bytes=0-1,4-5", "bytes=x-y"):
        r = httpx.get(url, headers={"Range": header})
        assert r.status_code == 400 and "Range" in r.json()["error"]
    # a stale If-Range gets the whole file, a matching one the range
    assert httpx.get(url, headers={"Range": "bytes=5-", "If-Range": '"00"'}).content == data
    assert httpx.get(url, headers={"Range": "bytes=5-", "If-Range": f'"{f["sha256"]}"'}).content == data[5:]
    h = httpx.head(url)
    assert h.status_code == 200 and h.content == b"" and int(h.headers["content-length"]) == n
    h = httpx.head(url, headers={"Range": "bytes=-10"})
    assert h.status_code == 206 and h.headers["content-range"] == f"bytes {n - 10}-{n - 1}/{n}"


def raw_get(server, path: str) -> tuple[int, bytes]:
    """GET with the path sent exactly as written (httpx would normalize ``..``)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)
    conn.endheaders()
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body


def test_traversal_is_refused_and_nothing_outside_is_read(server, published, tmp_path_factory):
    outside = published.parent / "secret.txt"
    outside.write_text("TOP SECRET")
    day = published / "index/2026-05/01"
    (day / "de" / "leak.bin").symlink_to(outside)  # a symlink inside a complete day, leading out
    (published / "index/2026-05/02/de/deu/linkdir").symlink_to(published.parent, target_is_directory=True)
    try:
        attempts = [
            "/download/dc1/../secret.txt",
            "/download/dc1/index/2026-05/01/../../../../secret.txt",
            "/download/dc1/%2e%2e/secret.txt",
            "/download/dc1/index/2026-05/01/%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt",
            "/download/dc1/index%2f2026-05%2f01%2f..%2f..%2f..%2f..%2fsecret.txt",
            "/download/dc1/index/2026-05/01/%252e%252e/x",
            "/download/dc1//etc/passwd",
            "/download/dc1/%2fetc%2fpasswd",
            "/download/dc1/index/2026-05/01/..%5c..%5c..%5csecret.txt",
            "/download/dc1/index\\2026-05\\01\\_SUCCESS",
            "/download/dc1/index/2026-05/01/de/leak.bin",
            "/download/dc1/index/2026-05/02/de/deu/linkdir/secret.txt",
            "/download/dc1/preprocessed/2026-05/04/_stats.json",  # incomplete day
            "/download/dc1/secret.txt",
            "/download/other/index/2026-05/01/_SUCCESS",
            f"/download/dc1/{outside}",
        ]
        for path in attempts:
            status, body = raw_get(server, path)
            assert 400 <= status < 500, (path, status, body)
            assert b"TOP SECRET" not in body
        # the symlinks are not listed either
        m = get_manifest(server, day="2026-05-01", to="2026-05-02")
        assert not any("leak" in f["path"] or "linkdir" in f["path"] for f in m["files"])
        # side files of a complete day are downloadable by path, not listed
        status, body = raw_get(server, "/download/dc1/index/2026-05/01/_stats.json")
        assert status == 200 and body == (day / "_stats.json").read_bytes()
    finally:
        os.remove(day / "de" / "leak.bin")
        os.remove(published / "index/2026-05/02/de/deu/linkdir")


def test_s3_root(published, s3_bucket):
    c = s3.client()
    for p in published.rglob("*"):
        if p.is_file() and "2026-05/01" in p.as_posix():
            c.upload_file(str(p), s3_bucket, f"slices/{p.relative_to(published).as_posix()}")
    store = SliceStore({"s3dc": f"s3://{s3_bucket}/slices", "local": str(published)})
    srv = Served(create_app(store))
    try:
        got = httpx.get(f"{srv.url}/files", params={"day": "2026-05-01", "dc": "s3dc", "lang": "deu", "tld": "de"}).json()
        local = httpx.get(f"{srv.url}/files", params={"day": "2026-05-01", "dc": "local", "lang": "deu", "tld": "de"}).json()
        strip = lambda fs: [{k: v for k, v in f.items() if k not in ("dc", "url")} for f in fs]  # noqa: E731
        assert strip(got["files"]) == strip(local["files"]) and got["count"] >= 2
        f = got["files"][-1]
        data = (published / f["path"]).read_bytes()
        assert httpx.get(srv.url + f["url"]).content == data
        r = httpx.get(srv.url + f["url"], headers={"Range": "bytes=3-20"})
        assert r.status_code == 206 and r.content == data[3:21]
        assert httpx.get(srv.url + f["url"], headers={"Range": f"bytes={len(data)}-"}).status_code == 416
        assert httpx.get(f"{srv.url}/files", params={"day": "2026-05-02", "dc": "s3dc"}).status_code == 404
        status, _ = raw_get(srv, "/download/s3dc/index/2026-05/01/%2e%2e/%2e%2e/x")
        assert status == 400
        assert days_of(store, "s3dc") == ["2026-05-01"]
        # the metadata export reads Parquet from S3 with ranged GETs: same bytes as from the local root
        q = {"day": "2026-05-01", "domain": "example.com"}
        from_s3 = httpx.get(f"{srv.url}/metadata", params={**q, "dc": "s3dc"})
        from_local = httpx.get(f"{srv.url}/metadata", params={**q, "dc": "local"})
        assert from_s3.status_code == 200 and from_s3.content == from_local.content
        assert pq.read_table(io.BytesIO(from_s3.content)).num_rows > 0
    finally:
        srv.stop()


def days_of(store: SliceStore, dc: str) -> list[str]:
    return store.days(dc)


def test_days_lists_only_complete_days(store):
    assert store.days() == [d.isoformat() for d in DAYS]
