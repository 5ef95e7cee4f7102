"""The extract job end to end on Spark (shared local session), on the real samples: WARC and
ARC input, every error kind in one errors.tsv, verify mode, rolling, S3 in and out, the
manifest as input again, and offsets from Parquet (own fixture and the preprocess job)."""

from __future__ import annotations

import gzip
import json
import os
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastwarc.warc import ArchiveIterator as FastWarcIterator
from fastwarc.warc import WarcRecordType
from warcio.archiveiterator import ArchiveIterator

from jobs.extract import ExtractJob
from lib.extract.driver import ERRORS, MANIFEST
from lib.extract.lines import Resolver, parse_lines
from lib.extract.record_list import record_ranges
from lib.extract.task import extract_items
from lib.pages.schema import PAGE_SCHEMA
from lib.store import s3, storage

pytestmark = pytest.mark.slow
SAMPLES = ("example.warc.gz", "example.arc.gz")


def run_job(spark, argv):
    job = ExtractJob()
    rc = job.main(argv, spark=spark)
    return rc, job.last_result.summary


def manifest_rows(out_dir):
    rows = []
    with open(os.path.join(out_dir, MANIFEST)) as f:
        for line in f:
            if line.startswith("#"):
                continue
            url, name, off, n, line_no, src, src_off = line.rstrip("\n").split("\t")
            rows.append(
                dict(
                    url=url,
                    file=name,
                    offset=int(off),
                    length=int(n),
                    line=int(line_no),
                    src=src,
                    src_offset=int(src_off),
                )
            )
    return rows


def error_rows(out_dir):
    with open(os.path.join(out_dir, ERRORS)) as f:
        lines = [line.rstrip("\n") for line in f if not line.startswith("#")]
    return [(int(no), reason, line) for no, reason, line in (x.split("\t", 2) for x in lines)]


def source_bytes(uri, cache={}):
    if uri not in cache:
        cache[uri] = storage.read_bytes(uri)
    return cache[uri]


