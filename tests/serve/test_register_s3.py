"""Registering an archive by its ``s3://`` URI (lib.catalogue.register over lib.serve.register_api)
on a real S3 server (SeaweedFS, tests/fixtures_seaweed.py): a real archive of the shared corpus
uploaded below an archives root that is a bucket prefix. Its lines are held to warcio's reading of
the same file, its record ids point at records the object's byte ranges give back, a second
registration changes nothing, and bad objects and URIs are refused with nothing registered."""

from __future__ import annotations

import io
import json
import os

import httpx
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.catalogue import capindex, digeststore, recordstore
from lib.catalogue.linhash import LinearHash
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from lib.store import s3, storage
from tests.serve.test_register import TOKEN, warcio_captures

pytest_plugins = ["tests.fixtures_seaweed"]

KEY = "crawl/warc/2026-04/01/sample-1.warc.gz"


@pytest.fixture(scope="module")
def s3site(seaweed, corpus, tmp_path_factory):
    """A collection root on disk, the service's archives root ``s3://BUCKET/crawl/warc`` on
    SeaweedFS (the in-process service reaches it through AWS_ENDPOINT_URL; moto's endpoint comes back
    after the module)."""
    base = tmp_path_factory.mktemp("register-s3")
    root = base / "root"
    root.mkdir()
    src = corpus / "ipwb" / "sample-1.warc.gz"
    data = src.read_bytes()
    bucket = "reg-" + os.urandom(4).hex()
    client = seaweed.client()
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key=KEY, Body=data)
    client.put_object(Bucket=bucket, Key="crawl/warc/cut.warc.gz", Body=data[: len(data) // 2])
    client.put_object(Bucket=bucket, Key="crawl/warc/notes.warc.gz", Body=b"these are notes\n" * 50)
    client.put_object(Bucket=bucket, Key="crawl/other/x.warc.gz", Body=data)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in seaweed.env().items():
            mp.setenv(k, v)
        s3.reset()
        app = create_app({"c1": str(root)}, archive_roots=[f"s3://{bucket}/crawl/warc"], write_token=TOKEN)
        with ServerThread(app) as srv:
            yield {"root": str(root), "bucket": bucket, "url": srv.url, "src": str(src), "data": data}
    s3.reset()


def post(site, file: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.post(f"{site['url']}/catalogue/files?collection=c1", json={"file": file}, headers=headers, timeout=60)


def state(site) -> tuple:
    index = os.path.join(site["root"], capindex.FOLDER)
    store = os.path.join(site["root"], recordstore.FOLDER)
    keys = LinearHash(store).state()["keys"] if os.path.exists(os.path.join(store, "header")) else 0
    return capindex.read_state(index) if os.path.exists(index) else None, keys


def test_an_s3_object_is_registered_once_and_its_records_are_found(s3site):
    uri = f"s3://{s3site['bucket']}/{KEY}"
    r = post(s3site, uri)
    assert r.status_code == 200, r.text
    got = r.json()
    want = warcio_captures(s3site["src"])
    ts = want[0][1]
    assert got["filename"] == uri and got["records"] == len(want) == 80 and not got["unchanged"]
    assert got["day"] == f"{ts[:4]}-{ts[4:6]}-{ts[6:8]}"  # outside ROOT/warc: the day of its first WARC-Date
    lines = list(capindex.Reader(os.path.join(s3site["root"], capindex.FOLDER)).lines("", "\uffff"))
    have = sorted(
        (o["url"], ln.split(" ")[1], o["offset"], o["length"], o["filename"])
        for ln in lines
        for o in [json.loads(ln.split(" ", 2)[2])]
    )
    assert have == sorted((*w, uri) for w in want)
    # through the CDX server
    url, ts, off, _ = next(w for w in want if w[0].startswith("http://bitchmagazine.org/"))
    r = httpx.get(f"{s3site['url']}/cdx/c1", params={"url": url, "output": "json"}, timeout=30)
    hits = [json.loads(x) for x in r.text.splitlines()]
    assert any(h["timestamp"] == ts and h["offset"] == off and h["filename"] == uri for h in hits)
    # the record store's pointers give back, by ranged reads of the object, the records they name
    with open(s3site["src"], "rb") as f:
        recs = []
        for rec in ArchiveIterator(f):
            if rec.rec_type == "response":
                recs.append((rec.rec_headers.get_header("WARC-Record-ID").strip("<>"), rec.rec_headers))
    store = os.path.join(s3site["root"], recordstore.FOLDER)
    assert len(recs) > 40
    for rid, headers in recs[::5]:
        ptr = recordstore.get(store, rid)
        assert ptr is not None and ptr["warc_file"] == uri
        raw = storage.read_range(ptr["warc_file"], ptr["warc_offset"], ptr["warc_length"])
        rec = next(iter(ArchiveIterator(io.BytesIO(raw))))
        assert rec.rec_headers.get_header("WARC-Record-ID").strip("<>") == rid
        assert rec.rec_headers.get_header("WARC-Target-URI") == headers.get_header("WARC-Target-URI") == ptr["url"]
        digest = headers.get_header("WARC-Payload-Digest")  # 5 of the file's responses carry none
        assert digest is None or rid in digeststore.record_ids(os.path.join(s3site["root"], digeststore.FOLDER), digest)
    # again: nothing changes
    before = state(s3site)
    r = post(s3site, uri)
    assert r.status_code == 200 and r.json()["unchanged"] is True and state(s3site) == before


@pytest.mark.parametrize(
    "key,status,reason",
    [
        ("crawl/warc/cut.warc.gz", 400, "truncated_record"),
        ("crawl/warc/notes.warc.gz", 400, "not_an_archive"),
        ("crawl/warc/missing.warc.gz", 404, "no such object"),
        ("crawl/other/x.warc.gz", 403, "not below an archives root"),
        ("crawl/warc/../other/x.warc.gz", 403, "'..'"),
    ],
)
def test_bad_s3_objects_are_refused_and_change_nothing(s3site, key, status, reason):
    before = state(s3site)
    r = post(s3site, f"s3://{s3site['bucket']}/{key}")
    assert r.status_code == status and reason in r.json()["error"], r.text
    assert state(s3site) == before
