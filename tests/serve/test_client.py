"""The download client: one language and one TLD over three days comes out byte-identical, with
every checksum verified, after the first transfer was killed half-way (resumed from the .part);
re-runs skip verified files; a checksum that never matches gives exit 1 and no final manifest."""

from __future__ import annotations

import io
import json
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from lib.serve import client
from lib.serve.files_api import create_app
from lib.serve.published import SliceStore
from tests.serve.conftest import ROOT_DIR, Served, Throttle

ARGS = ["--day", "2026-05-01", "--to", "2026-05-03", "--lang", "deu", "--tld", "de"]


def published_set(root: pathlib.Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.glob("index/2026-05/0[123]/de/deu/*"))}


def downloaded(dest: pathlib.Path) -> dict[str, bytes]:
    return {
        p.relative_to(dest).as_posix(): p.read_bytes()
        for p in dest.rglob("*")
        if p.is_file() and p.name != client.MANIFEST
    }


def test_filtered_download_resumes_after_kill_and_is_byte_identical(store, published, tmp_path):
    want = published_set(published)
    assert len(want) >= 6 and {p.split("/")[2] for p in want} == {"01", "02", "03"}
    dest = tmp_path / "dest"
    slow = Throttle(create_app(store), piece=256, delay=0.05)
    slow_srv = Served(slow)
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lib.serve.client",
                "--server",
                slow_srv.url,
                *ARGS,
                "--dest",
                str(dest),
                "--jobs",
                "1",
            ],
            cwd=ROOT_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        killed_at = None
        deadline = time.monotonic() + 30
        while killed_at is None and time.monotonic() < deadline:
            for part in dest.rglob("*.part") if dest.exists() else ():
                rel = part.relative_to(dest).as_posix()[: -len(".part")]
                size = part.stat().st_size
                if len(want[rel]) // 3 <= size < len(want[rel]) and size >= 512:
                    proc.send_signal(signal.SIGKILL)
                    killed_at = (rel, size)
                    break
            time.sleep(0.01)
        proc.wait(10)
        assert killed_at, "the client finished before it could be killed half-way: " + proc.stdout.read().decode()
    finally:
        slow_srv.stop()
    rel, cut = killed_at
    assert not (dest / client.MANIFEST).exists()  # a killed run leaves no final manifest
    cut = (dest / (rel + ".part")).stat().st_size  # what reached the disk before the kill
    complete_before = {p: len(b) for p, b in downloaded(dest).items() if not p.endswith(".part")}
    assert rel not in complete_before

    fast = Throttle(create_app(store), piece=1 << 20, delay=0)  # records Range headers
    srv = Served(fast)
    try:
        out = io.StringIO()
        assert client.run(client.parse_args(["--server", srv.url, *ARGS, "--dest", str(dest), "--jobs", "2"]), out) == 0
    finally:
        srv.stop()
    assert downloaded(dest) == want  # byte-identical, no .part left
    marker = json.loads((dest / client.MANIFEST).read_text())
    assert marker["count"] == len(want) and {f["path"] for f in marker["files"]} == set(want)
    assert (f"/download/dc1/{rel}", f"bytes={cut}-") in fast.requests
    expected_transfer = sum(len(b) for b in want.values()) - sum(complete_before.values()) - cut
    assert marker["bytes_transferred"] == expected_transfer < sum(len(b) for b in want.values())
    assert f"resumed  {rel} ({len(want[rel]) - cut:,} bytes)" in out.getvalue()

    # a re-run fetches nothing; a damaged copy is fetched again and verified
    out = io.StringIO()
    assert client.run(client.parse_args(["--server", _url(store), *ARGS, "--dest", str(dest)]), out) == 0
    assert "0 fetched, 0 resumed, %d skipped" % len(want) in out.getvalue()


def _url(store):
    srv = Served(create_app(store))
    _servers.append(srv)
    return srv.url


_servers: list[Served] = []


@pytest.fixture(autouse=True)
def _stop_servers():
    yield
    while _servers:
        _servers.pop().stop()


def test_damaged_copy_is_refetched(store, published, tmp_path):
    dest = tmp_path / "d"
    url = _url(store)
    args = ["--server", url, "--day", "2026-05-02", "--lang", "deu", "--tld", "de", "--dest", str(dest)]
    assert client.main(args) == 0
    victim = sorted(downloaded(dest))[0]
    (dest / victim).write_bytes(b"x" * len((dest / victim).read_bytes()))
    out = io.StringIO()
    assert client.run(client.parse_args(args), out) == 0
    assert f"fetched  {victim}" in out.getvalue()
    assert downloaded(dest) == {p: b for p, b in published_set(published).items() if "/02/" in p}


