"""The day's health from its counters (lib.preprocess.health): shares, thresholds, reasons, samples."""

from __future__ import annotations

import json

from lib.preprocess.health import Thresholds, assess, describe, sample_errors, unreadable_files


def _file(name, read, kept, html_seen, failed=None, skipped=None):
    failed, skipped = failed or {}, skipped or {}
    return {
        "file": name,
        "read": read,
        "kept": kept,
        "html_seen": html_seen,
        "failed": sum(failed.values()),
        "skipped": sum(skipped.values()),
        "failed_by_reason": failed,
        "skipped_by_reason": skipped,
    }


def _totals(files):
    t = {
        "files": len(files),
        "read": 0,
        "kept": 0,
        "html_seen": 0,
        "failed": 0,
        "skipped": 0,
        "failed_by_reason": {},
        "skipped_by_reason": {},
    }
    for f in files:
        for k in ("read", "kept", "html_seen", "failed", "skipped"):
            t[k] += f[k]
        for k in ("failed_by_reason", "skipped_by_reason"):
            for r, n in f[k].items():
                t[k][r] = t[k].get(r, 0) + n
    return t


def _errors(file, reason, offsets, kind="failed"):
    return [
        json.dumps({"file": file, "offset": o, "kind": kind, "reason": reason, "detail": f"bad at {o}"}) + "\n"
        for o in offsets
    ]


def test_a_clean_day_is_healthy():
    files = [
        _file("a", 1000, 600, 600, skipped={"not_html": 400}),
        _file("b", 1000, 598, 600, {"http_bad_header": 1}, {"binary_payload": 2, "not_html": 399}),
    ]
    h = assess(_totals(files), files)
    assert h["ok"] and h["breached"] == [] and h["samples"] == []
    assert h["shares"] == {"failed": 0.0005, "kept": round(1198 / 1200, 6), "unreadable_files": 0.0, "empty_text": 0.0}
    assert h["thresholds"] == {
        "max_failed_share": 0.01,
        "min_kept_share": 0.99,
        "max_unreadable_share": 0.01,
        "max_empty_text_share": 0.02,
    }
    assert h["top_reasons"] == [
        {"reason": "binary_payload", "kind": "skipped", "count": 2},
        {"reason": "http_bad_header", "kind": "failed", "count": 1},
    ]
    assert describe(h).startswith("day is healthy")


def test_failed_records_breach_and_samples_come_from_the_top_reason():
    files = [
        _file("a", 100, 60, 60, {"http_bad_header": 30, "truncated_gzip_member": 1}, {"not_html": 9}),
        _file("b", 100, 100, 100),
    ]
    lines = (
        _errors("a", "truncated_gzip_member", [7])
        + _errors("a", "invalid_bytes_in_charset", [1], "warning")
        + _errors("a", "http_bad_header", [10, 20, 30, 40])
    )
    h = assess(_totals(files), files, Thresholds(), lines)
    assert not h["ok"] and h["breached"] == ["max_failed_share"]
    assert h["shares"]["failed"] == 0.155 and h["shares"]["kept"] == 1.0
    assert h["top_reasons"][0] == {"reason": "http_bad_header", "kind": "failed", "count": 30}
    assert h["samples"] == [
        {"file": "a", "offset": o, "reason": "http_bad_header", "detail": f"bad at {o}"} for o in (10, 20, 30)
    ]
    text = describe(h)
    assert "UNHEALTHY" in text and "max_failed_share (15.50% > 1.00%)" in text
    assert "top reasons: http_bad_header 30, truncated_gzip_member 1" in text
    assert "sample: a offset 20: http_bad_header: bad at 20" in text


def test_kept_share_counts_html_lost_after_parsing():
    files = [_file("a", 100, 90, 100, skipped={"binary_payload": 10})]
    h = assess(_totals(files), files, Thresholds(), _errors("a", "binary_payload", [5, 6], "skipped"))
    assert h["breached"] == ["min_kept_share"] and h["shares"]["kept"] == 0.9
    assert [s["offset"] for s in h["samples"]] == [5, 6]
    assert "min_kept_share (90.00% < 99.00%)" in describe(h)
    # a day with no HTML at all has nothing to lose
    none = [_file("b", 10, 0, 0, skipped={"not_html": 10})]
    assert assess(_totals(none), none)["shares"]["kept"] is None and assess(_totals(none), none)["ok"]


def test_unreadable_files_are_files_with_a_file_level_failure():
    files = [
        _file("a", 1, 0, 0, {"read_error": 1}),
        _file("b", 1, 0, 0, {"not_an_archive": 1}),
        _file("c", 5, 0, 0, {"not_gzip": 1, "truncated_record": 4}),
        _file("d", 2, 0, 0, {"corrupt_gzip_member": 2}),
    ]
    files += [_file(f"ok{i}", 1000, 1000, 1000) for i in range(96)]
    assert unreadable_files(files) == 3
    h = assess(_totals(files), files)
    assert h["shares"]["unreadable_files"] == 0.03 and h["breached"] == ["max_unreadable_share"]
    assert h["counts"]["unreadable_files"] == 3 and h["counts"]["files"] == 100
    # thresholds are parameters: a looser one passes the same day
    assert assess(_totals(files), files, Thresholds(max_unreadable_share=0.05))["ok"]


def test_an_empty_day_is_healthy():
    h = assess(_totals([]), [])
    assert h["ok"] and h["shares"] == {"failed": None, "kept": None, "unreadable_files": None, "empty_text": None}


def test_sample_errors_skips_warnings_and_bad_lines():
    lines = ['{not json "x"\n'] + _errors("f", "x", [1], "warning") + _errors("f", "x", [2, 3, 4, 5])
    assert [s["offset"] for s in sample_errors(lines, "x")] == [2, 3, 4]


def test_pages_with_an_empty_text_warn_above_the_threshold():
    files = [_file("a", 1000, 1000, 1000)]
    totals = _totals(files)
    h = assess({**totals, "empty_text": 20}, files)  # 2.0%: at the default, no warning
    assert h["ok"] and h["shares"]["empty_text"] == 0.02 and h["warnings"] == []
    h = assess({**totals, "empty_text": 21}, files)
    assert h["ok"] and h["breached"] == []  # the pages are kept: a warning, not a breach
    assert h["warnings"] == [
        "21 of 1000 kept pages (2.10%, max 2.00%) have an empty main text although their "
        "<body> has text: no word of theirs can find them"
    ]
    assert "WARNING: 21 of 1000" in describe(h)
    assert assess({**totals, "empty_text": 21}, files, Thresholds(max_empty_text_share=0.05))["warnings"] == []
