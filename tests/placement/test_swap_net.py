"""SWAP as a network: three ``dailyslice swap-server`` processes on loopback (started once for the
module), reads and writes through any of them, the collision check racing across servers, a
server stopped and restarted, bad input, and the slices merging back into the collection."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from lib.extract.lines import Resolver, parse_lines
from lib.extract.record_list import record_ranges
from lib.extract.task import extract_items
from lib.placement import __main__ as placement_cli
from lib.placement.net.namespace import CollectionDef
from lib.placement.net.node import META
from lib.placement.net.swap_client import SwapHTTPError
from lib.serve.capture_api import capture_router
from tests.helpers_warc import good_pages, warc_gz
from tests.placement.swapnet import ROOT, running

COLL = "chronopolis/umiacs/code"


def _data(rel: str) -> bytes:
    return hashlib.sha256(rel.encode()).digest() * (1 + len(rel) % 7)


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    # server 1 runs a reader process beside its primary (workers = 2): its reads are answered by
    # either, everything else goes to the primary by a 307
    yield from running(str(tmp_path_factory.mktemp("swapnet")), COLL, 4)


@pytest.fixture(scope="module")
def stored(net):
    """30 files put through the three servers in turn (each PUT redirected to its holder)."""
    files = {f"dir{i % 3}/sub{i % 2}/f{i}.bin": _data(f"f{i}") for i in range(30)}
    for k, (rel, data) in enumerate(sorted(files.items())):
        got = net.client(k % 3).put(f"{COLL}/{rel}", data)
        assert got["bytes"] == len(data) and got["path"] == rel
    return files


def _coll(net, i: int = 0) -> CollectionDef:
    return CollectionDef.from_json(next(c for c in net.client(i).collections() if c["name"] == COLL))


def test_every_server_answers_for_every_file_by_bytes_or_redirect(net, stored):
    c = _coll(net)
    for rel, data in stored.items():
        holder = c.layout.holder(rel).server
        assert net.client(0).attr(f"{COLL}/{rel}")["server"] == holder
        for i, url in enumerate(net.urls):
            r = net.http.get(f"{url}/get/{COLL}/{rel}")
            if url == holder:
                assert r.status_code == 200 and r.content == data
            else:
                assert r.status_code == 302 and r.headers["location"] == f"{holder}/get/{COLL}/{rel}"
            assert net.client(i).get(f"{COLL}/{rel}") == data


def test_head_range_and_missing(net, stored):
    rel, data = sorted(stored.items())[5]
    cl = net.client(1)
    assert cl.head(f"{COLL}/{rel}") == len(data)
    assert cl.get(f"{COLL}/{rel}", 3, 10) == data[3:13]
    assert cl.get(f"{COLL}/{rel}", len(data) - 4) == data[-4:]
    with pytest.raises(SwapHTTPError) as e:
        cl.get(f"{COLL}/dir0/nothing-here")
    assert e.value.status == 404 and "not found" in str(e.value)


def test_partitions_metadata_and_union_of_slices_is_the_collection(net, stored, tmp_path):
    ids = []
    for i in range(3):
        for p in ("p0", "p1"):
            meta = json.load(open(os.path.join(net.base, f"node{i}", p, META)))
            ids.append(meta["id"])
    assert len(set(ids)) == 6
    c = _coll(net)
    for k, h in enumerate(c.layout.slices):
        node = net.urls.index(h.server)
        meta = next(
            json.load(open(os.path.join(net.base, f"node{node}", p, META)))
            for p in ("p0", "p1")
            if json.load(open(os.path.join(net.base, f"node{node}", p, META)))["id"] == h.partition
        )
        assert meta["slices"][COLL] == k
    assert len(net.slice_folders(COLL)) == 4
    got = net.union(COLL, str(tmp_path / "all"))
    assert {r: d for r, d in got.items() if r in stored} == stored
    assert set(got) <= set(stored) | {r for r in got if r.startswith(("curl/", "race"))}


def test_curl_put_and_get_follow_redirects(net, tmp_path):
    """Through every server (server 1 with a reader process in front of its primary); curl sends
    ``Expect: 100-continue`` (for the 1.2 MB file at least), answered before the body is sent."""
    page = tmp_path / "page.html"
    page.write_bytes(b"<html>curl</html>\n" * 300)
    big = tmp_path / "big.bin"
    big.write_bytes(hashlib.sha256(b"big").digest() * 40000)
    for i, src in enumerate([page, page, big]):
        rel = f"curl/via{i}/{src.name}"
        p = subprocess.run(
            ["curl", "-sS", "-v", "-f", "-L", "-T", str(src), f"{net.urls[i]}/put/{COLL}/{rel}"],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["path"] == rel
        assert src is not big or "Expect: 100-continue" in p.stderr
        out = tmp_path / f"got{i}"
        for j in range(3):
            p = subprocess.run(["curl", "-sS", "-f", "-L", "-o", str(out), f"{net.urls[j]}/get/{COLL}/{rel}"])
            assert p.returncode == 0 and out.read_bytes() == src.read_bytes()


def test_collisions_are_refused_across_slices(net, stored):
    c = _coll(net)
    # a path whose holder differs from the holder of the file it would turn into a folder
    rel = next(r for r in sorted(stored) if c.layout.holder(r + "/x").server != c.layout.holder(r).server)
    with pytest.raises(SwapHTTPError) as e:
        net.client(0).put(f"{COLL}/{rel}/x", b"no")
    assert e.value.status == 409 and "is a file" in str(e.value)
    d = next(r.rsplit("/", 1)[0] for r in sorted(stored) if c.layout.holder(r.rsplit("/", 1)[0]).server)
    with pytest.raises(SwapHTTPError) as e:
        net.client(1).put(f"{COLL}/{d}", b"no")
    assert e.value.status == 409 and "directory" in str(e.value)


def test_racing_puts_of_colliding_paths_exactly_one_wins(net):
    c = _coll(net)
    rounds = 0
    for k in range(200):
        a, b = f"race{k}/x", f"race{k}/x/y"
        ha, hb = c.layout.holder(a).server, c.layout.holder(b).server
        if ha == hb:
            continue
        rounds += 1
        results: dict[str, int] = {}
        go = threading.Barrier(2)

        def put(url: str, rel: str) -> None:
            go.wait()
            results[rel] = net.http.put(f"{url}/put/{COLL}/{rel}", content=b"race", follow_redirects=True).status_code

        ts = [threading.Thread(target=put, args=(ha, a)), threading.Thread(target=put, args=(hb, b))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert sorted(results.values()) == [201, 409], results
        if rounds == 12:
            break
    assert rounds == 12
    # no path is a file on one slice and a folder on another
    files = {
        os.path.relpath(os.path.join(dp, n), d).replace(os.sep, "/")
        for d in net.slice_folders(COLL)
        for dp, _, names in os.walk(d)
        for n in names
    }
    dirs = {f.rsplit("/", i)[0] for f in files for i in range(1, f.count("/") + 1)}
    assert not files & dirs


def test_bad_input_is_refused_and_nothing_is_written(net, tmp_path):
    before = net.union(COLL, str(tmp_path / "before"))
    base = net.urls[0]
    for raw in (f"/put/{COLL}/a/%2e%2e/%2e%2e/x", f"/put/{COLL}/a%00b", "/put//etc/passwd", "/put/nocoll/x"):
        r = net.http.put(base + raw, content=b"x")
        assert r.status_code in (400, 404), (raw, r.status_code, r.text)
        assert "error" in r.json()
    r = net.http.get(base + f"/get/{COLL}/../../../etc/passwd")
    assert r.status_code in (400, 404)
    # a collection with a small size limit: a body over it is refused (declared or streamed), no file
    part = net.client(0).status()["partitions"][0]["id"]  # on server 0: one process, no reader's 307
    net.client(0).create("limited", [{"server": net.urls[0], "partition": part}], max_put_bytes=1000)
    c = CollectionDef.from_json(next(x for x in net.client(0).collections() if x["name"] == "limited"))
    holder = c.layout.slices[0].server
    r = net.http.put(f"{holder}/put/limited/big.bin", content=b"x" * 5000)
    assert r.status_code == 413 and "limit" in r.json()["error"]

    def chunks():
        for _ in range(10):
            yield b"y" * 500

    r = net.http.put(f"{holder}/put/limited/deep/er/big.bin", content=chunks())
    assert r.status_code == 413
    assert net.union("limited", str(tmp_path / "limited")) == {}
    leftovers = [n for d in net.slice_folders("limited") for _, _, ns in os.walk(d) for n in ns]
    assert leftovers == [] and all(os.listdir(d) == [] for d in net.slice_folders("limited"))
    # bad management and peer calls
    assert net.http.post(base + "/mgmt/collections", content=b"{").status_code == 400
    assert net.http.post(base + "/mgmt/collections", json={"name": "../x"}).status_code == 400
    assert net.http.post(base + "/mgmt/collections", json={"name": COLL + "/inner"}).status_code == 400
    assert net.http.post(base + "/peer/check", content=b"garbage").status_code == 400
    assert net.http.post(base + "/peer/collection", json={"name": "x", "layout": 3}).status_code == 400
    assert net.union(COLL, str(tmp_path / "after")) == before


def test_a_peer_that_answers_garbage_is_a_logged_peer_error(net):
    """A collection with a slice on a server that answers garbage: a PUT that needs its check is
    refused (503) with nothing written, and the error is logged and shown on the status page."""
    garbage = subprocess.Popen([sys.executable, "-c", GARBAGE_SERVER], stdout=subprocess.PIPE, text=True)
    try:
        bad = f"http://127.0.0.1:{int(garbage.stdout.readline())}"
        mine = net.client(0).status()["partitions"][1]["id"]
        net.client(0).create("g", [{"server": net.urls[0], "partition": mine}, {"server": bad, "partition": "p"}])
        c = CollectionDef.from_json(next(x for x in net.client(0).collections() if x["name"] == "g"))
        rel = next(f"f{k}/x" for k in range(50) if c.layout.holder(f"f{k}/x").server == net.urls[0])
        with pytest.raises(SwapHTTPError) as e:
            net.client(0).put(f"g/{rel}", b"data")
        assert e.value.status == 503 and "could not be checked" in str(e.value)
        assert [os.listdir(d) for d in net.slice_folders("g")] == [[]]
        peer = next(p for p in net.client(0).status()["peers"] if p["url"] == bad)
        assert peer["online"] is False and peer["errors"] >= 1 and "not JSON" in peer["error"]
        assert f"peer {bad}" in net.log(0) and "not JSON" in net.log(0)
    finally:
        garbage.kill()
        garbage.wait()


GARBAGE_SERVER = r"""
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200); self.send_header("content-length", "9"); self.end_headers()
        self.wfile.write(b"<garbage>")
    do_GET = do_PUT = do_POST
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def test_a_stopped_server_is_retried_and_catches_up_when_it_returns(net, stored):
    c = _coll(net)
    net.stop(2)
    try:
        up = [r for r in stored if c.layout.holder(r).server != net.urls[2]]
        for rel in up[:5]:
            assert net.client(0).get(f"{COLL}/{rel}") == stored[rel]
        # a new folder cannot be checked with the stopped holder: refused, nothing written
        rel = next(f"new{k}/f" for k in range(99) if c.layout.holder(f"new{k}/f").server == net.urls[0])
        with pytest.raises(SwapHTTPError) as e:
            net.client(0).put(f"{COLL}/{rel}", b"x")
        assert e.value.status == 503 and net.urls[2] in str(e.value)
        assert not any(os.path.exists(os.path.join(d, rel.split("/")[0])) for d in net.slice_folders(COLL))
        st = net.client(0).status()
        assert [p["online"] for p in st["peers"] if p["url"] == net.urls[2]] == [False]
        # a collection made while it is away reaches it when it comes back
        net.client(0).create("made-while-away", 2)
    finally:
        net.start(2)
        net.wait(2)
    net.wait_peers()
    assert "made-while-away" in {x["name"] for x in net.client(2).collections()}
    for rel in [r for r in stored if c.layout.holder(r).server == net.urls[2]][:5]:
        assert net.client(0).get(f"{COLL}/{rel}") == stored[rel]
    net.client(0).put(f"{COLL}/{rel}", b"x")
    assert net.client(2).get(f"{COLL}/{rel}") == b"x"


