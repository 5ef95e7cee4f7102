"""Catalogue: record-level functions (no Spark): SURT keys, CDXJ lines, replay plans, tables."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest

from lib.catalogue import cdx, cdxj, keys, urldb
from lib.catalogue.__main__ import format_table
from lib.catalogue.report import bar_plot, count_plots, size_buckets

UTC = dt.timezone.utc


def test_surt_key_matches_pywb_canonicalizer():
    pytest.importorskip("pywb")
    from pywb.utils.canonicalize import canonicalize

    for url in ["http://www.Example.com/a/b?z=1&a=2#frag", "https://example.org:443/x y", "http://example.de"]:
        assert keys.surt_key(url) == canonicalize(url)
    assert keys.surt_key("http://www.Example.com/a/b?z=1&a=2") == "com,example)/a/b?a=2&z=1"


def test_surt_key_has_no_whitespace_even_for_odd_input():
    for url in ["not a url", "http://example.com/tab\there", "http://exa mple.com/"]:
        k = keys.surt_key(url)
        assert " " not in k and "\t" not in k, k


def test_cdx_lines_from_cdxj_sorted_as_pywb_sorts(tmp_path):
    """Equal key and timestamp: CDXJ's order (by its JSON) is not CDX's (by url, then mime...);
    whitespace in a value is escaped, a missing value is '-', pywb's meta lines are dropped."""
    rows = [
        ("com,e)/ 20260101000000", {"url": "http://e.com/!", "mime": "text/html", "status": "200", "length": "5"}),
        ("com,e)/ 20260101000000", {"url": "http://e.com/", "mime": "text/html", "status": "200", "length": "6"}),
        ("com,e)/a 20260101000000", {"url": "http://e.com/a b", "mime": "warc/revisit", "digest": "D", "offset": "0"}),
    ]
    lines = sorted((f"{k} {json.dumps(f, separators=(',', ':'))}" for k, f in rows), key=str.encode)
    assert [ln.split('"url":"')[1][:14] for ln in lines] == ["http://e.com/!", 'http://e.com/"', "http://e.com/a"]
    src = tmp_path / "index.cdxj"
    src.write_text('!meta 0 {"x":1}\n' + "".join(x + "\n" for x in lines))
    assert cdx.write_cdx(str(src), str(tmp_path / "index.cdx")) == 3
    assert (tmp_path / "index.cdx").read_text().splitlines() == [
        " CDX N b a m s k r M S V g",
        "com,e)/ 20260101000000 http://e.com/ text/html 200 - - - 6 - -",
        "com,e)/ 20260101000000 http://e.com/! text/html 200 - - - 5 - -",
        "com,e)/a 20260101000000 http://e.com/a%20b warc/revisit - D - - - 0 -",
    ]


def test_timestamp14_is_utc():
    t = dt.datetime(2026, 1, 14, 23, 59, 58, 999999, tzinfo=UTC)
    micros = int(t.timestamp() * 1_000_000)
    assert keys.timestamp14(micros) == "20260114235958"


def test_normalize_and_id():
    assert keys.normalize_url("HTTP://Example.COM:80") == "http://example.com/"
    assert keys.normalize_url("https://example.com:8443/a?b=1#x") == "https://example.com:8443/a?b=1"
    assert keys.url_id("http://EXAMPLE.com") == hashlib.sha256(b"http://example.com/").hexdigest()


def test_cdxj_line_fields_and_round_trip():
    cap = {
        "url": "http://www.example.com/",
        "warc_date": dt.datetime(2026, 1, 14, 10, 0, 1, tzinfo=UTC),
        "record_type": "revisit",
        "http_status": 200,
        "mime_type": "text/html",
        "payload_digest": "sha1:AAAABBBB",
        "warc_file": "file:///r/warc/2026-01/14/c/a.warc.gz",
        "warc_offset": 1234,
        "warc_length": 567,
    }
    line = cdxj.cdxj_line(cap, prefix="file:///r/warc/")
    key, ts, fields = cdxj.parse_line(line)
    assert (key, ts) == ("com,example)/", "20260114100001")
    assert fields == {
        "url": "http://www.example.com/",
        "mime": "warc/revisit",
        "digest": "AAAABBBB",
        "length": "567",
        "offset": "1234",
        "filename": "2026-01/14/c/a.warc.gz",
    }
    cap["record_type"] = "response"
    assert cdxj.parse_line(cdxj.cdxj_line(cap))[2]["status"] == "200"
    cap["http_status"] = None
    assert "status" not in cdxj.parse_line(cdxj.cdxj_line(cap))[2]


@pytest.mark.parametrize("prefix", ["/r/warc", "/r/warc/", "file:///r/warc", "file:///r/warc/", "/r/./warc//"])
def test_cdxj_filename_is_relative_to_a_local_prefix_however_spelled(prefix):
    assert cdxj.relative_filename("file:///r/warc/2026-01/14/c/a.warc.gz", prefix) == "2026-01/14/c/a.warc.gz"
    assert cdxj.relative_filename("file:///r/warcs/a.warc.gz", prefix) == "file:///r/warcs/a.warc.gz"  # not below it
    cap = {
        "url": "http://example.com/",
        "warc_date": dt.datetime(2026, 1, 14, tzinfo=UTC),
        "record_type": "response",
        "warc_file": "file:///r/warc/2026-01/14/c/a.warc.gz",
        "warc_offset": 0,
        "warc_length": 9,
    }
    assert cdxj.parse_line(cdxj.cdxj_line(cap, prefix))[2]["filename"] == "2026-01/14/c/a.warc.gz"


