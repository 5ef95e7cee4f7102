"""The pipeline reading from SWAP: the demo day published into a collection by ``placement publish``,
then the servers' listing (``/list/``), the service over ``--root http://SERVER/get/COLL/ROOT``
(days, search, files, downloads, captures) against the same service over the local root, the
download client resuming through a stopped server, and ``extract --archives`` from a server that
holds none of the archives. Three ``dailyslice swap-server`` processes for the module."""

from __future__ import annotations

import argparse
import io
import json
import os
import urllib.parse

import httpx
import pytest

from lib.placement import __main__ as placement_cli
from lib.placement.net.namespace import CollectionDef
from lib.placement.publish_http import put_file
from lib.serve import client as dl
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.placement.swapnet import running

COLL = "dsl"
DAY = "2026-01-15"
KINDS = ("preprocessed", "index", "catalogue")


def _local_files(root) -> dict[str, bytes]:
    out = {}
    for kind in ("warc", *KINDS):
        top = root / kind / "2026-01" / "15"
        for dirpath, _, names in os.walk(top):
            for n in names:
                p = os.path.join(dirpath, n)
                out[os.path.relpath(p, root).replace(os.sep, "/")] = open(p, "rb").read()
    return out


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    yield from running(str(tmp_path_factory.mktemp("swapread")), COLL, 5)


@pytest.fixture(scope="module")
def swap_day(net, published_root):
    """The demo day's folders published into the collection under ``root/``: each finished kind
    by ``placement publish`` (through a different server each), the day's archives file by file."""
    for i, kind in enumerate(KINDS):
        src = str(published_root / kind / "2026-01" / "15")
        assert (
            placement_cli.main(["publish", src, "--server", net.urls[i], "--prefix", f"{COLL}/root/{kind}/2026-01/15"])
            == 0
        )
    files = _local_files(published_root)
    for rel in sorted(p for p in files if p.startswith("warc/")):
        put_file(net.urls[1], f"{COLL}/root/{rel}", str(published_root / rel))
    return files


def _listing(net, i: int, tail: str, **q) -> httpx.Response:
    return net.http.get(f"{net.urls[i]}/list/{tail}", params=q, follow_redirects=True)


def test_listing_is_the_union_of_the_slices_from_any_server(net, swap_day):
    want = {p: len(b) for p, b in swap_day.items() if p.startswith("index/")}
    for i in range(3):  # server 1 answers through its reader process's 307 to the primary
        r = _listing(net, i, f"{COLL}/root/index/2026-01/15")
        assert r.status_code == 200, r.text
        doc = r.json()
        assert doc["next"] is None and doc["prefix"] == "root/index/2026-01/15"
        assert {e["path"][len("root/") :]: e["size"] for e in doc["entries"]} == want
    # every slice holds part of it: the listing is not one server's folder
    c = CollectionDef.from_json(next(x for x in net.client(0).collections() if x["name"] == COLL))
    assert len({c.layout.holder("root/" + p).server for p in want}) == 3
    # pages of 3: every file once, in order; the ETag is the one the file's holder answers
    seen, after = [], ""
    while True:
        doc = _listing(net, 2, f"{COLL}/root", limit=3, **({"after": after} if after else {})).json()
        assert len(doc["entries"]) <= 3
        seen += [e["path"] for e in doc["entries"]]
        after = doc["next"]
        if not after:
            break
    assert seen == sorted("root/" + p for p in swap_day)
    e = _listing(net, 0, f"{COLL}/root/catalogue/2026-01/15/_SUCCESS").json()["entries"]
    assert [x["path"] for x in e] == ["root/catalogue/2026-01/15/_SUCCESS"]
    head = net.http.head(f"{net.urls[0]}/get/{COLL}/root/catalogue/2026-01/15/_SUCCESS", follow_redirects=True)
    assert head.headers["etag"] == e[0]["etag"]


def test_listing_bad_input(net, swap_day):
    r = _listing(net, 0, "nocoll/x")
    assert r.status_code == 404 and "no collection" in r.json()["error"]
    for raw in (f"{COLL}/root/%2e%2e/%2e%2e/etc", f"{COLL}/a%00b", f"{COLL}/root//x"):
        r = net.http.get(f"{net.urls[0]}/list/{raw}")
        assert r.status_code == 400, (raw, r.status_code, r.text)
        assert "error" in r.json()
    assert _listing(net, 0, f"{COLL}/root", limit=0).status_code == 400
    assert _listing(net, 0, f"{COLL}/root", after="../x").status_code == 400
    assert _listing(net, 0, f"{COLL}/root/nothing-here").json()["entries"] == []


