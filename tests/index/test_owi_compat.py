"""A reader that knows only OpenWebSearch.eu's published metadata schema 0.1.0 opens a day's
metadata store and finds what it expects; MOSAIC's lookups work on it.

The schema below is written out from Resilipipe's ``conf/config.py`` (``SCHEMA_VERSION =
"0.1.0"``, its base columns and the pyarrow schemas of its links, curlielabels and
geoparsing modules), independently of lib.index.owi, so that a change there that breaks a
0.1.0 reader fails here. Runs on the demo day (lib.warc.sample) and on the shared real
crawl samples, each preprocessed and indexed by the jobs.
"""

from __future__ import annotations

import datetime as dt
import pathlib
from urllib.parse import urlparse

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import tldextract

from lib.ciff.reader import CiffReader
from tests.helpers_day import index_corpus_small_shards

S, B = pa.string(), pa.bool_()
SMAP = pa.map_(pa.string(), pa.string())
MEDIA = pa.list_(pa.struct([("src", S), ("width", S), ("height", S)]))
SCHEMA_010 = [
    ("id", S, False),
    ("record_id", S, False),
    ("title", S, True),
    ("plain_text", S, True),
    ("json-ld", S, True),
    ("microdata", S, True),
    ("warc_date", S, True),
    ("warc_ip", S, True),
    ("url", S, True),
    ("url_scheme", S, True),
    ("url_path", S, True),
    ("url_params", S, True),
    ("url_query", S, True),
    ("url_fragment", S, True),
    ("url_subdomain", S, True),
    ("url_domain", S, True),
    ("url_suffix", S, True),
    ("url_is_private", B, True),
    ("mime_type", S, True),
    ("charset", S, True),
    ("content_type_other", SMAP, True),
    ("http_server", S, True),
    ("language", S, True),
    ("valid", B, True),
    ("warc_file", S, True),
    ("ows_canonical", S, True),
    ("ows_resource_type", S, True),
    ("ows_curlielabel", S, True),
    ("ows_index", B, True),
    ("ows_genai", B, True),
    ("ows_genai_details", S, True),
    ("ows_fetch_response_time", pa.int32(), True),
    ("ows_fetch_num_errors", S, True),
    ("schema_metadata", SMAP, True),
    # modules: links, curlielabels, geoparsing
    ("outgoing_links", pa.list_(S), True),
    ("image_links", MEDIA, True),
    ("video_links", MEDIA, True),
    ("iframes", MEDIA, True),
    ("curlielabels", pa.list_(S), True),
    (
        "address",
        pa.list_(
            pa.struct(
                [
                    (
                        "loc",
                        pa.struct(
                            [("streetAddress", S), ("postalCode", S), ("addressLocality", S), ("addressCountry", S)]
                        ),
                    ),
                    ("geo", pa.struct([("latitude", pa.float64()), ("longitude", pa.float64())])),
                ]
            )
        ),
        True,
    ),
]
# how DuckDB names the Arrow types of the base columns
DUCK = {S: "VARCHAR", B: "BOOLEAN", pa.int32(): "INTEGER", SMAP: "MAP(VARCHAR, VARCHAR)", pa.list_(S): "VARCHAR[]"}
EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)  # the snapshot in the package: offline