def check_output(out_dir, expected_lines=None):
    """Byte identity of every record against its source, every archive readable by warcio
    with the right header first, record counts matching the manifest, _SUCCESS present."""
    assert os.path.exists(os.path.join(out_dir, storage.SUCCESS))
    rows = manifest_rows(out_dir)
    if expected_lines is not None:
        assert sorted(r["line"] for r in rows) == sorted(expected_lines)
    per_file = {}
    for r in rows:
        data = per_file.setdefault(r["file"], open(os.path.join(out_dir, r["file"]), "rb").read())
        src = source_bytes(r["src"])
        assert data[r["offset"] : r["offset"] + r["length"]] == src[r["src_offset"] : r["src_offset"] + r["length"]]
    archives = sorted(n for n in os.listdir(out_dir) if n.endswith((".warc.gz", ".arc.gz", ".warc")))
    assert archives == sorted(per_file)  # no file without records
    for name in archives:
        with open(os.path.join(out_dir, name), "rb") as f:
            it = ArchiveIterator(f, arc2warc=False)
            recs = [
                (rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI") or rec.rec_headers.get_header("uri"))
                for rec in it
            ]
        assert recs[0][0] == ("arc_header" if name.endswith(".arc.gz") else "warcinfo")
        assert sorted(u for _, u in recs[1:]) == sorted(r["url"] for r in rows if r["file"] == name)
        if name.endswith(".warc.gz"):  # a second, independent reader
            with open(os.path.join(out_dir, name), "rb") as f:
                fast = [
                    r.headers.get("WARC-Target-URI")
                    for r in FastWarcIterator(f, record_types=WarcRecordType.any_type, parse_http=False)
                ]
            assert fast[0] is None and sorted(fast[1:]) == sorted(u for _, u in recs[1:])
    return rows


@pytest.fixture(scope="module")
def aut(corpus, tmp_path_factory):
    """The aut samples copied below a fresh archives root, their record ranges, and a symlink
    inside the root that points out of it."""
    base = tmp_path_factory.mktemp("aut")
    root = base / "archives"
    (root / "2008").mkdir(parents=True)
    ranges = {}
    for name in SAMPLES:
        shutil.copy(corpus / "aut" / name, root / "2008" / name)
        ranges[name] = [
            r for r in record_ranges(str(root / "2008" / name)) if r.rec_type in ("response", "request", "metadata")
        ]
    (root / "2008" / "link.warc.gz").symlink_to(corpus / "aut" / "example.warc.gz")
    return root, ranges


def sample_lines(ranges, step=3):
    lines = []
    for name in SAMPLES:
        lines += [f"{r.url}\t2008/{name}\t{r.offset}\t{r.length}" for r in ranges[name][::step]]
    return lines


def test_warc_and_arc_with_every_error_kind(spark, aut, tmp_path, corpus):
    root, ranges = aut
    good = sample_lines(ranges)
    w = ranges["example.warc.gz"][4]
    size = (root / "2008" / "example.warc.gz").stat().st_size
    bad = [
        ("not a line", "bad-line"),
        (f"{w.url}\t2008/missing.warc.gz\t{w.offset}\t{w.length}", "missing-file"),
        (f"{w.url}\t2008/example.warc.gz\t{size - 100}\t{w.length}", "past-eof"),
        (f"{w.url}\t2008/../../{root.name}/2008/example.warc.gz\t{w.offset}\t{w.length}", "escapes-root"),
        (f"{w.url}\t{corpus}/aut/example.warc.gz\t{w.offset}\t{w.length}", "escapes-root"),
        (f"{w.url}\t2008/link.warc.gz\t{w.offset}\t{w.length}", "escapes-root"),
        (f"{w.url}\t2008/example.warc.gz\t{w.offset + 2}\t{w.length}", "not-member"),
    ]
    lines = ["# url\tfile\toffset\tlength", ""] + good[:40] + [b for b, _ in bad] + good[40:]
    tsv = tmp_path / "list.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--tsv", str(tsv), "--archives", str(root), "--output", str(out)])
    assert rc == 1
    bad_nos = {lines.index(b) + 1: kind for b, kind in bad}
    good_nos = [no for no, line in enumerate(lines, 1) if line in good]
    assert summary["lines"] == len(good) + len(bad) and summary["failed"] == len(bad)
    assert summary["extracted"] == len(good) and summary["failed_by_reason"]["escapes-root"] == 3
    errors = error_rows(out)
    assert [(no, reason.split(":")[0]) for no, reason, _ in errors] == sorted(bad_nos.items())
    assert all(line == lines[no - 1] for no, _, line in errors)
    rows = check_output(out, good_nos)
    assert {r["file"].split(".", 1)[1] for r in rows} == {"warc.gz", "arc.gz"}
    stats = json.loads((out / "_stats.json").read_text())
    assert stats["extracted"] + stats["failed"] == stats["lines"] and stats["files"] == len(stats["output_files"])
    assert not any(p.name.startswith("out.") for p in tmp_path.iterdir())  # no temp/old folders left

    # the manifest is an input list again: same bytes, and --verify proves whole members with the right URLs
    out2 = tmp_path / "again"
    rc, summary = run_job(
        spark, ["--tsv", str(out / MANIFEST), "--archives", str(out), "--output", str(out2), "--verify"]
    )
    assert rc == 0 and summary["extracted"] == len(good)
    again = {r["line"]: r for r in check_output(out2)}
    first = manifest_rows(out)
    for no, r in enumerate(first, 1):  # manifest line numbers: +1 for its header line
        a = again[no + 1]
        assert a["url"] == r["url"] and a["length"] == r["length"]

    # a re-run replaces the folder with the same records in the same files (only the
    # header records carry the new run's time)
    rc, _ = run_job(spark, ["--tsv", str(tsv), "--archives", str(root), "--output", str(out)])
    strip = lambda rows: [{k: v for k, v in r.items() if k != "offset"} for r in rows]  # noqa: E731
    assert rc == 1 and strip(check_output(out, good_nos)) == strip(first)


