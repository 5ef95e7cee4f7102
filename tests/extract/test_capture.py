"""open_capture: one record by (file, offset, length), as stored or as its payload, local and on
S3, held against warcio over the real archives (payload digests, decoded bodies)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil

import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.store import s3
from lib.extract.capture import CaptureError, open_capture
from lib.warc.records import Record, iter_records
from tests.extract.test_extract_formats import CONFORMANCE, zstd_warc

CONFORMANCE_FILES = ("resiliparse/warcfile.warc.lz4", "tika/testARC.arc", "warcio/example.arc",
                     "webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated.arc.gz",
                     "webarchive-discovery/transfer_compression_gzip.warc", "warcio/example-iana.org-chunked.warc")


def sha1_matches(data: bytes, digest: str) -> bool:
    """``digest`` (``sha1:`` + base32, or base16 as some writers put it) is ``data``'s SHA-1."""
    h = hashlib.sha1(data).digest()
    value = digest.split(":", 1)[1].strip()
    return value.upper() == base64.b32encode(h).decode() or value.lower() == h.hex()


def warcio_view(path: str) -> dict[int, tuple]:
    """warcio's records by offset: (type, decoded payload, whether its digest check passed).
    Only files whose members are one record each, so warcio's offsets are ours."""
    out = {}
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=True, check_digests=True)
        try:
            for r in it:
                body = r.content_stream().read()
                out[it.get_record_offset()] = (r.rec_type, body, r.digest_checker.passed)
        except Exception:
            pass  # warcio gives up on some damaged files: compare what it read
    return out


def records(path: str) -> list[Record]:
    with open(path, "rb") as f:
        return [r for r in iter_records(f, path) if isinstance(r, Record) and r.offset is not None]


def check_file(uri: str, local: str, warcio: dict | None, step: int = 1) -> dict[str, int]:
    """Every addressable record of ``local`` (served from ``uri``): the member as stored is
    the file's bytes; the undecoded payload's SHA-1 is its WARC-Payload-Digest unless warcio
    also finds that digest wrong; the decoded payload is warcio's ``content_stream()``."""
    data = open(local, "rb").read()
    n = {"records": 0, "digests": 0, "decoded": 0}
    for rec in records(local)[::step]:
        n["records"] += 1
        c = open_capture(uri, rec.offset, rec.length)
        assert c.read() == data[rec.offset : rec.offset + rec.length]
        assert c.content_type == ("application/warc" if rec.fmt == "warc" else "application/x-arc")
        raw = open_capture(uri, rec.offset, rec.length, content_only=True, decode=False)
        body = raw.read()
        digest = rec.headers.get("warc-payload-digest", "")
        if digest.startswith("sha1:") and rec.rec_type in ("response", "resource"):
            ok = warcio[rec.offset][2] if warcio and rec.offset in warcio else True
            assert sha1_matches(body, digest) == (ok is not False), (local, rec.offset)
            n["digests"] += ok is not False
        if warcio and rec.offset in warcio and rec.rec_type in ("response", "resource"):
            decoded = open_capture(uri, rec.offset, rec.length, content_only=True)
            assert decoded.read() == warcio[rec.offset][1], (local, rec.offset)
            assert decoded.rec_type == warcio[rec.offset][0] and decoded.url == rec.url
            n["decoded"] += 1
    return n


def corpus_files(corpus) -> list[str]:
    files = sorted(str(p) for p in corpus.glob("*/*") if p.suffix != ".md" and "badexample" not in p.name)
    return files + [os.path.join(CONFORMANCE, f) for f in CONFORMANCE_FILES]


def test_every_record_of_the_real_archives_local(corpus):
    total = {"records": 0, "digests": 0, "decoded": 0}
    for path in corpus_files(corpus):
        is_lz4 = path.endswith(".lz4")  # warcio does not read LZ4: the same records' .gz twin is checked
        n = check_file(path, path, None if is_lz4 else warcio_view(path))
        for k in total:
            total[k] += n[k]
    assert total["records"] > 1500 and total["digests"] > 400 and total["decoded"] > 800


