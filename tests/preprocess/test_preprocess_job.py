"""The preprocess job end to end on real Spark: local files, real crawls, S3, damage, re-runs."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import pathlib
import shutil
import zlib

import pyarrow.dataset as ds
import pytest

from jobs import preprocess
from lib.html import walk
from lib.store import storage
from lib.warc.records import Record, iter_records
from lib.warc.sample import write_sample_crawl
from tests.helpers_warc import good_pages, gz, warc_gz, warc_with_broken_http
from tests.ondemand.test_hostindex import indexed, recount

DATE = dt.date(2026, 1, 15)


def read_pages(out: str):
    return (
        ds.dataset(out, format="parquet", partitioning="hive", exclude_invalid_files=True, ignore_prefixes=["_", "."])
        .to_table()
        .to_pylist()
    )


def assert_byte_ranges(rows) -> None:
    """Every row's (warc_file, warc_offset, warc_length) is exactly its record's gzip member."""
    for r in rows:
        data = storage.read_range(r["warc_file"], r["warc_offset"], r["warc_length"])
        assert len(data) == r["warc_length"]
        if r["warc_file"].endswith(".gz"):
            d = zlib.decompressobj(31)
            d.decompress(data)
            assert d.eof and not d.unused_data, f"{r['url']}: not exactly one gzip member"
        recs = list(iter_records(io.BufferedReader(io.BytesIO(data)), r["warc_file"]))
        assert len(recs) == 1 and isinstance(recs[0], Record)
        assert recs[0].url == r["url"]
        if not r["warc_file"].endswith(".arc.gz"):  # ARC has no record ids: ours are derived
            assert recs[0].record_id.strip("<>") == r["record_id"]


def stats_of(out: str) -> dict:
    with open(os.path.join(storage.local_path(out), "_stats.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def sample_day(tmp_path_factory, spark):
    root = str(tmp_path_factory.mktemp("bucket"))
    write_sample_crawl(root, DATE, files=2, pages_per_file=30)
    assert preprocess.main(["--date", DATE.isoformat(), "--root", root], spark=spark) == 0
    return root, os.path.join(root, "preprocessed", "2026-01", "15")


def test_sample_day_output_layout_and_content(sample_day, spark):
    root, out = sample_day
    names = sorted(os.listdir(out))
    assert "_SUCCESS" in names and "_stats.json" in names and "_errors.jsonl" in names and "_captures" in names
    langs = {n.split("=")[1] for n in names if n.startswith("language=")}
    assert langs == {"eng", "deu", "fra", "spa", "nld", "rus", "zho"}
    rows = read_pages(out)
    s = stats_of(out)["totals"]
    assert len(rows) == s["kept"] == 60 and s["read"] == s["kept"] + s["skipped"] + s["failed"]
    assert s["failed"] == 0 and s["skipped_by_reason"]["not_response:request"] == 68
    by_url = {r["url"]: r for r in rows}
    ru = next(r for r in rows if r["language"] == "rus")
    assert ru["charset"] == "cp1251" and "Городской" in ru["plain_text"] + ru["title"]
    en = by_url["https://news.example.com/articles/2026/01/page-0.html"]
    assert en["url_suffix"] == "com" and en["html_lang"] == "en" and en["description"]
    assert "tracking" not in en["plain_text"] and "boilerplate" not in en["plain_text"]
    assert len(en["outgoing_links"]) == 6 and all(link["url"].startswith("https://") for link in en["outgoing_links"])
    assert_byte_ranges(rows)
    # Spark reads the day folder as one dataset with the language partition
    df = spark.read.parquet(out)
    assert df.count() == 60 and df.filter("language = 'zho'").count() == len(
        [r for r in rows if r["language"] == "zho"]
    )
    caps = ds.dataset(os.path.join(out, "_captures")).to_table().to_pylist()
    assert sum(c["kept"] for c in caps) == 60
    # the host index: every host of every row group, as a recount of the page files finds them
    assert indexed(pathlib.Path(out)) == recount(pathlib.Path(out))
    assert sum(indexed(pathlib.Path(out)).values()) == 60
    assert {c["record_type"] for c in caps} == {"response", "revisit"}


def test_success_marker_is_written_last(sample_day):
    _, out = sample_day
    marker = os.path.getmtime(os.path.join(out, "_SUCCESS"))
    for d, _, files in os.walk(out):
        for f in files:
            assert os.path.getmtime(os.path.join(d, f)) <= marker


def test_rerun_replaces_the_day_identically(sample_day, spark):
    root, out = sample_day
    before = sorted((r["record_id"], r["plain_text"]) for r in read_pages(out))
    assert preprocess.main(["--date", DATE.isoformat(), "--root", root], spark=spark) == 0
    after = sorted((r["record_id"], r["plain_text"]) for r in read_pages(out))
    assert before == after and len(after) == 60
    assert indexed(pathlib.Path(out)) == recount(pathlib.Path(out))  # written again with the pages
    assert not [n for n in os.listdir(os.path.dirname(out)) if n != "15"]  # no temp folders left


def test_crashed_run_leaves_no_complete_looking_folder(tmp_path, spark, monkeypatch):
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.warc.gz").write_bytes(warc_gz([r for _, r in good_pages(3)]))
    out = tmp_path / "out"

    def boom(*a, **k):
        raise RuntimeError("node lost")

    for where, name in ((preprocess, "merge_results"), (preprocess.hostindex, "write")):
        with monkeypatch.context() as m:
            m.setattr(where, name, boom)
            assert preprocess.main(["--input", str(inp), "--output", str(out)], spark=spark) == 1
        assert not out.exists()
        leftovers = [p for p in tmp_path.iterdir() if p.name.startswith("out")]
        assert all(not (p / "_SUCCESS").exists() for p in leftovers)


def test_real_crawls_offsets_and_totals(corpus, tmp_path, spark):
    inp = tmp_path / "in"
    shutil.copytree(corpus, inp, ignore=shutil.ignore_patterns("*.md"))
    out = tmp_path / "out"
    assert preprocess.main(["--input", str(inp), "--output", str(out)], spark=spark) == 0
    rows = read_pages(str(out))
    stats = stats_of(str(out))
    t = stats["totals"]
    assert t["files"] == 11 and len(stats["files"]) == 11 and t["kept"] == len(rows) > 300
    assert t["read"] == t["kept"] + t["skipped"] + t["failed"]
    for f in stats["files"]:
        assert f["read"] == f["kept"] + f["skipped"] + f["failed"] and f["bytes"] > 0
    addressable = [r for r in rows if r["warc_offset"] is not None]
    assert len(addressable) == len(rows) - 1  # badexample.arc.gz packs records into one member
    assert_byte_ranges(addressable)
    zh = [r for r in rows if r["language"] == "zho"]
    assert len(zh) >= 10 and all(r["url_suffix"] for r in zh)


def test_bad_files_in_a_day_do_not_kill_it(tmp_path, spark):
    inp = tmp_path / "warc"
    inp.mkdir()
    pages = [r for _, r in good_pages(6)]
    (inp / "good.warc.gz").write_bytes(warc_gz(pages[:3]))
    (inp / "notgzip.warc.gz").write_bytes(b"this is not an archive at all\n" * 50)
    trunc = warc_gz(pages[3:])
    (inp / "truncated.warc.gz").write_bytes(trunc[:-25])
    (inp / "empty.warc.gz").write_bytes(b"")
    out = tmp_path / "out"
    assert preprocess.main(["--input", str(inp), "--output", str(out)], spark=spark) == 3
    rows = read_pages(str(out))
    assert sorted(r["url"] for r in rows) == sorted(u for u, _ in good_pages(6))
    # the cut-off last record is kept with what is there, flagged, and reported as a warning
    assert [r["url"] for r in rows if r["truncated"]] == [good_pages(6)[5][0]]
    t = stats_of(str(out))["totals"]
    assert t["failed_by_reason"] == {"not_an_archive": 1}
    assert sum(t["warnings_by_reason"].get(k, 0) for k in ("truncated_record", "truncated_member")) == 1
    errors = [json.loads(line) for line in open(out / "_errors.jsonl")]
    trunc_err = next(e for e in errors if e["reason"].startswith("truncated_"))
    assert trunc_err["kind"] == "warning" and trunc_err["file"].endswith("truncated.warc.gz")
    assert trunc_err["offset"] == len(gz(pages[3])) + len(gz(pages[4]))
    assert next(e for e in errors if e["reason"] == "not_an_archive")["offset"] == 0
    # one file of four is not an archive: published, but unhealthy (exit 3), whatever the policy
    # except never, which still reports the health
    h = stats_of(str(out))["health"]
    assert not h["ok"] and "max_unreadable_share" in h["breached"] and h["counts"]["unreadable_files"] == 1
    assert (
        preprocess.main(["--input", str(inp), "--output", str(tmp_path / "out2"), "--fail-on", "any"], spark=spark) == 3
    )
    job = preprocess.PreprocessJob()
    assert job.main(["--input", str(inp), "--output", str(tmp_path / "out3"), "--fail-on", "never"], spark=spark) == 0
    assert job.last_result.summary["ok"] is True and job.last_result.summary["health"]["ok"] is False


def _day_with_broken_http(inp, good: int, broken: int) -> list[int]:
    inp.mkdir()
    data, offsets = warc_with_broken_http(good, broken)
    (inp / "day.warc.gz").write_bytes(data)
    return offsets


def test_a_day_that_loses_pages_is_published_but_fails_loudly(tmp_path, spark):
    offsets = _day_with_broken_http(tmp_path / "in", good=20, broken=10)
    out, summary_file = tmp_path / "out", tmp_path / "summary.json"
    job = preprocess.PreprocessJob()
    assert (
        job.main(["--input", str(tmp_path / "in"), "--output", str(out), "--summary", str(summary_file)], spark=spark)
        == 3
    )
    assert (out / "_SUCCESS").exists() and len(read_pages(str(out))) == 20  # published: the best we have
    assert json.loads((out / "_SUCCESS").read_text())["healthy"] is False
    summary = json.loads(summary_file.read_text())
    h = summary["health"]
    assert summary["ok"] is False and h["ok"] is False and h["breached"] == ["max_failed_share"]
    assert h["shares"]["failed"] == round(10 / 30, 6) and h["shares"]["kept"] == 1.0
    assert h["thresholds"] == {
        "max_failed_share": 0.01,
        "min_kept_share": 0.99,
        "max_unreadable_share": 0.01,
        "max_empty_text_share": 0.02,
    }
    assert summary["empty_text"] == 0 and h["shares"]["empty_text"] == 0.0  # the good pages all have text
    assert stats_of(str(out))["totals"]["empty_text"] == 0
    assert all(f["empty_text"] == 0 for f in stats_of(str(out))["files"])
    top = h["top_reasons"][0]
    assert top["count"] == 10 and top["kind"] == "failed" and top["reason"].startswith("http_")
    assert [(s["offset"], s["reason"]) for s in h["samples"]] == [(o, top["reason"]) for o in offsets[:3]]
    assert all(s["file"].endswith("/in/day.warc.gz") and s["detail"] for s in h["samples"])
    assert stats_of(str(out))["health"] == h  # _stats.json carries the same block
    # thresholds are options: a looser one accepts the same day
    assert (
        preprocess.main(
            ["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out2"), "--max-failed-share", "0.5"],
            spark=spark,
        )
        == 0
    )
    with pytest.raises(SystemExit) as usage:  # not a share: a usage error, exit 2
        preprocess.main(
            ["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out3"), "--max-failed-share", "2"]
        )
    assert usage.value.code == 2


def test_a_day_under_the_thresholds_is_healthy(tmp_path, spark):
    _day_with_broken_http(tmp_path / "in", good=200, broken=1)  # 1 failed of 201: 0.5 %
    job = preprocess.PreprocessJob()
    assert job.main(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")], spark=spark) == 0
    s = job.last_result.summary
    assert s["ok"] is True and s["failed"] == 1 and s["health"]["ok"] and s["health"]["breached"] == []
    assert s["health"]["samples"] == []  # samples only for an unhealthy day


def test_missing_input_is_a_usage_error_and_publishes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as e:  # before any Spark starts: no session given or needed
        preprocess.main(["--input", str(tmp_path / "nothing"), "--output", str(out)])
    assert e.value.code == 2 and not out.exists() and not list(tmp_path.glob("out*"))
    assert "does not exist" in capsys.readouterr().err


def test_empty_day_publishes_nothing_unless_allowed(tmp_path, spark, capsys):
    inp, out = tmp_path / "in", tmp_path / "out"
    (inp / "sub").mkdir(parents=True)
    (inp / "README.txt").write_text("no archives here")
    job = preprocess.PreprocessJob()
    assert job.main(["--input", str(inp), "--output", str(out)], spark=spark) == 4
    assert not out.exists() and not list(tmp_path.glob("out*"))  # no work folder left either
    assert job.last_result.summary["empty"] is True and "no archives" in job.last_result.summary["error"]
    assert "nothing published" in capsys.readouterr().err
    assert preprocess.main(["--input", str(inp), "--output", str(out), "--allow-empty"], spark=spark) == 0
    assert (out / "_SUCCESS").exists() and stats_of(str(out))["totals"]["files"] == 0


def test_s3_in_and_out_through_the_loopback_server(s3_bucket, tmp_path, spark):
    local = tmp_path / "src"
    paths = write_sample_crawl(str(local), DATE, files=2, pages_per_file=10)
    from lib.store import s3

    for p in paths:
        key = os.path.relpath(p, local).replace(os.sep, "/")
        s3.client().upload_file(p, s3_bucket, f"crawl/{key}")
    root = f"s3://{s3_bucket}/crawl"
    assert (
        preprocess.main(["--date", DATE.isoformat(), "--root", root, "--staging", str(tmp_path / "stage")], spark=spark)
        == 0
    )
    out = f"{root}/preprocessed/2026-01/15"
    listed = [f.uri for f in storage.list_files(out)]
    assert listed[-1].endswith("_stats.json") or any(u.endswith("/_SUCCESS") for u in listed)
    assert any("/language=eng/" in u for u in listed)
    dl = tmp_path / "dl"
    for u in listed:
        rel = u[len(out) + 1 :]
        os.makedirs(dl / os.path.dirname(rel), exist_ok=True)
        (dl / rel).write_bytes(storage.read_bytes(u))
    rows = read_pages(str(dl))
    assert len(rows) == 20 and all(r["warc_file"].startswith(f"s3://{s3_bucket}/crawl/warc/") for r in rows)
    assert_byte_ranges(rows)  # ranged GETs against the server give back exactly each member
    assert json.loads((dl / "_SUCCESS").read_text())["pages"] == 20


def test_spark_submit_entry_point(tmp_path):
    """`spark-submit jobs/preprocess.py` from another directory, as a backfill would run it."""
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.warc.gz").write_bytes(warc_gz([r for _, r in good_pages(4)]))
    out = tmp_path / "out"
    submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK")}
    env["PYSPARK_PYTHON"] = sys.executable
    proc = subprocess.run(
        [
            submit,
            "--master",
            "local[1]",
            "--conf",
            "spark.ui.enabled=false",
            os.path.join(repo, "jobs", "preprocess.py"),
            "--input",
            str(inp),
            "--output",
            str(out),
            "--summary",
            str(tmp_path / "summary.json"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["pages_kept"] == 4 and summary["ok"] is True
    assert summary["html_extraction"] == [walk.status()]  # what the executor ran, e.g. the compiled walker
    assert "== preprocess summary ==" in proc.stdout + proc.stderr  # spark-submit merges the two
    assert sorted(r["url"] for r in read_pages(str(out))) == sorted(u for u, _ in good_pages(4))
