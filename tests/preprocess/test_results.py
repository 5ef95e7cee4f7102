"""The preprocess counters as typed records (lib.preprocess.file_counters): they add up, and their
JSON is the ``_stats.json`` entries' shape."""

from __future__ import annotations

import json

import pytest

from lib.preprocess.file_counters import DayStats, DayTotals, FileResult, RunSummary


def _file(name: str, kept: int, failed: int, reason: str) -> FileResult:
    return FileResult(
        file=name,
        bytes=100,
        read=kept + failed,
        kept=kept,
        failed=failed,
        failed_by_reason={reason: failed},
        s3={"calls": 2, "requests": 3},
        html_extraction="compiled walker",
        seconds=0.25,
    )


def test_a_day_adds_its_files_counters_and_reasons():
    day = DayTotals(files=2)
    for f in (_file("a", 5, 1, "x"), _file("b", 7, 2, "y"), _file("c", 0, 3, "x")):
        day.add_file(FileResult.from_json(f.to_json()))  # as the driver reads the tasks' rows
    d = day.as_dict()
    assert (d["read"], d["kept"], d["failed"], d["bytes"]) == (18, 12, 6, 300)
    assert d["failed_by_reason"] == {"x": 4, "y": 2} and d["s3"] == {"calls": 6, "requests": 9}
    assert d["html_extraction"] == ["compiled walker"] and "enrich" not in d
    assert d["read"] == d["kept"] + d["skipped"] + d["failed"]


def test_ranges_merge_into_the_files_entry():
    parts = [_file("a", 5, 1, "x"), _file("a", 2, 0, "x")]
    merged = parts[0].merged(parts, 1234)
    assert (merged.bytes, merged.read, merged.kept, merged.seconds) == (1234, 8, 7, 0.5)
    assert merged.s3 == {"calls": 4, "requests": 6} and merged.failed_by_reason == {"x": 1}
    assert parts[0].kept == 5  # the ranges themselves are left as they were


def test_a_result_with_an_unknown_counter_is_refused():
    text = json.dumps(_file("a", 1, 0, "x").as_dict() | {"kept_twice": 1})
    with pytest.raises(TypeError, match="kept_twice"):
        FileResult.from_json(text)


#: the run summary's keys as operators and the orchestration read them, in the order printed before the record
SUMMARY_KEYS = (
    "input output files tasks ranges bytes records_read pages_kept skipped failed failed_by_reason "
    "warnings_by_reason excluded exclusion_rules html_seen empty_text pages_by_directive robots_agents "
    "unreadable_files error_report_lines health steps html_extraction s3_executors enrich task_timing"
).split()


def test_the_run_summary_names_the_days_totals_as_before():
    day = DayTotals(files=3)
    for f in (_file("a", 5, 1, "x"), _file("b", 7, 2, "y"), _file("c", 0, 3, "not_gzip")):
        day.add_file(f)
    day.skipped_by_reason = {"excluded": 4, "too_large": 1}
    health = {"ok": False, "counts": {"unreadable_files": 1}}
    stats = DayStats(day, health, [])
    out = RunSummary.of(
        stats,
        input="in",
        output="out",
        tasks=2,
        ranges=4,
        exclusion_rules=9,
        robots_agents=["robots"],
        error_report_lines=6,
        steps={"map": 1.5},
        task_timing={"tasks": []},
    ).to_dict()
    assert list(out) == SUMMARY_KEYS
    assert (out["files"], out["records_read"], out["pages_kept"], out["failed"], out["bytes"]) == (3, 18, 12, 6, 300)
    assert (out["excluded"], out["unreadable_files"], out["ranges"], out["error_report_lines"]) == (4, 1, 4, 6)
    assert out["failed_by_reason"] == {"x": 1, "y": 2, "not_gzip": 3} and out["health"] is health
    assert out["s3_executors"] == {"calls": 6, "requests": 9} and out["enrich"] == {}
    assert out["html_extraction"] == ["compiled walker"] and not stats.ok
