"""The metadata export over HTTP against pyarrow filtering of the published metadata files."""

from __future__ import annotations

import io
import pathlib

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.serve.export import unified_schema


def published_rows(root: pathlib.Path, days: list[str], keep) -> list[dict]:
    """Every row of the days' metadata files for which ``keep(tld_folder, lang_folder, row)``."""
    out = []
    for day in days:
        for f in sorted((root / "index" / day[:7] / day[8:]).glob("*/*/metadata-*.parquet")):
            tld, lang = f.parent.parent.name, f.parent.name
            out += [r for r in pq.read_table(f).to_pylist() if keep(tld, lang, r)]
    return out


def export(server, **params) -> pa.Table:
    r = httpx.get(f"{server.url}/metadata", params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/vnd.apache.parquet"
    return pq.read_table(io.BytesIO(r.content))


def key(r: dict):
    return (r["url"], r["warc_date"], r["docid"])


DAYS3 = ["2026-05-01", "2026-05-02", "2026-05-03"]


@pytest.mark.parametrize(
    "params,keep",
    [
        ({"lang": "deu"}, lambda t, lang, r: lang == "deu"),
        (
            {"domain": "example.com"},
            lambda t, lang, r: r["url_host"] == "example.com" or r["url_host"].endswith(".example.com"),
        ),
        (
            {"host": "www.beispiel2.de,SITE3.example.com"},
            lambda t, lang, r: r["url_host"] in ("www.beispiel2.de", "site3.example.com"),
        ),
        # .fr pages are too few for a folder of their own (other/fra); .uk has a folder on some days only
        ({"tld": "fr"}, lambda t, lang, r: r["url_host"].endswith(".fr")),
        ({"tld": "uk", "lang": "eng"}, lambda t, lang, r: r["url_host"].endswith(".uk") and lang == "eng"),
        (
            {"tld": "com", "domain": "example.com", "lang": "eng"},
            lambda t, lang, r: t == "com" and lang == "eng" and r["url_host"].endswith(".example.com"),
        ),
    ],
)
def test_export_equals_pyarrow_filter(server, published, params, keep):
    got = export(server, day=DAYS3[0], to=DAYS3[-1], **params)
    want = published_rows(published, DAYS3, keep)
    assert want, "the case must select some rows"
    files = [pq.ParquetFile(f) for f in sorted(published.glob("index/2026-05/0[123]/*/*/metadata-*.parquet"))]
    assert got.schema.names == unified_schema(files).names  # every column of the files
    assert sorted(got.to_pylist(), key=key) == sorted(want, key=key)


def test_export_with_no_matching_row_is_valid_empty_parquet(server):
    t = export(server, day="2026-05-01", host="nowhere.example.org")
    assert t.num_rows == 0 and "url_host" in t.schema.names


@pytest.mark.parametrize(
    "params,status",
    [
        ({"day": "2026-05-01", "domain": "a/b"}, 400),
        ({"day": "2026-05-01", "host": "x@y"}, 400),
        ({"day": "2026-05-01", "tld": "-x"}, 400),
        ({"day": "2026-05-01", "lang": "qqq"}, 404),  # well-formed, but no shard has it
        ({"day": "2026-04-01"}, 404),
    ],
)
def test_export_bad_requests(server, params, status):
    r = httpx.get(f"{server.url}/metadata", params=params)
    assert r.status_code == status and r.json()["error"]