def test_verify_mode_and_rolling(spark, aut, tmp_path):
    root, ranges = aut
    good = sample_lines(ranges, step=2)
    a, b = ranges["example.arc.gz"][10:12]
    c = ranges["example.warc.gz"][20]
    bad = [
        (f"{a.url}\t2008/example.arc.gz\t{a.offset}\t{a.length + b.length}", "not-member"),
        (f"{a.url}\t2008/example.arc.gz\t{a.offset}\t{a.length - 5}", "not-member"),
        (f"http://not.the.url/\t2008/example.warc.gz\t{c.offset}\t{c.length}", "url-mismatch"),
    ]
    lines = good + [x for x, _ in bad]
    tsv = tmp_path / "list.tsv"
    tsv.write_text("\n".join(lines))
    out = tmp_path / "out"
    max_bytes = 150_000
    rc, summary = run_job(
        spark,
        [
            "--tsv",
            str(tsv),
            "--archives",
            str(root),
            "--output",
            str(out),
            "--verify",
            "--max-bytes",
            str(max_bytes),
            "--partitions",
            "2",
        ],
    )
    assert rc == 1 and summary["failed"] == 3 and summary["extracted"] == len(good)
    assert [(no, reason.split(":")[0]) for no, reason, _ in error_rows(out)] == [
        (len(good) + i + 1, k) for i, (_, k) in enumerate(bad)
    ]
    rows = check_output(out, range(1, len(good) + 1))
    by_file = {}
    for r in rows:
        by_file.setdefault(r["file"], []).append(r)
    assert len(by_file) >= 8
    for name, recs in by_file.items():
        size = (out / name).stat().st_size
        assert size <= max_bytes or len(recs) == 1
        assert name.split("-")[1] in ("00000", "00001")  # task id in the name


def test_s3_input_and_output(spark, aut, s3_bucket, tmp_path):
    root, ranges = aut
    c = s3.client()
    for name in SAMPLES:
        c.upload_file(str(root / "2008" / name), s3_bucket, f"warc/2008/{name}")
    w = ranges["example.warc.gz"][3]
    lines = sample_lines(ranges, step=2)[:150] + [
        f"{w.url}\t2008/gone.warc.gz\t{w.offset}\t{w.length}",
        f"{w.url}\t2008/example.warc.gz\t{w.offset + 10**7}\t{w.length}",
        f"{w.url}\ts3://{s3_bucket}/elsewhere/example.warc.gz\t{w.offset}\t{w.length}",
    ]
    storage.write_bytes(f"s3://{s3_bucket}/lists/l.tsv", "\n".join(lines).encode())
    out = f"s3://{s3_bucket}/out/sel"
    rc, summary = run_job(
        spark,
        [
            "--tsv",
            f"s3://{s3_bucket}/lists/l.tsv",
            "--archives",
            f"s3://{s3_bucket}/warc",
            "--output",
            out,
            "--staging",
            str(tmp_path / "staging"),
        ],
    )
    assert (
        rc == 1
        and summary["extracted"] == 150
        and summary["failed_by_reason"] == {"escapes-root": 1, "missing-file": 1, "past-eof": 1}
    )
    local = tmp_path / "down"
    for f in storage.list_files(out):
        rel = f.uri[len(out) + 1 :]
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(storage.read_bytes(f.uri))
    rows = check_output(local, range(1, 151))
    assert [(no, line) for no, _, line in error_rows(local)] == [(151 + i, lines[150 + i]) for i in range(3)]
    assert all(r["src"].startswith(f"s3://{s3_bucket}/warc/2008/") for r in rows)
    assert not os.listdir(tmp_path / "staging")  # staging cleaned up


def test_s3_adjacent_ranges_one_request_each_run(s3_bucket, aut, tmp_path, monkeypatch):
    root, ranges = aut
    s3.client().upload_file(str(root / "2008" / "example.warc.gz"), s3_bucket, "w/example.warc.gz")
    gets = []
    real_open = storage.S3Stream._open
    monkeypatch.setattr(storage.S3Stream, "_open", lambda self: (gets.append((self.pos, self.end)), real_open(self))[1])
    rs = ranges["example.warc.gz"]
    # two runs: records 0-9 (adjacent or small gaps), then one far away
    chosen = rs[0:10] + rs[-1:]
    lines = [f"{r.url}\tw/example.warc.gz\t{r.offset}\t{r.length}" for r in chosen]
    items, _ = parse_lines(lines, Resolver(f"s3://{s3_bucket}"))
    out = tmp_path / "o"
    out.mkdir()
    res = extract_items(0, items, str(out), max_bytes=1 << 30, verify=True)
    assert res["records"] == 11 and res["errors"] == []
    assert gets == [(rs[0].offset, rs[9].offset + rs[9].length), (rs[-1].offset, rs[-1].offset + rs[-1].length)]


