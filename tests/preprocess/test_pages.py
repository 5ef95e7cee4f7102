"""One archive file -> pages + counters: every bad-input case of the issue, totals add up."""

from __future__ import annotations

import io
import tracemalloc

from lib.html import content
from lib.preprocess import archive_pages
from lib.preprocess.archive_pages import process_file
from tests.helpers_warc import ENGLISH, good_pages, gz, html_page, http_response, warc_gz, warc_record


def run(data: bytes, name: str = "t.warc.gz", **kw):
    rows, proc = process_file(io.BufferedReader(io.BytesIO(data)), name, len(data), **kw)
    s = proc.stats.as_dict()
    assert s["read"] == s["kept"] + s["skipped"] + s["failed"], s
    return rows, proc, s


def test_good_pages_become_rows_with_all_columns():
    rows, _, s = run(warc_gz([r for _, r in good_pages(3)]))
    assert s["kept"] == 3 and s["failed"] == 0
    r = rows[0]
    assert r["url"] == "http://example.com/page0.html" and r["title"] == "Page 0"
    assert r["language"] == "eng" and r["language_score"] > 0.8 and r["valid"]
    assert r["outgoing_links"] == [("http://example.com/page1.html", "next page", None)]
    assert r["warc_offset"] == 0 and r["warc_length"] > 0 and r["http_status"] == 200
    assert r["record_id"].startswith("urn:uuid:") and r["url_domain"] == "example.com" and r["url_suffix"] == "com"


