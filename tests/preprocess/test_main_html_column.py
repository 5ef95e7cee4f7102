"""The opt-in ``main_html`` column (``--main-html``) in a real preprocess + index run on real
archives: absent without the option; with it, each page's value is what lib.html.content
writes for the page's HTML read back by warcio at its offset, its text is the page's
plain_text, and the index carries it into the metadata store."""

from __future__ import annotations

import os
import pathlib
import shutil

import pyarrow.parquet as pq
from selectolax.lexbor import LexborHTMLParser
from warcio.archiveiterator import ArchiveIterator

from jobs import index as index_job
from jobs import preprocess
from lib.html.charset import decode_html
from lib.html.content import extract
from lib.warc.http import HttpResponse
from tests.preprocess.test_enrich import DAY, FILES


def _html_of(path: str, offset: int) -> str:
    """The page's HTML as preprocess decodes it, from the record warcio reads at its offset."""
    with open(path, "rb") as f:
        f.seek(offset)
        rec = next(iter(ArchiveIterator(f)))
        ctype = rec.http_headers.get_header("Content-Type") or ""
        return decode_html(rec.content_stream().read(), HttpResponse(0, {"content-type": ctype}, b"").charset).text


def _day(root: str, corpus) -> None:
    folder = os.path.join(root, "warc", DAY[:7], DAY[8:])
    os.makedirs(folder)
    for rel in FILES:
        shutil.copyfile(corpus / rel, os.path.join(folder, rel.replace("/", "-")))


def test_main_html_column_in_a_real_run(spark, corpus, tmp_path):
    plain, opted = str(tmp_path / "plain"), str(tmp_path / "opted")
    for root in (plain, opted):
        _day(root, corpus)
    assert preprocess.main(["--date", DAY, "--root", plain, "--fail-on", "never"], spark=spark) == 0
    assert preprocess.main(["--date", DAY, "--root", opted, "--fail-on", "never", "--main-html"], spark=spark) == 0
    day = ("preprocessed", DAY[:7], DAY[8:])
    without = pq.read_table(os.path.join(plain, *day))
    pages = pq.read_table(os.path.join(opted, *day))
    assert "main_html" not in without.schema.names
    # the option adds the column and changes nothing else (but where the archives are)
    assert without.drop(["warc_file"]).to_pylist() == pages.drop(["main_html", "warc_file"]).to_pylist()
    rows = pages.to_pylist()
    assert len(rows) > 50
    structured = 0
    for p in rows:
        html = _html_of(p["warc_file"][len("file://") :], p["warc_offset"])
        assert p["main_html"] == extract(html, p["url"], main_html=True).main_html, p["url"]
        got = LexborHTMLParser(p["main_html"]).body.text(separator="") if p["main_html"] else ""
        # soft hyphens: main_html keeps them, the text leaves them out (docs/maintext.md, "Structure"); a
        # topic title of archive.org's forum, mojibake of Arabic with U+00AD in it, is kept since issue 61
        assert "".join(got.replace("\xad", "").split()) == "".join(p["plain_text"].split()), p["url"]
        structured += "<p>" in p["main_html"] and '<a href="http' in p["main_html"]
    assert structured > 20
    assert index_job.main(["--date", DAY, "--root", opted], spark=spark) == 0
    meta = pq.read_table([str(f) for f in pathlib.Path(opted, "index").rglob("metadata-*.parquet")])
    by_id = {r["record_id"]: r["main_html"] for r in meta.to_pylist()}
    # every page but the one that says noindex (left out of the index: docs/robots.md)
    assert by_id == {p["record_id"]: p["main_html"] for p in rows if p["ows_index"]} and len(by_id) == len(rows) - 1
