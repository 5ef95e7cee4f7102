"""Catalogue over a real preprocess run of a synthetic crawl: every CDXJ line points at
the bytes of its record, and the URL database ids are the pages' ids."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import os
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
from warcio.archiveiterator import ArchiveIterator

from jobs import preprocess
from jobs.catalogue import main as build
from lib.catalogue import cdxj, query, urldb
from lib.warc.sample import write_sample_crawl

DAY = dt.date(2026, 2, 3)


def test_cdxj_offsets_resolve_to_their_records(spark, tmp_path):
    root = str(tmp_path)
    write_sample_crawl(root, DAY, files=1, pages_per_file=12)
    assert preprocess.main(["--date", DAY.isoformat(), "--root", root], spark=spark) == 0
    assert build(["--date", DAY.isoformat(), "--root", root, "--url-partitions", "2"], spark=spark) == 0
    out = os.path.join(root, "catalogue", f"{DAY:%Y-%m}", f"{DAY:%d}")
    lines = list(cdxj.read_cdxj(os.path.join(out, "index.cdxj")))
    caps = pq.read_table(os.path.join(query.day_dir(root, DAY), "_captures")).to_pylist()
    assert len(lines) == len(caps) > 12
    types = set()
    for key, ts, f in lines:
        with open(os.path.join(root, "warc", f["filename"]), "rb") as fh:
            fh.seek(int(f["offset"]))
            member = fh.read(int(f["length"]))
        assert member[:2] == b"\x1f\x8b" and len(gzip.decompress(member)) > 0  # one whole gzip member
        rec = next(iter(ArchiveIterator(io.BytesIO(member))))
        h = rec.rec_headers
        assert h.get_header("WARC-Target-URI") == f["url"]
        assert h.get_header("WARC-Date").replace("-", "").replace(":", "").replace("T", "")[:14] == ts
        digest = h.get_header("WARC-Payload-Digest")
        assert f.get("digest") == (digest.split(":", 1)[1] if digest and digest.startswith("sha1:") else digest)
        types.add(h.get_header("WARC-Type"))
        if h.get_header("WARC-Type") == "revisit":
            assert f["mime"] == "warc/revisit"
    assert {"response", "revisit"} <= types
    # pywb's own indexer over the same archive files writes the same index (its filenames are basenames)
    indexer = os.path.join(os.path.dirname(sys.executable), "cdx-indexer")
    warcs = sorted({os.path.join(root, "warc", f["filename"]) for _, _, f in lines})
    theirs = subprocess.run([indexer, "--cdxj", "-s", *warcs], capture_output=True, text=True, check=True).stdout

    def comparable(key, ts, f):
        return key, ts, {k: v for k, v in f.items() if k != "filename"}, os.path.basename(f["filename"])

    assert sorted(comparable(*cdxj.parse_line(x)) for x in theirs.splitlines() if x.strip()) == sorted(
        comparable(*x) for x in lines
    )
    # --warc-prefix as a plain path without the trailing slash gives the same relative names,
    # and pywb's resource loader finds the records with them under archive_paths
    alt = os.path.join(root, "catalogue-alt")
    assert (
        build(
            [
                "--date",
                DAY.isoformat(),
                "--input",
                query.day_dir(root, DAY),
                "--output",
                alt,
                "--warc-prefix",
                os.path.join(root, "warc"),
                "--no-urldb",
                "--no-report",
            ],
            spark=spark,
        )
        == 0
    )
    with (
        open(os.path.join(alt, "index.cdxj"), encoding="utf-8") as a,
        open(os.path.join(out, "index.cdxj"), encoding="utf-8") as b,
    ):
        assert a.read() == b.read()
    from pywb.warcserver.index.indexsource import FileIndexSource
    from pywb.warcserver.index.query import CDXQuery
    from pywb.warcserver.resource.responseloader import WARCPathLoader

    source = FileIndexSource(os.path.join(alt, "index.cdxj"))
    loader = WARCPathLoader(os.path.join(root, "warc") + "/", None)
    key, ts, f = next(x for x in lines if x[2].get("status") == "200")
    assert not f["filename"].startswith(("/", "file:"))
    cdx = next(c for c in source.load_index(CDXQuery({"url": f["url"]}).params) if c["timestamp"] == ts)
    warc_headers, http_headers, _ = loader.load_resource(cdx, {})  # opens ROOT/warc/<filename> at offset
    assert warc_headers.get_header("WARC-Target-URI") == f["url"] and http_headers.startswith(b"HTTP/1.1 200")
    pages = pq.read_table(query.day_dir(root, DAY), columns=["id", "url"]).to_pylist()
    table = {r["id"]: r for r in pq.read_table(urldb.table_path(os.path.join(root, "urldb"))).to_pylist()}
    assert pages and all(p["id"] in table and table[p["id"]]["url"] == p["url"] for p in pages)
    assert sum(r["captures"] for r in table.values()) == len(caps)
    with open(os.path.join(out, "report.html"), encoding="utf-8") as fh:
        page = fh.read()
    st = query.stats(root, DAY)
    assert st["pages"] == len(pages) and f"<td>{len(pages)}</td>" in page


#: the real archives of ../shared/corpus that hold revisit records with an HTTP head (17 in all)
REVISIT_FILES = ("ipwb/sample-1.warc.gz", "aut/example.pdf.warc.gz", "aut/issue-493.warc")


def _warcio_revisits(paths: list[str]) -> dict[tuple[str, int], tuple[int | None, str]]:
    """(file name, offset) -> (HTTP status, Content-Type without parameters) of each revisit, as warcio reads it."""
    out = {}
    for path in paths:
        with open(path, "rb") as f:
            it = ArchiveIterator(f)
            for rec in it:
                if rec.rec_type == "revisit":
                    h = rec.http_headers
                    ct = (h.get_header("Content-Type") or "") if h else ""
                    out[os.path.basename(path), it.get_record_offset()] = (
                        int(h.get_statuscode()) if h else None,
                        ct.split(";")[0].strip().lower(),
                    )
                rec.content_stream().read()
    return out


def test_revisits_of_real_archives_match_warcio_and_pywb(spark, corpus, tmp_path):
    """Revisit records carry the revisited response's HTTP head: the captures table keeps its
    status and Content-Type (as warcio and cdxj-indexer read them), and the CDXJ writes them as
    pywb's own indexer does (``mime: warc/revisit``, no status)."""
    root = str(tmp_path)
    folder = os.path.join(root, "warc", f"{DAY:%Y-%m}", f"{DAY:%d}")
    os.makedirs(folder)
    for rel in REVISIT_FILES:
        shutil.copyfile(corpus / rel, os.path.join(folder, os.path.basename(rel)))
    warcs = sorted(os.path.join(folder, n) for n in os.listdir(folder))
    assert preprocess.main(["--date", DAY.isoformat(), "--root", root, "--fail-on", "never"], spark=spark) == 0
    assert build(["--date", DAY.isoformat(), "--root", root, "--url-partitions", "2", "--no-report"], spark=spark) == 0
    caps = pq.read_table(os.path.join(query.day_dir(root, DAY), "_captures")).to_pylist()
    ours = {
        (os.path.basename(c["warc_file"]), c["warc_offset"]): (c["http_status"], c["mime_type"])
        for c in caps
        if c["record_type"] == "revisit"
    }
    theirs = _warcio_revisits(warcs)
    assert len(theirs) == 17 and all(m for _, m in theirs.values())  # every one has an HTTP Content-Type
    assert ours == theirs
    # cdxj-indexer (webrecorder's) reads the same status from each revisit's HTTP head
    bin_dir = os.path.dirname(sys.executable)
    webrecorder = subprocess.run(
        [os.path.join(bin_dir, "cdxj-indexer"), *warcs], capture_output=True, text=True, check=True
    ).stdout
    wr = {
        (f["filename"], int(f["offset"])): f
        for _, _, f in map(cdxj.parse_line, filter(str.strip, webrecorder.splitlines()))
        if f.get("mime") == "warc/revisit"
    }
    assert {k: int(f["status"]) for k, f in wr.items()} == {k: s for k, (s, _) in theirs.items()}
    # the catalogue's revisit lines are pywb's own indexer's (the one `wb-manager add` runs). Its
    # lengths for the plain .warc stop before the record's closing CRLF CRLF, ours take it: compared
    # for the gzip files only (other lines differ for dns: records, which pywb digests: not here)
    lines = list(cdxj.read_cdxj(os.path.join(root, "catalogue", f"{DAY:%Y-%m}", f"{DAY:%d}", "index.cdxj")))
    pywb = subprocess.run(
        [os.path.join(bin_dir, "cdx-indexer"), "--cdxj", "-s", *warcs], capture_output=True, text=True, check=True
    ).stdout

    def revisit_lines(parsed):
        return sorted(
            (
                key,
                ts,
                os.path.basename(f["filename"]),
                {k: v for k, v in f.items() if k != "filename" and (k != "length" or f["filename"].endswith(".gz"))},
            )
            for key, ts, f in parsed
            if f["mime"] == "warc/revisit"
        )

    ours_lines = revisit_lines(lines)
    assert ours_lines == revisit_lines(cdxj.parse_line(x) for x in pywb.splitlines() if x.strip())
    assert len(ours_lines) == 17 and not any("status" in f for *_, f in ours_lines)
    _check_cdx_against_pywb(os.path.join(root, "warc"), warcs, bin_dir, len(lines))


