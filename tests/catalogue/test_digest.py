"""Look-ups by payload digest (lib.catalogue.payload_table) over two days preprocessed from real
archives that share captures: the CLI and the HTTP API list exactly the captures warcio finds
with that digest in the same files."""

from __future__ import annotations

import base64
import binascii
import io
import json
import os
from contextlib import redirect_stdout

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from lib.catalogue import digeststore, payload_table, query, urldb
from lib.catalogue.__main__ import main as cli
from tests.fixtures_days import CORPUS_DAYS

DAYS = CORPUS_DAYS  # the two days of tests/fixtures_days.py
CAPTURE_TYPES = ("response", "revisit", "resource")


def test_parse_digest_forms():
    b32 = "QTXZTNOTBP35RQSAAOPRGBCQGWEWIJJE"
    hexd = binascii.hexlify(base64.b32decode(b32)).decode()
    for form in (f"sha1:{b32}", b32, b32.lower(), f"SHA1:{b32}", hexd, hexd.upper(), f"sha1:{hexd}", f" {b32}\n"):
        assert payload_table.parse_digest(form) == f"sha1:{b32}", form
    assert payload_table.parse_digest("sha256:abc") == "sha256:abc"
    for bad, why in [
        ("", "empty"),
        ("sha1:", "expected"),
        ("QTXZ", "got 4 characters"),
        (b32 + "1", "got 33"),
        ("g" * 40, "got 40"),
        ("bad algo:x", "expected"),
        ("sha1:" + "1" * 32, "got 32"),
    ]:
        with pytest.raises(payload_table.DigestError, match=why):
            payload_table.parse_digest(bad)
    assert (
        payload_table.digest_key("sha1:" + b32.lower()) == f"sha1:{b32}"
        and payload_table.digest_key("md5:=odd=") == "md5:=odd="
    )


def _warcio_captures(root: str) -> dict[str, list[dict]]:
    """Every capture record of the days' archives by digest, as warcio reads them."""
    out: dict[str, list[dict]] = {}
    for day in DAYS:
        folder = os.path.join(root, "warc", f"{day:%Y-%m}", f"{day:%d}")
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                it = ArchiveIterator(f)
                for rec in it:
                    h = rec.rec_headers
                    d, url = h.get_header("WARC-Payload-Digest"), h.get_header("WARC-Target-URI")
                    status = rec.http_headers.get_statuscode() if rec.http_headers else None
                    ct = (rec.http_headers or rec.rec_headers).get_header("Content-Type") or ""
                    rec.content_stream().read()
                    if rec.rec_type not in CAPTURE_TYPES or not d or not url:
                        continue
                    out.setdefault(payload_table.parse_digest(d), []).append(
                        {
                            "url": url,
                            "day": day,
                            "record_type": rec.rec_type,
                            "http_status": int(status) if status else None,
                            "mime_type": ct.split(";")[0].strip().lower() or None,
                            "warc_file": "file://" + path,
                            "warc_offset": it.get_record_offset(),
                            "warc_length": it.get_record_length(),
                        }
                    )
    return out


@pytest.fixture(scope="module")
def two_days(corpus_days):
    return corpus_days, _warcio_captures(corpus_days)


def _comparable(rows: list[dict]) -> list[tuple]:
    """The fields to compare (a revisit's MIME is its HTTP head's, as warcio reads it)."""
    keys = ("url", "day", "record_type", "http_status", "mime_type", "warc_file", "warc_offset", "warc_length")
    return sorted(tuple(str(r[k]) if k == "day" else r[k] for k in keys) for r in rows)