def test_checksum_never_matching_refuses_a_partial_result(published, tmp_path):
    store = SliceStore({"dc1": str(published)})
    files = store.list_files("2026-05-01", langs=["deu"], tlds=["de"])
    bad = files[1]
    for k in list(store._sha):
        if k.split("|")[0].endswith(bad.path):
            store._sha[k] = "0" * 64  # the server vouches for a sum no byte sequence here has
    dest = tmp_path / "d"
    (dest).mkdir()
    (dest / client.MANIFEST).write_text("{}")  # from an earlier run: must not survive a failed one
    out = io.StringIO()
    args = ["--server", _url(store), "--day", "2026-05-01", "--lang", "deu", "--tld", "de", "--dest", str(dest)]
    assert client.run(client.parse_args(args), out) == 1
    text = out.getvalue()
    assert "INCOMPLETE: 1 of" in text and bad.path in text.split("INCOMPLETE")[1] and "sha256" in text
    assert not (dest / client.MANIFEST).exists()
    assert not (dest / bad.path).exists() and not (dest / (bad.path + ".part")).exists()
    assert len(downloaded(dest)) == len(files) - 1


def test_cli_reports_a_refused_request(tmp_path, server):
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "lib.serve.client",
            "--server",
            server.url,
            "--day",
            "2026-05-03",
            "--to",
            "2026-05-01",
            "--dest",
            str(tmp_path / "x"),
        ],
        cwd=ROOT_DIR,
        capture_output=True,
        text=True,
    )
    assert r.returncode != 0 and "400" in r.stderr and "before" in r.stderr


class CutOnce:
    """ASGI middleware: the first whole-file download of ``path`` stops after ``keep`` bytes and the
    connection drops (a server-side cut); Range requests pass and are recorded."""

    def __init__(self, app, path: str, keep: int):
        self.app, self.path, self.keep, self.cut = app, path, keep, False
        self.ranges: list[str] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != self.path:
            return await self.app(scope, receive, send)
        rng = dict(scope["headers"]).get(b"range")
        if rng:
            self.ranges.append(rng.decode())
        if rng or self.cut:
            return await self.app(scope, receive, send)
        self.cut = True
        sent = 0

        async def cut_send(message):
            nonlocal sent
            if message["type"] == "http.response.body":
                body = message.get("body", b"")[: self.keep - sent]
                sent += len(body)
                await send({"type": "http.response.body", "body": body, "more_body": True})
                if sent >= self.keep:
                    raise ConnectionResetError("cut by the test")
                return
            await send(message)

        return await self.app(scope, receive, cut_send)


def test_cut_transfer_fails_the_run_then_resumes(store, published, tmp_path):
    files = store.list_files("2026-05-03", langs=["deu"], tlds=["de"], parts=["metadata"])
    victim = files[0]
    cut = CutOnce(create_app(store), f"/download/dc1/{victim.path}", keep=victim.size // 2)
    srv = Served(cut)
    _servers.append(srv)
    dest = tmp_path / "d"
    args = [
        "--server",
        srv.url,
        "--day",
        "2026-05-03",
        "--lang",
        "deu",
        "--tld",
        "de",
        "--part",
        "metadata",
        "--dest",
        str(dest),
    ]
    out = io.StringIO()
    assert client.run(client.parse_args(args), out) == 1  # the cut file is missing: no final manifest
    assert not (dest / client.MANIFEST).exists() and f"  {victim.path}:" in out.getvalue()
    part = dest / (victim.path + ".part")
    assert part.stat().st_size == victim.size // 2
    out = io.StringIO()
    assert client.run(client.parse_args(args), out) == 0
    assert cut.ranges == [f"bytes={victim.size // 2}-"]
    assert f"resumed  {victim.path} ({victim.size - victim.size // 2:,} bytes)" in out.getvalue()
    assert downloaded(dest) == {f.path: (published / f.path).read_bytes() for f in files}
    assert json.loads((dest / client.MANIFEST).read_text())["count"] == len(files)


def test_the_request_record_lists_the_repeatable_parameters():
    got = client.dict_of(
        [("lang", "eng"), ("date", "2026-01-15"), ("lang", "deu"), ("tld", "nl"), ("date", "2026-01-16")]
    )
    assert got == {"lang": ["eng", "deu"], "date": "2026-01-16", "tld": ["nl"]}
    assert list(got) == ["lang", "date", "tld"]  # the record's keys in the order asked
