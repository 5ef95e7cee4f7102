"""Registering archive files over HTTP (lib.serve.register_api, lib.catalogue.register): real
archives of the shared corpus, the service on loopback; the CDX answers held to warcio's reading
of the same files, the night's catalogue of the day counting the file once, bad files refused
with nothing registered. No Spark: the night's lines are the small-day path's (lib.catalogue.cdxj
over the preprocess reader's captures, as lib.catalogue.day_captures.write_cdxj_local writes them)."""

from __future__ import annotations

import json
import os
import shutil
import time

import httpx
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.catalogue import capindex, cdxj, digeststore, recordstore
from lib.catalogue.linhash import LinearHash
from lib.preprocess.archive_pages import FileProcessor
from lib.serve.__main__ import parser
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from lib.store import locations, storage

TOKEN = "s3cret-token"
DAY = "2026-04/01"


def warcio_captures(path: str) -> list[dict]:
    """The capture records of an archive as warcio reads them, in file order: URL, timestamp, offset, length."""
    out = []
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=True)
        for rec in it:
            kind, off = rec.rec_type, it.get_record_offset()
            it.read_to_end(rec)
            if kind in ("response", "revisit", "resource"):
                h = rec.rec_headers
                ts = h.get_header("WARC-Date").replace("-", "").replace(":", "").replace("T", "")[:14]
                out.append((h.get_header("WARC-Target-URI"), ts, str(off), str(it.get_record_length())))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory, corpus):
    base = tmp_path_factory.mktemp("register")
    root, other = base / "root", base / "elsewhere"
    day = root / "warc" / DAY
    day.mkdir(parents=True)
    other.mkdir()
    shutil.copy(corpus / "ipwb" / "sample-1.warc.gz", day)
    shutil.copy(corpus / "aut" / "example.arc.gz", day)
    shutil.copy(corpus / "aut" / "issue-493.warc", other)
    data = (corpus / "ipwb" / "sample-1.warc.gz").read_bytes()
    (other / "cut.warc.gz").write_bytes(data[: len(data) // 2])
    (other / "notes.warc.gz").write_bytes(b"these are notes, not an archive\n" * 50)
    (base / "outside.warc").write_bytes((corpus / "aut" / "issue-493.warc").read_bytes())
    app = create_app({"c1": str(root)}, archive_roots=[str(other)], write_token=TOKEN)
    with ServerThread(app) as srv:
        yield {"root": str(root), "day": str(day), "other": str(other), "base": str(base), "url": srv.url}


def post(site, file: str, token: str | None = TOKEN, body: bytes | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    content = body if body is not None else json.dumps({"file": file}).encode()
    return httpx.post(f"{site['url']}/catalogue/files?collection=c1", content=content, headers=headers, timeout=60)


def cdx_json(site, url: str, match: str = "exact") -> list[dict]:
    r = httpx.get(f"{site['url']}/cdx/c1", params={"url": url, "matchType": match, "output": "json"}, timeout=30)
    assert r.status_code == 200, r.text
    return [json.loads(ln) for ln in r.text.splitlines()]


def every_line(site) -> list[str]:
    return list(capindex.Reader(os.path.join(site["root"], "cdxindex")).lines("", "\uffff"))


def test_a_registered_file_is_queryable_at_once_as_warcio_reads_it(site):
    path = os.path.join(site["day"], "sample-1.warc.gz")
    t0 = time.monotonic()
    r = post(site, path)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["day"] == "2026-04-01" and got["filename"] == f"{DAY}/sample-1.warc.gz" and not got["unchanged"]
    lines = every_line(site)
    seconds = time.monotonic() - t0
    assert seconds < 10
    want = warcio_captures(path)
    assert got["records"] == len(want) == len(lines) == 80
    have = sorted(
        (rec["url"], rec["timestamp"], rec["offset"], rec["length"])
        for ln in lines
        for rec in [dict(json.loads(ln.split(" ", 2)[2]), timestamp=ln.split(" ")[1])]
    )
    assert have == sorted(want)
    # through the CDX server: a URL of the file, its capture pointing into it
    url, ts, off, length = next(w for w in want if w[0].startswith("http://bitchmagazine.org/"))
    hits = [h for h in cdx_json(site, url) if h["timestamp"] == ts]
    assert hits and hits[0]["filename"] == f"{DAY}/sample-1.warc.gz" and hits[0]["offset"] == off
    # the record store and the digest store know its records
    with open(path, "rb") as f:
        it = ArchiveIterator(f)
        rec = next(r for r in it if r.rec_type == "response" and r.rec_headers.get_header("WARC-Payload-Digest"))
        rid = rec.rec_headers.get_header("WARC-Record-ID").strip("<>")
        digest = rec.rec_headers.get_header("WARC-Payload-Digest")
        off = it.get_record_offset()
    ptr = recordstore.get(os.path.join(site["root"], recordstore.FOLDER), rid)
    assert ptr is not None and ptr["warc_offset"] == off and ptr["day"] == "2026-04-01"
    assert rid in digeststore.record_ids(os.path.join(site["root"], digeststore.FOLDER), digest)


def test_registering_twice_changes_nothing(site):
    path = os.path.join(site["day"], "sample-1.warc.gz")
    before = every_line(site)
    state = capindex.read_state(os.path.join(site["root"], "cdxindex"))
    keys = LinearHash(os.path.join(site["root"], recordstore.FOLDER)).state()["keys"]
    r = post(site, "file://" + path)
    assert r.status_code == 200 and r.json()["unchanged"] is True
    assert every_line(site) == before
    assert capindex.read_state(os.path.join(site["root"], "cdxindex"))["version"] == state["version"]
    assert LinearHash(os.path.join(site["root"], recordstore.FOLDER)).state()["keys"] == keys


def test_the_nights_catalogue_of_the_day_counts_the_file_once(site):
    r = post(site, os.path.join(site["day"], "example.arc.gz"))
    assert r.status_code == 200 and r.json()["records"] == 299
    registered = every_line(site)
    index = os.path.join(site["root"], "cdxindex")
    assert set(capindex.registered(index)) == {f"{DAY}/sample-1.warc.gz", f"{DAY}/example.arc.gz"}
    # the night: the day's captures as preprocess reads them (pages and all), its CDXJ as the job writes it
    caps: list[dict] = []
    day_uri = storage.normalize(site["day"])
    for name in sorted(os.listdir(site["day"])):
        uri = storage.normalize(os.path.join(site["day"], name))
        proc = FileProcessor(uri, name=locations.archive_name(uri, day_uri))
        with open(os.path.join(site["day"], name), "rb") as f:
            assert sum(1 for _ in proc.pages(f)) > 0  # pages built: the full reader, not the registration's
        caps += proc.captures
    night = cdxj.iter_lines(caps, os.path.join(site["root"], "warc"))
    assert sorted(night) == registered  # the registration wrote the night's very lines
    cdxj_file = os.path.join(site["base"], "night.cdxj")
    with open(cdxj_file, "w", encoding="utf-8") as f:
        f.write("".join(ln + "\n" for ln in night))
    out = capindex.add_day(index, "2026-04-01", cdxj_file)
    assert out["retired_files"] == [f"{DAY}/example.arc.gz", f"{DAY}/sample-1.warc.gz"]
    assert every_line(site) == registered and capindex.registered(index) == {}
    # registered again after the night: the day holds it already
    r = post(site, os.path.join(site["day"], "sample-1.warc.gz"))
    assert r.status_code == 200 and r.json()["unchanged"] and r.json()["covered_by_day"] == "2026-04-01"
    assert every_line(site) == registered


def test_a_file_of_another_archives_root_belongs_to_the_day_of_its_warc_date(site):
    path = os.path.join(site["other"], "issue-493.warc")
    r = post(site, path)
    assert r.status_code == 200, r.text
    got = r.json()
    want = warcio_captures(path)
    ts = want[0][1]  # the first capture's WARC-Date
    assert got["day"] == f"{ts[:4]}-{ts[4:6]}-{ts[6:8]}" and got["records"] == len(want)
    assert got["filename"] == storage.normalize(path)  # outside ROOT/warc/: the full URI, as the night writes it
    url = want[0][0]
    hits = cdx_json(site, url)
    assert any(h["filename"] == got["filename"] and h["offset"] == want[0][2] for h in hits)


@pytest.mark.parametrize(
    "file,token,status,reason",
    [
        ("other:cut.warc.gz", TOKEN, 400, "truncated_record"),
        ("other:notes.warc.gz", TOKEN, 400, "not_an_archive"),
        ("other:missing.warc.gz", TOKEN, 404, "no such file"),
        ("base:outside.warc", TOKEN, 403, "not below an archives root"),
        ("other:../outside.warc", TOKEN, 403, "not below an archives root"),
        ("/etc/passwd", TOKEN, 403, "not below an archives root"),
        ("s3://bucket/warc/x.warc.gz", TOKEN, 403, "not below an archives root"),
        ("day:sample-1.warc.gz", None, 401, "Authorization: Bearer"),
        ("day:sample-1.warc.gz", "wrong", 403, "wrong token"),
    ],
)
def test_bad_files_and_tokens_are_refused_and_change_nothing(site, file, token, status, reason):
    where, _, name = file.partition(":")
    path = os.path.join(site[where], name) if where in ("other", "base", "day") else file
    index = os.path.join(site["root"], "cdxindex")
    before = capindex.read_state(index)
    keys = LinearHash(os.path.join(site["root"], recordstore.FOLDER)).state()["keys"]
    r = post(site, path, token)
    assert r.status_code == status and reason in r.json()["error"], r.text
    assert capindex.read_state(index) == before
    assert LinearHash(os.path.join(site["root"], recordstore.FOLDER)).state()["keys"] == keys


def test_a_body_that_names_no_file_is_refused(site):
    for body in (b"not json", b"[]", b'{"file": 3}', b"{}"):
        r = post(site, "", body=body)
        assert r.status_code == 400 and '"file"' in r.json()["error"], r.text
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = httpx.post(f"{site['url']}/catalogue/files?collection=nope", json={"file": "x"}, headers=auth)
    assert r.status_code == 404 and "unknown collection" in r.json()["error"]


def test_the_service_binds_to_loopback_unless_told_otherwise():
    assert parser().parse_args(["--root", "r"]).host == "127.0.0.1"
    assert parser().parse_args(["--root", "r", "--host", "0.0.0.0"]).host == "0.0.0.0"


def test_the_service_answers_completeness_only_for_published_pages(site):
    # a registered file's records are in the record store, but no day published them as pages
    r = post(site, os.path.join(site["day"], "sample-1.warc.gz"))
    assert r.status_code == 200
    with open(os.path.join(site["day"], "sample-1.warc.gz"), "rb") as f:
        rid = next(r for r in ArchiveIterator(f) if r.rec_type == "response").rec_headers.get_header("WARC-Record-ID")
    assert recordstore.get(os.path.join(site["root"], recordstore.FOLDER), rid.strip("<>")) is not None
    got = httpx.get(f"{site['url']}/capture/completeness/{rid.strip('<>')}", timeout=30)
    assert got.status_code == 404 and "no published page" in got.json()["error"]
