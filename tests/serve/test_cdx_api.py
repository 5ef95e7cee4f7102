"""The CDX Server API (lib.serve.cdx_api) over two days built from real archives of the shared
corpus by the jobs: its answers against pywb's own CDX server over the same captures, pywb
replaying through it over real HTTP, and bad queries refused with a 400 naming the reason."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest

from lib.catalogue import capindex
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.fixtures_days import CORPUS_DAYS, D1, D2

DAYS = CORPUS_DAYS  # aut's WARC is crawled on both days: the same URLs and timestamps in two files
#: what pywb's aggregator adds to each line it serves (the name of its own index source)
PYWB_SOURCE = ', "source": "coll", "source-coll": "coll"'


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def archive(corpus_days):
    """The two days of tests/fixtures_days.py, their CDXJ as one sorted file, our service and
    pywb's CDX server (its warcserver, over that file) on loopback."""
    from pywb.warcserver.warcserver import WarcServer

    root = str(corpus_days)
    lines: list[str] = []
    for day in DAYS:
        with open(os.path.join(root, "catalogue", f"{day:%Y-%m}", f"{day:%d}", "index.cdxj"), encoding="utf-8") as f:
            lines += [ln.rstrip("\n") for ln in f if ln.strip()]
    lines.sort()
    every = os.path.join(root, "all.cdxj")
    with open(every, "w", encoding="utf-8") as f:
        f.write("".join(ln + "\n" for ln in lines))
    ws = WarcServer(config_file=None, custom_config={"collections": {"coll": {"index_paths": every}}})
    pywb = make_server("127.0.0.1", 0, ws, handler_class=_Quiet)
    threading.Thread(target=pywb.serve_forever, daemon=True).start()
    with ServerThread(create_app({"c1": root})) as ours:
        yield {
            "root": root,
            "lines": lines,
            "ours": ours.url,
            "pywb": f"http://127.0.0.1:{pywb.server_port}",
        }
    pywb.shutdown()


def test_the_index_holds_each_days_lines_once(archive):
    got = list(capindex.Reader(os.path.join(archive["root"], "cdxindex")).lines("", "\uffff"))
    assert got == archive["lines"]
    assert len(got) > 600 and sorted(capindex.read_state(os.path.join(archive["root"], "cdxindex"))["days"]) == [
        D1.isoformat(),
        D2.isoformat(),
    ]


#: the differential query set: every parameter, alone and together
QUERIES = [
    "url=http://www.archive.org/",
    "url=http://www.archive.org/&output=json",
    "url=http://www.archive.org/&output=cdxj",
    "url=archive.org&matchType=host&limit=7",
    "url=archive.org&matchType=domain",
    "url=*.archive.org&limit=25&output=json",
    "url=http://www.archive.org/web/&matchType=prefix",
    "url=archive.org/details/*&output=json",
    "url=com&matchType=domain&limit=40",
    "url=archive.org&matchType=domain&from=200804302050&to=20080430205230",
    "url=archive.org&matchType=domain&from=2008&to=2008&limit=3&sort=reverse",
    "url=archive.org&matchType=domain&filter=mime:html&limit=30",
    "url=archive.org&matchType=domain&filter=!mime:html&filter=~status:2..&output=json",
    "url=archive.org&matchType=domain&filter==status:404",
    "url=archive.org&matchType=domain&filter=~url:.*\\.php$&fl=url,timestamp,status&output=cdx",
    "url=archive.org&matchType=domain&filter=~filename:2026-04/02/.*&fl=filename,offset,length&output=json",
    "url=archive.org&matchType=domain&filter=archive&limit=5",
    "url=archive.org&matchType=domain&fl=urlkey,timestamp,digest&output=cdxj&limit=12",
    "url=archive.org&matchType=domain&closest=20080430205000&sort=closest&limit=9",
    "url=http://www.archive.org/&closest=20080430204826&sort=closest&limit=1",
    "url=http://www.archive.org/&closest=2010&sort=closest&output=json",
    "url=archive.org&matchType=domain&sort=reverse&limit=1",
    "url=archive.org&matchType=domain&sort=reverse&limit=10&output=json&fl=url,mime",
    "url=archive.org&matchType=domain&limit=4&fl=urlkey,timestamp,url,mime,status,digest,redirect,robotflags,length,offset,filename&output=cdx",
    "url=example.com/*&matchType=prefix&output=json",
    "url=http://no.such.host/&output=json",
]


