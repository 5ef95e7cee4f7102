"""Archive reading: exact member offsets, ARC, uncompressed WARC, and every kind of damage."""

from __future__ import annotations

import io
import zlib

import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.warc.records import BadRecord, Record, iter_records
from tests.helpers_warc import good_pages, gz, http_response, warc_gz, warc_record


def records(data: bytes, name: str = "t.warc.gz", cap: int = 10 << 20):
    return list(iter_records(io.BufferedReader(io.BytesIO(data)), name, max_content=cap))


def test_member_offsets_are_byte_exact():
    pages = good_pages(5)
    members = [gz(r) for _, r in pages]
    data = b"".join(members)
    out = records(data)
    assert all(isinstance(r, Record) for r in out)
    pos = 0
    for (url, _), m, r in zip(pages, members, out):
        assert (r.offset, r.length) == (pos, len(m))
        assert r.url == url
        # the byte range alone is a valid one-record archive
        assert zlib.decompress(data[r.offset : r.offset + r.length], 31).startswith(b"WARC/1.1")
        pos += len(m)


@pytest.mark.parametrize(
    "name",
    [
        "aut/example.warc.gz",
        "ipwb/sample-1.warc.gz",
        "resiliparse/warcfile.warc.gz",
        "dolma/sample-0000.warc.gz",
        "aut/example.arc.gz",
        "aut/issue-493.warc",
    ],
)
def test_offsets_agree_with_warcio_on_real_crawls(corpus, name):
    path = corpus / name
    with open(path, "rb") as f:
        ours = [r for r in iter_records(f, str(path)) if isinstance(r, Record)]
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=True)
        theirs = []
        for rec in it:
            rec.content_stream().read()
            theirs.append(
                (it.get_record_offset(), it.get_record_length(), rec.rec_headers.get_header("WARC-Target-URI"))
            )
    assert len(ours) == len(theirs) > 0
    for r, (off, length, url) in zip(ours, theirs):
        assert r.offset == off
        if not name.endswith(".warc"):  # warcio counts trailing CRLFs differently for plain files
            assert r.length == length
        if r.rec_type != "warcinfo":
            assert r.url == url


def test_plain_warc_offsets_cover_the_record():
    recs = [r for _, r in good_pages(3)]
    data = b"".join(recs)
    out = records(data, "t.warc")
    assert [(r.offset, r.length) for r in out] == [(sum(map(len, recs[:i])), len(recs[i])) for i in range(3)]


def test_truncated_last_member_keeps_the_records_before_it_and_what_is_left_of_it():
    data = warc_gz([r for _, r in good_pages(4)])
    cut = data[: len(data) - 30]
    out = records(cut)
    assert all(isinstance(r, Record) for r in out)  # the cut is the last record's warning, not a failure
    assert [r.url for r in out] == [u for u, _ in good_pages(4)]
    last = out[-1]
    assert last.truncated and not any(r.truncated for r in out[:-1])
    assert [w[0] for w in last.warnings] in (["truncated_record"], ["truncated_member"])
    # its byte range runs to the end of the file, so extraction copies what there is
    assert last.offset == out[-2].offset + out[-2].length and last.offset + last.length == len(cut)


def test_truncated_header_is_a_failure():
    data = warc_gz([r for _, r in good_pages(2)])
    second = len(gz(good_pages(2)[0][1]))
    cut = data[:second] + gz(good_pages(2)[1][1][:40])[:-8]  # member cut inside the WARC header
    out = records(cut)
    assert isinstance(out[0], Record) and isinstance(out[1], BadRecord)
    assert out[1].reason == "truncated_gzip_member" and out[1].offset == second


def test_corrupt_member_in_the_middle_resyncs_on_the_next_one():
    members = [gz(r) for _, r in good_pages(5)]
    broken = bytearray(members[2])
    broken[20:60] = b"\xff" * 40  # destroy deflate data, keep the gzip header
    data = b"".join(members[:2]) + bytes(broken) + b"".join(members[3:])
    out = records(data)
    urls = [r.url for r in out if isinstance(r, Record)]
    assert urls == [u for i, (u, _) in enumerate(good_pages(5)) if i != 2]
    bad = [r for r in out if isinstance(r, BadRecord)]
    assert [b.reason for b in bad] == ["corrupt_gzip_member"]
    assert bad[0].offset == len(members[0]) + len(members[1])


def test_garbage_between_members_is_reported_and_skipped():
    members = [gz(r) for _, r in good_pages(3)]
    data = members[0] + b"JUNKJUNKJUNK" + members[1] + members[2]
    out = records(data)
    assert [r.url for r in out if isinstance(r, Record)] == [u for u, _ in good_pages(3)]
    bad = [r for r in out if isinstance(r, BadRecord)]
    assert len(bad) == 1 and bad[0].reason == "gzip_garbage" and bad[0].offset == len(members[0])


def test_file_that_is_not_an_archive():
    out = records(b"<html>this is not a WARC file</html>" * 10)
    assert len(out) == 1 and out[0].reason == "not_an_archive" and out[0].offset == 0


def test_uncompressed_warc_named_gz_is_still_read():
    data = b"".join(r for _, r in good_pages(2))
    out = records(data, "mislabelled.warc.gz")
    assert [r.offset for r in out] == [0, len(good_pages(2)[0][1])]


def test_malformed_warc_header_in_one_member_loses_only_that_record():
    recs = [r for _, r in good_pages(3)]
    recs[1] = recs[1].replace(b"Content-Length:", b"Content-Lenght:")
    out = records(warc_gz(recs))
    assert [type(r).__name__ for r in out] == ["Record", "BadRecord", "Record"]
    assert out[1].reason == "malformed_warc_header" and "Content-Length" in out[1].detail
    assert out[1].offset == len(gz(recs[0]))


def test_malformed_header_in_plain_warc_resyncs():
    recs = [r for _, r in good_pages(3)]
    recs[1] = recs[1].replace(b"WARC/1.1\r\n", b"WRAC/9.9\r\n", 1)
    out = records(b"".join(recs), "t.warc")
    assert [r.url for r in out if isinstance(r, Record)] == [good_pages(3)[0][0], good_pages(3)[2][0]]
    assert [r.reason for r in out if isinstance(r, BadRecord)] == ["malformed_warc_header"]


def test_oversized_record_is_cut_not_held():
    big = http_response(b"<html><body>" + b"x" * (3 << 20) + b"</body></html>")
    out = records(warc_gz([warc_record("http://big.example/", big)] + [r for _, r in good_pages(1)]), cap=1 << 20)
    assert out[0].oversized and len(out[0].content) == 1 << 20 and out[0].content_length == len(big)
    assert isinstance(out[1], Record) and not out[1].oversized


def test_several_records_in_one_member_have_no_byte_range(corpus):
    path = corpus / "aut" / "badexample.arc.gz"
    with open(path, "rb") as f:
        out = list(iter_records(f, str(path)))
    recs = [r for r in out if isinstance(r, Record)]
    assert recs and all(r.offset is None and [w[0] for w in r.warnings] == ["multi_record_member"] for r in recs)


def test_arc_records_and_filedesc(corpus):
    path = corpus / "aut" / "example.arc.gz"
    with open(path, "rb") as f:
        out = list(iter_records(f, str(path)))
    assert out[0].rec_type == "warcinfo" and out[0].url.startswith("filedesc://")
    responses = [r for r in out[1:] if isinstance(r, Record)]
    assert len(responses) == 299 and all(r.date is not None and r.record_id.startswith("<urn:uuid:") for r in responses)