def test_each_bad_input_is_counted_with_offset_and_reason():
    good = [r for _, r in good_pages(2)]
    cases = [
        warc_record("http://a.example/broken-http", b"HTTP/1.1 OK-ish\r\nno status\r\n\r\n<html></html>"),
        warc_record("http://a.example/junk", http_response(bytes(range(256)) * 20)),
        warc_record(
            "http://a.example/latin",
            http_response(
                html_page("Bad bytes", ENGLISH + " caf\xe9").replace(b"caf", b"caf\xff"),
                ctype="text/html; charset=utf-8",
            ),
        ),
        warc_record(
            "http://a.example/huge", http_response(b"<html><body>" + b"word " * ((11 << 20) // 5) + b"</body></html>")
        ),
        warc_record("http://a.example/redirect", http_response(b"", status="301 Moved")),
        warc_record("http://a.example/style.css", http_response(b"body{}", ctype="text/css")),
    ]
    members = [gz(good[0])] + [gz(c) for c in cases] + [gz(good[1])]
    offsets = [sum(map(len, members[:i])) for i in range(len(members))]
    rows, proc, s = run(b"".join(members) + gz(good[0])[:40])  # plus a truncated last member
    assert [r["url"] for r in rows] == [
        "http://example.com/page0.html",
        "http://a.example/latin",
        "http://example.com/page1.html",
    ]
    assert s["failed_by_reason"] == {"http_malformed": 1, "truncated_gzip_member": 1}
    assert s["skipped_by_reason"] == {"binary_payload": 1, "too_large": 1, "http_status_3xx": 1, "not_html": 1}
    assert s["warnings_by_reason"] == {"invalid_bytes_in_charset": 1}
    by_reason = {e["reason"]: e for e in proc.errors}
    assert by_reason["http_malformed"]["offset"] == offsets[1]
    assert by_reason["binary_payload"]["offset"] == offsets[2]
    assert by_reason["invalid_bytes_in_charset"]["offset"] == offsets[3]
    assert by_reason["too_large"]["offset"] == offsets[4]
    assert by_reason["truncated_gzip_member"]["offset"] == sum(map(len, members))
    latin = rows[1]
    assert not latin["valid"] and "\ufffd" in latin["plain_text"]


def test_not_gzip_file_is_one_failed_read():
    rows, proc, s = run(b"PK\x03\x04 this is a zip file" * 100, "x.warc.gz")
    assert rows == [] and s["read"] == 1 and s["failed_by_reason"] == {"not_an_archive": 1}
    assert proc.errors[0]["offset"] == 0 and proc.errors[0]["file"] == "x.warc.gz"


def test_fifty_megabyte_page_is_skipped_in_bounded_memory():
    body = b"<html><body>" + (b"<p>" + b"lorem ipsum " * 80 + b"</p>") * ((50 << 20) // 967) + b"</body></html>"
    data = warc_gz([warc_record("http://big.example/", http_response(body))] + [r for _, r in good_pages(1)])
    del body
    tracemalloc.start()
    rows, _, s = run(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert s["skipped_by_reason"] == {"too_large": 1} and len(rows) == 1
    assert peak < 30 << 20, f"peak {peak >> 20} MiB while skipping a 50 MB page"


def test_captures_list_every_response_revisit_and_resource():
    recs = [r for _, r in good_pages(2)]
    recs.append(warc_record("http://example.com/page0.html", b"HTTP/1.1 200 OK\r\n\r\n", rec_type="revisit"))
    recs.append(
        warc_record(
            "http://example.com/req",
            b"GET / HTTP/1.1\r\n\r\n",
            rec_type="request",
            content_type="application/http; msgtype=request",
        )
    )
    _, proc, s = run(warc_gz(recs))
    kinds = [(c["record_type"], c["kept"], c["http_status"]) for c in proc.captures]
    assert kinds == [("response", True, 200), ("response", True, 200), ("revisit", False, 200)]
    assert s["skipped_by_reason"] == {"not_response:revisit": 1, "not_response:request": 1}


def test_arc_records_get_a_computed_payload_digest(corpus):
    """ARC has no WARC-Payload-Digest; the same sha1 of the payload is computed, so the WARC
    and ARC copies of one crawl agree on every page's digest."""

    def digests(name):
        with open(corpus / "aut" / name, "rb") as f:
            rows, _ = process_file(f, name)
        return {r["url"]: r["payload_digest"] for r in rows}

    arc, warc = digests("example.arc.gz"), digests("example.warc.gz")
    assert len(arc) == 94 and all(d and d.startswith("sha1:") for d in arc.values())
    same = sum(arc[u] == warc.get(u) for u in arc)
    assert same == len(arc), f"{len(arc) - same} digests differ"


def test_page_too_large_after_content_decoding_is_not_a_kept_capture():
    import gzip as gz_mod

    body = gz_mod.compress(b"<html><body>" + b"<p>same words again</p>" * ((11 << 20) // 23) + b"</body></html>")
    block = http_response(body, extra=b"Content-Encoding: gzip\r\n")
    rows, proc, s = run(warc_gz([warc_record("http://big.example/zipped", block)] + [r for _, r in good_pages(1)]))
    assert s["skipped_by_reason"] == {"too_large": 1} and len(rows) == 1
    assert [(c["url"], c["kept"]) for c in proc.captures] == [
        ("http://big.example/zipped", False),
        ("http://example.com/page0.html", True),
    ]


def test_no_page_with_body_text_loses_it_and_a_lost_one_would_be_counted(monkeypatch):
    # only page furniture, none of it most of the page: the rules drop every block, so the text
    # is written again with fewer rules; a page without visible text in its body has none
    furniture = (
        b"<html><body><nav>Home News</nav><header>The Daily Site</header><footer>Contact us</footer></body></html>"
    )
    blank = b"<html><head><title>t</title></head><body><script>x()</script> </body></html>"
    records = [r for _, r in good_pages(2)] + [
        warc_record(f"http://example.com/{n}", http_response(b))
        for n, b in (("furniture", furniture), ("blank", blank))
    ]
    rows, _, s = run(warc_gz(records))
    assert s["kept"] == 4 and s["empty_text"] == 0
    assert [r["plain_text"] for r in rows[2:]] == ["Home News\nThe Daily Site\nContact us", ""]
    # an extractor that lost a page's text (a future rule): counted, per file
    real = archive_pages.extract

    def losing(html, url, utf8=None, main_html=False, meta_names=content.META_NAMES):
        page = real(html, url, utf8, main_html, meta_names)
        if "furniture" in url:
            page.text = ""
        return page

    monkeypatch.setattr(archive_pages, "extract", losing)
    rows, _, s = run(warc_gz(records))
    assert s["kept"] == 4 and s["empty_text"] == 1  # "blank" had no text to lose
