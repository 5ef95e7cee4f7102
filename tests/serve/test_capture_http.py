"""Every hit back to its page, over real HTTP on a day built from real archives: a search hit's
record id gives its payload (SHA-1 = the record's WARC-Payload-Digest, decoded body = warcio's)
and its archive member (one record, read back by warcio); the pointer form reads local and S3
archives below the service's archive roots only; errors name the file, offset and reason."""

from __future__ import annotations

import base64
import hashlib
import io
import shutil
import subprocess

import httpx
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.helpers_browser import chromium

DAY = "2026-02-03"
REAL = ("aut/example.warc.gz", "resiliparse/warcfile.warc.gz")


def _sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def _warcio_record(path: str, offset: int, length: int) -> dict:
    """warcio's reading of the one record at offset: id, type, payload digest, decoded body."""
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    recs = []
    for r in ArchiveIterator(io.BytesIO(data)):
        recs.append(
            {
                "id": r.rec_headers.get_header("WARC-Record-ID").strip("<>"),
                "type": r.rec_type,
                "digest": r.rec_headers.get_header("WARC-Payload-Digest"),
                "body": r.content_stream().read(),
                "raw": r.raw_stream.read(),
            }
        )
    assert len(recs) == 1, f"{path}@{offset}: {len(recs)} records"
    return recs[0]


@pytest.fixture(scope="module")
def real_day(spark, corpus, tmp_path_factory):
    """ROOT/warc/2026-02/03/ holding two real crawl files, preprocessed and indexed."""
    from jobs.index import IndexJob
    from jobs.preprocess import PreprocessJob

    root = tmp_path_factory.mktemp("capture-real") / "root"
    warc = root / "warc" / "2026-02" / "03"
    warc.mkdir(parents=True)
    for name in REAL:
        shutil.copy(corpus / name, warc / name.replace("/", "-"))
    common = ["--date", DAY, "--root", str(root)]
    assert PreprocessJob().main(common, spark=spark) == 0
    assert IndexJob().main(common + ["--no-graph"], spark=spark) == 0
    return root


@pytest.fixture(scope="module")
def archive_bucket(s3_server) -> str:
    from lib.store import s3

    s3.client().create_bucket(Bucket="capture-archives")
    return "capture-archives"


@pytest.fixture(scope="module")
def capture_service(real_day, archive_bucket, tmp_path_factory):
    s3_bucket = archive_bucket
    app = create_app(
        {"dc1": str(real_day)},
        cache_dir=str(tmp_path_factory.mktemp("cap-cache")),
        warm=True,
        archive_roots=[str(real_day / "warc"), f"s3://{s3_bucket}/archives"],
        replay_url="http://pywb.example:8080/day",
    )
    with ServerThread(app) as srv:
        yield srv.url


def test_hit_record_id_gives_its_payload_and_member(capture_service):
    hits = httpx.get(f"{capture_service}/search", params={"q": "archive internet", "day": DAY, "k": 20}).json()[
        "results"
    ]
    assert len(hits) >= 10
    digests = 0
    for h in hits:
        rec = _warcio_record(h["warc_file"].removeprefix("file://"), h["warc_offset"], h["warc_length"])
        assert rec["id"] == h["record_id"]
        assert h["content_url"] == h["capture_url"] + "?contentonly=true"
        raw = httpx.get(capture_service + h["content_url"] + "&decode=false")
        assert raw.status_code == 200, raw.text
        assert raw.headers["x-record-id"] and raw.headers["x-day"] == DAY and raw.headers["x-data-center"] == "dc1"
        if rec["digest"]:
            assert _sha1_b32(raw.content) == rec["digest"] == raw.headers["x-payload-digest"]
            digests += 1
        decoded = httpx.get(capture_service + h["content_url"])
        assert decoded.content == rec["body"]
        member = httpx.get(capture_service + h["capture_url"])
        assert member.status_code == 200 and member.headers["content-type"] == "application/warc"
        assert "attachment" in member.headers["content-disposition"]
        assert int(member.headers["content-length"]) == h["warc_length"] == len(member.content)
        again = list(ArchiveIterator(io.BytesIO(member.content)))
        assert len(again) == 1 and again[0].rec_headers.get_header("WARC-Record-ID").strip("<>") == h["record_id"]
    assert digests >= 10  # the payload digests held, not skipped


def test_pointer_form_reads_local_and_s3_archives_below_the_roots(capture_service, real_day, archive_bucket):
    s3_bucket = archive_bucket
    from lib.store import s3

    hit = httpx.get(f"{capture_service}/search", params={"q": "archive", "day": DAY}).json()["results"][0]
    path = hit["warc_file"].removeprefix("file://")
    rec = _warcio_record(path, hit["warc_offset"], hit["warc_length"])
    params = {"offset": hit["warc_offset"], "length": hit["warc_length"], "contentonly": "true"}
    local = httpx.get(f"{capture_service}/capture", params={"file": hit["warc_file"], **params})
    assert local.status_code == 200 and local.content == rec["body"]
    key = "archives/x/" + path.rsplit("/", 1)[1]
    s3.client().upload_file(path, s3_bucket, key)
    remote = httpx.get(f"{capture_service}/capture", params={"file": f"s3://{s3_bucket}/{key}", **params})
    assert remote.status_code == 200, remote.text
    assert remote.content == rec["body"]
    member = httpx.get(
        f"{capture_service}/capture",
        params={"file": f"s3://{s3_bucket}/{key}", "offset": hit["warc_offset"], "length": hit["warc_length"]},
    )
    assert member.content == open(path, "rb").read()[hit["warc_offset"] : hit["warc_offset"] + hit["warc_length"]]