@pytest.fixture(scope="module")
def services(net, swap_day, published_root, tmp_path_factory):
    """The service over the SWAP root (through server 0) and over the local root, side by side."""
    root = f"{net.urls[0]}/get/{COLL}/root"
    swap = create_app({"dc1": root}, cache_dir=str(tmp_path_factory.mktemp("swap-cache")))
    local = create_app({"dc1": str(published_root)}, cache_dir=str(tmp_path_factory.mktemp("local-cache")))
    with ServerThread(swap) as s, ServerThread(local) as loc:
        yield s.url, loc.url, root


def test_service_serves_a_day_read_from_swap(net, services, swap_day):
    swap, local, root = services
    with httpx.Client(timeout=60) as h:
        info, want = (h.get(f"{u}/index-info").json() for u in (swap, local))  # days, languages, shards
        for d in (info, want):
            d.pop("build_seconds")  # the one thing that may differ: how long the build took
        assert info == want and DAY in json.dumps(info)
        # search: the same hits, scores and order as over the local copy of the day
        for q in ("library budget", "council"):
            a = h.get(f"{swap}/search", params={"q": q, "day": DAY, "k": 10}).json()
            b = h.get(f"{local}/search", params={"q": q, "day": DAY, "k": 10}).json()
            key = lambda d: [(x["id"], round(x["score"], 6)) for x in d["results"]]  # noqa: E731
            assert key(a) == key(b)
        assert a["results"], a
        # files: the same manifest (paths, sizes, sha256) and the same bytes, whole and by range
        fa = h.get(f"{swap}/files", params={"day": DAY}).json()
        fb = h.get(f"{local}/files", params={"day": DAY}).json()
        strip = lambda d: sorted((f["path"], f["size"], f["sha256"]) for f in d["files"])  # noqa: E731
        assert strip(fa) == strip(fb) and len(fa["files"]) > 5
        big = max(fa["files"], key=lambda f: f["size"])
        got = h.get(swap + big["url"])
        assert got.status_code == 200 and got.content == h.get(local + big["url"]).content
        part = h.get(swap + big["url"], headers={"Range": "bytes=100-299"})
        assert part.status_code == 206 and part.content == got.content[100:300]
        # a capture by record id: the page's archive pointer read from the day's archives in SWAP
        rid = a["results"][0]["record_id"]
        ca = h.get(f"{swap}/capture/{urllib.parse.quote(rid, safe=':@')}")
        assert ca.status_code == 200, ca.text
        where = urllib.parse.unquote(ca.headers["x-archive-file"])
        assert where.startswith(root + "/warc/2026-01/15/")
        off, n = int(ca.headers["x-archive-offset"]), int(ca.headers["x-archive-length"])
        assert ca.content == swap_day[where[len(root) + 1 :]][off : off + n]  # the record, byte for byte
        # a path that escapes, and one that does not exist
        assert h.get(f"{swap}/download/dc1/index/2026-01/15/%2e%2e/x").status_code in (400, 404)
        assert h.get(f"{swap}/download/dc1/index/2026-01/15/nope.parquet").status_code == 404


def _args(server: str, dest: str) -> argparse.Namespace:
    return dl.parse_args(["--server", server, "--day", DAY, "--dest", dest, "--jobs", "2"])


