"""Extract from the indexes users already hold, differential against the tools that wrote them,
on real archives: CDXJ written by cdxj-indexer, 11-column CDX written by pywb's indexer,
Common Crawl's columnar index (Parquet and CSV, local and S3) built from warcio's offsets,
and our metadata store built by the real pipeline, selected with --where. Every copied record
must read back in warcio (and FastWARC for WARC) exactly as warcio reads it in the source."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from fastwarc.warc import ArchiveIterator as FastWarcIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator

from lib.extract.indexes import sniff_index
from lib.store import s3, storage
from tests.extract.test_extract_job import error_rows, manifest_rows, run_job

pytestmark = pytest.mark.slow
#: real archives of four producers, compressed and plain (example.arc: aut's example.arc.gz gunzipped)
GZ = ("aut/example.warc.gz", "aut/example.arc.gz", "resiliparse/warcfile.warc.gz", "ipwb/sample-1.warc.gz")
PLAIN = ("aut/issue-493.warc", "aut/issue-514.warc")


def warcio_records(path):
    """{offset: (length, url, type, header lines, block)} of every record, as warcio reads it."""
    out = {}
    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=False, no_record_parse=True)
        for rec in it:
            block = rec.raw_stream.read()
            url = rec.rec_headers.get_header("WARC-Target-URI") or rec.rec_headers.get_header("uri")
            out[it.get_record_offset()] = (
                it.get_record_length(),
                url,
                rec.rec_type,
                list(rec.rec_headers.headers),
                block,
            )
    return out


def check_records(out_dir, expected):
    """``expected``: {(source path, offset): url}. Every line extracted, each copy byte-identical
    to the source, and read back by warcio as the same record (type, header lines, block) as
    warcio reads in the source; WARC outputs also read by FastWARC. Returns the manifest rows."""
    rows = manifest_rows(out_dir)
    assert sorted((storage.local_path(r["src"]), r["src_offset"], r["url"]) for r in rows) == sorted(
        (str(p), off, url) for (p, off), url in expected.items()
    )
    sources, outputs, by_file = {}, {}, {}
    for r in rows:
        if r["src"] not in sources:
            path = storage.local_path(r["src"])
            sources[r["src"]] = (warcio_records(path), open(path, "rb").read())
        if r["file"] not in outputs:
            outputs[r["file"]] = (warcio_records(out_dir / r["file"]), (out_dir / r["file"]).read_bytes())
        src, got = sources[r["src"]], outputs[r["file"]]
        assert (
            got[1][r["offset"] : r["offset"] + r["length"]] == src[1][r["src_offset"] : r["src_offset"] + r["length"]]
        )
        assert got[0][r["offset"]][1:] == src[0][r["src_offset"]][1:]
        by_file.setdefault(r["file"], []).append(r)
    archives = sorted(n for n in os.listdir(out_dir) if n.endswith((".warc", ".warc.gz", ".arc", ".arc.gz")))
    assert archives == sorted(by_file)
    for name in archives:
        assert len(outputs[name][0]) == len(by_file[name]) + 1  # the file's own header record, then ours, nothing else
        if ".warc" in name:
            with open(out_dir / name, "rb") as f:
                fast = [
                    (r.headers.get("WARC-Target-URI") or "").strip("<>") or None
                    for r in FastWarcIterator(f, record_types=WarcRecordType.any_type, parse_http=False)
                ]
            assert fast[0] is None and sorted(fast[1:]) == sorted(r["url"] for r in by_file[name])
    return rows


def plain_missing(path, entries):
    """How many of ``entries`` ((offset, length) in the plain file ``path``) stop before the line
    ends that close their record: the next record (warcio's offsets) or the file's end follows
    only after more line-end bytes."""
    recs = warcio_records(path)
    starts = sorted(recs) + [os.path.getsize(path)]
    following = {a: b for a, b in zip(starts, starts[1:])}
    data = open(path, "rb").read()
    n = 0
    for off, length in entries:
        gap = data[off + length : following[off]]
        if gap and not gap.strip(b"\r\n"):
            n += 1
    return n


@pytest.fixture(scope="module")
def coll(corpus, tmp_path_factory):
    """A pywb-style collection: archive/ holds the real files (and example.arc, aut's
    example.arc.gz gunzipped); the plain WARCs sit in a second root, extra/."""
    base = tmp_path_factory.mktemp("coll")
    archive, extra = base / "archive", base / "extra"
    archive.mkdir()
    extra.mkdir()
    for name in GZ:
        shutil.copy(corpus / name, archive / name.split("/")[1])
    for name in PLAIN:
        shutil.copy(corpus / name, extra / name.split("/")[1])
    (archive / "example.arc").write_bytes(gzip.decompress((corpus / "aut/example.arc.gz").read_bytes()))
    files = {p.name: p for p in [*archive.iterdir(), *extra.iterdir()]}
    return base, archive, extra, files


def run_tool(args, cwd):
    subprocess.run([sys.executable, "-c", args[0], *args[1:]], cwd=cwd, check=True, capture_output=True)


def test_cdxj_from_cdxj_indexer(spark, coll, tmp_path):
    base, archive, extra, files = coll
    cdxj = tmp_path / "index.cdxj"
    # names relative to each root, as a collection's indexer writes them
    run_tool(
        ["from cdxj_indexer.main import main; main()", "-o", str(tmp_path / "a.cdxj"), *sorted(os.listdir(archive))],
        archive,
    )
    run_tool(
        ["from cdxj_indexer.main import main; main()", "-o", str(tmp_path / "b.cdxj"), *sorted(os.listdir(extra))],
        extra,
    )
    cdxj.write_text(
        '!meta 0 {"format": "cdxj-test"}\n' + (tmp_path / "a.cdxj").read_text() + (tmp_path / "b.cdxj").read_text()
    )
    assert sniff_index(str(cdxj)) == "cdxj"
    import json

    entries = [json.loads(line.split(" ", 2)[2]) for line in cdxj.read_text().splitlines()[1:]]
    expected = {(files[e["filename"]], int(e["offset"])): e["url"] for e in entries}
    assert len(expected) == len(entries) > 300
    # cdxj-indexer's lengths are warcio's: for plain files they stop at the end of the block
    reference = {name: warcio_records(files[name]) for name in {e["filename"] for e in entries}}
    assert all(int(e["length"]) == reference[e["filename"]][int(e["offset"])][0] for e in entries)
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--index", str(cdxj), "--archives", str(archive), str(extra), "--output", str(out)])
    assert (
        rc == 0 and summary["extracted"] == len(entries) and summary["failed"] == 0 and summary["lines"] == len(entries)
    )
    plain = [e for e in entries if not e["filename"].endswith(".gz")]
    assert (
        summary["terminators_added"]
        == sum(
            plain_missing(files[name], [(int(e["offset"]), int(e["length"])) for e in plain if e["filename"] == name])
            for name in {e["filename"] for e in plain}
        )
        > 100
    )
    check_records(out, expected)
    # --where over the JSON's fields (and the key and timestamp), as DuckDB SQL
    where = "mime = 'text/html' AND status = 200 AND timestamp < '2010' AND length > 2000"
    outw = tmp_path / "where"
    rc, summary = run_job(
        spark, ["--index", str(cdxj), "--where", where, "--archives", str(archive), str(extra), "--output", str(outw)]
    )
    chosen = {
        (str(files[e["filename"]]), int(e["offset"]))
        for e, line in zip(entries, cdxj.read_text().splitlines()[1:])
        if e.get("mime") == "text/html"
        and e.get("status") == "200"
        and line.split(" ")[1] < "2010"
        and int(e["length"]) > 2000
    }
    assert rc == 0 and 0 < summary["extracted"] == len(chosen) < len(entries)
    assert {(storage.local_path(r["src"]), r["src_offset"]) for r in manifest_rows(outw)} == chosen


def copied(out_dir):
    """{(source file, source offset): the bytes copied} of an extract output folder."""
    data = {}
    for r in manifest_rows(out_dir):
        blob = data.setdefault(r["file"], (out_dir / r["file"]).read_bytes())
        data[(storage.local_path(r["src"]), r["src_offset"])] = blob[r["offset"] : r["offset"] + r["length"]]
    return {k: v for k, v in data.items() if isinstance(k, tuple)}


SEED004 = " CDX A b e a m s c k r V v D d g M n"


def seed004_line(cdx11: list[str]) -> str:
    """A pywb CDX entry (``N b a m s k r M S V g``) in seed 004's legend: no S; V the offset and,
    for an uncompressed file, v too; the fields pywb does not know are '-'."""
    n, b, a, m, s, k, r, meta, _, v, g = cdx11
    plain_v = v if not g.endswith(".gz") else "-"
    return " ".join([n, b, "-", a, m, s, "-", k, r, v, plain_v, "-", "-", g, meta, "-"])


def test_cdx_from_pywb_in_every_legend(spark, coll, tmp_path):
    """pywb's 11-column CDX; the same entries in seed 004's legend (no S: each record measured in
    the archive) and pywb's 9-column CDX extract byte-identical records; --where selects lines."""
    base, archive, extra, files = coll
    cdx = tmp_path / "index.cdx.gz"
    run_tool(
        [
            "from pywb.indexer.cdxindexer import main; main()",
            "-s",
            "-o",
            str(tmp_path / "a.cdx"),
            *sorted(os.listdir(archive)),
        ],
        archive,
    )
    run_tool(
        ["from pywb.indexer.cdxindexer import main; main()", "-o", str(tmp_path / "b.cdx"), *sorted(os.listdir(extra))],
        extra,
    )
    a, b = (tmp_path / "a.cdx").read_text().splitlines(), (tmp_path / "b.cdx").read_text().splitlines()
    assert a[0] == b[0] == " CDX N b a m s k r M S V g"
    cdx.write_bytes(gzip.compress("\n".join(a + b[1:] + ["a broken line", ""]).encode()))  # gzip-compressed, sniffed
    assert sniff_index(str(cdx)) == "cdx"
    entries = [line.split(" ") for line in a[1:] + b[1:]]
    expected = {(files[e[10]], int(e[9])): e[2] for e in entries}
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--index", str(cdx), "--archives", str(archive), str(extra), "--output", str(out)])
    assert rc == 1 and summary["extracted"] == len(entries) and summary["failed"] == 1
    assert summary["lines"] == summary["extracted"] + summary["failed"]
    (err,) = error_rows(out)
    assert err == (len(a) + len(b), "bad-line: expected 11 space-separated CDX fields, got 3", "a broken line")
    check_records(out, expected)
    with_s = copied(out)
    # seed 004's legend: the same records, byte for byte, found without a length. pywb's lengths
    # of plain records stop before their closing line ends; measured, the record takes them
    seed = tmp_path / "seed004.cdx"
    wrong = seed004_line(
        ["com,example)/wrong", "20080430204939", "http://example.com/wrong", "-", "-", "-"] + entries[0][6:]
    )
    wrong = wrong.replace(f" {entries[0][9]} - ", f" {int(entries[0][9]) + 1} - ")  # an offset inside a member
    seed.write_text("\n".join([SEED004, *sorted(seed004_line(e) for e in entries), wrong]) + "\n")
    assert sniff_index(str(seed)) == "cdx"
    out4 = tmp_path / "out4"
    rc, summary = run_job(spark, ["--index", str(seed), "--archives", str(archive), str(extra), "--output", str(out4)])
    assert rc == 1 and summary["extracted"] == len(entries) and summary["terminators_added"] == 0
    ((no, reason, line),) = error_rows(out4)
    assert (no, line) == (len(entries) + 2, wrong) and reason.startswith(
        "not-member: range does not start a gzip member"
    )
    rows = manifest_rows(out4)
    term = {".warc": 4, ".arc": 1}
    pywb_length = {(str(files[e[10]]), int(e[9])): int(e[8]) + term.get(os.path.splitext(e[10])[1], 0) for e in entries}
    assert {(storage.local_path(r["src"]), r["src_offset"]): r["length"] for r in rows} == pywb_length
    assert copied(out4) == with_s  # and those read back in warcio as the source's records (check_records above)
    assert sum(1 for e in entries if not e[10].endswith(".gz")) > 100  # plain WARC and ARC records among them
    # pywb's 9 fields (N b a m s k r V g): measured as well
    run_tool(
        ["from pywb.indexer.cdxindexer import main; main()", "-9", "-o", str(tmp_path / "c.cdx"), "issue-514.warc"],
        extra,
    )
    out9 = tmp_path / "out9"
    rc, summary = run_job(spark, ["--index", str(tmp_path / "c.cdx"), "--archives", str(extra), "--output", str(out9)])
    n = len((tmp_path / "c.cdx").read_text().splitlines()) - 1
    assert rc == 0 and summary["extracted"] == n > 3
    assert copied(out9) == {k: v for k, v in with_s.items() if k[0] == str(files["issue-514.warc"])}
    # --where over the CDX's columns, named as CDXJ's fields (a legend without S has no length)
    where = "status = 200 AND mime = 'text/html' AND filename NOT LIKE '%.gz' OR urlkey LIKE 'org,archive)/%'"
    outw = tmp_path / "where"
    rc, summary = run_job(
        spark,
        ["--index", str(seed), "--where", where, "--archives", str(archive), str(extra), "--output", str(outw)],
    )
    chosen = {
        (files[e[10]], int(e[9])): e[2]
        for e in entries
        if (e[4] == "200" and e[3] == "text/html" and not e[10].endswith(".gz")) or e[0].startswith("org,archive)/")
    }
    assert rc == 0 and 0 < summary["extracted"] == summary["lines"] == len(chosen) < len(entries)
    chosen = {(str(p), off): url for (p, off), url in chosen.items()}
    assert {(storage.local_path(r["src"]), r["src_offset"]): r["url"] for r in manifest_rows(outw)} == chosen
    assert copied(outw) == {k: with_s[k] for k in chosen}


CC_SCHEMA = pa.schema(
    [  # cc-index table columns (github.com/commoncrawl/cc-index-table), a subset in its order
        ("url_surtkey", pa.string()),
        ("url", pa.string()),
        ("url_host_name", pa.string()),
        ("url_host_tld", pa.string()),
        ("url_path", pa.string()),
        ("fetch_time", pa.timestamp("us", tz="UTC")),
        ("fetch_status", pa.int16()),
        ("content_digest", pa.string()),
        ("content_mime_type", pa.string()),
        ("warc_filename", pa.string()),
        ("warc_record_offset", pa.int32()),
        ("warc_record_length", pa.int32()),
        ("warc_segment", pa.string()),
    ]
)
SEGMENT = "crawl-data/CC-MAIN-2099-01/segments/1700000000000.0/warc"


@pytest.fixture(scope="module")
def cc_index(coll, tmp_path_factory):
    """A bucket root laid out as Common Crawl's (crawl-data/.../warc/FILE) and its columnar
    index (crawl=/subset= partitions, several row groups) built from warcio's offsets."""
    base, archive, extra, files = coll
    bucket = tmp_path_factory.mktemp("cc")
    (bucket / SEGMENT).mkdir(parents=True)
    rows = []
    for name in ("example.warc.gz", "warcfile.warc.gz", "sample-1.warc.gz"):
        shutil.copy(files[name], bucket / SEGMENT / name)
        with open(files[name], "rb") as f:
            it = ArchiveIterator(f)
            for rec in it:
                if rec.rec_type != "response":
                    continue
                url = rec.rec_headers.get_header("WARC-Target-URI")
                host = url.split("/")[2].split(":")[0] if "://" in url else ""
                status = rec.http_headers.get_statuscode() if rec.http_headers else None
                rows.append(
                    dict(
                        url_surtkey=url,
                        url=url,
                        url_host_name=host,
                        url_host_tld=host.rsplit(".", 1)[-1],
                        url_path="/",
                        fetch_time=None,
                        fetch_status=int(status) if status and status.isdigit() else None,
                        content_digest=None,
                        content_mime_type=None,
                        warc_filename=f"{SEGMENT}/{name}",
                        warc_record_offset=it.get_record_offset(),
                        warc_record_length=it.get_record_length(),
                        warc_segment="1700000000000.0",
                    )
                )
    index = bucket / "cc-index" / "table" / "cc-main" / "warc" / "crawl=CC-MAIN-2099-01" / "subset=warc"
    index.mkdir(parents=True)
    half = len(rows) // 2
    pq.write_table(pa.Table.from_pylist(rows[:half], schema=CC_SCHEMA), index / "part-00000.parquet", row_group_size=40)
    pq.write_table(pa.Table.from_pylist(rows[half:], schema=CC_SCHEMA), index / "part-00001.parquet", row_group_size=40)
    return bucket, rows


def cc_expected(bucket, rows):
    return {(bucket / r["warc_filename"], r["warc_record_offset"]): r["url"] for r in rows}


def test_cc_columnar_parquet_and_csv(spark, cc_index, tmp_path):
    bucket, rows = cc_index
    table = bucket / "cc-index" / "table" / "cc-main" / "warc"
    assert sniff_index(str(table)) == "parquet"
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--index", str(table), "--archives", str(bucket), "--output", str(out)])
    assert rc == 0 and summary["extracted"] == len(rows) > 200 and summary["terminators_added"] == 0
    check_records(out, cc_expected(bucket, rows))
    # --where over the index's columns and its partition folders (DuckDB SQL)
    where = "crawl = 'CC-MAIN-2099-01' AND fetch_status = 200 AND url_host_tld = 'org'"
    out = tmp_path / "where"
    rc, summary = run_job(
        spark, ["--index", str(table), "--where", where, "--archives", str(bucket), "--output", str(out)]
    )
    chosen = [r for r in rows if r["fetch_status"] == 200 and r["url_host_tld"] == "org"]
    assert rc == 0 and 0 < summary["extracted"] == len(chosen) < len(rows)
    check_records(out, cc_expected(bucket, chosen))
    # the same as CSV (other columns ignored), named explicitly
    csv = tmp_path / "index.txt"
    pacsv.write_csv(pq.read_table(table / "crawl=CC-MAIN-2099-01" / "subset=warc"), csv)
    assert sniff_index(str(csv)) == "csv"
    out = tmp_path / "csv"
    rc, summary = run_job(
        spark, ["--index", str(csv), "--index-format", "csv", "--archives", str(bucket), "--output", str(out)]
    )
    assert rc == 0 and summary["extracted"] == len(rows)
    check_records(out, cc_expected(bucket, rows))


def test_cc_columnar_parquet_on_s3(spark, cc_index, s3_bucket, tmp_path):
    bucket, rows = cc_index
    client = s3.client()
    for p in bucket.rglob("*"):
        if p.is_file():
            client.upload_file(str(p), s3_bucket, str(p.relative_to(bucket)))
    table = f"s3://{s3_bucket}/cc-index/table/cc-main/warc/"
    out = tmp_path / "out"
    rc, summary = run_job(
        spark,
        [
            "--index",
            table,
            "--where",
            "url LIKE 'http://www.archive.org/%'",
            "--archives",
            f"s3://{s3_bucket}",
            "--output",
            str(out),
        ],
    )
    chosen = [r for r in rows if r["url"].startswith("http://www.archive.org/")]
    assert rc == 0 and 0 < summary["extracted"] == len(chosen)
    got = manifest_rows(out)
    assert sorted((r["src"], r["src_offset"]) for r in got) == sorted(
        (f"s3://{s3_bucket}/{r['warc_filename']}", r["warc_record_offset"]) for r in chosen
    )
    for r in got:  # byte identity against the local copy of the same file
        src = (bucket / r["src"].split("/", 3)[3]).read_bytes()
        assert (out / r["file"]).read_bytes()[r["offset"] : r["offset"] + r["length"]] == src[
            r["src_offset"] : r["src_offset"] + r["length"]
        ]
    # a text index on S3 too (gzip-compressed CSV, sniffed from its bytes)
    csv = tmp_path / "rows.csv"
    pacsv.write_csv(pa.Table.from_pylist(chosen, schema=CC_SCHEMA), csv)
    client.put_object(Bucket=s3_bucket, Key="lists/rows.csv.gz", Body=gzip.compress(csv.read_bytes()))
    out2 = tmp_path / "out2"
    rc, summary = run_job(
        spark,
        ["--index", f"s3://{s3_bucket}/lists/rows.csv.gz", "--archives", f"s3://{s3_bucket}", "--output", str(out2)],
    )
    assert rc == 0 and summary["extracted"] == len(chosen)
    assert [(r["url"], r["src"], r["src_offset"], r["length"]) for r in manifest_rows(out2)] == [
        (r["url"], r["src"], r["src_offset"], r["length"]) for r in got
    ]


def test_parquet_bad_rows_named_by_file_and_row(spark, cc_index, tmp_path):
    bucket, rows = cc_index
    bad = [dict(rows[0], warc_record_offset=None), dict(rows[1], warc_filename="../outside.warc.gz"), rows[2]]
    f = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(bad, schema=CC_SCHEMA), f)
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--index", str(f), "--archives", str(bucket), "--output", str(out)])
    assert rc == 1 and summary["lines"] == 3 and summary["extracted"] == 1 and summary["failed"] == 2
    errs = error_rows(out)
    assert [(no, reason.split(":")[0]) for no, reason, _ in errs] == [(1, "bad-line"), (2, "escapes-root")]
    assert all(reason.endswith(f"({f} row {no})") for no, reason, _ in errs)
    assert (
        errs[1][2]
        == f"{rows[1]['url']}\t../outside.warc.gz\t{rows[1]['warc_record_offset']}\t{rows[1]['warc_record_length']}"
    )


