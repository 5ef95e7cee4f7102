"""The index readers and the terminator rule as plain functions (no Spark): each format's
line parser and its refusals, sniffing, several archives roots, and which closing bytes a
plain record lacks, on the real plain archives against warcio's offsets."""

from __future__ import annotations

import gzip
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.errors import UsageError
from lib.extract.formats import sniff_format
from lib.extract.indexes import CdxColumns, CsvColumns, IndexInput, cdxj_fields, sniff_index
from lib.extract.lines import ExtractError, Resolver, check_real_path
from lib.extract.record_length import FIRST_READ, record_length
from lib.extract.sources import LocalSource, S3Source
from lib.extract.terminator import missing_terminator


def test_cdxj_line_and_its_refusals():
    line = (
        'org,example)/ 20240101000000 {"url": "http://example.org/", "length": "120", "offset": "7", '
        '"filename": "a b.warc.gz"}'
    )
    assert cdxj_fields(line) == ["http://example.org/", "a b.warc.gz", "7", "120"]
    assert cdxj_fields('!meta 0 {"x": 1}') is None
    for bad, why in [
        ('org,example)/ 2024 {"url": 1', "CDXJ JSON does not parse"),
        ('org,example)/ 2024 {"url": "u", "length": "1", "filename": "f"}', "CDXJ JSON lacks offset"),
        ("org,example)/ 2024", "not a CDXJ line"),
    ]:
        with pytest.raises(ExtractError, match=why) as e:
            cdxj_fields(bad)
        assert e.value.kind == "bad-line"
    # no length: the task measures the record
    assert cdxj_fields('k 2024 {"url": "u", "offset": "1", "filename": "f"}') == ["u", "f", "1", None]


SEED_HEADER = " CDX A b e a m s c k r V v D d g M n"


def test_cdx_columns_by_header_letters(tmp_path):
    cols = CdxColumns(" CDX N b a m s k r M S V g")
    line = "org,example)/ 20240101000000 http://example.org/ text/html 200 ABC - - 120 7 a.warc.gz"
    assert cols.fields(line) == ["http://example.org/", "a.warc.gz", "7", "120"]
    assert CdxColumns("CDX g V S a").fields("a.warc.gz 7 120 http://x/") == ["http://x/", "a.warc.gz", "7", "120"]
    # no S (pywb's 9 fields), or S given as '-': no length, the task measures the record
    assert CdxColumns(" CDX N b a m s k r V g").fields(line.replace(" - - 120", " -")) == [
        "http://example.org/",
        "a.warc.gz",
        "7",
        None,
    ]
    assert cols.fields(line.replace(" 120 ", " - "))[3] is None
    # seed 004's legend (its Figure 5 line): V the compressed offset, a the url, g the file
    seed = CdxColumns(SEED_HEADER)
    fig5 = (
        "0-0-0checkmate.com/Bugs/Bug_Investigators.html 20010424210551 209.52.183.152 "
        "0-0-0checkmate.com:80/Bugs/Bug_Investigators.html text/html 200 58670fbe7432c5bed6f3dcd7ea32b221 "
        "a725a64ad6bb7112c55ed26c9e4cef63 - 17130110 59129865 1927657 6501523 DE_crawl6.20010424210458 - 5750"
    )
    assert seed.fields(fig5) == [
        "0-0-0checkmate.com:80/Bugs/Bug_Investigators.html",
        "DE_crawl6.20010424210458",
        "17130110",
        None,
    ]
    _, row = seed.parse(fig5)
    assert row() == {
        "urlkey": "0-0-0checkmate.com/Bugs/Bug_Investigators.html",
        "timestamp": "20010424210551",
        "url": "0-0-0checkmate.com:80/Bugs/Bug_Investigators.html",
        "mime": "text/html",
        "status": 200,
        "digest": "a725a64ad6bb7112c55ed26c9e4cef63",
        "offset": 17130110,
        "filename": "DE_crawl6.20010424210458",
    }
    # IA's file names have no suffix: the archive that exists with one is taken
    (tmp_path / "DE_crawl6.20010424210458.arc.gz").write_bytes(b"x")
    (tmp_path / "seed.cdx").write_text(f"{SEED_HEADER}\n{fig5}\n{fig5.replace(' DE_crawl6.', ' DE_crawl7.')}\n")
    items, errors = IndexInput(str(tmp_path / "seed.cdx")).read(Resolver(str(tmp_path)))
    assert [(it.uri, it.offset, it.length) for it in items] == [
        (str(tmp_path / "DE_crawl6.20010424210458.arc.gz"), 17130110, 0),
        (str(tmp_path / "DE_crawl7.20010424210458"), 17130110, 0),  # none there: the task reports it missing
    ]
    # only the uncompressed offset v: taken (right for uncompressed archives)
    assert CdxColumns("CDX a v g").fields("http://x/ 9 f.warc") == ["http://x/", "f.warc", "9", None]
    with pytest.raises(UsageError, match=r"no column for offset \(V or v\)"):
        CdxColumns(" CDX N b a m s k r M S g")
    with pytest.raises(UsageError, match=r"no column for url \(a, A or N\), file name \(g\)"):
        CdxColumns(" CDX b V")
    with pytest.raises(UsageError, match="CDX header line expected"):
        CdxColumns(line)