def _check_cdx_against_pywb(warc_root: str, warcs: list[str], bin_dir: str, cdxj_lines: int) -> None:
    """The day's 11-column CDX is pywb's ``cdx-indexer -s`` output for the same real archives, line
    for line (our file names are relative to ROOT/warc/, pywb's are base names), but for what
    docs/catalogue.md lists: dns: records (pywb digests them and writes 200), records without a
    payload digest (pywb hashes them) and metadata records pywb indexes; the lengths of plain
    records (pywb's stop before the closing CRLF CRLF). pywb's CDX reader finds our lines."""
    from pywb.warcserver.index.indexsource import FileIndexSource
    from pywb.warcserver.index.query import CDXQuery
    from pywb.warcserver.resource.responseloader import WARCPathLoader

    day = os.path.join(os.path.dirname(warc_root), "catalogue", f"{DAY:%Y-%m}", f"{DAY:%d}")
    with open(os.path.join(day, "index.cdx"), encoding="utf-8") as f:
        ours = f.read().splitlines()
    theirs = subprocess.run(
        [os.path.join(bin_dir, "cdx-indexer"), "-s", *warcs], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert ours[0] == theirs[0] == " CDX N b a m s k r M S V g"
    assert ours[1:] == sorted(ours[1:]) and len(ours) - 1 == cdxj_lines
    by_record = {(p[10], p[9]): p for p in (x.split(" ") for x in ours[1:])}
    same = differ = 0
    for line in theirs[1:]:
        p = line.split(" ")
        mine = by_record.pop((f"{DAY:%Y-%m}/{DAY:%d}/{p[10]}", p[9]), None)  # pywb writes base names
        if mine is None:  # only pywb indexes metadata records that are not application/warc-fields
            assert p[2].startswith("metadata:"), line
            continue
        if not p[10].endswith(".gz"):
            mine, p = mine[:8] + mine[9:], p[:8] + p[9:]  # S of a plain record
        if p[2].startswith("dns:") or (mine[5] == "-" and p[5] != "-"):
            assert mine[:4] == p[:4] and mine[6:-1] == p[6:-1], line
            differ += 1
        else:
            assert mine[:-1] == p[:-1], line
            same += 1
    assert not by_record and same > 100 and same > 4 * differ
    # pywb's own CDX reader: a binary search of the file by the canonical key, then the record
    source = FileIndexSource(os.path.join(day, "index.cdx"))
    loader = WARCPathLoader(warc_root + "/", None)
    loaded = 0
    for p in [x.split(" ") for x in ours[1:] if x.split(" ")[3] in ("warc/revisit", "text/html")][::10]:
        (cdx,) = [c for c in source.load_index(CDXQuery({"url": p[2]}).params) if c["offset"] == p[9]]
        assert (cdx["urlkey"], cdx["timestamp"], cdx["length"], cdx["filename"]) == (p[0], p[1], p[8], p[10])
        if p[4] == "200":  # (a revisit's loader looks up its original in a live index, a redirect its target)
            warc_headers, _, _ = loader.load_resource(cdx, {})
            assert warc_headers.get_header("WARC-Target-URI") == p[2]
            loaded += 1
    assert loaded > 3