def test_metadata_store_with_where(spark, corpus, tmp_path):
    """The real pipeline (preprocess, then index) on real crawl files; the metadata store is
    the index, --where picks rows; the selection equals pyarrow's filter of the same files."""
    from jobs import index, preprocess

    warc = tmp_path / "warc"
    warc.mkdir()
    for name in ("aut/example.warc.gz", "aut/example.arc.gz", "resiliparse/warcfile.warc.gz"):
        shutil.copy(corpus / name, warc / name.split("/")[1])
    pre, idx = tmp_path / "pre", tmp_path / "idx"
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    assert index.main(["--input", str(pre), "--output", str(idx), "--no-graph"], spark=spark) == 0
    meta = ds.dataset(sorted(str(p) for p in idx.rglob("metadata-*.parquet")), format="parquet").to_table(
        columns=["url", "language", "url_host", "warc_file", "warc_offset", "warc_length"]
    )
    mask = pc.and_(pc.equal(meta["language"], "eng"), pc.ends_with(meta["url_host"], "archive.org"))
    chosen = meta.filter(mask).to_pylist()
    assert 0 < len(chosen) < meta.num_rows and {r["warc_file"].rsplit(".", 2)[-2] for r in chosen} == {"warc", "arc"}
    out = tmp_path / "out"
    rc, summary = run_job(
        spark,
        [
            "--index",
            str(idx),
            "--where",
            "language = 'eng' AND url_host LIKE '%archive.org'",
            "--archives",
            str(warc),
            "--output",
            str(out),
        ],
    )
    assert rc == 0 and summary["extracted"] == len(chosen) and summary["failed"] == 0
    check_records(out, {(storage.local_path(r["warc_file"]), r["warc_offset"]): r["url"] for r in chosen})