def test_zstd_with_dictionary_and_from_s3(corpus, s3_bucket, tmp_path):
    src = corpus / "resiliparse" / "warcfile.warc.gz"
    zst = tmp_path / "w.warc.zst"
    zst.write_bytes(zstd_warc(str(src), with_dict=True))
    gz_records = {r.url + r.rec_type: r for r in records(str(src))}
    gz_warcio = warcio_view(str(src))
    for rec in records(str(zst)):
        twin = gz_records[rec.url + rec.rec_type]
        got = open_capture(str(zst), rec.offset, rec.length, content_only=True).read()
        want = open_capture(str(src), twin.offset, twin.length, content_only=True).read()
        assert got == want
        if rec.rec_type == "response":
            assert got == gz_warcio[twin.offset][1]
    for path in (str(src), str(zst), str(corpus / "aut" / "example.arc.gz"), os.path.join(CONFORMANCE, "tika", "testARC.arc")):
        key = f"arch/{os.path.basename(path)}"
        s3.client().upload_file(path, s3_bucket, key)
        uri = f"s3://{s3_bucket}/{key}"
        n = check_file(uri, path, warcio_view(path) if not path.endswith(".zst") else None, step=7)
        assert n["records"] > 0
    # a path below a root, S3 or local
    rec = records(str(src))[2]
    assert open_capture("arch/warcfile.warc.gz", rec.offset, rec.length, root=f"s3://{s3_bucket}").read() == \
        src.read_bytes()[rec.offset : rec.offset + rec.length]


def test_bad_offsets_name_file_and_offset(corpus, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(corpus / "aut" / "example.warc.gz", root / "a.warc.gz")
    shutil.copy(corpus / "aut" / "issue-493.warc", root / "b.warc")
    (root / "notes.txt").write_bytes(b"no archive here\n" * 10)
    path = str(root / "a.warc.gz")
    size = os.path.getsize(path)
    rec = records(path)[5]
    plain = records(str(root / "b.warc"))[3]
    cases = [
        (dict(file=path, offset=size - 10, length=100), "past-eof"),
        (dict(file=path, offset=size + 5, length=1), "past-eof"),
        (dict(file=path, offset=rec.offset + 1, length=rec.length), "not-record"),
        (dict(file=path, offset=rec.offset + 1, length=rec.length, content_only=True), "not-record"),
        (dict(file=str(root / "b.warc"), offset=plain.offset + 7, length=50), "not-record"),
        (dict(file=str(root / "b.warc"), offset=plain.offset, length=plain.length - 40, content_only=True), "not-record"),
        (dict(file=str(root / "missing.warc.gz"), offset=0, length=10), "missing-file"),
        (dict(file=str(root / "notes.txt"), offset=0, length=10), "not-archive"),
        (dict(file=path, offset=-1, length=10), "bad-range"),
        (dict(file="../a.warc.gz", offset=0, length=10, root=str(root / "sub")), "escapes-root"),
    ]
    for kw, reason in cases:
        with pytest.raises(CaptureError) as e:
            open_capture(**kw)
        assert e.value.reason == reason, kw
        if reason not in ("escapes-root",):
            assert f"at offset {kw['offset']}" in str(e.value) and os.path.basename(kw["file"]) in str(e.value)


def test_stream_is_chunked_and_ranged(corpus, monkeypatch):
    import lib.extract.capture as capture

    path = str(corpus / "aut" / "example.pdf.warc.gz")
    rec = max(records(path), key=lambda r: r.length)
    monkeypatch.setattr(capture, "CHUNK", 4096)
    chunks = list(open_capture(path, rec.offset, rec.length))
    assert len(chunks) == -(-rec.length // 4096) and all(len(c) <= 4096 for c in chunks)
    assert b"".join(chunks) == open(path, "rb").read()[rec.offset : rec.offset + rec.length]
    body = open_capture(path, rec.offset, rec.length, content_only=True)
    assert body.content_type and body.size == len(body.read()) and body.status == 200
    assert isinstance(io.BytesIO(b"".join(open_capture(path, rec.offset, rec.length))), io.BytesIO)
