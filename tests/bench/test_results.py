"""Benchmark results as data: a run's result file, and docs/benchmarks.md's table generated from them."""

import json

import pytest

from benchmarks import common, report


def test_a_result_written_is_the_row_the_report_shows(tmp_path):
    started, before = common.utc_now(), common.load()
    path = common.write_result(
        "bench_x",
        {"ours_wall_s": 12.5, "docs": 100_000},
        what="indexing a day",
        peer="Anserini",
        peers={"anserini_wall_s": 14.4},
        ratio={"ours / anserini": 0.868},
        shape={"pages": 4_799, "links": 727_709, "distinct_targets_per_link": 0.449},
        started=started,
        load_before=before,
        results=tmp_path,
    )
    doc = json.loads(path.read_text())
    assert path.parent == tmp_path / "bench_x" and path.name == common.result_name(doc["ended"])
    assert doc["machine"]["cores"] >= 1 and doc["machine"]["cpu"] and doc["load"]["before"] == before
    assert doc["figures"] == {"ours_wall_s": 12.5, "docs": 100_000} and doc["source"] == "run"
    assert not list(tmp_path.rglob("*.tmp"))
    results = report.read_results(tmp_path)
    line = report.current_table(results).splitlines()[-1]
    assert "ours wall s 12.5; docs 100,000" in line and "ours / anserini 0.868" in line
    assert "distinct targets per link 0.449" in line and "| Anserini: anserini wall s 14.4 |" in line


def test_the_newest_run_of_each_variant_is_current_and_the_others_history(tmp_path):
    for when, variant, wall in [("2026-11-20T10:00:00Z", "", 3.0), ("2026-11-22T10:00:00Z", "", 2.0)] + [
        ("2026-11-21T10:00:00Z", "real-shaped day", 9.0)
    ]:
        common.write_result("bench_y", {"wall_s": wall}, what="w", variant=variant, when=when, results=tmp_path)
    now, old = report.latest(report.read_results(tmp_path))
    assert sorted((r["variant"], r["figures"]["wall_s"]) for r in now) == [("", 2.0), ("real-shaped day", 9.0)]
    assert [r["figures"]["wall_s"] for r in old] == [3.0]
    # a result recorded from elsewhere keeps what it says about its machine and load
    assert {r["when"] for r in now} == {"2026-11-22T10:00:00Z", "2026-11-21T10:00:00Z"}
    assert all(r["ended"] is None and r["recorded"] for r in now)
    assert [r["_file"] for r in old] == ["20261120T100000Z.json"]
    with pytest.raises(TypeError):
        common.write_result("bench_y", {}, what="w", colour="red", results=tmp_path)


def test_the_committed_docs_are_what_the_committed_results_give():
    """docs/benchmarks.md's table and docs/benchmarks-history.md are generated: run
    ``python -m benchmarks.report`` after adding a result."""
    assert report.main(["--check"]) == 0


def test_every_committed_result_names_its_machine_date_load_and_figures():
    results = report.read_results(report.RESULTS)
    assert len({r["bench"] for r in results}) >= 22
    for r in results:
        assert r["what"] and r["figures"] and r["machine"] and r["load"], r["_file"]
        assert r.get("when") or r.get("ended"), r["_file"]
        assert r["source"] == "run" or r["source"].startswith(("transcribed from", "reported by")), r["_file"]