@pytest.mark.parametrize("verify", [False, True])
def test_plain_records_always_come_out_whole(spark, coll, tmp_path, verify):
    """Plain WARC (issue-493, issue-514) and ARC (aut's example.arc.gz gunzipped) records copied
    with warcio's lengths (which leave out the closing line ends) get them appended and counted;
    with CDX-style spans (to the next record) nothing is added. Either way every output file
    reads back in warcio, and the WARC ones in FastWARC, record for record."""
    base, archive, extra, files = coll
    names = ("issue-493.warc", "issue-514.warc", "example.arc")
    recs = {n: warcio_records(files[n]) for n in names}
    for style in ("warcio", "span"):
        lines, expected, entries = [], {}, {}
        for n in names:
            starts = sorted(recs[n]) + [os.path.getsize(files[n])]
            for off, nxt in zip(starts, starts[1:]):
                length, url = recs[n][off][0], recs[n][off][1]
                if url and not url.startswith("filedesc:"):
                    n_bytes = length if style == "warcio" else nxt - off
                    lines.append(f"{url}\t{n}\t{off}\t{n_bytes}")
                    expected[(files[n], off)] = url
                    entries.setdefault(n, []).append((off, n_bytes))
        tsv = tmp_path / f"{style}.tsv"
        tsv.write_text("\n".join(lines) + "\n")
        out = tmp_path / style
        argv = ["--tsv", str(tsv), "--archives", str(archive), str(extra), "--output", str(out)]
        rc, summary = run_job(spark, argv + (["--verify"] if verify else []))
        want = sum(plain_missing(files[n], e) for n, e in entries.items())
        assert rc == 0 and summary["extracted"] == len(lines) and summary["terminators_added"] == want
        assert want == (len(lines) if style == "warcio" else 0)
        rows = check_records(out, expected)
        assert {r["file"].split(".", 1)[1] for r in rows} == {"warc", "arc"}