def _pywb(base: str, qs: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"{base}/coll/index?{qs}", timeout=30) as r:
            return r.status, r.read().decode("utf-8").replace(PYWB_SOURCE, "")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def test_answers_equal_pywbs_cdx_server(archive):
    with httpx.Client(base_url=archive["ours"], timeout=30) as client:
        nonempty = 0
        for qs in QUERIES:
            theirs_qs = re.sub(r"output=cdx(?!j)", "output=text", qs)  # pywb's name of space-separated fields
            status, theirs = _pywb(archive["pywb"], theirs_qs)
            r = client.get(f"/cdx/c1?{qs}")
            assert (r.status_code, r.text) == (status, theirs), qs
            nonempty += bool(theirs.strip())
        assert nonempty >= len(QUERIES) - 2  # the answers have content (not two empty strings)
        # output=cdx without fl: the 11-column lines of the days' index.cdx, as pywb writes those fields
        cdx11 = "urlkey,timestamp,url,mime,status,digest,redirect,robotflags,length,offset,filename"
        status, theirs = _pywb(archive["pywb"], f"url=archive.org&matchType=domain&output=text&fl={cdx11}")
        r = client.get("/cdx/c1?url=archive.org&matchType=domain&output=cdx")
        assert r.text == theirs and len(theirs.splitlines()) > 400
        days = set()
        for day in DAYS:
            with open(os.path.join(archive["root"], "catalogue", f"{day:%Y-%m}", f"{day:%d}", "index.cdx")) as f:
                days.update(ln for ln in f.read().splitlines()[1:] if ln.startswith(("org,archive)", "org,archive,")))
        assert sorted(set(r.text.splitlines())) == sorted(days)