def test_download_client_from_swap_resumes_through_a_stopped_server(net, services, swap_day, tmp_path):
    """The download client against the service over the SWAP root: half the files, one left half
    written (a killed run), then a holder stopped mid-download: files it holds (or whose day marker
    it holds) fail with a clear 503 and nothing in place, the rest still come through server 0's
    redirects; a whole run meanwhile is refused and writes no manifest; once the server is back, a
    re-run resumes the half file, skips what is there, verifies every sha256 and writes the marker."""
    swap, _, _ = services
    c = CollectionDef.from_json(next(x for x in net.client(0).collections() if x["name"] == COLL))
    holder = {p: c.layout.holder("root/" + p).server for p in swap_day}
    dest = tmp_path / "dl"
    with httpx.Client(base_url=swap, timeout=60, follow_redirects=True) as h:
        files = dl.manifest(h, [("day", DAY)])["files"]
        first, rest = files[: len(files) // 2], files[len(files) // 2 :]
        for e in first:
            r = dl.fetch_one(h, e, str(dest))
            assert r.status == "fetched", r
        half = rest[0]
        part = dest / (half["path"] + ".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(swap_day[half["path"]][: half["size"] // 2])
        k = max((1, 2), key=lambda i: sum(holder[e["path"]] == net.urls[i] for e in rest))
        net.stop(k)
        try:
            for e in rest:
                r = dl.fetch_one(h, e, str(dest))
                marker = "/".join(e["path"].split("/")[:3]) + "/_SUCCESS"  # KIND/YYYY-MM/DD
                if net.urls[k] in (holder[e["path"]], holder[marker]):
                    assert r.status == "failed" and "503" in r.error and e["path"] in r.error, r
                    assert not (dest / e["path"]).exists()
                else:
                    assert r.status in ("fetched", "resumed"), r
                    assert (dest / e["path"]).read_bytes() == swap_day[e["path"]]
            assert any(net.urls[k] == holder[e["path"]] for e in rest)
            with pytest.raises(dl.UsageError, match="503"):
                dl.run(_args(swap, str(dest)), io.StringIO())
            assert not (dest / dl.MANIFEST).exists()
        finally:
            net.start(k)
            net.wait(k)
            net.wait_peers()
    out = io.StringIO()
    assert dl.run(_args(swap, str(dest)), out) == 0, out.getvalue()
    assert "resumed" in out.getvalue() or not part.exists()
    done = json.loads((dest / dl.MANIFEST).read_text())
    assert sorted(f["path"] for f in done["files"]) == sorted(e["path"] for e in files)
    for e in files:
        assert (dest / e["path"]).read_bytes() == swap_day[e["path"]]
    assert not list(dest.rglob("*.part"))


# --- the download client straight from SWAP (no service between): dailyslice download --swap


def _swap_args(net, dest, *extra: str, i: int = 2) -> argparse.Namespace:
    url = f"{net.urls[i]}/get/{COLL}/root"
    return dl.parse_args(["--swap", url, "--day", DAY, "--dest", str(dest), "--jobs", "2", *extra])


def _day_files(dest) -> dict[str, bytes]:
    return {
        os.path.relpath(p, dest).replace(os.sep, "/"): p.read_bytes()
        for p in dest.rglob("*")
        if p.is_file() and p.name != dl.MANIFEST
    }


def _line(out: str, path: str) -> str:
    return next(x for x in out.splitlines() if [w.rstrip(":") for w in x.split()[1:2]] == [path])


def test_swap_download_whole_day_equals_the_published_files(net, swap_day, tmp_path):
    dest = tmp_path / "dl"
    out = io.StringIO()
    assert dl.run(_swap_args(net, dest), out) == 0, out.getvalue()
    want = {p: b for p, b in swap_day.items() if not p.startswith("warc/")}
    assert _day_files(dest) == want  # every file of the three day folders, byte for byte
    lines = out.getvalue().splitlines()
    for kind in KINDS:  # each folder's _SUCCESS came after every other file of it
        folder = f"{kind}/2026-01/15/"
        at = [i for i, x in enumerate(lines) if x.split()[1:2] and x.split()[1].startswith(folder)]
        assert lines[max(at)].split()[1] == folder + "_SUCCESS"
    done = json.loads((dest / dl.MANIFEST).read_text())
    assert sorted(f["path"] for f in done["files"]) == sorted(want)
    assert done["request"] == {"day": DAY} and done["server"].endswith(f"/get/{COLL}/root")
    by = {f["path"]: f for f in done["files"]}
    assert all(f["sha256"] == dl._sha256(str(dest / p)) for p, f in by.items())
    ciff = [p for p in by if p.endswith(".ciff.gz") and "/index-" in p]
    assert ciff and all("md5" not in by[p] for p in ciff)  # checked against _stats.json's sha256
    assert all("md5" in by[p] for p in by if p.startswith("catalogue/"))  # against the holder's md5
    again = io.StringIO()  # a re-run fetches nothing
    assert dl.run(_swap_args(net, dest, i=0), again) == 0
    assert "0 bytes transferred" in again.getvalue() and f"{len(want)} skipped" in again.getvalue()
    # a filter: English CIFF shards only, and no _SUCCESS (a filtered folder is not the day)
    sub = tmp_path / "eng"
    assert dl.run(_swap_args(net, sub, "--part", "ciff", "--lang", "eng"), io.StringIO()) == 0
    got = _day_files(sub)
    assert got and set(got) == {p for p in ciff if p.split("/")[4] == "eng"}
    assert all(got[p] == swap_day[p] for p in got)


def test_swap_download_resumes_and_detects_a_corrupted_part(net, swap_day, tmp_path):
    dest = tmp_path / "dl"
    args = _swap_args(net, dest, "--kind", "index")
    assert dl.run(args, io.StringIO()) == 0
    index = {p: b for p, b in swap_day.items() if p.startswith("index/")}
    ciff = max((p for p in index if p.endswith(".ciff.gz")), key=lambda p: len(index[p]))
    other = max((p for p in index if not p.endswith(".ciff.gz") and len(index[p]) > 100), key=lambda p: len(index[p]))
    for p, body in ((ciff, index[ciff][: len(index[ciff]) // 2]), (other, b"x" * (len(index[other]) // 2))):
        (dest / p).unlink()
        (dest / (p + ".part")).write_bytes(body)  # a killed run's half; the second one damaged
    out = io.StringIO()
    assert dl.run(args, out) == 0, out.getvalue()
    text = out.getvalue()
    half = len(index[ciff]) - len(index[ciff]) // 2
    assert _line(text, ciff).startswith("resumed") and f"({half:,} bytes)" in _line(text, ciff)
    # the damaged part fails its md5 once resumed, is dropped and fetched whole
    n = len(index[other])
    assert f"({n - n // 2 + n:,} bytes)" in _line(text, other)
    assert f"{half + n - n // 2 + n:,} bytes transferred" in text  # nothing else was fetched
    assert _day_files(dest) == index and not list(dest.rglob("*.part"))


def test_swap_download_refuses_through_a_stopped_server_then_resumes(net, swap_day, tmp_path, monkeypatch, capsys):
    """A holder down: the listing is refused (503 naming it, nothing written); a holder stopping
    after the listing fails the files it holds, by name, keeps those days' _SUCCESS back and
    writes no manifest; once it is back a re-run completes."""
    from lib.serve import swap_download as sd

    c = CollectionDef.from_json(next(x for x in net.client(0).collections() if x["name"] == COLL))
    want = {p: b for p, b in swap_day.items() if not p.startswith("warc/")}
    holder = {p: c.layout.holder("root/" + p).server for p in want}
    k = max((1, 2), key=lambda i: sum(h == net.urls[i] for h in holder.values()))
    dest = tmp_path / "dl"
    net.stop(k)
    try:
        argv = ["--swap", f"{net.urls[0]}/get/{COLL}/root", "--day", DAY, "--dest", str(dest)]
        assert dl.main(argv) == 1
        err = capsys.readouterr().err
        assert "cannot be listed" in err and "503" in err and "root/" in err, err
        assert not dest.exists()
    finally:
        net.start(k)
        net.wait(k)
        net.wait_peers()
    real = sd.plan
    monkeypatch.setattr(sd, "plan", lambda h, a: (real(h, a), net.stop(k))[0])  # listed, then the holder stops
    try:
        out = io.StringIO()
        assert dl.run(_swap_args(net, dest, i=0), out) == 1
        text = out.getvalue()
        gone = [p for p in want if holder[p] == net.urls[k] and not p.endswith("_SUCCESS")]
        assert gone and "INCOMPLETE" in text
        for p in gone:
            assert _line(text, p).startswith("failed") and not (dest / p).exists()
        for kind in KINDS:
            marker = f"{kind}/2026-01/15/_SUCCESS"
            if any(p.startswith(kind + "/") for p in gone):
                assert not (dest / marker).exists()
        assert not (dest / dl.MANIFEST).exists()
    finally:
        monkeypatch.setattr(sd, "plan", real)
        net.start(k)
        net.wait(k)
        net.wait_peers()
    out = io.StringIO()
    assert dl.run(_swap_args(net, dest, i=0), out) == 0, out.getvalue()
    assert "0 failed" in out.getvalue()
    assert _day_files(dest) == want and (dest / dl.MANIFEST).exists()


def test_swap_download_bad_arguments(capsys):
    from lib.serve import swap_download as sd

    for url in ("http://h:1/list/c/x", "s3://b/c", "http://h:1/get/"):
        with pytest.raises(dl.UsageError, match="--swap wants"):
            sd.split_root(url)
    assert sd.split_root("http://h:1/get/c/a/b") == ("http://h:1", "c", "a/b")
    for argv in (
        ["--swap", "http://h:1/get/c", "--public", "x", "--dest", "d"],
        ["--server", "http://h", "--day", DAY, "--kind", "index", "--dest", "d"],
    ):
        with pytest.raises(SystemExit):
            dl.parse_args(argv)
    assert "--swap" in capsys.readouterr().err
    # a wrong kind or date is refused before anything is asked or written
    for extra, msg in ((["--kind", "warc"], "unknown kind"), (["--to", "2026-01-01"], "on or after")):
        args = dl.parse_args(["--swap", "http://127.0.0.1:9/get/c/r", "--day", DAY, "--dest", "/nonexistent/x", *extra])
        with pytest.raises(dl.UsageError, match=msg):
            dl.run(args, io.StringIO())
