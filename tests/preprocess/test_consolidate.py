"""The consolidation of a closed day's batches (lib/preprocess/consolidate.py) on bad input: two batches
naming one archive, or holding one file, stop it naming both, with nothing published and the batches
left as they were; the batches' counters are summed and the health assessed again. (The consolidation
of real batches, equal to the day run at once, is tests/orchestration/test_day_batches.py.)"""

from __future__ import annotations

import json
import pathlib

import pytest

from lib.preprocess.consolidate import ConsolidationError, consolidate, merge_stats
from lib.store import layout


def _batch(day: pathlib.Path, n: int, archives: list[str], files: list[str], kept: int = 3) -> None:
    b = day / f"batch={n}"
    for rel in files:
        (b / rel).parent.mkdir(parents=True, exist_ok=True)
        (b / rel).write_bytes(f"{n}:{rel}".encode())
    record = {"files": [{"name": a, "size": 10, "version": None} for a in archives], "count": len(archives)}
    (b / layout.INPUTS).write_text(json.dumps(record))
    stats = {"totals": {"kept": kept, "read": kept + 1, "html_seen": kept, "files": len(archives)}, "files": []}
    (b / layout.STATS).write_text(json.dumps(stats))
    (b / layout.SUCCESS).write_bytes(b"")


def _tree(day: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(day)): p.read_bytes() for p in sorted(day.rglob("*")) if p.is_file()}


def test_two_batches_naming_one_archive_stop_it_and_publish_nothing(tmp_path):
    day = tmp_path / "preprocessed" / "2026-01" / "15"
    _batch(day, 1, ["2026-01/15/a.warc.gz"], ["language=eng/part-x.zstd.parquet"])
    _batch(day, 2, ["2026-01/15/a.warc.gz"], ["language=eng/part-y.zstd.parquet"])
    before = _tree(day)
    with pytest.raises(ConsolidationError, match=r"batch=2/_inputs.json: 2026-01/15/a.warc.gz is batch 2's and an"):
        consolidate(str(day))
    assert _tree(day) == before and not (day / layout.SUCCESS).exists()
    assert not list(day.parent.glob("15.tmp-*"))  # the work folder went with the error


def test_two_batches_holding_one_file_stop_it_naming_both(tmp_path):
    day = tmp_path / "preprocessed" / "2026-01" / "15"
    _batch(day, 1, ["2026-01/15/a.warc.gz"], ["language=eng/part-x.zstd.parquet"])
    _batch(day, 2, ["2026-01/15/b.warc.gz"], ["language=eng/part-x.zstd.parquet"])
    with pytest.raises(ConsolidationError, match=r"batches 1 and 2 both hold language=eng/part-x.zstd.parquet"):
        consolidate(str(day))
    assert not (day / layout.SUCCESS).exists() and (day / "batch=2" / layout.SUCCESS).exists()


def test_no_batch_is_nothing_to_consolidate(tmp_path):
    with pytest.raises(ConsolidationError, match="no published batch to consolidate"):
        consolidate(str(tmp_path / "empty"))


def test_the_batches_counters_are_summed_and_the_health_assessed_again():
    one = {"totals": {"kept": 10, "read": 12, "html_seen": 10, "files": 1, "by": {"x": 1}}, "files": [{"file": "b"}]}
    two = {
        "totals": {"kept": 0, "read": 5, "html_seen": 5, "files": 1, "by": {"x": 2, "y": 1}},
        "files": [{"file": "a"}],
    }
    m = merge_stats({1: one, 2: two})
    assert m["totals"] == {"kept": 10, "read": 17, "html_seen": 15, "files": 2, "by": {"x": 3, "y": 1}}
    assert [f["file"] for f in m["files"]] == ["a", "b"] and m["consolidated_from"] == [1, 2]
    assert m["health"]["shares"]["kept"] == pytest.approx(10 / 15) and not m["health"]["ok"]  # batch 2 kept none
    assert "built_with_batches" not in m
    two["built_with"] = {"models": {"lid": {"version": "2"}}}
    assert set(merge_stats({1: one, 2: two})["built_with_batches"]) == {"1", "2"}


def test_a_batch_published_while_consolidating_stops_it_before_the_swap(tmp_path, monkeypatch):
    day = tmp_path / "preprocessed" / "2026-01" / "15"
    _batch(day, 1, ["2026-01/15/a.warc.gz"], ["language=eng/part-x.zstd.parquet"])

    def tick_beside(folder: str) -> int:  # a batch tick publishing while the night builds the host index
        _batch(day, 2, ["2026-01/15/b.warc.gz"], ["language=eng/part-y.zstd.parquet"])
        return 0

    monkeypatch.setattr("lib.preprocess.consolidate.hostindex.write", tick_beside)
    with pytest.raises(ConsolidationError, match=r"batch 2 was published while consolidating; run the night again"):
        consolidate(str(day))
    assert not (day / layout.SUCCESS).exists()
    assert (day / "batch=1" / layout.SUCCESS).exists() and (day / "batch=2" / layout.SUCCESS).exists()