def test_paging_splits_an_answer_into_pages(archive):
    with httpx.Client(base_url=archive["ours"], timeout=30) as client:
        whole = client.get("/cdx/c1?url=archive.org&matchType=domain").text.splitlines()
        pages = int(client.get("/cdx/c1?url=archive.org&matchType=domain&showNumPages=true&pageSize=100").text)
        assert pages == -(-len(whole) // 100) and pages > 3
        got = []
        for p in range(pages):
            got += client.get(f"/cdx/c1?url=archive.org&matchType=domain&page={p}&pageSize=100").text.splitlines()
        assert got == whole


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_pywb_replays_through_the_cdx_server(archive, tmp_path):
    """pywb (its ``wayback`` server, a process of its own) with one collection on our CDX server
    and archive route and one on its own local index of the same files: equal payloads."""
    port = _free_port()
    ours = archive["ours"]
    (tmp_path / "config.yaml").write_text(
        json.dumps(
            {
                "collections": {
                    "remote": {"index_paths": f"cdx+{ours}/cdx/c1", "archive_paths": f"{ours}/archive/c1/"},
                    "local": {
                        "index_paths": os.path.join(archive["root"], "all.cdxj"),
                        "archive_paths": os.path.join(archive["root"], "warc") + "/",
                    },
                },
                "framed_replay": False,
            }
        )
    )
    exe = os.path.join(os.path.dirname(sys.executable), "wayback")
    proc = subprocess.Popen(
        [exe, "-p", str(port), "-b", "127.0.0.1", "-t", "4"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/collinfo.json", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        captures = []
        for ln in archive["lines"]:
            key, ts, body = ln.split(" ", 2)
            f = json.loads(body)
            if f.get("status") == "200" and f.get("mime") in ("text/html", "image/gif", "image/jpeg", "text/css"):
                captures.append((ts, f["url"]))
        captures = sorted(set(captures))[::7][:30]
        assert len(captures) >= 20
        with httpx.Client(timeout=60) as client:
            for ts, url in captures:
                a = client.get(f"{base}/remote/{ts}id_/{url}")
                b = client.get(f"{base}/local/{ts}id_/{url}")
                assert a.status_code == b.status_code == 200, (url, a.status_code, b.status_code)
                assert a.content == b.content and len(a.content) > 0, url
    finally:
        proc.terminate()
        proc.wait(30)


BAD = [
    ("url=archive.org&matchType=everything", "matchType='everything' is not one of exact, prefix, host, domain"),
    ("url=archive.org&matchType=domain&filter=~url:(a%2B)%2B$", "repeat inside a repeat"),
    ("url=archive.org&filter=~url:(x)\\1", "back-references"),
    ("url=archive.org&filter=!~mime:(text|text/html)*x", "an alternation inside a repeat"),
    ("url=archive.org&limit=5&limit=6", "limit given 2 times with different values"),
    ("url=archive.org&filter=~url:" + "a" * 300, "longer than 256"),
    ("url=archive.org&filter=~url:(unclosed", "bad regex"),
    ("url=archive.org&limit=100001", "limit='100001': expected a whole number from 1 to 100000"),
    ("url=archive.org&limit=-1", "limit='-1'"),
    ("url=http://example.com:99999/", "cannot canonicalise URL 'http://example.com:99999/'"),
    ("url=http://[::1]:abc/&matchType=prefix", "Port could not be cast"),
    ("matchType=exact", "the url parameter is required"),
    ("url=archive.org&output=xml", "output='xml' is not one of cdxj, json, cdx"),
    ("url=archive.org&from=2008-04", "from='2008-04': expected a timestamp"),
    ("url=archive.org&sort=closest", "sort=closest needs closest"),
    ("url=archive.org&sort=random", "sort='random'"),
    ("url=archive.org&fl=url,bad field", "is not a CDX field name"),
]


def test_bad_queries_are_refused_with_the_reason(archive):
    index = os.path.join(archive["root"], "cdxindex")
    version = capindex.read_state(index)["version"]
    with httpx.Client(base_url=archive["ours"], timeout=30) as client:
        for qs, why in BAD:
            r = client.get(f"/cdx/c1?{qs}")
            assert r.status_code == 400, qs
            assert why in r.json()["error"], (qs, r.json())
        assert client.get("/cdx/nope?url=archive.org").status_code == 404
        assert client.get("/archive/c1/2026-04/%2E%2E/%2E%2E/all.cdxj").status_code == 404  # leaves ROOT/warc
        assert client.get("/archive/c1/2026-04/01/none.warc.gz").status_code == 404
    assert capindex.read_state(index)["version"] == version  # refused queries change nothing


def test_the_archive_route_serves_ranges(archive):
    rel = "2026-04/01/ipwb-sample-1.warc.gz"
    data = open(os.path.join(archive["root"], "warc", rel), "rb").read()
    with httpx.Client(base_url=archive["ours"], timeout=30) as client:
        r = client.get(f"/archive/c1/{urllib.parse.quote(rel)}", headers={"Range": "bytes=100-1099"})
        assert r.status_code == 206 and r.content == data[100:1100]
        assert r.headers["content-range"] == f"bytes 100-1099/{len(data)}"
        assert client.get(f"/archive/c1/{rel}").content == data


def test_posted_lines_are_queryable_once_and_need_the_token(archive, tmp_path):
    """OutbackCDX's write: the days' index.cdx (11-column, header included) and index.cdxj POSTed
    to an empty collection answer as the collection the catalogue job built."""
    day_file = {d: os.path.join(archive["root"], "catalogue", f"{d:%Y-%m}", f"{d:%d}") for d in DAYS}
    cdx1 = open(os.path.join(day_file[D1], "index.cdx"), encoding="utf-8").read()
    cdxj2 = open(os.path.join(day_file[D2], "index.cdxj"), encoding="utf-8").read()
    root = tmp_path / "posted"
    root.mkdir()
    index = str(root / "cdxindex")
    token = {"Authorization": "Bearer s3cret"}
    with ServerThread(create_app({"w": str(root)}, write_token="s3cret")) as w, httpx.Client(timeout=60) as client:
        for headers, status, why in [
            ({}, 401, "needs 'Authorization: Bearer TOKEN'"),
            ({"Authorization": "Bearer nope"}, 403, "wrong token"),
        ]:
            r = client.post(f"{w.url}/cdx/w", content=cdx1, headers=headers)
            assert (r.status_code, why in r.json()["error"]) == (status, True)
        bad = cdx1.splitlines()
        bad[3] = bad[3].replace(" ", "  ", 1)  # a line with 12 fields: the batch is refused whole
        r = client.post(f"{w.url}/cdx/w", content="\n".join(bad), headers=token)
        assert r.status_code == 400 and "line 4: a CDX line has the 11 fields" in r.json()["error"]
        assert not os.path.exists(index) or capindex.read_state(index)["days"] == {}
        r = client.post(f"{w.url}/cdx/w", content=cdx1, headers=token)
        assert r.status_code == 200 and r.json()["added"] == len(cdx1.splitlines()) - 1
        again = client.post(f"{w.url}/cdx/w", content=cdx1, headers=token).json()
        assert again == {"source": r.json()["source"], "added": 0, "unchanged": True}
        q = "url=archive.org&matchType=domain&output=json"
        ours = client.get(f"{w.url}/cdx/w?{q}").text
        assert ours == client.get(f"{archive['ours']}/cdx/c1?{q}&filter=~filename:2026-04/01/").text
        assert len(ours.splitlines()) > 100
        assert client.post(f"{w.url}/cdx/w", content=cdxj2, headers=token).json()["added"] > 0
        for q in ("url=archive.org&matchType=domain&output=cdxj", "url=*.com&output=cdx&limit=500"):
            assert client.get(f"{w.url}/cdx/w?{q}").text == client.get(f"{archive['ours']}/cdx/c1?{q}").text
    with ServerThread(create_app({"w": str(root)})) as ro:  # no token configured: no writes at all
        r = httpx.post(f"{ro.url}/cdx/w", content=cdx1, headers=token)
        assert r.status_code == 403 and "not enabled" in r.json()["error"]
