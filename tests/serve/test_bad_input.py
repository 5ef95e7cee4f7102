"""Bad input over real HTTP against the full service: every case answers a 4xx with a JSON
``{"error": ...}`` that says what was wrong, and nothing outside the roots can be read."""

from __future__ import annotations

import os
import socket

import httpx
import pytest

from tests.serve.fixtures_http import DEMO_DAY

DAY = DEMO_DAY.isoformat()
SECRET = "secret-outside-the-root"


def _err(r: httpx.Response, status: int, *words: str) -> str:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    msg = r.json()["error"]
    assert isinstance(msg, str) and msg
    for w in words:
        assert w.lower() in msg.lower(), (w, msg)
    return msg


@pytest.mark.parametrize(
    "params,status,words",
    [
        ({"q": ""}, 400, ["empty"]),
        ({"q": "   "}, 400, ["empty"]),
        ({}, 400, ["empty"]),
        ({"q": "x" * 600}, 400, ["600", "512"]),
        ({"q": "AND OR NOT"}, 400, ["operator"]),
        ({"q": '+-"()*'}, 400, ["operator"]),
        ({"q": "library", "day": "2026-13-45"}, 400, ["YYYY-MM-DD"]),
        ({"q": "library", "day": "yesterday"}, 400, ["YYYY-MM-DD"]),
        ({"q": "library", "day": "2030-01-01"}, 404, ["2030-01-01", DAY]),
        ({"q": "library", "day": DAY, "to": "2026-01-10"}, 400, ["before"]),
        ({"q": "library", "day": "2025-01-01", "to": "2026-12-31"}, 400, ["at most"]),
        ({"q": "library", "day": DAY, "lang": "xxx"}, 400, ["xxx", "eng"]),
        ({"q": "library", "day": DAY, "lang": "eng,klingon"}, 400, ["klingon"]),
        ({"q": "library", "day": DAY, "k": "0"}, 400, ["k"]),
        ({"q": "library", "day": DAY, "k": "100000"}, 400, ["k"]),
        ({"q": "library", "day": DAY, "k": "ten"}, 400, ["k", "ten"]),
        ({"q": "library", "day": DAY, "b": "2"}, 400, ["b"]),
        ({"q": "library", "day": DAY, "k1": "-1"}, 400, ["k1"]),
    ],
)
@pytest.mark.parametrize("endpoint", ["/search", "/searchxml"])
def test_bad_search_requests(service, endpoint, params, status, words):
    _err(httpx.get(service + endpoint, params=params), status, *words)


@pytest.fixture(scope="module")
def outside(published_root):
    """A file next to the root (not under it) that no request may read."""
    path = os.path.join(os.path.dirname(published_root), "secret.txt")
    with open(path, "w") as f:
        f.write(SECRET)
    return path


def _raw_get(base: str, target: str) -> tuple[int, bytes]:
    """GET with the request target sent byte for byte (clients normalise ``..`` away)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize(
    "target",
    [
        "/download/dc1/../secret.txt",
        "/download/dc1/index/../../secret.txt",
        "/download/dc1/%2e%2e/secret.txt",
        "/download/dc1/index%2f..%2f..%2fsecret.txt",
        "/download/dc1/%252e%252e/secret.txt",
        "/download/dc1//etc/passwd",
        "/download/dc1/%2Fetc%2Fpasswd",
        "/download/dc1/index/2026-01/15/..%5c..%5c..%5csecret.txt",
        "/download/dc1/index/2026-01/15/%00",
        "/download/..%2f..%2fsecret.txt/x",
        "/download/nope/index/2026-01/15/_SUCCESS",
        "/download/dc1/warc/2026-01/15/crawler1/x.warc.gz",
    ],
)
def test_paths_outside_the_roots_are_refused(service, outside, target):
    status, body = _raw_get(service, target)
    assert 400 <= status < 500, (target, status, body[:200])
    assert SECRET.encode() not in body and b"root:" not in body
    assert b'"error"' in body, body[:200]


def test_catalogue_file_names_are_values_not_paths(service, outside):
    # records?file= looks the name up among the day's captures; it never opens it
    r = httpx.get(f"{service}/catalogue/records", params={"file": "../../secret.txt"})
    assert r.status_code == 200 and r.json() == []


def test_range_past_the_end(service):
    manifest = httpx.get(f"{service}/files", params={"day": DAY, "part": "ciff"}).json()
    entry = manifest["files"][0]
    url = f"{service}/download/{entry['dc']}/{entry['path']}"
    ok = httpx.get(url, headers={"Range": "bytes=0-9"})
    assert ok.status_code == 206 and len(ok.content) == 10
    r = httpx.get(url, headers={"Range": f"bytes={entry['size']}-"})
    _err(r, 416, "past the end")
    assert r.headers["content-range"] == f"bytes */{entry['size']}"
    _err(httpx.get(url, headers={"Range": f"bytes={entry['size'] + 1000}-{entry['size'] + 2000}"}), 416)


def test_unknown_paths_and_catalogue_errors(service):
    _err(httpx.get(f"{service}/nope"), 404, "/nope")
    _err(httpx.get(f"{service}/catalogue/stats", params={"day": "2030-01-01"}), 404)
    _err(httpx.get(f"{service}/catalogue/stats"), 400, "day")
    _err(httpx.get(f"{service}/catalogue/search", params={"prefix": "x", "limit": "many"}), 400, "limit")
    _err(httpx.get(f"{service}/catalogue/days", params={"dc": "mars"}), 404, "mars")
    _err(httpx.get(f"{service}/files", params={"day": "2026-02-30"}), 400)
    _err(httpx.get(f"{service}/static/../../etc/passwd"), 404)
    _err(httpx.post(f"{service}/search", params={"q": "library"}), 405)
