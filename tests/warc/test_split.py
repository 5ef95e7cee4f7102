"""member_start against warcio's record offsets, on real multi-member archives of many producers."""

from __future__ import annotations

import bisect
import gzip
import hashlib
import io
import pathlib

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from lib.store.storage import Prefixed
from lib.warc.records import BadRecord, iter_records
from lib.warc.split import begins_record, find_member, member_start
from lib.warc.streams import GZIP_MAGIC

CONFORMANCE = pathlib.Path(__file__).resolve().parent.parent / "data" / "conformance"


def warcio_offsets(path: pathlib.Path) -> list[int] | None:
    """Every record's offset as warcio reports it; None when warcio cannot read the file."""
    offsets = []
    try:
        with open(path, "rb") as f:
            it = ArchiveIterator(f)
            for _ in it:
                offsets.append(it.get_record_offset())
    except ArchiveLoadFailed:
        return None
    return offsets


def gz_warcs(corpus: pathlib.Path) -> list[pathlib.Path]:
    files = [
        p for root in (corpus, CONFORMANCE) for p in sorted(root.rglob("*")) if p.name.lower().endswith(".warc.gz")
    ]
    return [p for p in files if p.is_file()]


class ForwardOnly(io.RawIOBase):
    """A stream that cannot seek, as an S3 object read from an offset."""

    def __init__(self, data: bytes):
        self._f = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        data = self._f.read(min(len(b), 7000))  # short reads, as a network stream gives
        b[: len(data)] = data
        return len(data)


def test_member_start_equals_warcio_offsets(corpus):
    files = gz_warcs(corpus)
    checked = false_candidates = 0
    for path in files:
        offsets = warcio_offsets(path)
        if not offsets:
            continue
        data = path.read_bytes()
        size = len(data)
        probes = set(range(0, size, max(1, size // 29)))
        probes |= {o + d for o in offsets[:40] for d in (-1, 0, 1)} | {size - 1, size}
        for off in sorted(p for p in probes if 0 <= p <= size):
            i = bisect.bisect_left(offsets, off)
            want = offsets[i] if i < len(offsets) else None
            assert member_start(path, off) == want, f"{path} from {off}"
            checked += 1
        # an end bound: nothing at or after it is returned
        for a, b in zip(offsets, offsets[1:8]):
            assert member_start(path, a + 1, b) is None and member_start(path, a + 1, b + 1) == b
        # a forward-only stream positioned at the offset gives the same answer
        mid = size // 2
        i = bisect.bisect_left(offsets, mid)
        want = offsets[i] if i < len(offsets) else None
        assert member_start(ForwardOnly(data[mid:]), mid) == want
        # and the bytes it read from there on, put back in front of the rest, are the file's
        stream = ForwardOnly(data[mid:])
        at, head = find_member(stream, mid)
        assert at == want and (at is None or head + stream.read() == data[at:])
        # the magic found inside compressed data is rejected by the decompression check
        starts = set(offsets)
        j = data.find(GZIP_MAGIC)
        while j >= 0:
            if j not in starts:
                assert not begins_record(data[j : j + (1 << 16)]), f"{path}: false candidate at {j} accepted"
                false_candidates += 1
            j = data.find(GZIP_MAGIC, j + 1)
    assert checked > 1000
    assert len(files) >= 20
    assert false_candidates > 0  # the check was really exercised


def test_single_member_gzip_has_no_start_after_zero(corpus, tmp_path):
    plain = sorted(corpus.rglob("*.warc"))
    assert plain, "no uncompressed WARC in the corpus"
    src = plain[0].read_bytes()
    path = tmp_path / "one-member.warc.gz"
    path.write_bytes(gzip.compress(src))  # one member for the whole file
    assert member_start(path, 0) == 0
    for off in (1, 100, path.stat().st_size // 2, path.stat().st_size):
        assert member_start(path, off) is None


@pytest.mark.parametrize("data", [b"", b"\x1f\x8b\x08", b"WARC/1.0\r\n", gzip.compress(b"HTTP/1.1 200 OK\r\n")])
def test_nothing_to_start_from(tmp_path, data):
    path = tmp_path / "x.warc.gz"
    path.write_bytes(data)
    assert member_start(path, 0) is None


def record_keys(items) -> list[tuple]:
    """What a read must give whichever way the file is cut: every record's and every damage's fields."""
    out = []
    for r in items:
        if isinstance(r, BadRecord):
            out.append(("bad", r.offset, r.reason))
        else:
            digest = hashlib.sha1(r.content).hexdigest()
            out.append((r.offset, r.length, r.record_id, r.url, r.rec_type, r.truncated, tuple(r.warnings), digest))
    return out


def read_by_ranges(path: pathlib.Path, range_bytes: int, forward: bool = False) -> list[tuple]:
    """The records of ``path`` read range by range, as the preprocess tasks read a split archive;
    ``forward``: each range from a forward-only stream at its start (an S3 object's), one stream
    for the search and the reading, as the tasks do."""
    size = path.stat().st_size
    data = path.read_bytes() if forward else b""
    out: list[tuple] = []
    for a in range(0, size, range_bytes):
        end = a + range_bytes if a + range_bytes < size else None
        if forward:
            raw = ForwardOnly(data[a:])
            begin, head = (0, b"") if a == 0 else find_member(raw, a, end)
            if begin is not None:
                with io.BufferedReader(Prefixed(head, raw)) as f:
                    out += record_keys(iter_records(f, str(path), start=begin, stop=end))
            continue
        begin = 0 if a == 0 else member_start(path, a, end)
        if begin is None:
            continue
        with open(path, "rb") as f:
            f.seek(begin)
            out += record_keys(iter_records(f, str(path), start=begin, stop=end))
    return out


@pytest.mark.parametrize("range_bytes", [1 << 16, 5000])
def test_ranges_read_what_the_whole_file_reads(corpus, range_bytes):
    ranged = 0
    for path in gz_warcs(corpus):
        with open(path, "rb") as f:
            whole = record_keys(iter_records(f, str(path)))
        assert read_by_ranges(path, range_bytes) == whole, path
        assert read_by_ranges(path, range_bytes, forward=True) == whole, path
        ranged += path.stat().st_size > range_bytes
    assert ranged >= 10


def test_single_member_file_is_read_by_its_first_range(corpus, tmp_path):
    src = sorted(corpus.rglob("*.warc"))[0].read_bytes()
    path = tmp_path / "one-member.warc.gz"
    path.write_bytes(gzip.compress(src))
    with open(path, "rb") as f:
        whole = record_keys(iter_records(f, str(path)))
    assert len(whole) > 3 and read_by_ranges(path, 4096) == whole


def test_only_gzip_is_read_by_range(corpus):
    with open(sorted(corpus.rglob("*.warc"))[0], "rb") as f, pytest.raises(ValueError, match="by byte range"):
        list(iter_records(f, "x.warc", start=100))
