"""The preprocess job reading real .warc.gz archives in byte ranges (several tasks a file) gives the
pages and counters of reading each archive whole."""

from __future__ import annotations

import gzip
import json
import pathlib
import shutil

import pyarrow.dataset as ds

from jobs import preprocess
from lib.preprocess.archive_pages import MAX_REPORTED_PER_FILE
from lib.preprocess.plan import split
from lib.preprocess.tasks import TaskSettings, merge_ranges, process_task
from lib.store import storage

COLUMNS = ("id", "record_id", "url", "warc_file", "warc_offset", "warc_length", "language", "plain_text", "title")
RANGE = 64 << 10


def day_of_real_archives(corpus: pathlib.Path, root: pathlib.Path) -> pathlib.Path:
    """Every real .warc.gz of the corpus, an ARC, and one real WARC recompressed as a single gzip member."""
    day = root / "warc"
    day.mkdir(parents=True)
    for p in sorted(corpus.rglob("*")):
        if p.name.lower().endswith((".warc.gz", ".arc.gz")):
            shutil.copy(p, day / f"{p.parent.name}-{p.name}")
    whole = gzip.decompress((corpus / "dolma" / "sample-0000.warc.gz").read_bytes())  # a real WARC, uncompressed
    (day / "single-member.warc.gz").write_bytes(gzip.compress(whole, 1))  # one member: no start after 0
    return day


def rows_of(out: pathlib.Path) -> list[tuple]:
    t = ds.dataset(str(out), format="parquet", partitioning="hive", ignore_prefixes=["_", "."]).to_table()
    return sorted(tuple(repr(r[c]) for c in COLUMNS) for r in t.to_pylist())


def parquet_names(out: pathlib.Path) -> list[str]:
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))


def without_time(stats: dict) -> dict:
    """_stats.json's counters (timings and S3 counters depend on the run)."""
    drop = ("seconds", "s3")
    files = [{k: v for k, v in f.items() if k not in drop} for f in stats["files"]]
    return {"totals": {k: v for k, v in stats["totals"].items() if k not in drop}, "files": files}


def run(inp: pathlib.Path, out: pathlib.Path, spark, split_bytes: int) -> dict:
    opts = preprocess.PreprocessOptions(input=str(inp), output=str(out), task_bytes=RANGE, split_bytes=split_bytes)
    result = preprocess.run(spark, opts)
    assert result.exit_code in (0, 3), result.summary
    return result.summary


def test_split_archives_give_the_pages_and_counts_of_whole_ones(corpus, tmp_path, spark):
    inp = day_of_real_archives(corpus, tmp_path / "day")
    split = run(inp, tmp_path / "split", spark, 0)  # ranges of the tasks' limit: 64 KiB
    whole = run(inp, tmp_path / "whole", spark, 1 << 40)  # no file is split
    files = len(list(inp.iterdir()))
    assert whole["files"] == split["files"] == files and whole["tasks"] == whole["ranges"] == files
    big = [p for p in inp.iterdir() if p.name.endswith(".warc.gz") and p.stat().st_size > RANGE]
    assert len(big) >= 6 and split["tasks"] == split["ranges"] > files + 3 * len(big)
    rows = rows_of(tmp_path / "split")
    assert len(rows) > 300 and rows == rows_of(tmp_path / "whole")
    stats = {c: json.loads((tmp_path / c / "_stats.json").read_text()) for c in ("split", "whole")}
    assert without_time(stats["split"]) == without_time(stats["whole"])
    t = stats["split"]["totals"]
    assert t["read"] == t["kept"] + t["skipped"] + t["failed"] and t["bytes"] == sum(
        p.stat().st_size for p in inp.iterdir()
    )
    one = next(f for f in stats["split"]["files"] if f["file"].endswith("single-member.warc.gz"))
    assert one["kept"] > 10 and one["read"] == next(
        f["read"] for f in stats["whole"]["files"] if f["file"].endswith("single-member.warc.gz")
    )
    errors = {c: (tmp_path / c / "_errors.jsonl").read_text() for c in ("split", "whole")}
    assert errors["split"] == errors["whole"] and errors["split"].count("\n") > 0
    # a retried run writes the same page files (names derive from the ranges)
    again = tmp_path / "again"
    run(inp, again, spark, 0)
    assert parquet_names(tmp_path / "split") == parquet_names(again) and rows_of(again) == rows


def test_ranges_of_an_s3_object_read_what_the_local_file_reads(corpus, s3_bucket, tmp_path):
    src = corpus / "aut" / "example.warc.gz"
    size = src.stat().st_size
    uri = f"s3://{s3_bucket}/day/example.warc.gz"
    storage.write_bytes(uri, src.read_bytes())
    pieces = split([(uri, size)], 1 << 18)  # S3 ranges: forward-only streams from each start
    assert len(pieces) > 5
    ranged = [process_task([p], TaskSettings(str(tmp_path / f"r{i}"), 10 << 20, 50))[0] for i, p in enumerate(pieces)]
    whole = process_task([(str(src), size)], TaskSettings(str(tmp_path / "whole"), 10 << 20, 50))[0]
    merged = merge_ranges(ranged[::-1], size)  # any order of the results
    drop = ("seconds", "s3", "file")
    a, b = (json.loads(r["stats"]) for r in (merged, whole))
    assert {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}
    assert a["kept"] > 50 and a["bytes"] == size
    lines = [[dict(json.loads(x), file=None) for x in r["errors"].splitlines()] for r in (merged, whole)]
    assert lines[0] == lines[1] and lines[0]


def test_a_split_file_reports_as_many_lines_as_a_whole_one():
    def row(start: int, n: int, unreported: int) -> dict:
        base = {"file": "a.warc.gz", "bytes": 0, "seconds": 0.5, "read": n, "kept": 0, "html_seen": 0}
        stats = base | {"empty_text": 0, "skipped": 0, "failed": n, "errors_not_reported": unreported}
        stats |= {"skipped_by_reason": {}, "failed_by_reason": {"x": n}, "warnings_by_reason": {}}
        lines = "".join(json.dumps({"offset": start + i}) + "\n" for i in range(n))
        return {"file": "a.warc.gz", "start": start, "stats": json.dumps(stats), "errors": lines}

    cap = MAX_REPORTED_PER_FILE
    merged = merge_ranges([row(10**6, cap, 5), row(0, cap - 1, 0)], 123)
    stats, lines = json.loads(merged["stats"]), merged["errors"].splitlines()
    assert [json.loads(x)["offset"] for x in lines] == list(range(cap - 1)) + [10**6]  # offset order, capped
    assert stats["errors_not_reported"] == cap - 1 + 5 and stats["failed"] == 2 * cap - 1 == stats["read"]
    assert stats["failed_by_reason"] == {"x": 2 * cap - 1} and stats["bytes"] == 123 and stats["seconds"] == 1.0
