"""Catalogue end to end on tiny Parquet days that follow lib.pages.schema: the Spark job
(CDXJ + URL database + report), DuckDB queries, the CLI and the HTTP API."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.catalogue import main as build
from lib.catalogue import cdxj, query, urldb
from lib.catalogue.__main__ import main as cli
from lib.catalogue.keys import normalize_url, url_id
from lib.pages.keyspace import partition_of
from lib.pages.schema import CAPTURE_SCHEMA, PAGE_SCHEMA
from lib.preprocess import health
from tests.helpers_browser import chromium

UTC = dt.timezone.utc
D1, D2 = dt.date(2026, 1, 14), dt.date(2026, 1, 15)
K = 4
NEWS = "https://example.com/news?id=2&a=1"


def _t(day: dt.date, h: int, m: int = 0) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, h, m, tzinfo=UTC)


def day_captures(root: str, day: dt.date) -> list[dict]:
    """Captures of the fixture days: unchanged, changed across days, changed within a
    day, a revisit, a resource, a 404 and a URL seen on one day only."""
    w = f"file://{root}/warc/{day:%Y-%m}/{day:%d}/crawler1/"
    f1, f2 = w + "100000-0.warc.gz", w + "120000-1.warc.gz"
    rows = []

    def cap(url, h, m, rtype, status, mime, digest, kept, f, off, lang=None, size=1000):
        """A row of CAPTURE_SCHEMA's columns, in its order, and the page's language and size."""
        rid, length = f"<urn:uuid:{day}-{len(rows)}>", 300 + len(rows)
        values = (url, _t(day, h, m), rtype, rid, status, mime, digest, kept, f, off, length, None)  # no robots.txt
        rows.append(dict(zip(CAPTURE_SCHEMA.names, values, strict=True), _lang=lang, _size=size))

    if day == D1:
        cap("http://www.example.com/", 10, 0, "response", 200, "text/html", "sha1:AAAA", True, f1, 0, "eng", 5000)
        cap("http://www.example.com/", 11, 0, "response", 200, "text/html", "sha1:AAAA", True, f2, 900, "eng", 5000)
        cap(NEWS, 10, 5, "response", 200, "text/html", "sha1:BBBB", True, f1, 400, "eng", 20000)
        cap("http://example.org/page", 10, 10, "response", 200, "text/html", "sha1:CCCC", True, f1, 800, "deu", 300)
        cap("http://example.org/page", 12, 0, "revisit", 200, "text/html", "sha1:CCCC", False, f2, 0)
        cap("http://example.de/logo.png", 10, 20, "resource", None, "image/png", "sha1:PPPP", False, f1, 1200)
        cap("http://example.de/missing", 10, 30, "response", 404, "text/html", "sha1:NNNN", False, f1, 1600)
    else:
        cap("http://www.example.com/", 9, 0, "response", 200, "text/html", "sha1:AAAA", True, f1, 0, "eng", 5000)
        cap("http://example.org/page", 9, 5, "response", 200, "text/html", "sha1:CC22", True, f1, 500, "deu", 310)
        cap(NEWS, 9, 10, "response", 200, "text/html", "sha1:BBBB", True, f1, 900, "eng", 20000)
        cap(NEWS, 13, 0, "response", 200, "text/html", "sha1:BB33", True, f2, 0, "eng", 21000)
        cap("http://new.example.net/", 9, 20, "response", 200, "text/html", "sha1:DDDD", True, f1, 1400, "fra", 0)
        cap("http://bad-date.example.net/", 9, 30, "response", 200, "text/html", "sha1:EEEE", False, f2, 700)
        rows[-1]["warc_date"] = None  # WARC-Date the reader could not parse: not indexable
    return rows


def write_day(root: str, day: dt.date) -> str:
    """A preprocess output folder per the contract: pages by language, _captures, stats, errors."""
    out = os.path.join(root, "preprocessed", f"{day:%Y-%m}", f"{day:%d}")
    rows = day_captures(root, day)
    os.makedirs(os.path.join(out, "_captures"))
    caps = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]
    pq.write_table(
        pa.Table.from_pylist(caps, schema=CAPTURE_SCHEMA), os.path.join(out, "_captures", "part-00000.parquet")
    )
    page_schema = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])
    by_lang: dict[str, list[dict]] = {}
    for r in rows:
        if r["kept"]:
            by_lang.setdefault(r["_lang"], []).append(
                dict(
                    id=url_id(r["url"]),
                    record_id=r["record_id"],
                    url=r["url"],
                    url_host=r["url"].split("/")[2],
                    title="t",
                    plain_text="x",
                    http_status=r["http_status"],
                    mime_type=r["mime_type"],
                    content_length=r["_size"],
                    payload_digest=r["payload_digest"],
                    warc_date=r["warc_date"],
                    warc_file=r["warc_file"],
                    warc_offset=r["warc_offset"],
                    warc_length=r["warc_length"],
                    valid=True,
                )
            )
    for lang, pages in by_lang.items():
        os.makedirs(os.path.join(out, f"language={lang}"))
        pq.write_table(
            pa.Table.from_pylist(pages, schema=page_schema), os.path.join(out, f"language={lang}", "part-00000.parquet")
        )
    errors = [
        {"file": rows[0]["warc_file"], "offset": 77, "reason": "truncated gzip member", "detail": "EOF"},
        {"file": rows[0]["warc_file"], "offset": 99, "reason": "bad WARC header", "detail": "no WARC-Type"},
        {
            "file": rows[0]["warc_file"].replace("100000-0", "120000-1"),
            "offset": 5,
            "reason": "truncated gzip member",
            "detail": "EOF",
        },
    ]
    with open(os.path.join(out, "_errors.jsonl"), "w") as f:
        f.writelines(json.dumps(e) + "\n" for e in errors)
    # D1 is healthy; D2 lost pages: 3 failed records of 9 read (lib.preprocess.health's block as preprocess writes it)
    failed = {"truncated gzip member": 2, "bad WARC header": 1} if day == D2 else {}
    totals = {
        "files": 2,
        "read": 9,
        "kept": 6 - len(failed),
        "html_seen": 6 - len(failed),
        "failed": sum(failed.values()),
        "failed_by_reason": failed,
        "skipped_by_reason": {},
    }
    per_file = [{"failed_by_reason": failed}, {"failed_by_reason": {}}]
    day_health = health.assess(
        totals, per_file, health.Thresholds(), [json.dumps({**e, "kind": "failed"}) for e in errors]
    )
    with open(os.path.join(out, "_stats.json"), "w") as f:
        json.dump(
            {
                "totals": {
                    "records": len(rows) + 3,
                    "captures": len(rows),
                    "pages": sum(r["kept"] for r in rows),
                    "errors": 3,
                },
                "health": day_health,
            },
            f,
        )
    open(os.path.join(out, "_SUCCESS"), "w").close()
    return out


def write_index(root: str, day: dt.date) -> list[int]:
    sizes = []
    for i, (tld, lang) in enumerate([("com", "eng"), ("org", "deu"), ("net", "fra")]):
        d = os.path.join(root, "index", f"{day:%Y-%m}", f"{day:%d}", tld, lang)
        os.makedirs(d)
        p = os.path.join(d, "index-0.ciff.gz")
        with gzip.open(p, "wb") as f:
            f.write(os.urandom(2000 * (i + 1)))
        sizes.append(os.path.getsize(p))
    return sizes


def reference_db(all_rows: list[tuple[dt.date, dict]]) -> dict[str, dict]:
    """Independent fold of the captures (oracle for the URL database)."""
    out: dict[str, dict] = {}
    dated = [dr for dr in all_rows if dr[1]["warc_date"] is not None]
    order = sorted(dated, key=lambda dr: (dr[1]["warc_date"], dr[1]["warc_file"], dr[1]["warc_offset"]))
    for day, r in order:
        i = url_id(r["url"])
        e = out.setdefault(
            i,
            dict(
                url=r["url"],
                first_seen=r["warc_date"],
                captures=0,
                digests=set(),
                changed_days=[],
                days=set(),
                last=None,
            ),
        )
        e["last_seen"] = r["warc_date"]
        e["captures"] += 1
        e["days"].add(day)
        d = r["payload_digest"]
        if d:
            if e["last"] is not None and d != e["last"] and day not in e["changed_days"]:
                e["changed_days"].append(day)
            e["digests"].add(d)
            e["last"] = d
    return out


def read_table(db: str) -> dict[str, dict]:
    t = pq.read_table(urldb.table_path(db)).to_pylist()
    return {r["id"]: r for r in t}


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    root = str(tmp_path_factory.mktemp("catalogue-root"))
    for d in (D1, D2):
        write_day(root, d)
    shard_sizes = write_index(root, D2)
    from jobs.catalogue import CatalogueJob

    for d in (D1, D2):
        job = CatalogueJob()
        assert job.main(["--date", d.isoformat(), "--root", root, "--url-partitions", str(K)], spark=spark) == 0
        s = job.last_result.summary
        assert s["captures"] == len(day_captures(root, d)) == s["cdxj_lines"] + s["captures_not_indexed"]
        assert s["captures_not_indexed"] == (1 if d == D2 else 0)
    return root, shard_sizes


def cdxj_path(root: str, day: dt.date) -> str:
    return os.path.join(root, "catalogue", f"{day:%Y-%m}", f"{day:%d}", "index.cdxj")


def test_cdxj_is_sorted_complete_and_equals_python_lines(built):
    root, _ = built
    for day in (D1, D2):
        path = cdxj_path(root, day)
        assert os.path.exists(os.path.join(os.path.dirname(path), "_SUCCESS"))
        lines = list(cdxj.read_cdxj(path))  # raises on unsorted or malformed lines
        rows = [{k: v for k, v in r.items() if not k.startswith("_")} for r in day_captures(root, day)]
        assert len(lines) == len([r for r in rows if r["warc_date"] is not None])
        expected = cdxj.iter_lines(rows, prefix=f"file://{root}/warc/")
        with open(path, encoding="utf-8") as f:
            assert f.read().splitlines() == expected
    key, ts, fields = next(x for x in cdxj.read_cdxj(cdxj_path(root, D1)) if x[2]["mime"] == "warc/revisit")
    assert (key, ts) == ("org,example)/page", "20260114120000")
    assert fields["filename"] == "2026-01/14/crawler1/120000-1.warc.gz" and fields["digest"] == "CCCC"


def test_small_day_cdxj_equals_sparks(built, spark, tmp_path):
    """A small day's CDXJ is written in the driver (lib.catalogue.day_captures.SMALL_DAY); the Spark plan that
    writes a large day's gives the same bytes on the same captures (a revisit, a resource, a 404 and
    a capture without a date among them)."""
    from lib.catalogue import day_captures as catday

    root, _ = built
    for d in (D1, D2):
        src = os.path.join(root, "preprocessed", f"{d:%Y-%m}", f"{d:%d}")
        prefix = f"file://{root}/warc/"
        local = catday.write_cdxj_local(os.path.join(src, "_captures"), prefix, str(tmp_path / f"{d}.local"))
        frame = cdxj.cdxj_lines_df(catday.read_captures(spark, src), prefix)
        on_spark = cdxj.write_cdxj(frame, str(tmp_path / f"{d}.spark"), str(tmp_path / f"work-{d}"))
        assert local == on_spark > 0
        published = open(cdxj_path(root, d), "rb").read()
        assert (tmp_path / f"{d}.local").read_bytes() == (tmp_path / f"{d}.spark").read_bytes() == published


def test_pywb_reads_and_looks_up_the_cdxj(built):
    pytest.importorskip("pywb")
    from pywb.warcserver.index.indexsource import FileIndexSource
    from pywb.warcserver.index.query import CDXQuery

    root, _ = built
    src = FileIndexSource(cdxj_path(root, D2))

    def lookup(url):  # pywb's own path: canonicalize, then binary search the sorted file
        return list(src.load_index(CDXQuery({"url": url}).params))

    hits = lookup("https://example.com/news?a=1&id=2")
    assert [(h["timestamp"], h["digest"], h["offset"]) for h in hits] == [
        ("20260115091000", "BBBB", "900"),
        ("20260115130000", "BB33", "0"),
    ]
    assert hits[0]["filename"] == "2026-01/15/crawler1/100000-0.warc.gz" and hits[0]["status"] == "200"
    prefix = lookup("example.com/*")
    assert sorted({h["url"] for h in prefix}) == ["http://www.example.com/", "https://example.com/news?id=2&a=1"]
    assert lookup("http://absent.example/") == []


def test_urldb_matches_reference_fold(built):
    root, _ = built
    db = os.path.join(root, "urldb")
    state = urldb.read_state(db)
    assert state["days"] == [D1.isoformat(), D2.isoformat()] and state["partitions"] == K
    got = read_table(db)
    allrows = [(d, r) for d in (D1, D2) for r in day_captures(root, d)]
    ref = reference_db(allrows)
    assert set(got) == set(ref)
    for i, e in ref.items():
        g = got[i]
        assert g["url"] == e["url"] and g["captures"] == e["captures"]
        assert g["first_seen"] == e["first_seen"] and g["last_seen"] == e["last_seen"]
        assert sorted(g["digests"]) == sorted(e["digests"]) and g["n_digests"] == len(e["digests"])
        assert g["changed_days"] == e["changed_days"] and g["days_seen"] == len(e["days"])
        assert g["part"] == partition_of(normalize_url(g["url"]), K)
    home = got[url_id("http://www.example.com/")]
    assert (home["captures"], home["n_digests"], home["changed_days"]) == (3, 1, [])
    assert got[url_id("https://example.com/news?id=2&a=1")]["changed_days"] == [D2]  # changed within D2
    assert got[url_id("http://example.org/page")]["changed_days"] == [D2]  # changed across days
    # the stored table is key-partitioned: each part folder holds only its own keys
    for p in os.listdir(urldb.table_path(db)):
        n = int(p.split("=")[1])
        assert all(
            r["part"] == n
            for r in got.values()
            if r["id"] in {x["id"] for x in pq.read_table(os.path.join(urldb.table_path(db), p)).to_pylist()}
        )


# before test_rebuild_after_crash_leaves_no_half_folder: its rebuild with --no-urldb has no delta
def test_the_job_writes_the_day_s_delta_and_reports_it(built):
    root, _ = built

    def delta_rows(d: dt.date) -> set[tuple[str, str]]:
        folder = os.path.join(root, "catalogue", f"{d:%Y-%m}", f"{d:%d}", "delta")
        return {(r["kind"], r["url"]) for r in pq.read_table(folder).to_pylist()}

    d1 = delta_rows(D1)
    dated = {r["url"] for r in day_captures(root, D1) if r["warc_date"] is not None}
    assert {u for k, u in d1 if k == "new"} == dated and len(dated) == 5
    assert {u for k, u in d1 if k != "new"} == {"http://example.de/missing"}  # its 404: gone
    # D2: one URL new (the one without a WARC-Date is in no table), one changed across days, one within
    assert delta_rows(D2) == {
        ("new", "http://new.example.net/"),
        ("changed", "http://example.org/page"),
        ("changed", NEWS),
    }
    with open(os.path.join(root, "catalogue", f"{D2:%Y-%m}", f"{D2:%d}", "report.html"), encoding="utf-8") as f:
        page = f.read()
    assert "<td>URLs first seen (delta/)</td><td>1</td>" in page
    assert "<td>URLs changed (new digest and another text)</td><td>2</td>" in page


def test_urldb_rerun_and_out_of_order_are_idempotent(built, spark, tmp_path):
    root, _ = built
    db = os.path.join(root, "urldb")
    before = read_table(db)
    caps = {d: spark.read.parquet(os.path.join(query.day_dir(root, d), "_captures")) for d in (D1, D2)}
    s = urldb.merge_day(spark, db, D2, caps[D2], K)  # re-run of the last day: from the version before it
    assert s["replayed_days"] == [D2.isoformat()] and s["urls"] == len(before)
    assert read_table(db) == before
    assert urldb.read_state(db)["days"] == [D1.isoformat(), D2.isoformat()]
    assert len([n for n in os.listdir(db) if n.startswith("v")]) <= urldb.DEFAULT_KEEP
    other = str(tmp_path / "db2")
    urldb.merge_day(spark, other, D2, caps[D2], K)
    s = urldb.merge_day(spark, other, D1, caps[D1], K)  # arrives late: replays both in date order
    assert s["replayed_days"] == [D1.isoformat(), D2.isoformat()]
    assert read_table(other) == before


def _part_files(db: str) -> dict[str, list[bytes]]:
    """A database's Parquet files by folder (the current version's and the edits'), their bytes:
    the file names carry a random id, the folders and contents do not."""
    state = urldb.read_state(db)
    out: dict[str, list[bytes]] = {}
    for top in (state["table"], "days"):
        for dirpath, _, names in os.walk(os.path.join(db, top)):
            files = sorted(n for n in names if n.endswith(".parquet"))
            if files:
                rel = os.path.relpath(dirpath, db).replace(state["table"], "TABLE")
                out[rel] = [open(os.path.join(dirpath, n), "rb").read() for n in files]
    return out


def test_urldb_files_are_the_same_bytes_however_many_tasks_write_them(built, spark, tmp_path, monkeypatch):
    """Fewer write tasks than parts (a small day on 2 cores) change no byte: each part still one file."""
    root, _ = built
    caps = {d: spark.read.parquet(os.path.join(query.day_dir(root, d), "_captures")) for d in (D1, D2)}
    monkeypatch.setattr(urldb, "write_tasks", lambda k, slots: 1)  # every part in one task
    few = str(tmp_path / "few")
    for d in (D1, D2):
        urldb.merge_day(spark, few, d, caps[d], K)
    monkeypatch.setattr(urldb, "write_tasks", lambda k, slots: k)  # one task per part, as before
    each = str(tmp_path / "each")
    for d in (D1, D2):
        urldb.merge_day(spark, each, d, caps[d], K)
    a, b = _part_files(few), _part_files(each)
    assert a == b and any(k.startswith("TABLE") for k in a)
    assert all(len(v) == 1 for v in a.values())  # one file per part and day
    assert read_table(few) == read_table(os.path.join(root, "urldb"))


def test_write_tasks_are_bounded_by_parts_and_slots():
    assert [urldb.write_tasks(16, s) for s in (0, 1, 2, 16, 64)] == [1, 1, 2, 16, 16]
    assert urldb.write_tasks(1, 8) == 1


def test_query_captures_marks_duplicates(built):
    root, _ = built
    rows = query.captures(root, "http://www.example.com/")
    assert [r["duplicate"] for r in rows] == [False, True, True]
    assert rows[2]["duplicate_of"] == _t(D1, 10)
    page = query.captures(root, "HTTP://EXAMPLE.ORG:80/page")  # found by normalized form
    assert [(r["record_type"], r["payload_digest"], r["duplicate"]) for r in page] == [
        ("response", "sha1:CCCC", False),
        ("revisit", "sha1:CCCC", True),
        ("response", "sha1:CC22", False),
    ]
    assert query.captures(root, "http://absent.example/") == []


def test_query_search_files_records_stats(built):
    root, _ = built
    assert [r["url"] for r in query.search(root, prefix="http://example.")] == [
        "http://example.de/logo.png",
        "http://example.de/missing",
        "http://example.org/page",
    ]
    assert [r["url"] for r in query.search(root, contains="news")] == ["https://example.com/news?id=2&a=1"]
    with pytest.raises(query.QueryError):
        query.search(root)
    files = query.files(root, D1)
    assert [(os.path.basename(f["warc_file"]), f["records"], f["pages"], f["errors"]) for f in files] == [
        ("100000-0.warc.gz", 5, 3, 2),
        ("120000-1.warc.gz", 2, 1, 1),
    ]
    recs = query.records(root, "crawler1/120000-1.warc.gz", day=D1)
    assert [(r["warc_offset"], r["record_type"]) for r in recs] == [(0, "revisit"), (900, "response")]
    st = query.stats(root, D1)
    assert (st["captures"], st["urls"], st["pages"]) == (7, 5, 4)
    assert {r["key"]: r["count"] for r in st["by_language"]} == {"eng": 3, "deu": 1}
    assert {r["key"]: r["count"] for r in st["by_status"]} == {"200": 5, "404": 1, "(none)": 1}
    assert st["duplicates"] == {"revisit": 1, "duplicate": 1, "unchanged": 0, "unique": 5}
    # D2: home page and the first news capture are as on D1; the rest is new content
    assert query.stats(root, D2)["duplicates"] == {"revisit": 0, "duplicate": 0, "unchanged": 2, "unique": 4}
    assert st["errors"]["total"] == 3 and st["errors"]["by_reason"]["truncated gzip member"] == 2
    with pytest.raises(query.NotFound):
        query.stats(root, dt.date(2026, 2, 1))


def test_cli_json_and_table(built, capsys):
    root, _ = built
    assert cli(["--root", root, "--json", "captures", "http://www.example.com/"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["duplicate"] for r in out] == [False, True, True] and out[0]["warc_date"].startswith("2026-01-14T10:00")
    assert cli(["--root", root, "files", D2.isoformat()]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split()[:2] == ["warc_file", "records"] and len(table) == 4
    assert cli(["--root", root, "stats", "2026-13-01"]) == 2
    assert "YYYY-MM-DD" in capsys.readouterr().err


def test_rebuild_after_crash_leaves_no_half_folder(built, spark):
    root, _ = built
    final = os.path.dirname(cdxj_path(root, D2))
    os.makedirs(final + ".tmp-deadbeef", exist_ok=True)  # leftover of a crashed run
    open(os.path.join(final + ".tmp-deadbeef", "junk"), "w").close()
    missing = os.path.join(root, "preprocessed", "2026-01", "16")
    os.makedirs(missing)
    assert (
        build(
            ["--input", missing, "--output", os.path.join(root, "catalogue", "2026-01", "16"), "--no-urldb"],
            spark=spark,
        )
        == 1
    )  # no _SUCCESS: refused
    assert not os.path.exists(os.path.join(root, "catalogue", "2026-01", "16", "_SUCCESS"))
    shutil.rmtree(missing)
    assert build(["--date", D2.isoformat(), "--root", root, "--no-urldb"], spark=spark) == 0
    assert not os.path.exists(final + ".tmp-deadbeef") and os.path.exists(os.path.join(final, "_SUCCESS"))
    assert sorted(os.listdir(final)) == ["_SUCCESS", "index.cdx", "index.cdxj", "report.html"]


def _get(base: str, path: str) -> tuple[int, object]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(base + path, timeout=30) as r:
            assert r.headers["Content-Type"].startswith("application/json")
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_http_api_over_real_http(built, tmp_path):
    """The catalogue queries as the one service answers them, under /catalogue/ (lib.serve)."""
    from urllib.parse import quote

    from lib.serve.app import create_app
    from lib.serve.server import ServerThread

    root, _ = built
    srv = ServerThread(create_app({"dc1": root}, cache_dir=str(tmp_path / "cache")))
    base = srv.url + "/catalogue"
    try:
        assert _get(base, "/days") == (200, [D1.isoformat(), D2.isoformat()])
        code, caps = _get(base, "/captures?url=" + quote("http://www.example.com/", safe=""))
        assert code == 200 and [c["duplicate"] for c in caps] == [False, True, True]
        assert caps[1]["duplicate_of"] == "2026-01-14T10:00:00+00:00"
        code, hits = _get(base, "/search?prefix=" + quote("https://", safe=""))
        assert code == 200 and [h["url"] for h in hits] == ["https://example.com/news?id=2&a=1"]
        assert hits[0]["changed_days"] == [D2.isoformat()] and hits[0]["n_digests"] == 2
        code, files = _get(base, f"/files?day={D2}")
        assert code == 200 and [f["records"] for f in files] == [4, 2]
        code, recs = _get(base, "/records?file=" + quote(files[1]["warc_file"], safe=""))
        assert code == 200 and [r["url"] for r in recs] == [
            "https://example.com/news?id=2&a=1",
            "http://bad-date.example.net/",
        ]
        code, st = _get(base, f"/stats?day={D2}")
        assert code == 200 and st["captures"] == 6 and st["urls"] == 5
        assert _get(base, "/stats?day=2030-01-01")[0] == 404
        assert _get(base, "/stats")[0] == 400
        assert _get(base, "/search?prefix=x&limit=many")[0] == 400
        assert _get(base, "/nope")[0] == 404
        assert _get(base, "/days?dc=elsewhere")[0] == 404
    finally:
        srv.stop()


PLOTS = [
    "Pages by language",
    "Captures by MIME type",
    "Captures by HTTP status",
    "Top hosts",
    "Duplicate share (same URL and payload digest as earlier that day or the day before)",
    "Page sizes (decoded HTTP body)",
    "Index shard sizes",
]


def test_report_renders_in_headless_chromium(built, tmp_path):
    import subprocess

    from lib.catalogue.report import count_plots

    cmd = chromium(tmp_path)
    root, shard_sizes = built
    page_path = os.path.join(os.path.dirname(cdxj_path(root, D2)), "report.html")
    with open(page_path, encoding="utf-8") as f:
        page = f.read()
    assert count_plots(page) == PLOTS
    assert "http://" not in page.split("<body>")[1].split("<svg")[0]  # self-contained: nothing to fetch
    for size in shard_sizes:  # the shard plot labels each shard and its size in KiB
        assert f">{size / 1024:,.0f}<" in page
    assert ">truncated gzip member<" in page and ">bad WARC header<" in page
    url = "file://" + page_path
    dom = subprocess.run(cmd + ["--dump-dom", url], capture_output=True, text=True, timeout=90, check=True).stdout
    assert count_plots(dom) == PLOTS  # the browser parsed every inline SVG with its title
    assert dom.count("<figure>") == len(PLOTS) and dom.count("<svg") == len(PLOTS)
    shot = tmp_path / "report.png"
    subprocess.run(
        cmd + [f"--screenshot={shot}", "--window-size=1400,2400", url], capture_output=True, timeout=90, check=True
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    keep = os.environ.get("CATALOGUE_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_report_opens_with_the_health_banner(built):
    root, _ = built

    def body(day):
        with open(os.path.join(os.path.dirname(cdxj_path(root, day)), "report.html"), encoding="utf-8") as f:
            return f.read().split("<body>", 1)[1].lstrip()

    bad = body(D2)  # unhealthy: a red alert before anything else, with what was lost and where
    assert bad.startswith('<div id="health" class="health bad" role="alert"><strong>Unhealthy day</strong>')
    banner = bad.split("</div>", 1)[0]
    assert "breached max_failed_share (33.33% &gt; 1.00%)" in banner
    assert (
        "failed records 3/9 = 33.33%" in banner and "top reasons: truncated gzip member 2, bad WARC header 1" in banner
    )
    assert "offset 77: truncated gzip member: EOF" in banner and "offset 5: truncated gzip member" in banner
    good = body(D1)  # healthy: one plain green line
    assert good.startswith('<p id="health" class="health ok">Healthy day: failed records 0/9 = 0.00%')
    assert 'role="alert"' not in good


def test_output_to_s3_has_success_last(built, spark, s3_bucket):
    from lib.store import storage

    root, _ = built
    dest = f"s3://{s3_bucket}/catalogue/2026-01/14"
    assert build(["--date", D1.isoformat(), "--root", root, "--output", dest, "--no-urldb"], spark=spark) == 0
    names = sorted(f.uri.rsplit("/", 1)[1] for f in storage.list_files(dest))
    assert names == ["_SUCCESS", "index.cdx", "index.cdxj", "report.html"]
    with open(cdxj_path(root, D1), "rb") as f:
        assert storage.read_bytes(dest + "/index.cdxj") == f.read()


def test_serve_command_answers_http(built, tmp_path):
    """``python -m lib.catalogue serve`` points to the one service; ``python -m lib.serve`` answers the catalogue."""
    import subprocess
    import sys

    root, _ = built
    moved = subprocess.run(
        [sys.executable, "-m", "lib.catalogue", "--root", root, "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert moved.returncode == 2 and "python -m lib.serve --root ROOT" in moved.stderr
    # the index shards of this fixture are random bytes: the service still serves the catalogue
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lib.serve",
            "--root",
            root,
            "--port",
            "0",
            "--lazy",
            "--cache",
            str(tmp_path / "cache"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()  # "serving default=ROOT on http://127.0.0.1:PORT/"
        assert " on http://127.0.0.1:" in line, line
        base = line.strip().rsplit(" on ", 1)[1].rstrip("/")
        assert _get(base, "/catalogue/days") == (200, [D1.isoformat(), D2.isoformat()])
    finally:
        proc.terminate()
        proc.wait(10)


def test_captures_in_many_small_files_are_read_by_few_tasks(spark, tmp_path):
    """A day whose captures come in hundreds of small files (a collection of small archives)
    is read in tasks planned by bytes: about one a core, not one per few files, and every row
    is read once."""
    from lib.catalogue.day_captures import read_captures

    caps = tmp_path / "day" / "_captures"
    caps.mkdir(parents=True)
    when = dt.datetime(2026, 1, 15, tzinfo=dt.timezone.utc)
    for i in range(300):
        rows = [
            dict(
                url=f"https://h{i}.example.org/{j}",
                warc_date=when,
                record_type="response",
                record_id=f"<urn:uuid:{i}-{j}>",
                http_status=200,
                mime_type="text/html",
                payload_digest=None,
                kept=True,
                warc_file="file:///x.warc.gz",
                warc_offset=j * 100,
                warc_length=99,
            )
            for j in range(3)
        ]
        pq.write_table(pa.Table.from_pylist(rows, schema=CAPTURE_SCHEMA), caps / f"part-{i:04d}.parquet")
    df = read_captures(spark, str(tmp_path / "day"))
    # Spark's default 4 MB open cost would make 300 files 10 tasks of 30 files at least
    assert df.rdd.getNumPartitions() <= 2 * spark.sparkContext.defaultParallelism
    got = sorted(r["record_id"] for r in df.select("record_id").collect())
    assert got == sorted(f"<urn:uuid:{i}-{j}>" for i in range(300) for j in range(3))
