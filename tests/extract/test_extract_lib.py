"""Record-level extraction (lib/extract) without Spark: parsing, path checks, reading,
writing, rolling, verification. Archives are written here with warcio, so the expected
bytes come from an independent writer."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from lib.extract.archive import arc_filedesc_record, gzip_member, header_bytes
from lib.extract.driver import plan_tasks
from lib.extract.formats import ArchiveFormat
from lib.extract.lines import ExtractError, Item, Resolver, parse_lines
from lib.extract.record_list import record_ranges
from lib.extract.sources import plan_runs
from lib.extract.task import extract_items
from lib.extract.verify import RecordCheck
from lib.store import atomic

URLS = [f"http://example.org/page/{i}" for i in range(12)]


def write_warc(path, urls=URLS, gz=True, body_size=300):
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=gz)
        w.write_record(w.create_warcinfo_record(os.path.basename(path), {"software": "test"}))
        for i, url in enumerate(urls):
            body = (f"<html><title>{i}</title>" + "x" * (body_size + 37 * i) + "</html>").encode()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
    return [r for r in record_ranges(str(path)) if r.rec_type == "response"]


def tsv_lines(ranges, name):
    return [f"{r.url}\t{name}\t{r.offset}\t{r.length}" for r in ranges]


def read_manifest_part(path):
    rows = []
    with open(path) as f:
        for line in f:
            url, name, off, n, line_no, src, src_off = line.rstrip("\n").split("\t")
            rows.append((url, name, int(off), int(n), int(line_no), src, int(src_off)))
    return rows


def archives_in(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith((".warc.gz", ".arc.gz", ".warc")))


@pytest.fixture
def archive_root(tmp_path):
    root = tmp_path / "archives"
    (root / "sub").mkdir(parents=True)
    ranges = write_warc(root / "sub" / "a.warc.gz")
    return root, ranges


# ------------------------------------------------------------------ parsing and paths
def test_parse_lines_numbers_skips_and_rejects(archive_root):
    root, ranges = archive_root
    good = tsv_lines(ranges[:2], "sub/a.warc.gz")
    lines = [
        "# comment",
        good[0],
        "",
        "   ",
        good[1] + "\textra\tcolumns",
        "only\ttwo",
        "u\tsub/a.warc.gz\tten\t5",
        "u\tsub/a.warc.gz\t-1\t5",
        "u\tsub/a.warc.gz\t0\t0",
        "u\tsub/a.txt\t0\t5",
        "\tsub/a.warc.gz\t0\t5",
    ]
    items, errors = parse_lines(lines, Resolver(str(root)))
    # the file name decides nothing (the task sniffs the format): line 10 is parsed
    assert [(it.line_no, it.url, it.offset, it.length) for it in items] == [
        (2, ranges[0].url, ranges[0].offset, ranges[0].length),
        (5, ranges[1].url, ranges[1].offset, ranges[1].length),
        (10, "u", 0, 5),
    ]
    assert items[0].uri == str(root / "sub" / "a.warc.gz")
    assert [(no, reason.split(":")[0]) for no, _, reason in errors] == [
        (6, "bad-line"),
        (7, "bad-line"),
        (8, "bad-line"),
        (9, "bad-line"),
        (11, "bad-line"),
    ]
    assert errors[1][1] == "u\tsub/a.warc.gz\tten\t5"
    assert "offset is not an integer" in errors[1][2]


@pytest.mark.parametrize(
    "archive_file, ok",
    [
        ("sub/a.warc.gz", True),
        ("../a.warc.gz", False),
        ("sub/../../etc/x.warc.gz", False),
        ("sub/../sub/a.warc.gz", False),  # any '..' is refused, even one that stays inside
        ("/etc/x.warc.gz", False),
        ("file:///etc/x.warc.gz", False),
        ("s3://bucket/x.warc.gz", False),
        ("ftp://host/x.warc.gz", False),
    ],
)
def test_resolver_local_root(tmp_path, archive_file, ok):
    r = Resolver(str(tmp_path))
    if ok:
        assert r.resolve(archive_file) == str(tmp_path / archive_file)
    else:
        with pytest.raises(ExtractError) as e:
            r.resolve(archive_file)
        assert e.value.kind in ("escapes-root", "bad-line")


def test_resolver_absolute_inside_root_and_s3_root(tmp_path):
    assert Resolver(str(tmp_path)).resolve(f"file://{tmp_path}/x/y.warc.gz") == f"{tmp_path}/x/y.warc.gz"
    assert Resolver(str(tmp_path)).resolve(f"{tmp_path}/y.arc.gz") == f"{tmp_path}/y.arc.gz"
    s3 = Resolver("s3://bkt/warc/")
    assert s3.resolve("2026/a.warc.gz") == "s3://bkt/warc/2026/a.warc.gz"
    assert s3.resolve("s3a://bkt/warc/b.warc.gz") == "s3://bkt/warc/b.warc.gz"
    for outside in ("s3://bkt/warcother/a.warc.gz", "s3://other/warc/a.warc.gz", "/tmp/a.warc.gz"):
        with pytest.raises(ExtractError, match="escapes-root"):
            s3.resolve(outside)
    no_root = Resolver(None)
    assert no_root.resolve("s3://any/a.warc.gz") == "s3://any/a.warc.gz"
    with pytest.raises(ExtractError, match="needs --archives"):
        no_root.resolve("a.warc.gz")


def test_symlink_out_of_root_is_refused_inside_is_fine(tmp_path, archive_root):
    root, ranges = archive_root
    outside = tmp_path / "outside"
    outside.mkdir()
    os.replace(root / "sub" / "a.warc.gz", outside / "a.warc.gz")
    (root / "out.warc.gz").symlink_to(outside / "a.warc.gz")
    (root / "sub" / "b.warc.gz").symlink_to(root / "in.warc.gz")
    inside = write_warc(root / "in.warc.gz")
    lines = tsv_lines(ranges[:1], "out.warc.gz") + tsv_lines(inside[1:2], "sub/b.warc.gz")
    items, _ = parse_lines(lines, Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 20, real_root=os.path.realpath(root))
    assert res["records"] == 1
    assert [(no, reason.split(":")[0]) for no, reason in res["errors"]] == [(1, "escapes-root")]
    assert "outside the archives root" in res["errors"][0][1]


# ------------------------------------------------------------------ planning
def _item(off, n, uri="f.warc.gz", no=0):
    return Item(no, "u", uri, off, n)


def test_plan_runs_merges_adjacent_and_small_gaps_only():
    items = [_item(0, 10), _item(10, 5), _item(20, 5), _item(20, 5), _item(100, 1)]
    assert [[(i.offset, i.length) for i in r] for r in plan_runs(items)] == [
        [(0, 10), (10, 5)],
        [(20, 5)],
        [(20, 5)],
        [(100, 1)],
    ]
    runs = plan_runs(items, max_gap=10)
    assert [[i.offset for i in r] for r in runs] == [[0, 10, 20], [20], [100]]


def test_plan_tasks_sorted_contiguous_balanced():
    items = [_item(o * 100, 100, uri=f"f{o % 3}.warc.gz", no=o) for o in range(30)]
    slices = plan_tasks(items[::-1], 3)
    assert len(slices) == 3
    flat = [it for s in slices for it in s]
    assert flat == sorted(items, key=lambda it: (it.uri, it.offset))
    assert [sum(it.length for it in s) for s in slices] == [1000, 1000, 1000]
    assert plan_tasks(items[:2], 8) == [[items[0]], [items[1]]]


# ------------------------------------------------------------------ headers
def test_arc_filedesc_header_length_and_readable(tmp_path):
    rec = arc_filedesc_record("extract-00001-00002.arc.gz", __import__("datetime").datetime(2026, 1, 15, 3, 4, 5))
    first, _, rest = rec.partition(b"\n")
    fields = first.split(b" ")
    assert fields[0] == b"filedesc://extract-00001-00002.arc" and fields[2] == b"20260115030405"
    assert int(fields[-1]) == len(rest) - 1 and rest.endswith(b"\n")
    assert rest.startswith(b"1 0 ") and b"\nURL IP-address Archive-date Content-type Archive-length\n" in rest
    member = header_bytes(ArchiveFormat("gzip", "arc"), "x.arc.gz", __import__("datetime").datetime(2026, 1, 15))
    assert member[3] & 0x04 and member[12:14] == b"LX"  # Heritrix-style extra field
    assert gzip.decompress(member).startswith(b"filedesc://x.arc 0.0.0.0 20260115000000 text/plain ")
    path = tmp_path / "h.arc.gz"
    path.write_bytes(member)
    with open(path, "rb") as f:
        recs = [(r.rec_type, r.rec_headers.get_header("uri")) for r in ArchiveIterator(f, arc2warc=False)]
    assert recs == [("arc_header", "filedesc://x.arc")]


def test_gzip_member_roundtrip():
    data = b"hello " * 1000
    m = gzip_member(data)
    d = zlib.decompressobj(31)
    assert d.decompress(m) == data and d.eof and d.unused_data == b""


# ------------------------------------------------------------------ copying
@pytest.mark.parametrize("verify", [False, True])
def test_extract_items_byte_identity_and_readable(tmp_path, archive_root, verify):
    root, ranges = archive_root
    src = (root / "sub" / "a.warc.gz").read_bytes()
    chosen = ranges[::2] + ranges[1:4]  # gaps and adjacent stretches, in mixed order
    items, _ = parse_lines(tsv_lines(chosen, "sub/a.warc.gz"), Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(7, items, str(out), max_bytes=1 << 20, verify=verify)
    assert res["errors"] == [] and res["records"] == len(chosen)
    assert archives_in(out) == ["extract-00007-00000.warc.gz"]
    rows = read_manifest_part(res["manifest"])
    assert sorted(r[4] for r in rows) == list(range(1, len(chosen) + 1))
    for url, name, off, n, line_no, src_uri, src_off in rows:
        data = (out / name).read_bytes()
        assert data[off : off + n] == src[src_off : src_off + n]
        assert url == chosen[line_no - 1].url and src_uri == f"file://{root}/sub/a.warc.gz"
    with open(out / "extract-00007-00000.warc.gz", "rb") as f:
        it = ArchiveIterator(f)
        recs = [
            (r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Filename"))
            for r in it
        ]
    assert recs[0] == ("warcinfo", None, "extract-00007-00000.warc.gz")
    assert sorted(u for _, u, _ in recs[1:]) == sorted(r.url for r in chosen)
    assert res["files"] == [
        ("extract-00007-00000.warc.gz", (out / "extract-00007-00000.warc.gz").stat().st_size, len(chosen))
    ]


@pytest.mark.parametrize("verify", [False, True])
def test_rolling_at_max_bytes(tmp_path, archive_root, verify):
    root, ranges = archive_root
    items, _ = parse_lines(tsv_lines(ranges, "sub/a.warc.gz"), Resolver(str(root)))
    header = len(
        header_bytes(
            ArchiveFormat("gzip", "warc"), "extract-00000-00000.warc.gz", __import__("datetime").datetime.now()
        )
    )
    limit = header + ranges[0].length + ranges[1].length + ranges[2].length
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=limit, verify=verify)
    names = archives_in(out)
    assert len(names) >= 4 and all(re.fullmatch(r"extract-00000-\d{5}\.warc\.gz", n) for n in names)
    assert sum(f[2] for f in res["files"]) == len(ranges)
    for name in names:
        size = (out / name).stat().st_size
        with open(out / name, "rb") as f:
            n = sum(1 for _ in ArchiveIterator(f)) - 1
        assert n >= 1 and (size <= limit or n == 1)
    # rolling is greedy: a file is closed only when the next record does not fit
    sizes = {f[0]: f[1] for f in res["files"]}
    rows = read_manifest_part(res["manifest"])
    for a, b in zip(names, names[1:]):
        first_of_b = min((r for r in rows if r[1] == b), key=lambda r: r[2])
        assert sizes[a] + first_of_b[3] > limit


def test_single_oversized_record_gets_its_own_file(tmp_path, archive_root):
    root, ranges = archive_root
    items, _ = parse_lines(tsv_lines(ranges[:3], "sub/a.warc.gz"), Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=10)
    assert [f[2] for f in res["files"]] == [1, 1, 1]


def _corrupt_cases(root, ranges):
    r0, r1, r2, r3 = ranges[:4]
    size = (root / "sub" / "a.warc.gz").stat().st_size
    return [
        (f"{r0.url}\tsub/a.warc.gz\t{r0.offset}\t{r0.length}", None),
        (f"{r1.url}\tsub/missing.warc.gz\t{r1.offset}\t{r1.length}", "missing-file"),
        (f"{r1.url}\tsub/a.warc.gz\t{size - 10}\t{r1.length}", "past-eof"),
        (f"{r1.url}\tsub/a.warc.gz\t{r1.offset + 1}\t{r1.length}", "not-member"),
        (f"{r2.url}\tsub/a.warc.gz\t{r2.offset}\t{r2.length + r3.length}", "verify:not-member"),
        (f"{r2.url}\tsub/a.warc.gz\t{r2.offset}\t{r2.length - 1}", "verify:not-member"),
        (f"http://wrong/\tsub/a.warc.gz\t{r3.offset}\t{r3.length}", "verify:url-mismatch"),
        (f"{r3.url}\tsub/a.warc.gz\t{r3.offset}\t{r3.length}", None),
    ]


@pytest.mark.parametrize("verify", [False, True])
def test_errors_are_rows_and_good_records_survive(tmp_path, archive_root, verify):
    root, ranges = archive_root
    cases = _corrupt_cases(root, ranges)
    items, parse_errors = parse_lines([c[0] for c in cases], Resolver(str(root)))
    assert parse_errors == []
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 20, verify=verify)
    expected = {}
    for no, (_, kind) in enumerate(cases, 1):
        if kind and kind.startswith("verify:"):
            kind = kind.split(":", 1)[1] if verify else None
        if kind:
            expected[no] = kind
    assert {no: reason.split(":")[0] for no, reason in res["errors"]} == expected
    assert res["records"] == len(cases) - len(expected)
    assert all("\t" not in reason for _, reason in res["errors"])
    src = (root / "sub" / "a.warc.gz").read_bytes()
    (name,) = archives_in(out)
    data = (out / name).read_bytes()
    for _, _, off, n, _, _, src_off in read_manifest_part(res["manifest"]):
        assert data[off : off + n] == src[src_off : src_off + n]
    if verify:  # without --verify the cut-short and two-member ranges are copied as they are
        with open(out / name, "rb") as f:
            assert sum(1 for _ in ArchiveIterator(f)) == 1 + res["records"]  # aborted records left no bytes


def test_task_without_good_records_writes_nothing(tmp_path, archive_root):
    root, ranges = archive_root
    r = ranges[0]
    lines = [f"{r.url}\tsub/a.warc.gz\t{r.offset + 3}\t{r.length}", f"{r.url}\tsub/nope.warc.gz\t0\t10"]
    items, _ = parse_lines(lines, Resolver(str(root)))
    for verify in (False, True):
        out = tmp_path / f"out{verify}"
        out.mkdir()
        res = extract_items(0, items, str(out), max_bytes=1 << 20, verify=verify)
        assert res["records"] == 0 and res["manifest"] is None and res["files"] == []
        assert os.listdir(out) == []


def test_uncompressed_warc_copied_as_is(tmp_path):
    root = tmp_path / "arch"
    root.mkdir()
    ranges = write_warc(root / "plain.warc", gz=False)
    src = (root / "plain.warc").read_bytes()
    items, _ = parse_lines(
        tsv_lines(ranges[1:5], "plain.warc") + [f"x\tplain.warc\t{ranges[0].offset + 2}\t10"], Resolver(str(root))
    )
    for verify in (False, True):
        out = tmp_path / f"out{verify}"
        out.mkdir()
        res = extract_items(0, items, str(out), max_bytes=1 << 20, verify=verify)
        assert [(no, reason.split(":")[0]) for no, reason in res["errors"]] == [(5, "not-member")]
        assert archives_in(out) == ["extract-00000-00000.warc"]
        data = (out / "extract-00000-00000.warc").read_bytes()
        assert data.startswith(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n")
        for _, _, off, n, _, _, src_off in read_manifest_part(res["manifest"]):
            assert data[off : off + n] == src[src_off : src_off + n]
        with open(out / "extract-00000-00000.warc", "rb") as f:
            assert [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)][1:] == [
                r.url for r in ranges[1:5]
            ]


# ------------------------------------------------------------------ verification details
def test_record_check_streams_in_small_chunks(archive_root):
    root, ranges = archive_root
    src = (root / "sub" / "a.warc.gz").read_bytes()
    r = ranges[5]
    member = src[r.offset : r.offset + r.length]
    check = RecordCheck(ArchiveFormat("gzip", "warc"), r.url)
    for i in range(0, len(member), 7):
        check.feed(member[i : i + 7])
    check.finish()
    # a member whose record is followed by a second record inside the same member
    raw = gzip.decompress(member)
    check = RecordCheck(ArchiveFormat("gzip", "warc"), r.url)
    check.feed(gzip_member(raw + raw))
    with pytest.raises(ExtractError, match="after the WARC record"):
        check.finish()
    check = RecordCheck(ArchiveFormat("gzip", "warc"), r.url)
    check.feed(b"\x1f\x8b\x08\x00garbage-not-deflate")
    with pytest.raises(ExtractError, match="corrupt gzip data|ends inside"):
        check.finish()


def test_record_check_arc_record():
    body = b"HTTP/1.0 200 OK\r\n\r\nhello"
    rec = b"http://a.example/ 1.2.3.4 20080430204825 text/html %d\n" % len(body) + body + b"\n"
    check = RecordCheck(ArchiveFormat("gzip", "arc"), "http://a.example/")
    check.feed(gzip_member(rec))
    check.finish()
    check = RecordCheck(ArchiveFormat("gzip", "arc"), "http://b.example/")
    check.feed(gzip_member(rec))
    with pytest.raises(ExtractError, match="url-mismatch"):
        check.finish()
    check = RecordCheck(ArchiveFormat("gzip", "arc"), "http://a.example/")
    check.feed(gzip_member(rec + rec))
    with pytest.raises(ExtractError, match="after the ARC record"):
        check.finish()


def test_local_adjacent_ranges_read_in_one_call(tmp_path, archive_root, monkeypatch):
    from lib.extract.sources import LocalSource

    root, ranges = archive_root
    calls = []
    real = LocalSource.head
    monkeypatch.setattr(LocalSource, "head", lambda self, off, n: (calls.append((off, n)), real(self, off, n))[1])
    chosen = ranges[0:4] + ranges[6:8]  # two stretches of adjacent records
    items, _ = parse_lines(tsv_lines(chosen, "sub/a.warc.gz"), Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 20)
    assert res["records"] == 6
    # one read of the file's head (its format is sniffed), then one per stretch
    assert calls[0][0] == 0
    assert calls[1:] == [
        (ranges[0].offset, sum(r.length for r in ranges[0:4])),
        (ranges[6].offset, sum(r.length for r in ranges[6:8])),
    ]


@pytest.mark.parametrize("big, read_max", [(1 << 20, 8 << 20), (0, 8 << 20), (400, 700), (1 << 20, 1)])
def test_local_read_sizes_and_kernel_copies_keep_bytes(tmp_path, archive_root, monkeypatch, big, read_max):
    """Small reads, reads split at READ_MAX, and kernel copies of big ranges (also into a
    buffered file, and with a bad range in the middle) all give the source bytes."""
    import lib.extract.task as task

    monkeypatch.setattr(task, "BIG", big)
    monkeypatch.setattr(task, "READ_MAX", read_max)
    root, ranges = archive_root
    bad = ranges[5]
    lines = tsv_lines(ranges[:5], "sub/a.warc.gz") + [f"{bad.url}\tsub/a.warc.gz\t{bad.offset + 1}\t{bad.length}"]
    lines += tsv_lines(ranges[6:], "sub/a.warc.gz")
    items, _ = parse_lines(lines, Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=3000)
    assert [(no, reason.split(":")[0]) for no, reason in res["errors"]] == [(6, "not-member")]
    src = (root / "sub" / "a.warc.gz").read_bytes()
    rows = read_manifest_part(res["manifest"])
    assert len(rows) == len(ranges) - 1
    for _, name, off, n, _, _, src_off in rows:
        assert (out / name).read_bytes()[off : off + n] == src[src_off : src_off + n]
    for name in archives_in(out):
        with open(out / name, "rb") as f:
            assert next(iter(ArchiveIterator(f))).rec_type == "warcinfo"
    assert sum(f[1] for f in res["files"]) == sum((out / n).stat().st_size for n in archives_in(out))


def test_assemble_one_manifest_one_errors_file_and_drops_stale_attempts(tmp_path, archive_root):
    from lib.extract.driver import assemble

    root, ranges = archive_root
    lines = tsv_lines(ranges, "sub/a.warc.gz") + ["broken line", "u\tsub/none.warc.gz\t0\t9"]
    items, parse_errors = parse_lines(lines, Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    slices = plan_tasks(items, 3)
    results = [extract_items(i, s, str(out), max_bytes=1 << 20) for i, s in enumerate(slices)]
    (out / "extract-00009-00000.warc.gz").write_bytes(b"from a failed attempt")
    with open(atomic.temp_path(str(out / "extract-00001-00003.warc.gz")), "wb") as half:  # a killed attempt's
        half.write(b"half written")
    summary = assemble(str(out), results[::-1], parse_errors, len(lines), lambda nos: {no: lines[no - 1] for no in nos})
    assert summary["lines"] == len(lines) and summary["extracted"] == len(ranges) and summary["failed"] == 2
    assert summary["failed_by_reason"] == {"bad-line": 1, "missing-file": 1}
    assert sorted(os.listdir(out)) == [
        "_stats.json",
        "errors.tsv",
        "extract-00000-00000.warc.gz",
        "extract-00001-00000.warc.gz",
        "extract-00002-00000.warc.gz",
        "manifest.tsv",
    ]
    manifest = (out / "manifest.tsv").read_text().splitlines()
    assert manifest[0].startswith("# url\tarchive_file\toffset\tlength")
    assert [int(x.split("\t")[4]) for x in manifest[1:]] == list(range(1, len(ranges) + 1))
    errors = (out / "errors.tsv").read_text().splitlines()
    assert errors[1:] == [
        f"{len(ranges) + 1}\tbad-line: expected 4 tab-separated fields, got 1\tbroken line",
        f"{len(ranges) + 2}\tmissing-file: {root}/sub/none.warc.gz: no such file\tu\tsub/none.warc.gz\t0\t9",
    ]


def test_writer_abort_inside_buffer_and_after_flush(tmp_path):
    import datetime as dt

    from lib.extract.archive import ArchiveWriter, task_namer

    w = ArchiveWriter(str(tmp_path), ArchiveFormat("gzip", "warc"), 1 << 30, task_namer(3), dt.datetime(2026, 1, 1))
    header = w.begin(10)
    w.write(b"a" * 100)
    w.abort(header)  # still in the buffer
    w.write(b"b" * (6 << 20))  # bigger than the buffer: flushed to the file
    assert w.flushed > header
    w.abort(header)
    base = w.begin(5)
    w.write(b"keep!")
    w.commit()
    w.close()
    data = (tmp_path / "extract-00003-00000.warc.gz").read_bytes()
    assert base == header and len(data) == header + 5 and data.endswith(b"keep!")
    assert gzip.decompress(data[:header]).startswith(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n")
    assert w.files == [("extract-00003-00000.warc.gz", header + 5, 1)]
    assert os.listdir(tmp_path) == ["extract-00003-00000.warc.gz"]


def test_pack_unpack_roundtrip():
    from lib.extract.lines import pack_items, unpack_items

    items = [
        Item(i, f"http://x/{i}", f"/a/f{i % 3}.{fmt}", i * 1000, i + 1)
        for i, fmt in zip(range(50), ["warc.gz", "arc.gz", "warc"] * 20)
    ]
    assert unpack_items(pack_items(items)) == items
    assert unpack_items(pack_items([])) == []


def test_stream_broken_mid_record_fails_rest_of_run_and_leaves_no_partial_record(tmp_path, archive_root, monkeypatch):
    import lib.extract.task as task

    root, ranges = archive_root
    src_bytes = (root / "sub" / "a.warc.gz").read_bytes()
    cut = ranges[1].offset + 100  # the connection drops inside the second record

    class Broken:
        def __init__(self, start, end):
            self.pos = start

        def read(self, n):
            if self.pos >= cut:
                raise ConnectionResetError("peer went away")
            data = src_bytes[self.pos : min(self.pos + n, cut)]
            self.pos += len(data)
            return data

        def close(self):
            pass

    class FakeS3:
        is_local = False
        uri = "s3://b/a.warc.gz"
        size = len(src_bytes)

        def head(self, offset, n):
            return src_bytes[offset : offset + n]

        def open_run(self, start, end):
            return Broken(start, end)

        def close(self):
            pass

    monkeypatch.setattr(task, "open_source", lambda uri, real_root: FakeS3())
    monkeypatch.setattr(task, "CHUNK", 64)  # several chunks per record: the drop hits mid-record
    items, _ = parse_lines(tsv_lines(ranges[:3], "a.warc.gz"), Resolver("s3://b"))
    out = tmp_path / "out"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 20)
    assert res["records"] == 1
    assert [(no, reason.split(":")[0]) for no, reason in res["errors"]] == [(2, "read-error"), (3, "read-error")]
    assert "ConnectionResetError" in res["errors"][0][1]
    (name,) = archives_in(out)
    data = (out / name).read_bytes()
    _, _, off, n, _, _, src_off = read_manifest_part(res["manifest"])[0]
    assert len(data) == off + n and data[off:] == src_bytes[src_off : src_off + n]


def test_listing_cli_output_is_extract_input(tmp_path, archive_root, capsys):
    from lib.extract import record_list

    root, ranges = archive_root
    assert record_list.main([str(root / "sub" / "a.warc.gz"), "--root", str(root), "--types", "response"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == tsv_lines(ranges, "sub/a.warc.gz")
    items, errors = parse_lines(lines, Resolver(str(root)))
    out = tmp_path / "out"
    out.mkdir()
    assert errors == [] and extract_items(0, items, str(out), max_bytes=1 << 20, verify=True)["records"] == len(ranges)