def _reads_during(net, files: dict[str, bytes], name: str, action):
    """Run ``action`` while a reader keeps reading every file through every server in turn; returns
    the action's result, the number of reads and the wrong ones."""
    stop = threading.Event()
    reads, wrong = [0], []

    def reader() -> None:
        k = 0
        while not stop.is_set():
            for rel, data in files.items():
                url = net.urls[k % 3]
                k += 1
                try:
                    got = net.client(k % 3).get(f"{name}/{rel}")
                except SwapHTTPError as e:
                    wrong.append((rel, url, str(e)))
                    continue
                reads[0] += 1
                if got != data:
                    wrong.append((rel, url, "bytes differ"))

    t = threading.Thread(target=reader)
    t.start()
    try:
        result = action()
    finally:
        stop.set()
        t.join()
    return result, reads[0], wrong


def _where(net, name: str) -> dict[str, tuple[str, str]]:
    """path -> (server, partition folder) from the slice folders on disk."""
    out = {}
    for d in net.slice_folders(name):
        for dp, _, names in os.walk(d):
            for n in names:
                out[os.path.relpath(os.path.join(dp, n), d).replace(os.sep, "/")] = d
    return out


def test_doubling_and_halving_while_serving(net, tmp_path):
    name = "grow/md5"
    net.client(0).create(name, 2)
    files = {f"d{i % 4}/f{i}": _data(f"g{i}") * 3 for i in range(40)}
    for rel, data in files.items():
        net.client(1).put(f"{name}/{rel}", data)
    before = CollectionDef.from_json(next(c for c in net.client(0).collections() if c["name"] == name))
    old_dirs = {h.partition: None for h in before.layout.slices}
    assert len(old_dirs) == 2
    at_start = _where(net, name)

    def read_all() -> None:
        for i in range(3):
            for rel, data in files.items():
                assert net.client(i).get(f"{name}/{rel}") == data, (i, rel)

    # step by step: the new layout published, nothing moved yet; then three moves per old holder
    assert net.client(2).rebalance(name, 4, pause="plan")["moved"] == 0
    read_all()
    with pytest.raises(SwapHTTPError) as e:
        net.client(0).put(f"{name}/d0/new", b"x")
    assert e.value.status == 503 and "rebalance" in str(e.value)
    assert net.client(2).rebalance(name, 4, limit=3)["moved"] == 6
    read_all()
    hops = sum(net.client(i).status()["counters"]["redirects"] for i in range(3))
    summary, reads, wrong = _reads_during(net, files, name, lambda: net.client(2).rebalance(name, 4))
    assert wrong == [] and reads > 0 and hops > 0
    summary["moved"] += 6
    after = CollectionDef.from_json(next(c for c in net.client(1).collections() if c["name"] == name))
    assert after.previous is None and len(after.layout.slices) == 4
    assert after.layout.slices[:2] == before.layout.slices
    should_move = [r for r in files if after.layout.slice_of(r) != before.layout.slice_of(r)]
    assert summary["moved"] == len(should_move) and summary["kept"] == len(files) - len(should_move)
    assert 0.3 < len(should_move) / len(files) < 0.7
    # a file moves from slice i to slice i + 2 only: none between the old slices
    assert all(after.layout.slice_of(r) == before.layout.slice_of(r) + 2 for r in should_move)
    now = _where(net, name)
    assert {r for r in files if now[r] != at_start[r]} == set(should_move)
    assert net.union(name, str(tmp_path / "u1")) == files

    summary, reads, wrong = _reads_during(net, files, name, lambda: net.client(0).rebalance(name, 2))
    assert wrong == [] and summary["moved"] == len(should_move)
    assert _where(net, name) == at_start
    assert net.union(name, str(tmp_path / "u2")) == files


