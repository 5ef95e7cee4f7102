"""--output-format warc: ARC records written as WARC, held against warcio's ARC-to-WARC conversion
(``warcio recompress``) on real ARC files, end to end through the extract job."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil

import pytest
from fastwarc.warc import ArchiveIterator as FastWarcIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator
from warcio.recompressor import Recompressor

from jobs.extract import ExtractJob
from lib.extract.driver import MANIFEST
from lib.extract.record_list import record_ranges
from tests.extract.test_extract_formats import CONFORMANCE

#: well-formed real ARC files (broken ones, where warcio's conversion itself is garbage, and
#: warcio/example-space-in-url.arc, whose last record is 10 bytes shorter than declared, are left out)
ARCS = (
    "warcio/example.arc",
    "warcio/example.arc.gz",
    "jwat/small_BNF.arc",
    "jwat/1-1-20110922131213-00000-svc-VirtualBox.arc",
    "tika/testARC.arc",
    "webarchive-go/hello-world.arc",
    "webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated.arc.gz",
)
IGNORED = ("WARC-Record-ID", "Content-Length", "WARC-Block-Digest")


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def warc_records(data: bytes) -> list[dict]:
    out = []
    for r in ArchiveIterator(io.BytesIO(data)):
        http = r.http_headers.headers if r.http_headers else None
        payload = r.content_stream().read() if r.rec_type == "response" else r.raw_stream.read()
        out.append(dict(headers=r.rec_headers.headers, http=http, payload=payload))
    return out


@pytest.fixture(scope="module")
def arc_root(corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("arc2warc") / "arcs"
    root.mkdir()
    shutil.copy(corpus / "aut" / "example.arc.gz", root / "aut.arc.gz")
    shutil.copy(corpus / "aut" / "example.warc.gz", root / "aut.warc.gz")  # WARC input: copied as it is
    for i, rel in enumerate(ARCS):
        shutil.copy(os.path.join(CONFORMANCE, rel), root / f"{i}-{os.path.basename(rel)}")
    return root


@pytest.mark.slow
def test_arc_to_warc_matches_warcio(spark, arc_root, tmp_path):
    lines, expected = [], {}
    for name in sorted(os.listdir(arc_root)):
        path = str(arc_root / name)
        ranges = list(record_ranges(path))
        if name.endswith(".warc.gz"):
            lines += [f"{r.url}\t{name}\t{r.offset}\t{r.length}" for r in ranges[1::40]]
            continue
        converted = tmp_path / f"{name}.warcio.warc.gz"
        Recompressor(path, str(converted)).load_and_write(open(path, "rb"), str(converted))
        theirs = warc_records(converted.read_bytes())
        assert len(theirs) == len(ranges), name
        for r, t in zip(ranges, theirs):
            lines.append(f"{r.url}\t{name}\t{r.offset}\t{r.length}")
            expected[(path, r.offset)] = t
    tsv = tmp_path / "list.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    rc = ExtractJob().main(
        ["--tsv", str(tsv), "--archives", str(arc_root), "--output", str(out), "--output-format", "warc", "--verify"],
        spark=spark,
    )
    assert rc == 0
    names = sorted(n for n in os.listdir(out) if n.startswith("extract-"))
    assert {n.split(".", 1)[1] for n in names} == {"warc.gz"}
    rows = [line.rstrip("\n").split("\t") for line in open(out / MANIFEST) if not line.startswith("#")]
    assert len(rows) == len(lines)
    files = {n: (out / n).read_bytes() for n in names}
    compared = copied = same_length = 0
    for url, name, off, n, _, src, src_off in rows:
        member = files[name][int(off) : int(off) + int(n)]
        key = (src.removeprefix("file://"), int(src_off))
        if key not in expected:  # a WARC record: copied byte for byte
            assert member == open(key[0], "rb").read()[key[1] : key[1] + int(n)]
            copied += 1
            continue
        (ours,) = warc_records(member)
        theirs = expected[key]
        strip = lambda h: [(k, v) for k, v in h if k not in IGNORED]  # noqa: E731
        assert strip(ours["headers"]) == strip(theirs["headers"]), key
        assert ours["payload"] == theirs["payload"] and ours["http"] == theirs["http"], key
        # our block is the ARC record's block byte for byte; warcio re-serialises the HTTP head
        # FastWARC verifies both digests (the block without parsing HTTP, the payload with)
        fast = FastWarcIterator(io.BytesIO(member), record_types=WarcRecordType.any_type, parse_http=False)
        assert next(iter(fast)).verify_block_digest(), key
        fast = next(iter(FastWarcIterator(io.BytesIO(member), record_types=WarcRecordType.any_type)))
        same = dict(ours["headers"])["Content-Length"] == dict(theirs["headers"])["Content-Length"]
        # FastWARC parses a dns: record's block as HTTP too and needs CRLF heads; warcio and we do not
        if url.startswith("http") and same:
            assert fast.verify_payload_digest(), key
        same_length += same
        compared += 1
    assert compared == len(expected) and copied > 0 and same_length > compared // 2
    # the manifest is a list again, now of WARC records; --verify holds each record's URL to
    # the line's (a file header became a warcinfo record, which has no target URI: left out)
    again = tmp_path / "again.tsv"
    again.write_text("".join(line for line in open(out / MANIFEST) if not line.startswith(("#", "filedesc:"))))
    out2 = tmp_path / "again"
    rc = ExtractJob().main(
        ["--tsv", str(again), "--archives", str(out), "--output", str(out2), "--verify"], spark=spark
    )
    assert rc == 0