def test_bad_captures_are_clear_errors(capture_service, real_day, archive_bucket, tmp_path):
    s3_bucket = archive_bucket
    hit = httpx.get(f"{capture_service}/search", params={"q": "archive", "day": DAY}).json()["results"][0]
    f, off, n = hit["warc_file"], hit["warc_offset"], hit["warc_length"]

    def get(**p):
        return httpx.get(f"{capture_service}/capture", params=p)

    r = httpx.get(f"{capture_service}/capture/urn:uuid:00000000-0000-0000-0000-000000000000")
    assert r.status_code == 404 and "no published page has record id" in r.json()["error"]
    outside = tmp_path / "elsewhere.warc.gz"
    shutil.copy(f.removeprefix("file://"), outside)
    r = get(file=str(outside), offset=off, length=n)
    assert r.status_code == 403 and "not below an archive root" in r.json()["error"]
    r = get(file=str(real_day / "warc" / ".." / "index" / "x"), offset=0, length=10)
    assert r.status_code == 403
    r = get(file=f"s3://{s3_bucket}/archives/../secret.warc.gz", offset=0, length=10)
    assert r.status_code == 403
    r = get(file=f, offset=off + 1, length=n)
    body = r.json()
    assert r.status_code == 400 and body["reason"] == "not-record" and body["offset"] == off + 1
    assert f.removeprefix("file://") in body["error"]
    r = get(file=f, offset=off, length=10**12)
    assert r.status_code == 400 and r.json()["reason"] == "past-eof"
    r = get(file=str(real_day / "warc" / "2026-02" / "03" / "missing.warc.gz"), offset=0, length=10)
    assert r.status_code == 404 and r.json()["reason"] == "missing-file"
    r = get(file=f, offset=-1, length=n)
    assert r.status_code == 400


def test_pointer_form_is_off_without_archive_roots(real_day, tmp_path):
    app = create_app({"dc1": str(real_day)}, cache_dir=str(tmp_path / "c"))
    with ServerThread(app) as srv:
        r = httpx.get(f"{srv.url}/capture", params={"file": str(real_day / "warc"), "offset": 0, "length": 1})
        assert r.status_code == 403 and "--archives" in r.json()["error"]


def test_page_links_hits_to_their_capture_and_to_pywb(capture_service, tmp_path):
    cmd = chromium(tmp_path, "--virtual-time-budget=15000")
    want = httpx.get(f"{capture_service}/search", params={"q": "archive", "day": DAY}).json()["results"]
    cmd += ["--dump-dom", f"{capture_service}/?q=archive&day={DAY}"]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    assert want
    for h in want:
        ts = "".join(c for c in h["warc_date"] if c.isdigit())[:14]
        assert f'class="replay" href="http://pywb.example:8080/day/{ts}/{h["url"]}"' in dom
        assert f'class="capture" href="{h["capture_url"]}"' in dom


def test_an_excluded_page_is_withheld_from_search_and_capture(real_day, tmp_path):
    """A take-down on the root's list applies to a running day at once: the page is no hit (the
    next best fill the k), the search counts what it withheld, and its capture answers 451 by
    record id and by pointer. Runs last: it writes the root's list and removes it after."""
    app = create_app(
        {"dc1": str(real_day)}, cache_dir=str(tmp_path / "c1"), warm=True, archive_roots=[str(real_day / "warc")]
    )
    params = {"q": "archive internet", "day": DAY, "k": 10}
    with ServerThread(app) as srv:
        before = httpx.get(f"{srv.url}/search", params=params).json()
    victim = before["results"][0]
    assert before["meta"]["excluded"] == 0
    rules = real_day / "_exclusions.jsonl"
    rules.write_text('{"url": "%s", "date": "2026-11-25", "reason": "test take-down"}\n' % victim["url"])
    try:
        app = create_app(
            {"dc1": str(real_day)}, cache_dir=str(tmp_path / "c2"), warm=True, archive_roots=[str(real_day / "warc")]
        )
        with ServerThread(app) as srv:
            after = httpx.get(f"{srv.url}/search", params=params).json()
            assert victim["url"] not in {h["url"] for h in after["results"]}
            assert after["meta"]["excluded"] >= 1
            assert len(after["results"]) == len(before["results"])  # the next best take its place
            assert [h["record_id"] for h in after["results"][:9]] == [
                h["record_id"] for h in before["results"][1:] if h["url"] != victim["url"]
            ][:9]
            by_id = httpx.get(srv.url + victim["content_url"])
            assert by_id.status_code == 451 and by_id.json()["reason"] == "excluded"
            by_pointer = httpx.get(
                f"{srv.url}/capture",
                params={"file": victim["warc_file"], "offset": victim["warc_offset"], "length": victim["warc_length"]},
            )
            assert by_pointer.status_code == 451 and by_pointer.json()["url"] == victim["url"]
            other = after["results"][0]
            assert httpx.get(srv.url + other["content_url"]).status_code == 200
    finally:
        rules.unlink()