def test_consistent_collection_moves_only_the_keys_whose_owner_changed(net, tmp_path):
    name = "grow/ring"
    net.client(0).create(name, 3, placement="consistent", vnodes=64)
    files = {f"k{i}": _data(f"r{i}") for i in range(90)}
    for rel, data in files.items():
        net.client(0).put(f"{name}/{rel}", data)
    before = CollectionDef.from_json(next(c for c in net.client(0).collections() if c["name"] == name))
    summary, _, wrong = _reads_during(net, files, name, lambda: net.client(1).rebalance(name, 4))
    after = CollectionDef.from_json(next(c for c in net.client(0).collections() if c["name"] == name))
    assert wrong == []
    changed = [r for r in files if after.layout.holder(r) != before.layout.holder(r)]
    assert summary["moved"] == len(changed) > 0
    assert all(after.layout.holder(r) == after.layout.slices[3] for r in changed)  # only onto the new slice
    assert net.union(name, str(tmp_path / "u")) == files


def test_pipeline_publishes_into_swap_and_extract_reads_from_any_server(net, tmp_path, capsys):
    """``placement publish --server`` spreads a finished day folder over a SWAP collection (marker
    last); extract's reader takes ``--archives http://ANY-SERVER/get/crawl/warc`` and copies the
    records, byte for byte, following the redirects to the holders; so does the service's
    ``/capture?file=`` with such an archive root."""
    net.client(0).create("crawl", 3)
    day = tmp_path / "day"
    for k in range(3):
        (day / "2026-01" / "15").mkdir(parents=True, exist_ok=True)
        (day / "2026-01" / "15" / f"part-{k}.warc.gz").write_bytes(
            warc_gz([r for _, r in good_pages(6, host=f"h{k}.example")])
        )
    (day / "_SUCCESS").write_bytes(b"")
    p = subprocess.run(
        [sys.executable, "-m", "jobs.cli", "placement", "publish", str(day), "--server", net.urls[2]]
        + ["--prefix", "crawl/warc"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["files"] == 4 and sum(out["per_server"].values()) == 4
    assert net.client(1).get("crawl/warc/_SUCCESS") == b""
    # a publish of an unfinished folder is refused before anything is sent
    (tmp_path / "half").mkdir()
    assert placement_cli.main(["publish", str(tmp_path / "half"), "--server", net.urls[0], "--prefix", "crawl/h"]) == 2
    assert "_SUCCESS" in capsys.readouterr().err
    published = {
        "warc/" + os.path.relpath(os.path.join(dp, n), day).replace(os.sep, "/"): open(os.path.join(dp, n), "rb").read()
        for dp, _, names in os.walk(day)
        for n in names
    }
    assert net.union("crawl", str(tmp_path / "u")) == published  # the day, and nothing of the refused one

    lines = []
    for k in range(3):
        local = str(day / "2026-01" / "15" / f"part-{k}.warc.gz")
        lines += [f"{r.url}\t2026-01/15/part-{k}.warc.gz\t{r.offset}\t{r.length}" for r in record_ranges(local)]
    items, errors = parse_lines(lines, Resolver(f"{net.urls[0]}/get/crawl/warc"))
    assert errors == []
    (tmp_path / "sel").mkdir()
    res = extract_items(0, items, str(tmp_path / "sel"), max_bytes=1 << 30, verify=True)
    assert res["errors"] == [] and res["records"] == len(lines), res
    src = {k: (day / "2026-01" / "15" / f"part-{k}.warc.gz").read_bytes() for k in range(3)}
    got = b"".join((tmp_path / "sel" / f[0]).read_bytes() for f in res["files"]) if res["files"] else b""
    for line in lines:
        _, name, off, n = line.split("\t")
        k = int(name[-9])
        assert src[k][int(off) : int(off) + int(n)] in got

    # the service's captures by archive pointer, with a SWAP server's /get/ URL as an archive root
    app = FastAPI()
    app.include_router(capture_router(lambda rid: None, [f"{net.urls[1]}/get/crawl/warc"]))
    with TestClient(app) as svc:
        for line in lines[::5]:
            _, name, off, n = line.split("\t")
            q = {"file": f"{net.urls[1]}/get/crawl/warc/{name}", "offset": off, "length": n}
            r = svc.get("/capture", params=q)
            assert r.status_code == 200 and r.content == src[int(name[-9])][int(off) : int(off) + int(n)]
        outside = {"file": f"{net.urls[1]}/get/crawl/other/x.warc.gz", "offset": "0", "length": "10"}
        assert svc.get("/capture", params=outside).status_code == 403
        dotted = {"file": f"{net.urls[1]}/get/crawl/warc/../other/x", "offset": "0", "length": "10"}
        assert svc.get("/capture", params=dotted).status_code == 403