def test_csv_columns_quoted_and_extra():
    cols = CsvColumns('"url_surtkey","url","warc_filename","warc_record_offset","warc_record_length","fetch_status"')
    assert cols.fields('"x","http://e.org/?a=1,2","crawl-data/a.warc.gz","7","120","200"') == [
        "http://e.org/?a=1,2",
        "crawl-data/a.warc.gz",
        "7",
        "120",
    ]
    with pytest.raises(ExtractError, match="expected 6 CSV fields, got 2"):
        cols.fields("a,b")
    with pytest.raises(UsageError, match="warc_record_length"):
        CsvColumns("url,warc_filename,warc_record_offset")


def test_sniffing_and_line_numbers(tmp_path):
    cdx = " CDX N b a m s k r M S V g\norg,e)/ 2024 http://e.org/ t 200 D - - 120 7 a.warc.gz\nshort line\n"
    (tmp_path / "x.txt").write_bytes(gzip.compress(cdx.encode()))
    (tmp_path / "j").write_text('# c\norg,e)/ 20240101 {"url": "u", "filename": "f", "offset": 0, "length": 1}\n')
    (tmp_path / "c.txt").write_text("url,warc_filename,warc_record_offset,warc_record_length\n")
    (tmp_path / "t.cdx").write_text("u\tf\t0\t1\n")  # the name says CDX, the content (no header) says TSV
    pq.write_table(pa.table({"url": ["u"]}), tmp_path / "p.bin")
    assert [sniff_index(str(tmp_path / n)) for n in ("x.txt", "j", "c.txt", "t.cdx", "p.bin")] == [
        "cdx",
        "cdxj",
        "csv",
        "tsv",
        "parquet",
    ]
    assert sniff_index(str(tmp_path)) == "parquet"
    index = IndexInput(str(tmp_path / "x.txt"))
    items, errors = index.read(Resolver(str(tmp_path)))
    assert [(it.line_no, it.url, it.offset, it.length) for it in items] == [(2, "http://e.org/", 7, 120)]
    assert errors == [(3, "short line", "bad-line: expected 11 space-separated CDX fields, got 2")]
    assert index.texts({3, 2}) == {2: cdx.splitlines()[1], 3: "short line"}
    # --where on CDX and CDXJ lines: a bad line is reported whatever the condition
    for where, want in [("status = 200 AND length = 120", [2]), ("status = '404'", [])]:
        items, errors = IndexInput(str(tmp_path / "x.txt"), where=where).read(Resolver(str(tmp_path)))
        assert [it.line_no for it in items] == want and [no for no, _, _ in errors] == [3]
    items, _ = IndexInput(str(tmp_path / "j"), where="timestamp LIKE '2024%' AND mime IS NULL").read(
        Resolver(str(tmp_path))
    )
    assert [(it.line_no, it.url, it.length) for it in items] == [(2, "u", 1)]
    with pytest.raises(UsageError, match="columns here: urlkey, timestamp, url, mime, status, digest, length"):
        IndexInput(str(tmp_path / "x.txt"), where="ip = '1.2.3.4'").read(Resolver(str(tmp_path)))
    with pytest.raises(UsageError, match="needs a Parquet, CDX or CDXJ index"):
        IndexInput(str(tmp_path / "c.txt"), where="1 = 1")
    with pytest.raises(FileNotFoundError):
        IndexInput(str(tmp_path / "missing.cdx"))


def test_parquet_where_errors_name_the_file(tmp_path):
    f = tmp_path / "m.parquet"
    pq.write_table(pa.table({"url": ["u"], "warc_file": ["/a.warc.gz"], "warc_offset": [0], "warc_length": [5]}), f)
    with pytest.raises(UsageError, match="m.parquet"):
        IndexInput(str(f), where="no_such_column = 1").read(Resolver(None))
    pq.write_table(pa.table({"url": ["u"], "offset": [0]}), tmp_path / "n.parquet")
    with pytest.raises(UsageError, match="neither Common Crawl's columns"):
        IndexInput(str(tmp_path / "n.parquet")).read(Resolver(None))


