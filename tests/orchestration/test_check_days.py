"""Days that stay complete: the input record a preprocessed day publishes, and check-days, which
finds a day whose input changed after it was published and a night that never ran (local
folders and S3 on loopback, through the real preprocess job)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil

import pyarrow.dataset as ds

from jobs import preprocess
from lib.core import layout, s3, storage
from lib.orchestration import days
from lib.preprocess.inputs import compare, entries
from lib.warc.sample import write_sample_crawl

D1, D2, D3 = dt.date(2026, 3, 1), dt.date(2026, 3, 2), dt.date(2026, 3, 3)


def _pages(out: str) -> set[tuple[str, str]]:
    t = ds.dataset(storage.local_path(out), format="parquet", partitioning="hive", exclude_invalid_files=True,
                   ignore_prefixes=["_", "."]).to_table(columns=["record_id", "warc_file"])
    return set(zip(t.column("record_id").to_pylist(), t.column("warc_file").to_pylist()))


def test_published_day_records_its_inputs_and_check_days_finds_late_files_and_missed_nights(tmp_path, spark, capsys):
    root = str(tmp_path / "bucket")
    write_sample_crawl(root, D1, files=2, pages_per_file=6)
    late = write_sample_crawl(str(tmp_path / "late"), D1, files=1, pages_per_file=5, seed=99, crawler="crawler2")
    write_sample_crawl(root, D2, files=1, pages_per_file=4, seed=3)  # a night that never ran
    assert preprocess.main(["--date", D1.isoformat(), "--root", root], spark=spark) == 0
    out1 = layout.day_path(root, layout.PREPROCESSED, D1)

    rec = json.loads(open(os.path.join(out1, layout.INPUTS)).read())
    listed = storage.list_files(layout.day_path(root, layout.WARC, D1))
    assert rec["count"] == len(listed) == 2 and rec["bytes"] == sum(f.size for f in listed)
    assert [f["name"] for f in rec["files"]] == sorted(entries(layout.day_path(root, layout.WARC, D1), listed))
    assert all(f["name"].startswith("2026-03/01/crawler1/") and f["version"].startswith("mtime:") for f in rec["files"])

    rows = {r["day"]: r for r in days.check_days(root, None, D3, 3)}
    assert [rows[d.isoformat()]["state"] for d in (D1, D2, D3)] == ["complete", "missing", "empty"]
    assert rows[D2.isoformat()]["files"] == 1

    # a file the crawler writes into the day's folder after the day was published
    dest = os.path.join(layout.day_path(root, layout.WARC, D1), "crawler2")
    os.makedirs(dest)
    shutil.copy(late[0], dest)
    row = days.day_state(root, root, D1)
    assert row["state"] == "changed" and row["added"] == ["2026-03/01/crawler2/" + os.path.basename(late[0])]
    assert days.main(["--root", root, "--end", D3.isoformat(), "--days", "3"]) == 1
    text = capsys.readouterr().out
    assert "2026-03-01  changed" in text and "added 2026-03/01/crawler2/" in text
    assert "2026-03-02  missing" in text and "2 day(s) need a run: 2026-03-01, 2026-03-02" in text

    # re-running the changed day and the missed night makes every day complete again
    before = _pages(out1)
    for d in (D1, D2):
        assert preprocess.main(["--date", d.isoformat(), "--root", root], spark=spark) == 0
    after = _pages(out1)
    assert after > before and {f for _, f in after - before} == {"file://" + os.path.join(dest, os.path.basename(late[0]))}
    rec = json.loads(open(os.path.join(out1, layout.INPUTS)).read())
    assert rec["count"] == 3 and any("crawler2" in f["name"] for f in rec["files"])
    assert days.main(["--root", root, "--end", D3.isoformat(), "--days", "3", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert [r["state"] for r in got["days"]] == ["complete", "complete", "empty"] and got["needs_run"] == []


def test_rewritten_and_removed_files_and_s3_etags(tmp_path, s3_bucket, spark):
    local = tmp_path / "crawl"
    paths = write_sample_crawl(str(local), D1, files=2, pages_per_file=4)
    root = f"s3://{s3_bucket}/root"
    for p in paths:
        key = "root/" + os.path.relpath(p, local)
        s3.client().upload_file(p, s3_bucket, key)
    assert preprocess.main(["--date", D1.isoformat(), "--root", root, "--staging", str(tmp_path / "stage")],
                           spark=spark) == 0
    rec = json.loads(storage.read_bytes(storage.join(layout.day_path(root, layout.PREPROCESSED, D1), layout.INPUTS)))
    etags = {o["Key"]: o["ETag"].strip('"') for o in s3.client().list_objects_v2(Bucket=s3_bucket)["Contents"]}
    assert {f["version"] for f in rec["files"]} <= set(etags.values()) and rec["count"] == 2
    assert days.day_state(root, root, D1)["state"] == "complete"

    # the same name rewritten with other bytes of the same size: the ETag says so
    first = "root/" + os.path.relpath(paths[0], local)
    data = bytearray(open(paths[0], "rb").read())
    data[-1] ^= 0xFF
    s3.client().put_object(Bucket=s3_bucket, Key=first, Body=bytes(data))
    row = days.day_state(root, root, D1)
    assert row["state"] == "changed" and row["modified"] == [first.removeprefix("root/warc/")]
    s3.client().delete_object(Bucket=s3_bucket, Key=first)
    row = days.day_state(root, root, D1)
    assert row["removed"] == [first.removeprefix("root/warc/")] and not row["modified"]


def test_compare_rules():
    rec = {"files": [{"name": "a", "size": 1, "version": "x"}, {"name": "b", "size": 2, "version": None}]}
    same = [storage.FileInfo("file:///in/a", 1, "x"), storage.FileInfo("file:///in/b", 2, "y")]
    assert compare(rec, "file:///in", same) == {"added": [], "removed": [], "modified": []}  # b: no version kept
    grown = [storage.FileInfo("file:///in/a", 3, "x"), storage.FileInfo("file:///in/c", 1, "z")]
    assert compare(rec, "file:///in", grown) == {"added": ["c"], "removed": ["b"], "modified": ["a"]}
