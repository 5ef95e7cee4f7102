"""Batches within a day (lib/preprocess/batches.py, ``dailyslice day --batch``): which archives the
next batch takes (those no published batch's input manifest names, not the ones still being
written), its number, a batch killed halfway planned again with the same number, and two real
batches of a day preprocessed and indexed under ``batch=N/`` in the test session's Spark, whose
pages are the pages of the day run at once."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import time

import pyarrow.dataset as ds
import pytest

from jobs import day, preprocess
from lib.errors import UsageError
from lib.orchestration import chain
from lib.preprocess import batches
from lib.preprocess.input_manifest import input_record
from lib.store import layout, storage
from lib.warc.sample import write_sample_crawl

DAY = dt.date(2026, 1, 15)
OLD = time.time() - 3600  # an archive closed an hour ago


def _archives(root: pathlib.Path, names: list[str], mtime: float = OLD) -> pathlib.Path:
    folder = pathlib.Path(layout.day_path(str(root), layout.WARC, DAY))
    for n in names:
        p = folder / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * 10)
        os.utime(p, (mtime, mtime))
    return folder


def _publish(day_out: pathlib.Path, number: int, warc: pathlib.Path, names: list[str], success: bool = True) -> None:
    """A batch folder as the job leaves it: _inputs.json naming its archives, _SUCCESS last (or not)."""
    b = day_out / f"batch={number}"
    b.mkdir(parents=True)
    files = [f for f in storage.list_files(str(warc)) if f.uri.rsplit("/", 1)[-1] in names]
    (b / layout.INPUTS).write_bytes(input_record(str(warc), files))
    if success:
        (b / layout.SUCCESS).write_bytes(b"")


def test_the_next_batch_is_what_no_published_batch_took(tmp_path):
    warc = _archives(tmp_path, ["c1/a.warc.gz", "c1/b.warc.gz", "c2/c.arc.gz"])
    out = tmp_path / "preprocessed" / "2026-01" / "15"
    first = batches.next_batch(str(warc), str(out))
    assert first is not None and first.number == 1 and first.taken_before == 0
    assert first.names(str(warc)) == ["2026-01/15/c1/a.warc.gz", "2026-01/15/c1/b.warc.gz", "2026-01/15/c2/c.arc.gz"]
    _publish(out, 1, warc, ["a.warc.gz", "b.warc.gz"])
    second = batches.next_batch(str(warc), str(out))
    assert second is not None and second.number == 2 and second.names(str(warc)) == ["2026-01/15/c2/c.arc.gz"]
    assert second.taken_before == 2
    _publish(out, 2, warc, ["c.arc.gz"])
    assert batches.next_batch(str(warc), str(out)) is None  # nothing new: no batch
    _archives(tmp_path, ["c1/d.warc.gz"])  # arrived later
    third = batches.next_batch(str(warc), str(out))
    assert third is not None and third.number == 3 and third.names(str(warc)) == ["2026-01/15/c1/d.warc.gz"]


def test_a_batch_killed_halfway_is_no_batch_and_is_planned_again_with_its_number(tmp_path):
    warc = _archives(tmp_path, ["a.warc.gz", "b.warc.gz"])
    out = tmp_path / "preprocessed" / "2026-01" / "15"
    _publish(out, 1, warc, ["a.warc.gz"])
    _publish(out, 2, warc, ["b.warc.gz"], success=False)  # an upload cut before its _SUCCESS
    (out / "batch=2.tmp-0badc0de").mkdir()  # a local run killed while assembling it
    (out / "batch=2.tmp-0badc0de" / layout.SUCCESS).write_bytes(b"")
    assert set(batches.published_batches(str(out))) == {1}
    again = batches.next_batch(str(warc), str(out))
    assert again is not None and again.number == 2 and again.names(str(warc)) == ["2026-01/15/b.warc.gz"]


def test_an_archive_still_being_written_is_not_taken(tmp_path):
    warc = _archives(tmp_path, ["a.warc.gz"])
    _archives(tmp_path, ["b.warc.gz"], mtime=time.time())  # still growing
    _archives(tmp_path, ["c.warc.gz.open"])  # a crawler's open file: no archive suffix
    out = tmp_path / "preprocessed" / "2026-01" / "15"
    b = batches.next_batch(str(warc), str(out), settle=60)
    assert b is not None and b.names(str(warc)) == ["2026-01/15/a.warc.gz"] and b.waiting == ["2026-01/15/b.warc.gz"]
    assert batches.next_batch(str(warc), str(out), settle=60, now=time.time() + 61).names(str(warc)) == [
        "2026-01/15/a.warc.gz",
        "2026-01/15/b.warc.gz",
    ]
    _archives(tmp_path, ["a.warc.gz"], mtime=time.time())
    assert batches.next_batch(str(warc), str(out), settle=60) is None  # all of it may still be written


def test_a_published_batch_without_its_manifest_is_named(tmp_path):
    out = tmp_path / "day"
    (out / "batch=1").mkdir(parents=True)
    (out / "batch=1" / layout.SUCCESS).write_bytes(b"")
    with pytest.raises(FileNotFoundError, match=r"batch=1: a published batch without its _inputs.json"):
        batches.published_batches(str(out))
    assert batches.batch_number("x/batch=12") == 12 and batches.batch_number("x/batch=1.tmp-ab") is None
    assert batches.batch_number("x/batch=0") is None and batches.batch_number("x/language=eng") is None


def test_only_names_archives_that_are_there_or_says_which_are_not(tmp_path):
    warc = _archives(tmp_path, ["a.warc.gz", "b.warc.gz"])
    listed = storage.list_files(str(warc))
    kept = preprocess.only_archives(listed, str(warc), json.dumps(["2026-01/15/b.warc.gz"]))
    assert [f.uri.rsplit("/", 1)[-1] for f in kept] == ["b.warc.gz"]
    with pytest.raises(UsageError, match=r"--only names 1 archive\(s\) not under .*'2026-01/15/z.warc.gz'"):
        preprocess.only_archives(listed, str(warc), json.dumps(["2026-01/15/a.warc.gz", "2026-01/15/z.warc.gz"]))
    with pytest.raises(UsageError, match="--only: --only must be a JSON list"):
        preprocess.only_archives(listed, str(warc), '{"a": 1}')
    (tmp_path / "only.json").write_text(json.dumps(["2026-01/15/a.warc.gz"]))
    assert len(preprocess.only_archives(listed, str(warc), f"@{tmp_path / 'only.json'}")) == 1


def _pages(folder: str) -> set[tuple[str, int]]:
    t = ds.dataset(folder, format="parquet", partitioning="hive", exclude_invalid_files=True).to_table(
        columns=["url", "warc_offset", "warc_file"]
    )
    return {(r["warc_file"].rsplit("/", 1)[-1], r["warc_offset"]) for r in t.to_pylist()}


def _batch(spark, root: pathlib.Path, settle: float) -> tuple[int, dict, chain.DayPaths]:
    """One tick of the batch chain in the test session (what ``dailyslice day --batch`` runs)."""
    a = day.parser().parse_args(
        ["--date", DAY.isoformat(), "--input-root", str(root), "--output-root", str(root), "--batch"]
        + ["--index-args=--min-group-docs 1 --no-graph"]
    )
    paths = chain.DayPaths(a.date, a.input_root, a.output_root)
    plan = batches.next_batch(paths.archives, paths.output(layout.PREPROCESSED), settle)
    assert plan is not None
    paths = chain.DayPaths(a.date, a.input_root, a.output_root, batch=plan.number)
    options = day.plan_options(a, paths, None, plan.names(paths.archives))
    codes, summaries = day.run_steps(options, spark, lambda line: None, paths.steps)
    return chain.night_exit(codes, paths.steps), summaries, paths


def test_two_batches_of_a_day_are_published_under_it_and_hold_the_days_pages(spark, tmp_path):
    root = tmp_path / "root"
    paths = write_sample_crawl(str(root), DAY, files=2, pages_per_file=6)
    first, second = sorted(paths)
    os.utime(first, (OLD, OLD))
    os.utime(second, (time.time(), time.time()))  # still being written at the first tick
    rc1, s1, p1 = _batch(spark, root, settle=600)
    os.utime(second, (OLD, OLD))
    rc2, s2, p2 = _batch(spark, root, settle=600)
    assert (rc1, rc2) == (0, 0) and (p1.batch, p2.batch) == (1, 2)
    assert set(s1) == set(s2) == {"preprocess", "index"}  # a batch is not catalogued: the day is, when it closes
    day_out = layout.day_path(str(root), layout.PREPROCESSED, DAY)
    for n, archive in ((1, first), (2, second)):
        pre = pathlib.Path(day_out) / f"batch={n}"
        record = json.loads((pre / layout.INPUTS).read_text())
        assert [f["name"].rsplit("/", 1)[-1] for f in record["files"]] == [os.path.basename(archive)]
        assert (pre / layout.SUCCESS).is_file()
        idx = pathlib.Path(layout.day_path(str(root), layout.INDEX, DAY)) / f"batch={n}"
        assert (idx / layout.SUCCESS).is_file() and list(idx.rglob("index-*.ciff.gz"))
    assert batches.next_batch(p1.archives, day_out, 600) is None
    # the batches' pages are the pages of the day preprocessed at once
    whole = tmp_path / "whole"
    r = preprocess.run(
        spark, preprocess.PreprocessOptions(input=p1.archives, output=str(whole), date=DAY, minhash_perms=0)
    )
    assert r.ok
    got = _pages(str(pathlib.Path(day_out) / "batch=1")) | _pages(str(pathlib.Path(day_out) / "batch=2"))
    assert got == _pages(str(whole)) and len(got) == s1["preprocess"]["pages_kept"] + s2["preprocess"]["pages_kept"]