def test_several_roots(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    for d in (a, b, out):
        d.mkdir()
    (b / "only-b.warc").write_bytes(b"x")
    (a / "both.warc").write_bytes(b"x")
    (b / "both.warc").write_bytes(b"x")
    r = Resolver([str(a), str(b)])
    assert r.resolve("only-b.warc") == str(b / "only-b.warc")
    assert r.resolve("both.warc") == str(a / "both.warc")
    assert r.resolve("nowhere.warc") == str(a / "nowhere.warc")  # the task reports it missing
    assert r.resolve(str(b / "only-b.warc")) == str(b / "only-b.warc")
    with pytest.raises(ExtractError, match="escapes-root"):
        r.resolve(str(out / "x.warc"))
    (a / "link.warc").symlink_to(b / "only-b.warc")
    (a / "out-link.warc").symlink_to(out)
    check_real_path(str(a / "link.warc"), r.real_roots())
    with pytest.raises(ExtractError, match="escapes-root"):
        check_real_path(str(a / "out-link.warc"), r.real_roots())


def warcio_ranges(path) -> list[tuple[int, int]]:
    """(offset, length) of every record of the archive at ``path``, as warcio reads them."""
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=False)
        ranges = []
        for rec in it:
            rec.content_stream().read()
            ranges.append((it.get_record_offset(), it.get_record_length()))
    return ranges


@pytest.mark.parametrize("name", ["issue-493.warc", "issue-514.warc", "example.arc.gz"])
def test_missing_terminator_against_warcio(corpus, name, tmp_path):
    """warcio's record lengths in plain files stop at the end of the block: the whole
    terminator is missing; its tail when the range stops inside it; none for the span to
    the next record; a range shorter than the block is not ours to fix."""
    data = (corpus / "aut" / name).read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data)
    path = tmp_path / name.removesuffix(".gz")
    path.write_bytes(data)
    kind = "arc" if ".arc" in name else "warc"
    term = b"\n" if kind == "arc" else b"\r\n\r\n"
    ranges = warcio_ranges(path)
    starts = [off for off, _ in ranges] + [os.path.getsize(path)]
    checked = 0
    for (off, length), nxt in zip(ranges, starts[1:]):
        head = data[off : off + 65536]
        assert missing_terminator(kind, head, length) == term
        assert missing_terminator(kind, head, nxt - off) == b""
        assert missing_terminator(kind, head, length - 1) == b""
        if kind == "warc":
            assert missing_terminator(kind, head, length + 2) == b"\r\n"
        assert data[off + length : off + length + len(term)] == term
        checked += 1
    assert checked == len(ranges) > 5


@pytest.mark.parametrize(
    "name", ["aut/example.warc.gz", "aut/example.arc.gz", "aut/issue-493.warc", "aut/issue-514.warc", "example.arc"]
)
def test_record_length_against_warcio(corpus, name, tmp_path):
    """Where the index gives no length: the gzip member that starts at each of warcio's offsets
    ends where warcio's next record starts (its own length); a plain record ends after its
    closing line ends. A wrong offset, a cut file: refused, named."""
    if name == "example.arc":  # aut's example.arc.gz gunzipped: a plain ARC
        path = tmp_path / name
        path.write_bytes(gzip.decompress((corpus / "aut/example.arc.gz").read_bytes()))
    else:
        path = corpus / name
    ranges = warcio_ranges(path)
    src = LocalSource(str(path), None)
    fmt = sniff_format(src.head, str(path))
    starts = [off for off, _ in ranges] + [src.size]
    for (off, length), nxt in zip(ranges, starts[1:]):
        got = record_length(src, fmt, off)
        if fmt.codec:
            assert got == length == nxt - off
        else:  # warcio stops at the end of the block; the record's closing line ends follow
            assert got == length + (4 if fmt.kind == "warc" else 1) == nxt - off
    off, length = ranges[len(ranges) // 2]
    with pytest.raises(ExtractError, match="not-member: range does not start"):
        record_length(src, fmt, off + 1)
    cut = tmp_path / "cut"
    cut.write_bytes(path.read_bytes()[: off + length // 2])
    short = LocalSource(str(cut), None)
    with pytest.raises(ExtractError, match=f"past-eof: the .* at {off} runs past the end of {cut}"):
        record_length(short, fmt, off)
    src.close()
    short.close()


def test_record_length_on_s3(corpus, s3_bucket):
    """The same measure through ranged GETs: a big member (a PDF) takes several reads."""
    from lib.store import s3

    path = corpus / "aut/example.pdf.warc.gz"
    s3.client().upload_file(str(path), s3_bucket, "a/example.pdf.warc.gz")
    ranges = warcio_ranges(path)
    src = S3Source(f"s3://{s3_bucket}/a/example.pdf.warc.gz")
    fmt = sniff_format(src.head, src.uri)
    assert [record_length(src, fmt, off) for off, _ in ranges] == [n for _, n in ranges]
    assert max(n for _, n in ranges) > 10 * FIRST_READ