def check_store(day: pathlib.Path) -> dict[str, int]:
    """Everything a 0.1.0 reader and MOSAIC need, on every shard of ``day``; a few counts."""
    metas = sorted(day.rglob("metadata-*.parquet"))
    assert metas, f"no metadata files under {day}"
    seen = {"rows": 0, "json_ld": 0, "with_links": 0, "no_date": 0}
    for meta in metas:
        schema = pq.read_schema(meta)
        for name, typ, nullable in SCHEMA_010:
            f = schema.field(name)  # KeyError: a column the reader expects is missing
            assert f.type == typ, (meta, name, f.type, typ)
            assert f.nullable == nullable, (meta, name)
        assert (schema.metadata or {}).get(b"schema_version") == b"0.1.0"
        t = pq.read_table(meta)
        assert set(t.column("schema_metadata").to_pylist()[0]) == {("schema_version", "0.1.0")}
        seen["rows"] += t.num_rows
        seen["json_ld"] += t.num_rows - t.column("json-ld").null_count
        seen["with_links"] += t.num_rows - t.column("outgoing_links").null_count
        # MOSAIC: the CIFF document id is the metadata's record_id, one row each
        with CiffReader(str(meta).replace("metadata-", "index-").replace(".parquet", ".ciff.gz")) as r:
            docs = list(r.docs())
        assert [d.collection_docid for d in docs] == t.column("record_id").to_pylist()
        con = duckdb.connect()
        for d in docs[:: max(1, len(docs) // 5)]:
            rows = con.execute(
                f"SELECT docid, warc_date, plain_text, title, url FROM read_parquet('{meta}') WHERE record_id = ?",
                [d.collection_docid],
            ).fetchall()
            assert len(rows) == 1 and rows[0][0] == d.docid, (meta, d)
            if rows[0][1] is not None:  # null only where the WARC-Date itself is unreadable (below)
                dt.datetime.strptime(rows[0][1], "%Y-%m-%dT%H:%M:%SZ")  # yyyy-MM-dd'T'HH:mm:ss'Z'
            if d.doclength:
                assert rows[0][2] or rows[0][3], (meta, d)  # snippets come from plain_text
        bad = con.execute(
            f"SELECT count(*) FROM read_parquet('{meta}') WHERE warc_date IS NOT NULL AND "
            "try_strptime(warc_date, '%Y-%m-%dT%H:%M:%SZ') IS NULL"
        ).fetchone()[0]
        assert bad == 0
        seen["no_date"] += t.column("warc_date").null_count
        # url parts as tldextract gives them (Resilipipe's parse_url; empty parts null)
        for u, sub, dom, suf in zip(
            *(t.column(c).to_pylist() for c in ("url", "url_subdomain", "url_domain", "url_suffix"))
        ):
            e = EXTRACT(urlparse(u).hostname or "")
            assert (sub, dom, suf) == (e.subdomain or None, e.domain or None, e.suffix or None), u
    # DuckDB over the whole day, as owilix queries it
    con = duckdb.connect()
    cols = {
        r[0]: r[1]
        for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{day}/**/metadata-*.parquet')").fetchall()
    }
    for name, typ, _ in SCHEMA_010:
        assert name in cols, name
        if typ in DUCK:
            assert cols[name] == DUCK[typ], (name, cols[name])
    n = con.execute(
        f"SELECT count(*), count(DISTINCT record_id) FROM read_parquet('{day}/**/metadata-*.parquet')"
        ' WHERE "json-ld" IS NULL OR "json-ld" LIKE \'[%\''
    ).fetchone()
    assert n[0] == seen["rows"] == n[1]
    return seen


def test_demo_day_reads_as_schema_010(spark, tmp_path):
    from jobs import index, preprocess
    from lib.warc.sample import write_sample_crawl

    day = dt.date(2026, 1, 15)
    write_sample_crawl(str(tmp_path), day)
    assert preprocess.main(["--date", "2026-01-15", "--root", str(tmp_path)], spark=spark) == 0
    assert index.main(["--date", "2026-01-15", "--root", str(tmp_path), "--no-graph"], spark=spark) == 0
    seen = check_store(tmp_path / "index" / "2026-01" / "15")
    assert seen["rows"] >= 40 and seen["with_links"] > 0 and seen["no_date"] == 0


def test_real_day_reads_as_schema_010(spark, corpus, tmp_path):
    warc, pre, out = tmp_path / "warc", tmp_path / "pre", tmp_path / "idx"
    index_corpus_small_shards(spark, corpus, warc, pre, out)
    seen = check_store(out)
    assert seen["rows"] > 100 and seen["with_links"] > 50
    # a ClueWeb file writes WARC-Date as '2008-10-294T05:21:46-0700': no date, in the pages as here
    no_date = (
        duckdb.connect()
        .execute(f"SELECT count(*) FILTER (WHERE warc_date IS NULL) FROM read_parquet('{pre}/language=*/*.parquet')")
        .fetchone()[0]
    )
    assert seen["no_date"] == no_date < seen["rows"] // 10
    assert seen["json_ld"] > 0, "real pages carry JSON-LD"


@pytest.mark.parametrize(
    "url,sub,dom,suf",
    [
        ("https://www.example.co.uk/a;p?q=1#f", "www", "example", "co.uk"),
        ("http://192.168.0.1/x", None, "192.168.0.1", None),
    ],
)
def test_url_parts_as_resilipipe(url, sub, dom, suf):
    from lib.pages.weburls import owi_url_parts

    p = owi_url_parts(url)
    assert (p["url_subdomain"], p["url_domain"], p["url_suffix"]) == (sub, dom, suf)
    if ";" in url:
        assert (p["url_path"], p["url_params"], p["url_query"], p["url_fragment"]) == ("/a", "p", "q=1", "f")


def test_page_row_to_owi_columns():
    """One crawled page through preprocess's row and the index's mapping: OWS.* headers,
    Content-Type parameters, JSON-LD, links and anchors, the date string."""
    import io

    import numpy as np

    from lib.index.owi import DOCS_SCHEMA, metadata_batch
    from lib.pages.schema import PAGE_SCHEMA
    from lib.preprocess.archive_pages import process_file
    from tests.helpers_warc import ENGLISH, http_response, warc_gz, warc_record

    body = (
        f'<html><head><title>T</title><script type=\'application/ld+json\'>{{"@type": "Place"}}</script>'
        f"</head><body><p>{ENGLISH}</p><a href='/b'>to b</a><a href='https://x.org/'>x</a></body></html>"
    ).encode()
    rec = warc_record(
        "https://www.example.co.uk/a;p?q=1",
        http_response(body, ctype='text/html; charset=utf-8; profile="x y"', extra=b"Server: nginx\r\n"),
    )
    rec = rec.replace(
        b"WARC-Date:",
        b"OWS.INDEX: true\r\nOWS.GENAI: no\r\nOWS.FETCH.RESPONSE-TIME: 123\r\nOWS.CURLIELABEL: arts\r\nWARC-Date:",
        1,
    )
    rows, _ = process_file(io.BufferedReader(io.BytesIO(warc_gz([rec]))), "t.warc.gz")
    assert len(rows) == 1 and rows[0]["content_type_other"] == [("profile", "x y")]
    b = pa.RecordBatch.from_pylist(rows, schema=PAGE_SCHEMA)
    m = metadata_batch(b, "eng", np.array([7])).to_pylist()[0]
    assert m["record_id"] == m["collection_docid"] == rows[0]["record_id"]
    assert m["warc_date"] == "2026-01-15T01:02:03Z" and m["json-ld"] == "[{'@type': 'Place'}]"
    assert (m["url_subdomain"], m["url_domain"], m["url_suffix"], m["url_params"], m["url_query"]) == (
        "www",
        "example",
        "co.uk",
        "p",
        "q=1",
    )
    assert m["outgoing_links"] == ["https://www.example.co.uk/b", "https://x.org/"]
    assert m["outgoing_link_anchors"] == ["to b", "x"]
    assert (m["ows_index"], m["ows_genai"], m["ows_fetch_response_time"], m["ows_curlielabel"]) == (
        True,
        False,
        123,
        "Arts",
    )
    assert m["ows_canonical"] is None and m["microdata"] is None and m["http_server"] == "nginx"
    assert m["content_type_other"] == [("profile", "x y")] and m["doclength"] == 7
    assert m["schema_metadata"] == [("schema_version", "0.1.0")] and set(m) == set(DOCS_SCHEMA.names)