def test_digest_lookup_lists_the_captures_warcio_finds(two_days):
    root, theirs = two_days
    repeated = {k: v for k, v in theirs.items() if len({r["day"] for r in v}) == 2 and len(v) > 2}
    assert len(repeated) >= 10  # aut's repeated payloads, captured on both days
    for key, expected in repeated.items():
        got = query.digest(root, key)
        assert _comparable(got) == _comparable(expected), key
        assert all(r["digest"] == key for r in got)
    # every digest of both days, in one batch: the same captures, nothing more
    allrows = query.digest(root, list(theirs))
    assert _comparable(allrows) == _comparable([r for v in theirs.values() for r in v])
    # the side table holds every capture with a digest: its row count is the day's
    for day in DAYS:
        caps = pq.read_table(os.path.join(query.day_dir(root, day), "_captures")).to_pylist()
        n = sum(1 for c in caps if c["payload_digest"] and c["url"])
        assert n == sum(
            pq.read_metadata(f).num_rows
            for f in payload_table.day_files(os.path.join(root, "urldb"), [day.isoformat()])
        )
    # the pointer reads back as the very record: copy the bytes, warcio sees that digest
    one = query.digest(root, next(iter(repeated)))[0]
    with open(one["warc_file"][len("file://") :], "rb") as f:
        f.seek(one["warc_offset"])
        rec = next(iter(ArchiveIterator(io.BytesIO(f.read(one["warc_length"])))))
    assert payload_table.parse_digest(rec.rec_headers.get_header("WARC-Payload-Digest")) == one["digest"]
    assert rec.rec_headers.get_header("WARC-Target-URI") == one["url"]


def test_digest_cli_accepts_each_form(two_days, capsys):
    root, theirs = two_days
    key = max(theirs, key=lambda k: len(theirs[k]))
    b32 = key.split(":", 1)[1]
    hexd = binascii.hexlify(base64.b32decode(b32)).decode()
    answers = []
    for form in (key, b32, hexd):
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert cli(["--root", root, "--json", "digest", form]) == 0
        answers.append(json.loads(buf.getvalue()))
    assert answers[0] == answers[1] == answers[2]
    assert _comparable(answers[0]) == _comparable(theirs[key])
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli(["--root", root, "digest", key]) == 0
    table = buf.getvalue().splitlines()
    assert table[0].split()[:3] == ["digest", "url", "day"] and len(table) == 2 + len(theirs[key])
    capsys.readouterr()
    assert cli(["--root", root, "digest", "sha1:NOTADIGEST"]) == 2
    assert "malformed SHA-1 digest 'sha1:NOTADIGEST'" in capsys.readouterr().err
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli(["--root", root, "--json", "digest", "sha1:" + "A" * 32]) == 0
    assert json.loads(buf.getvalue()) == []


def test_digest_over_real_http(two_days, tmp_path):
    from urllib.parse import quote

    from lib.serve.app import create_app
    from lib.serve.server import ServerThread
    from tests.catalogue.test_catalogue import _get

    root, theirs = two_days
    key = max(theirs, key=lambda k: len(theirs[k]))
    srv = ServerThread(create_app({"dc1": root}, cache_dir=str(tmp_path / "cache")))
    base = srv.url + "/catalogue"
    try:
        code, rows = _get(base, "/digest/" + quote(key, safe=""))
        assert code == 200 and _comparable(rows) == _comparable(theirs[key])
        assert rows == json.loads(query.to_json(query.digest(root, key)))
        hexd = binascii.hexlify(base64.b32decode(key.split(":", 1)[1])).decode()
        assert _get(base, "/digest/" + hexd) == (200, rows)
        assert _get(base, "/digest/" + "A" * 32) == (200, [])
        code, err = _get(base, "/digest/sha1:XYZ")
        assert code == 400 and "malformed SHA-1 digest 'sha1:XYZ'" in err["error"]
        empty = tmp_path / "empty-root"
        empty.mkdir()
    finally:
        srv.stop()
    srv = ServerThread(create_app({"dc1": str(empty)}, cache_dir=str(tmp_path / "cache2")))
    try:
        code, err = _get(srv.url + "/catalogue", "/digest/" + quote(key, safe=""))
        assert code == 404 and "no URL database" in err["error"]
    finally:
        srv.stop()


def test_the_digest_store_answers_as_the_digest_table(two_days):
    """The key store the catalogue job fills (lib.catalogue.digeststore) lists, for every digest of
    both days, the very rows of the URL database's digest table; query.digest answers from it."""
    root, theirs = two_days
    db = os.path.join(root, "urldb")
    days = urldb.read_state(db)["days"]
    store = os.path.join(root, digeststore.FOLDER)
    assert digeststore.days(store, days) == set(days) and len(days) == 2
    keys = sorted(theirs)
    table = payload_table.rows(payload_table.lookup(payload_table.day_files(db, days), keys))
    assert len(table) > 600 and digeststore.captures(root, keys) == table
    assert query.digest(root, keys[:5]) == [r for r in table if r["digest"] in keys[:5]]