def test_cdxj_filename_relative_to_a_relative_path_and_s3_prefixes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cdxj.relative_filename(f"file://{tmp_path}/warc/x.warc.gz", "warc") == "x.warc.gz"
    uri = "s3://crawl-dc1/dc1/warc/2026-01/14/c/a.warc.gz"
    for prefix in ("s3://crawl-dc1/dc1/warc", "s3://crawl-dc1/dc1/warc/"):
        assert cdxj.relative_filename(uri, prefix) == "2026-01/14/c/a.warc.gz"
    assert cdxj.relative_filename(uri, "s3://crawl-dc1") == "dc1/warc/2026-01/14/c/a.warc.gz"
    assert cdxj.relative_filename(uri, "s3://other/dc1/warc") == uri
    assert cdxj.relative_filename(uri, None) == uri


@pytest.mark.parametrize("bad", ["onlykey", "k 2026 {}", "k 20260114100001 [1]", "k 20260114100001 {x"])
def test_parse_line_rejects_bad_lines(bad):
    with pytest.raises(cdxj.CDXJError, match="f.cdxj:7"):
        cdxj.parse_line(bad, "f.cdxj:7")


def test_read_cdxj_detects_unsorted(tmp_path):
    p = tmp_path / "x.cdxj"
    p.write_text('b 20260101000000 {"url": "b"}\na 20260101000000 {"url": "a"}\n')
    with pytest.raises(cdxj.CDXJError, match=r"x.cdxj:2: line out of order"):
        list(cdxj.read_cdxj(str(p)))


def test_plan_replay_in_order_rerun_and_out_of_order():
    h = [
        {"version": 1, "table": "v000001", "days": ["2026-01-01"]},
        {"version": 2, "table": "v000002", "days": ["2026-01-01", "2026-01-02"]},
    ]
    merged = ["2026-01-01", "2026-01-02"]
    base, days = urldb.plan_replay(h, merged, "2026-01-03")
    assert base["version"] == 2 and days == ["2026-01-03"]
    base, days = urldb.plan_replay(h, merged, "2026-01-02")  # re-run of the last day
    assert base["version"] == 1 and days == ["2026-01-02"]
    base, days = urldb.plan_replay(h, merged, "2026-01-01")  # re-run of the first: replay both
    assert base is None and days == ["2026-01-01", "2026-01-02"]
    base, days = urldb.plan_replay(h[1:], merged, "2025-12-31")  # older than everything kept
    assert base is None and days == ["2025-12-31", "2026-01-01", "2026-01-02"]


def test_format_table_aligns_and_truncates():
    text = format_table([{"a": 1, "bb": "x" * 100}, {"a": 22, "bb": None}])
    lines = text.splitlines()
    assert lines[0].split() == ["a", "bb"] and len(lines) == 4
    assert lines[2].endswith("…") and len(lines[2]) < 80
    assert format_table([]) == "(no rows)"


def test_plot_svg_has_title_and_bars():
    svg = bar_plot("Pages by language", "language", ["eng", "deu"], [5, 2])
    assert svg.startswith("<svg") and count_plots(svg) == ["Pages by language"]
    assert ">eng<" in svg and ">deu<" in svg  # text kept as text (svg.fonttype none)
    assert "no data" in bar_plot("Empty", "e", [], [])


def test_size_buckets_labels():
    labels, counts = size_buckets([{"bucket": 10, "count": 3}, {"bucket": -1, "count": 1}])
    assert labels == ["0 B", "1.0 KiB–2.0 KiB"] and counts == [1, 3]


def test_to_json_dates():
    from lib.catalogue.query import to_json

    out = json.loads(to_json({"d": dt.date(2026, 1, 2), "t": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)}))
    assert out == {"d": "2026-01-02", "t": "2026-01-02T03:04:05+00:00"}


def test_the_report_summary_names_the_delta_and_the_copies_of_earlier_days(tmp_path):
    from lib.catalogue.report import _changes, index_dedup

    day = tmp_path / "index"
    day.mkdir()
    dedup = {"judged": 7, "pages": 8, "clusters": 2, "pages_in_clusters": 5}
    (day / "_stats.json").write_text(
        json.dumps({"dedup": dict(dedup, across_days={"pages_with_earlier_copy": 3, "matched_days": 29})})
    )
    rows = dict(_changes({"delta": {"new": 4, "gone": 2}, "dedup": index_dedup(str(day))}))
    assert rows["URLs gone (404/410, or purged since the delta before)"] == 2
    assert rows["pages repeating an earlier day (dup_of)"] == "3 (against 29 kept days)"
    assert "pages repeating an earlier day (dup_of)" not in dict(_changes({"dedup": dict(dedup, across_days=None)}))


def test_a_small_day_starts_the_catalogues_driver_light(tmp_path, monkeypatch):
    """The catalogue's driver JVM is light on a day of few captures, by the bytes listed (not read),
    and keeps the JVM's defaults on a large one or where there is nothing to list."""
    import jobs.catalogue as job
    from lib.catalogue import day_captures as catday

    caps = tmp_path / "preprocessed" / "_captures"
    caps.mkdir(parents=True)
    (caps / "part-0.parquet").write_bytes(b"x" * 4096)
    (caps / "part-1.parquet").write_bytes(b"x" * 4096)
    opts = job.CatalogueOptions(input=str(tmp_path / "preprocessed"))
    assert catday.is_small_day(str(tmp_path / "preprocessed"))
    assert job.CatalogueJob().light(opts) is True
    monkeypatch.setattr(catday, "SMALL_DAY_BYTES", 8191)  # the two files are 8,192 bytes
    assert job.CatalogueJob().light(opts) is False
    assert catday.is_small_day(None) is False
