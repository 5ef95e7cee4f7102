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
from lib.store import layout, s3, storage
from lib.orchestration import days
from lib.preprocess.input_manifest import compare, entries, input_record
from lib.warc.sample import write_sample_crawl

D1, D2, D3 = dt.date(2026, 3, 1), dt.date(2026, 3, 2), dt.date(2026, 3, 3)


def _pages(out: str) -> set[tuple[str, str]]:
    t = ds.dataset(storage.local_path(out), format="parquet", partitioning="hive", exclude_invalid_files=True,
                   ignore_prefixes=["_", "."]).to_table(columns=["record_id", "warc_file"])
    return set(zip(t.column("record_id").to_pylist(), t.column("warc_file").to_pylist()))


def test_published_day_records_its_inputs_and_check_days_finds_late_files_and_missed_nights(tmp_path, spark, capsys,
                                                                                              corpus):
    root = str(tmp_path / "bucket")
    write_sample_crawl(root, D1, files=2, pages_per_file=6)
    late = [str(corpus / "resiliparse" / "warcfile.warc.gz")]  # real crawl files from here on
    night = os.path.join(layout.day_path(root, layout.WARC, D2), "crawler1")  # a night that never ran
    os.makedirs(night)
    shutil.copy(corpus / "ipwb" / "sample-1.warc.gz", night)
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


def _publish(root: str, day: dt.date) -> None:
    """What a preprocess run leaves for check-days: the input record and _SUCCESS (no pages)."""
    inp = layout.day_path(root, layout.WARC, day)
    out = layout.day_path(root, layout.PREPROCESSED, day)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, layout.INPUTS), "wb") as f:
        f.write(input_record(inp, storage.list_files(inp)))
    open(os.path.join(out, layout.SUCCESS), "wb").close()


def test_a_day_that_needs_a_run_has_a_run_id_per_state_and_a_reader_decides_what_is_published(tmp_path):
    root = str(tmp_path / "bucket")
    write_sample_crawl(root, D1, files=1, pages_per_file=2)
    write_sample_crawl(root, D2, files=1, pages_per_file=2, seed=5)
    _publish(root, D1)
    read_paths = []

    def read(uri):  # the DAG's reader runs cat where the jobs write; here: a local read, recorded
        read_paths.append(uri)
        return open(uri).read() if os.path.exists(uri) else None

    rows = days.check_days(root, root, D2, 2, read=read)
    assert [r["state"] for r in rows] == ["complete", "missing"] and "fingerprint" not in rows[0]
    assert read_paths and all(p.startswith(os.path.join(root, "preprocessed")) for p in read_paths)
    missing = days.catch_up_run_id(rows[1])
    assert missing.startswith("catchup__2026-03-02__") and missing == days.catch_up_run_id(days.day_state(root, root, D2))
    late = write_sample_crawl(str(tmp_path / "late"), D2, files=1, pages_per_file=2, seed=9, crawler="c9")[0]
    dest = os.path.join(layout.day_path(root, layout.WARC, D2), "c9")
    os.makedirs(dest)
    shutil.copy(late, dest)
    assert days.catch_up_run_id(days.day_state(root, root, D2)) != missing  # another state, another run
    # a published day changed: its id names the listing and the record; a second change another id
    shutil.copytree(dest, os.path.join(layout.day_path(root, layout.WARC, D1), "c9"))
    changed = days.day_state(root, root, D1)
    assert changed["state"] == "changed" and changed["fingerprint"]
    assert days.day_state(root, root, D1, read=lambda uri: None)["state"] == "missing"  # nothing published there
    _publish(root, D1)
    assert days.day_state(root, root, D1)["state"] == "complete"
    os.remove(os.path.join(layout.day_path(root, layout.WARC, D1), "c9", os.path.basename(late)))
    again = days.day_state(root, root, D1)
    assert again["state"] == "changed" and days.catch_up_run_id(again) != days.catch_up_run_id(changed)


def _row(day: int, state: str) -> dict:
    r = {"day": f"2026-03-{day:02d}", "state": state, "files": 1, "bytes": 10}
    if state in days.NEEDS_RUN:
        r["fingerprint"] = f"fp{day}"
    if state == "changed":
        r.update(added=["x"], removed=[], modified=[])
    return r


def test_catch_up_plan_queues_the_oldest_up_to_the_cap_reports_the_rest_and_never_the_own_day():
    rows = [_row(1, "missing"), _row(2, "complete"), _row(3, "changed"), _row(4, "empty"), _row(5, "missing"),
            _row(6, "missing"), _row(7, "unrecorded"), _row(8, "missing")]
    runs = {"catchup__2026-03-03__fp3": "running"}  # queued by an earlier check, now running
    plan = days.plan_catch_up(rows, "2026-03-08", 2, runs.get)
    assert plan["window"] == ["2026-03-01", "2026-03-08"] and plan["own_day"] == "2026-03-08"
    assert plan["states"] == {"missing": ["2026-03-01", "2026-03-05", "2026-03-06", "2026-03-08"],
                              "complete": ["2026-03-02"], "changed": ["2026-03-03"], "empty": ["2026-03-04"],
                              "unrecorded": ["2026-03-07"]}
    assert plan["changes"] == {"2026-03-03": {"added": ["x"], "removed": [], "modified": []}}
    assert [(i["day"], i["run_id"]) for i in plan["to_queue"]] == [
        ("2026-03-01", "catchup__2026-03-01__fp1"), ("2026-03-05", "catchup__2026-03-05__fp5")]
    assert [(i["day"], i["run_state"]) for i in plan["already_queued"]] == [("2026-03-03", "running")]
    assert [i["day"] for i in plan["deferred"]] == ["2026-03-06"]  # left for the next check, reported
    # the next check: what the first queued is found, not queued twice; the deferred day goes now
    runs.update({i["run_id"]: "queued" for i in plan["to_queue"]})
    nxt = days.plan_catch_up(rows, "2026-03-08", 2, runs.get)
    assert [i["day"] for i in nxt["to_queue"]] == ["2026-03-06"] and not nxt["deferred"]
    assert [i["day"] for i in nxt["already_queued"]] == ["2026-03-01", "2026-03-03", "2026-03-05"]
    # a cap of 0 only reports; a window with nothing to do plans nothing
    only = days.plan_catch_up(rows, "2026-03-08", 0, {}.get)
    assert not only["to_queue"] and [i["day"] for i in only["deferred"]] == ["2026-03-01", "2026-03-03", "2026-03-05",
                                                                           "2026-03-06"]
    quiet = days.plan_catch_up([_row(1, "complete"), _row(2, "empty")], "2026-03-02", 5, {}.get)
    assert not (quiet["to_queue"] or quiet["already_queued"] or quiet["deferred"])
