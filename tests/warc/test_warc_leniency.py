"""Quirks of real archives that warcio/FastWARC read and so must we (the lenient parser).

Where possible the records are real (the shared samples), re-archived the way the tool
chains that produce each quirk do it; the conformance suite (test_conformance.py) checks
the same against warcio and FastWARC over whole real archives.
"""

from __future__ import annotations

import gzip
import io

import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.html.charset import codec_name, decode_html
from lib.preprocess.archive_pages import FileProcessor
from lib.warc.http import dechunk, parse_response, status_code
from lib.warc.records import BadRecord, Record, iter_records
from tests.helpers_warc import good_pages, gz, http_response, warc_gz, warc_record


def records(data: bytes, name: str = "t.warc.gz", cap: int = 10 << 20):
    return list(iter_records(io.BufferedReader(io.BytesIO(data)), name, max_content=cap))


def run(data: bytes, name: str = "t.warc.gz"):
    proc = FileProcessor(name)
    rows = list(proc.pages(io.BufferedReader(io.BytesIO(data))))
    s = proc.stats
    assert s.read == s.kept + sum(s.skipped.values()) + sum(s.failed.values())
    return rows, proc


def real_html_responses(corpus, n: int = 5) -> list[tuple[str, bytes]]:
    """(url, HTTP block) of the first n 2xx HTML responses of a real crawl."""
    out = []
    with open(corpus / "aut" / "example.warc.gz", "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type != "response" or not rec.http_headers:
                continue
            if rec.http_headers.get_statuscode() != "200" or "html" not in (
                rec.http_headers.get_header("content-type") or ""
            ):
                continue
            block = rec.http_headers.to_bytes() + rec.raw_stream.read()
            if b"chunked" in block[:2000].lower():
                continue
            out.append((rec.rec_headers.get_header("WARC-Target-URI"), block))
            if len(out) == n:
                break
    return out


# ---------------------------------------------------------------- status lines
@pytest.mark.parametrize(
    "line,code",
    [
        ("HTTP/1.1 200 OK", 200),
        ("HTTP/1.1 HTTP/1.1 200 OK", 200),
        ("HTTP/1.0 HTTP/1.1 HTTP/1.1 404 Not Found", 404),
        ("http/1.1 200 ok", 200),
        ("HTTP/1.1 200", 200),
        ("  HTTP/1.1   301   Moved  ", 301),
        ("200 OK", 200),
        ("HTTP 200 OK", 200),
        ("HTTP/2 204", 204),
        ("HTTP/1.1 200OK", 200),
        ("HTTPX/1.1 200 OK", 200),
        ("HTTP/1.1 0 No Content", 0),
        ("HTPP/1.1 200 OK", None),
        ("<!DOCTYPE html>", None),
        ("HTTP/1.1 OK", None),
        ("HTTP/1.1 2000 OK", None),
    ],
)
def test_status_lines(line, code):
    assert status_code(line) == code


def test_repeated_protocol_status_line_on_real_records(corpus):
    """Quirk 1: re-archived captures say 'HTTP/1.1 HTTP/1.1 200 OK'."""
    pages = real_html_responses(corpus)
    quirky = [
        (u, b.replace(b"HTTP/1.1 ", b"HTTP/1.1 HTTP/1.1 ", 1).replace(b"HTTP/1.0 ", b"HTTP/1.0 HTTP/1.0 ", 1))
        for u, b in pages
    ]
    assert all(b.split(b"\r\n", 1)[0].count(b"HTTP/") == 2 for _, b in quirky)
    plain_rows, _ = run(warc_gz([warc_record(u, b) for u, b in pages]))
    rows, proc = run(warc_gz([warc_record(u, b) for u, b in quirky]))
    assert len(rows) == len(pages) and not proc.stats.failed
    assert [(r["url"], r["http_status"], r["title"], r["plain_text"]) for r in rows] == [
        (r["url"], r["http_status"], r["title"], r["plain_text"]) for r in plain_rows
    ]


def test_lf_only_and_cr_cr_lf_heads():
    body = b"<html><title>t</title><body><p>hello there</p></body></html>"
    for sep in (b"\n", b"\r\r\n", b"\r\n"):
        block = sep.join([b"HTTP/1.1 200 OK", b"Content-Type: text/html", b"", body])
        r = parse_response(block)
        assert (r.status, r.mime_type, r.body) == (200, "text/html", body), sep


# ---------------------------------------------------------------- header lines
def test_junk_header_lines_cost_the_line_not_the_response():
    block = (
        b"HTTP/1.1 200 OK\r\nX Bad Name: 1\r\nno colon here\r\n" + b"Y-Long: " + b"a" * 20000 + b"\r\n"
        b"Server: caf\xe9\r\nContent-Type:text/html;charset=utf-8\r\nContent-Type: text/plain\r\n"
        b"X-Folded: one\r\n two\r\n\r\n<html>x</html>"
    )
    r = parse_response(block)
    assert r.status == 200 and r.body == b"<html>x</html>"
    assert r.mime_type == "text/html" and r.charset == "utf-8"  # the first Content-Type, as readers take it
    assert r.headers["server"] == "caf\xe9" and r.headers["x-folded"] == "one two"
    assert [w[0] for w in r.warnings] == ["http_header_skipped"] * 3


# ---------------------------------------------------------------- transfer coding
def test_dechunk_only_when_the_structure_holds():
    assert dechunk(b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n") == (b"hello world", None)
    assert dechunk(b"5\nhello\n0\n\n") == (b"hello", None)
    minified = b"<!DOCTYPE html><html><head><title>x</title></head><body>one line</body></html>"
    out, warn = dechunk(minified)
    assert out == minified and warn[0] == "chunked_not_chunked"
    out, warn = dechunk(b"5\r\nhello\r\n6\r\n wor")  # cut off: what is there, as warcio gives it
    assert out == b"hello wor" and warn[0] == "chunked_truncated"
    out, warn = dechunk(b"5\r\nhelloXX6\r\n world\r\n0\r\n\r\n")  # chunk without its line end
    assert out == b"5\r\nhelloXX6\r\n world\r\n0\r\n\r\n" and warn[0] == "chunked_not_chunked"
    assert dechunk(b"") == (b"", None)


def test_chunked_header_on_a_dechunked_one_line_body_of_real_pages(corpus):
    """Quirk 2: 'Transfer-Encoding: chunked' kept on a body stored de-chunked
    (minified to one line): the page was emptied and silently skipped as empty_body."""
    pages = real_html_responses(corpus)
    quirky = []
    for url, block in pages:
        head, body = block.split(b"\r\n\r\n", 1)
        one_line = b" ".join(body.split())
        quirky.append((url, head + b"\r\nTransfer-Encoding: chunked\r\n\r\n" + one_line))
    rows, proc = run(warc_gz([warc_record(u, b) for u, b in quirky]))
    assert len(rows) == len(pages) and not proc.stats.failed and not proc.stats.skipped
    assert all(r["plain_text"] and r["content_length"] > 100 for r in rows)
    assert proc.stats.warnings["chunked_not_chunked"] == len(pages)


def test_content_encoding_on_a_decoded_body_is_kept_with_a_warning():
    r = parse_response(
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: text/html\r\n\r\n<html>plain</html>"
    )
    assert r.body == b"<html>plain</html>" and r.warnings[0][0] == "content_encoding_not_applied"
    r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\n<html>plain</html>")
    assert r.body == b"<html>plain</html>"


# ---------------------------------------------------------------- WARC headers
def test_folded_warc_headers_and_odd_line_ends():
    block = http_response(b"<html><title>a</title><body><p>folded headers are fine</p></body></html>")
    head = (
        b"WARC/1.0\r\nWARC-Type:\r\n response\r\nWARC-Target-URI: http://a.example/\r\n"
        b"WARC-Date: 2026-01-15T01:02:03Z\r\nWARC-Record-ID: <urn:uuid:1>\r\n"
        b"Content-Type: application/http;\r\n msgtype=response\r\njunk line without colon\r\n"
        b"Content-Length: %d\r\r\n\r\n" % len(block)
    )
    (rec,) = records(gz(head + block + b"\r\n\r\n"))
    assert rec.rec_type == "response" and rec.headers["content-type"] == "application/http; msgtype=response"
    assert [w[0] for w in rec.warnings] == ["warc_header_skipped"]
    rows, proc = run(gz(head + block + b"\r\n\r\n"))
    assert len(rows) == 1 and rows[0]["title"] == "a"


def test_target_uri_in_angle_brackets_or_with_spaces():
    body = http_response(b"<html><body><p>x</p></body></html>")
    recs = records(warc_gz([warc_record("<http://a.example/x y>", body)]))
    assert recs[0].url == "http://a.example/x%20y"


def test_dns_response_without_content_type_is_not_http_not_a_failure():
    rec = warc_record("dns:example.com", b"20260115010203\nexample.com. 60 IN A 1.2.3.4\n", content_type="").replace(
        b"Content-Type: \r\n", b""
    )
    rows, proc = run(gz(rec))
    assert not rows and proc.stats.skipped == {"not_http": 1} and not proc.stats.failed


# ---------------------------------------------------------------- record boundaries
def test_record_continued_in_the_next_gzip_member(corpus):
    ((url, block),) = real_html_responses(corpus, 1)
    rec = warc_record(url, block)
    cut = len(rec) // 2
    data = gz(rec[:cut]) + gz(rec[cut:]) + warc_gz([r for _, r in good_pages(1)])
    out = records(data)
    assert [type(r).__name__ for r in out] == ["Record", "Record"]
    assert out[0].content == block and not out[0].truncated
    assert out[0].offset == 0 and out[0].length == len(gz(rec[:cut]) + gz(rec[cut:]))
    assert [w[0] for w in out[0].warnings] == ["record_spans_members"]
    rows, proc = run(data)
    assert len(rows) == 2 and not proc.stats.failed
    # the byte range holds the whole record (what extraction copies)
    assert gzip.decompress(data[: out[0].length]) == rec


def test_truncated_plain_warc_keeps_the_partial_page(corpus):
    ((url, block),) = real_html_responses(corpus, 1)
    data = b"".join(r for _, r in good_pages(1)) + warc_record(url, block)
    cut = data[: len(data) - len(block) // 2]
    rows, proc = run(cut, "t.warc")
    assert len(rows) == 2 and rows[1]["truncated"] and not rows[0]["truncated"]
    assert proc.stats.warnings["truncated_record"] == 1 and not proc.stats.failed
    assert rows[1]["warc_offset"] + rows[1]["warc_length"] == len(cut)


# ---------------------------------------------------------------- ARC
def arc_record(
    url: str, block: bytes, ip: str = "1.2.3.4", date: str = "20080430204825", mime: str = "text/html"
) -> bytes:
    return f"{url} {ip} {date} {mime} {len(block)}\n".encode() + block + b"\n"


def test_arc_without_filedesc_url_with_spaces_and_resync():
    page = http_response(b"<html><title>arc</title><body><p>an old page</p></body></html>")
    data = (
        arc_record("http://a.example/one two.html", page)
        + b"this line is no ARC header\n"
        + arc_record("http://a.example/three", page)
        + b"   \n  "
    )  # trailing space padding
    rows, proc = run(data, "no-name-hint")
    assert [r["url"] for r in rows] == ["http://a.example/one%20two.html", "http://a.example/three"]
    assert rows[0]["warc_ip"] == "1.2.3.4" and rows[0]["warc_date"].year == 2008
    assert proc.stats.failed == {"malformed_arc_header": 1}  # the junk line, and nothing else


def test_arc_v2_header_line():
    page = http_response(b"<html><body><p>v2</p></body></html>")
    line = f"http://a.example/x y 1.2.3.4 20080430204825 text/html 200 ABCDEF - 0 f.arc {len(page)}\n".encode()
    (rec,) = records(line + page + b"\n", "x.arc")
    assert (rec.url, rec.headers["warc-ip-address"], rec.headers["content-type"]) == (
        "http://a.example/x%20y",
        "1.2.3.4",
        "text/html",
    )
    assert rec.content == page


@pytest.mark.parametrize("name", ["x.ARC.GZ", "x.gz", "x.warc.gz", "x"])
def test_arc_format_is_sniffed_not_taken_from_the_name(corpus, name):
    data = (corpus / "aut" / "example.arc.gz").read_bytes()
    out = records(data, name)
    assert not [r for r in out if isinstance(r, BadRecord)]
    assert sum(1 for r in out if r.rec_type == "response") == 299 and out[0].rec_type == "warcinfo"


# ---------------------------------------------------------------- compression
def recompress(corpus, codec: str) -> tuple[bytes, list[bytes]]:
    """aut/example.warc.gz re-compressed record by record with zstd or LZ4 (as FastWARC writes them)."""
    from lib.warc.streams import GzipMembers

    with open(corpus / "aut" / "example.warc.gz", "rb") as f:
        plain = [m.read(1 << 30) for m in GzipMembers(f)]
    if codec == "zstd":
        import zstandard

        frames = [zstandard.ZstdCompressor().compress(p) for p in plain]
    else:
        import lz4.frame

        frames = [lz4.frame.compress(p) for p in plain]
    return b"".join(frames), frames


@pytest.mark.parametrize("codec", ["zstd", "lz4"])
def test_zstd_and_lz4_warcs(corpus, codec):
    data, frames = recompress(corpus, codec)
    out = records(data, f"x.warc.{codec}")
    assert len(out) == len(frames) and all(isinstance(r, Record) for r in out)
    pos = 0
    for r, fr in zip(out, frames):
        assert (r.offset, r.length) == (pos, len(fr))
        pos += len(fr)
    gz_out = records((corpus / "aut" / "example.warc.gz").read_bytes())
    assert [(r.url, r.content) for r in out] == [(r.url, r.content) for r in gz_out]
    # FastWARC reads both: same records at the same offsets
    from fastwarc.warc import ArchiveIterator as FastIterator

    theirs = [(r.stream_pos, r.headers.get("WARC-Target-URI") or "") for r in FastIterator(io.BytesIO(data))]
    assert theirs == [(r.offset, r.url) for r in out]


def test_zstd_with_a_dictionary_frame(corpus):
    import zstandard

    from lib.warc.streams import GzipMembers

    with open(corpus / "aut" / "example.warc.gz", "rb") as f:
        plain = [m.read(1 << 30) for m in GzipMembers(f)][:40]
    d = zstandard.train_dictionary(4096, plain * 3)
    frames = [zstandard.ZstdCompressor(dict_data=d).compress(p) for p in plain]
    raw_dict = d.as_bytes()
    skippable = b"\x5d\x2a\x4d\x18" + len(raw_dict).to_bytes(4, "little") + raw_dict
    out = records(skippable + b"".join(frames), "x.warc.zst")
    assert [r.content for r in out] == [p.split(b"\r\n\r\n", 1)[1][: len(r.content)] for r, p in zip(out, plain)]
    assert out[0].offset == len(skippable) and len(out) == 40


# ---------------------------------------------------------------- skip reasons
def test_skip_reasons_mean_what_they_say():
    def one(block: bytes, rec_type: str = "response", **kw) -> dict:
        _, proc = run(gz(warc_record("http://s.example/", block, rec_type=rec_type, **kw)))
        return {**proc.stats.skipped, **proc.stats.failed}

    assert one(http_response(b"")) == {"empty_body": 1}
    assert one(http_response(b"  \n ")) == {"blank_body": 1}
    assert one(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n0\r\n\r\n") == {
        "empty_after_decoding": 1
    }
    assert one(http_response(b'{"a": 1}', ctype="application/json")) == {"not_html": 1}
    # the body says HTML although the header does not: a page
    assert one(http_response(b"<!DOCTYPE html><html><body><p>x</p></body></html>", ctype="text/plain")) == {}
    assert one(http_response(b"<html></html>", status="404 Not Found")) == {"http_status_4xx": 1}


def test_html_resource_records_are_pages_other_resources_are_not():
    html = b"<html><head><title>warcit</title></head><body><p>a site's file archived by warcit</p></body></html>"
    data = warc_gz(
        [
            warc_record("http://w.example/index.html", html, rec_type="resource", content_type="text/html"),
            warc_record("urn:text:http://w.example/", b"text", rec_type="resource", content_type="text/plain"),
            warc_record(
                "http://w.example/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00", rec_type="resource", content_type="image/png"
            ),
        ]
    )
    rows, proc = run(data)
    assert [(r["url"], r["title"], r["http_status"]) for r in rows] == [("http://w.example/index.html", "warcit", None)]
    assert proc.stats.skipped == {"not_response:resource": 1, "not_html": 1}
    assert [c["kept"] for c in proc.captures] == [True, False, False]


# ---------------------------------------------------------------- charsets
@pytest.mark.parametrize(
    "label,codec",
    [
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("x-gbk", "gb18030"),
        ("shift_jis", "cp932"),
        ("Shift-JIS", "cp932"),
        ("euc-kr", "cp949"),
        ("ks_c_5601-1987", "cp949"),
        ("iso-8859-1", "cp1252"),
        ("latin1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("big5", "big5hkscs"),
        ("utf8", "utf-8"),
        ("UTF-8", "utf-8"),
        ("iso-8859-9", "cp1254"),
        ("tis-620", "cp874"),
        ("koi8-r", "koi8-r"),
        ("windows-1251", "cp1251"),
        ("iso-2022-kr", None),
        ("bogus", None),
    ],
)
def test_charset_labels_map_as_the_whatwg_encoding_standard_says(label, codec):
    assert codec_name(label) == codec


def test_gb2312_page_with_gbk_characters_decodes_cleanly():
    text = "镕基和碁是GBK扩展字" * 3  # characters outside GB2312 that browsers show under a gb2312 label
    body = f"<html><head><meta charset='gb2312'><title>{text}</title></head></html>".encode("gbk")
    with pytest.raises(UnicodeDecodeError):
        body.decode("gb2312")
    dec = decode_html(body, "gb2312")
    assert dec.text.count(text) == 1 and not dec.replaced and dec.charset == "gb18030"


def test_windows_1252_unassigned_bytes_are_c1_controls_not_errors():
    dec = decode_html(b"<html><body>caf\xe9 \x81 \x9d</body></html>", "iso-8859-1")
    assert "caf\u00e9 \u0081 \u009d" in dec.text and not dec.replaced and dec.charset == "cp1252"


def test_day_listing_finds_archives_whatever_their_case_or_compression(tmp_path):
    from lib.store import storage
    from lib.warc.records import ARCHIVE_SUFFIXES

    for name in ("a.warc.gz", "B.ARC.GZ", "c.Warc", "d.warc.zst", "e.warc.lz4", "notes.txt", "f.cdx"):
        (tmp_path / name).write_bytes(b"x")
    found = [f.uri.rsplit("/", 1)[-1] for f in storage.list_files(str(tmp_path), ARCHIVE_SUFFIXES)]
    assert found == ["B.ARC.GZ", "a.warc.gz", "c.Warc", "d.warc.zst", "e.warc.lz4"]