def _pages_table(rows):
    cols = {f.name: [None] * len(rows) for f in PAGE_SCHEMA if f.name != "language"}
    for i, r in enumerate(rows):
        for k, v in r.items():
            cols[k][i] = v
    schema = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])
    return pa.table(cols, schema=schema)


def test_from_parquet_with_where(spark, aut, tmp_path):
    root, ranges = aut
    day = tmp_path / "preprocessed"
    uri = storage.normalize(str(root / "2008" / "example.warc.gz"))
    rows = {"eng": [], "deu": []}
    for i, r in enumerate(x for x in ranges["example.warc.gz"] if x.url.startswith("http")):
        host = r.url.split("/")[2]
        rows["eng" if i % 2 else "deu"].append(
            dict(
                url=r.url, url_suffix=host.rsplit(".", 1)[-1], warc_file=uri, warc_offset=r.offset, warc_length=r.length
            )
        )
    rows["eng"].append(
        dict(url="http://broken.org/", url_suffix="org", warc_file=uri, warc_offset=None, warc_length=10)
    )
    for lang, rs in rows.items():
        (day / f"language={lang}").mkdir(parents=True)
        pq.write_table(_pages_table(rs), day / f"language={lang}" / "part-0.parquet")
    out = tmp_path / "out"
    rc, summary = run_job(
        spark,
        [
            "--from-parquet",
            str(day),
            "--where",
            "language = 'eng' AND url_suffix = 'org'",
            "--archives",
            str(root),
            "--output",
            str(out),
            "--verify",
        ],
    )
    want = sorted(
        (r["url"], r["warc_offset"]) for r in rows["eng"] if r["url_suffix"] == "org" and r["warc_offset"] is not None
    )
    assert rc == 1 and summary["extracted"] == len(want) and summary["failed"] == 1
    (err,) = error_rows(out)
    assert err[1].startswith("bad-line: offset is not an integer") and err[2].startswith("http://broken.org/\t")
    got = sorted((r["url"], r["src_offset"]) for r in check_output(out))
    assert got == want


def test_offsets_from_preprocess_job(spark, corpus, tmp_path):
    """The real samples through the preprocess job, then every page it kept extracted by its
    Parquet offsets with --verify (whole members, matching URLs)."""
    from jobs import preprocess

    inp = tmp_path / "warc"
    inp.mkdir()
    for name in SAMPLES:
        shutil.copy(corpus / "aut" / name, inp / name)
    pre = tmp_path / "pre"
    assert preprocess.main(["--input", str(inp), "--output", str(pre)], spark=spark) == 0
    pages = pq.read_table(str(pre), columns=["url", "warc_file", "warc_offset", "warc_length"]).to_pylist()
    assert {p["warc_file"].rsplit(".", 2)[-2] for p in pages} == {"warc", "arc"}
    out = tmp_path / "out"
    rc, summary = run_job(spark, ["--from-parquet", str(pre), "--archives", str(inp), "--output", str(out), "--verify"])
    assert rc == 0 and summary["failed"] == 0 and summary["extracted"] == len(pages)
    rows = check_output(out)
    assert sorted((r["url"], r["src"], r["src_offset"]) for r in rows) == sorted(
        (p["url"], p["warc_file"], p["warc_offset"]) for p in pages
    )
    # each extracted ARC member decompresses to the record the preprocess job read
    arc = next(r for r in rows if r["file"].endswith(".arc.gz"))
    data = (out / arc["file"]).read_bytes()[arc["offset"] : arc["offset"] + arc["length"]]
    assert gzip.decompress(data).split(b" ", 1)[0].decode() == arc["url"]


def test_crash_keeps_previous_output_and_leaves_no_temp_folder(spark, aut, tmp_path, monkeypatch):
    import jobs.extract as job_module

    root, ranges = aut
    tsv = tmp_path / "l.tsv"
    tsv.write_text("\n".join(sample_lines(ranges, step=50)))
    out = tmp_path / "out"
    assert run_job(spark, ["--tsv", str(tsv), "--archives", str(root), "--output", str(out)])[0] == 0
    before = sorted(os.listdir(out))

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(job_module, "assemble", boom)
    rc, summary = run_job(spark, ["--tsv", str(tsv), "--archives", str(root), "--output", str(out)])
    assert rc == 1 and "disk full" in summary["error"]
    assert sorted(os.listdir(out)) == before and (out / storage.SUCCESS).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.tsv", "out"]
    check_output(out)
