"""The night's chain declared once (lib/orchestration/chain.py, lib/orchestration/marker.py,
jobs/day.py), without Slurm or Spark: which exit codes let the next step run, the night's exit
code for every combination of its steps' codes, the marker as a typed record and its file, the
command lines the steps get, and nights that stop before any Spark application starts."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import pathlib

import pytest

from jobs import day
from lib.orchestration import chain
from lib.orchestration.marker import Marker, failed_path, read_marker_file, remove_markers
from lib.store import layout, lease

DAY = dt.date(2026, 1, 15)
CODES = (0, 1, 2, 3, 4, 5)


def _walk(pre: int, idx: int, cat: int) -> dict[str, int | None]:
    """The codes a night ends with when each step that runs would exit as given (steps the
    rule does not let run stay None), as run_steps builds them."""
    would = {"preprocess": pre, "index": idx, "catalogue": cat}
    codes: dict[str, int | None] = {}
    for s in chain.STEPS:
        codes[s.name] = would[s.name] if chain.may_run(s, codes) else None
    return codes


def test_the_steps_are_preprocess_index_catalogue_each_reading_what_the_one_before_wrote():
    assert chain.STEP_NAMES == ("preprocess", "index", "catalogue")
    assert [s.after for s in chain.STEPS] == [None, "preprocess", "index"]
    assert chain.step("index").input_kind == chain.step("preprocess").output_kind == layout.PREPROCESSED
    assert set(day.JOBS) == set(chain.STEP_NAMES)  # every step has its job, and no job is outside the chain
    for s in chain.STEPS:
        assert day.JOBS[s.name].output_kind == s.output_kind and day.JOBS[s.name].input_kind == s.input_kind
    with pytest.raises(KeyError, match="no step 'purge'"):
        chain.step("purge")


@pytest.mark.parametrize("pre", CODES)
def test_index_runs_after_a_published_day_only_healthy_or_not(pre):
    assert chain.may_run(chain.step("index"), {"preprocess": pre}) is (pre in (0, 3))
    assert chain.may_run(chain.step("index"), {}) is False  # preprocess did not run


@pytest.mark.parametrize("idx", (*CODES, None))
def test_catalogue_runs_on_an_indexed_day_only(idx):
    assert chain.may_run(chain.step("catalogue"), {"preprocess": 0, "index": idx}) is (idx == 0)


def test_the_nights_exit_code_for_every_combination_of_its_steps_codes():
    seen = {}
    for pre, idx, cat in itertools.product(CODES, repeat=3):
        codes = _walk(pre, idx, cat)
        rc = chain.night_exit(codes)
        seen[tuple(codes.values())] = rc
        if codes == {"preprocess": 0, "index": 0, "catalogue": 0}:
            assert rc == 0 and chain.night_ok(codes)
            continue
        assert not chain.night_ok(codes)
        if pre == 3 and codes["index"] == 0 and codes["catalogue"] == 0:
            assert rc == 3  # published, indexed and catalogued, but unhealthy
        elif pre in (2, 4, 5):
            assert rc == pre and codes["index"] is None and codes["catalogue"] is None  # nothing else ran
        else:
            assert rc == 1, codes  # a failed step, a failed catalogue included
    # the distinct nights: preprocess 0/3 with index and catalogue each as far as they got, plus the four stops
    assert len(seen) == 2 * (len(CODES) - 1 + len(CODES)) + 4
    assert seen[(0, 0, 1)] == 1 and seen[(3, 0, 1)] == 1 and seen[(0, 4, None)] == 1 and seen[(1, None, None)] == 1


def test_describe_names_each_step_and_the_ones_not_run():
    assert chain.describe({"preprocess": 2}) == "preprocess exit 2, index exit not run, catalogue exit not run"
    assert chain.describe({"preprocess": 3, "index": 0, "catalogue": 1}).endswith("catalogue exit 1")


def test_the_marker_is_a_typed_record_its_file_holds_and_gives_back(tmp_path):
    paths = chain.DayPaths(DAY, "s3://crawl/dc1", str(tmp_path / "out"))
    health = {"ok": False, "breached": ["max_failed_share"]}
    codes = {"preprocess": 3, "index": 0, "catalogue": 0}
    summaries = {"preprocess": {"health": health, "pages_kept": 7}, "index": {"docs": 7}, "catalogue": None}
    m = chain.make_marker(paths, "dc1", "42", codes, summaries, log="/l/run.log", run_logs="/l/run")
    assert not m.ok and m.health == health and m.input is None and not m.busy
    assert m.codes == codes and m.summaries == summaries
    assert m.outputs == {
        k: str(tmp_path / "out" / k / "2026-01" / "15") for k in ("preprocessed", "index", "catalogue")
    }
    assert m.urldb == str(tmp_path / "out" / "urldb")
    marker_file = str(tmp_path / "_runs" / "dc1" / "2026-01-15.json")
    written = m.write(marker_file)
    assert written == failed_path(marker_file) == marker_file[: -len(".json")] + ".failed.json"
    assert not os.path.exists(marker_file)
    doc = json.loads(pathlib.Path(written).read_text())
    assert doc["preprocess_rc"] == 3 and doc["health"] == health and doc["outputs"] == m.outputs
    assert read_marker_file(written) == m == Marker.from_dict(doc)
    assert read_marker_file(written, "41") is None and read_marker_file(written, "42") == m
    remove_markers(marker_file)
    assert not os.path.exists(written) and read_marker_file(written) is None


@pytest.mark.parametrize(
    "pre, word, busy", [(2, "missing", False), (4, "empty", False), (5, None, True), (1, None, False)]
)
def test_the_marker_says_why_preprocess_found_nothing(pre, word, busy):
    m = chain.make_marker(chain.DayPaths(DAY, "/in", "/out"), "dc1", "1", {"preprocess": pre}, {})
    assert (m.input, m.busy, m.index_rc, m.catalogue_rc, m.health) == (word, busy, None, None, None)


def test_a_marker_of_an_older_release_or_cut_short_is_read_as_what_it_is():
    old = Marker.parse('{"ok": true, "job_id": 7, "date": "2026-01-15", "outputs": {"index": "/o"}, "extra": 1}')
    assert old is not None and old.ok and old.job_id == "7" and old.outputs == {"index": "/o"}
    assert old.summaries == {} and old.urldb is None and old.catalogue_rc is None
    assert Marker.parse('{"ok": tr') is None and Marker.parse("[1]") is None and Marker.parse(None) is None
    assert Marker.parse('{"ok": true, "job_id": "8"}', "7") is None


def test_each_step_gets_the_command_line_run_day_gave_it_and_extra_flags_are_its_own(tmp_path):
    a = day.parser().parse_args(
        [
            "--date", "2026-01-15", "--input-root", "s3://crawl/dc1/", "--output-root", str(tmp_path),
            "--run-logs", str(tmp_path / "logs"), "--index-args=--min-group-docs 1 --no-graph",
            "--catalogue-args=--url-partitions 2",
        ]
    )  # fmt: skip
    paths = chain.DayPaths(a.date, a.input_root, a.output_root)
    opts = day.plan_options(a, paths, "/x/_exclusions.jsonl")
    pre, idx, cat = opts["preprocess"], opts["index"], opts["catalogue"]
    assert pre.input == "s3://crawl/dc1/warc/2026-01/15" and pre.output == str(tmp_path / "preprocessed/2026-01/15")
    assert idx.input == pre.output and cat.input == pre.output and cat.index == idx.output
    assert idx.min_group_docs == 1 and idx.graph is False and cat.url_partitions == 2
    assert idx.dup_store == str(tmp_path / "signatures") and cat.urldb == str(tmp_path / "urldb")
    assert cat.warc_prefix == "s3://crawl/dc1/warc"
    assert {o.exclusions for o in opts.values()} == {"/x/_exclusions.jsonl"}
    assert {o.date for o in opts.values()} == {DAY}
    assert [o.summary for o in opts.values()] == [str(tmp_path / "logs/summaries" / f"{n}.json") for n in opts]
    bad = day.parser().parse_args(
        ["--date", "2026-01-15", "--input-root", "/i", "--output-root", "/o", "--index-args=--no-such"]
    )
    with pytest.raises(SystemExit) as e:  # a bad flag of one step stops the night before any step runs
        day.plan_options(bad, chain.DayPaths(DAY, "/i", "/o"), None)
    assert e.value.code == 2


def test_exclusions_default_to_the_list_at_the_output_root(tmp_path):
    assert chain.exclusions_for(str(tmp_path), None) is None
    (tmp_path / layout.EXCLUSIONS).write_text("")
    assert chain.exclusions_for(str(tmp_path), None) == str(tmp_path / layout.EXCLUSIONS)
    assert chain.exclusions_for(str(tmp_path), "s3://b/list.jsonl") == "s3://b/list.jsonl"


def _night(tmp_path: pathlib.Path, *extra: str) -> tuple[int, list[str], pathlib.Path]:
    marker = tmp_path / "_runs" / "dc1" / "2026-01-15.json"
    argv = ["--date", "2026-01-15", "--input-root", str(tmp_path / "bucket"), "--output-root", str(tmp_path / "out")]
    argv += ["--data-center", "dc1", "--job-id", "77", "--marker", str(marker), "--master", "local[1]", *extra]
    lines: list[str] = []
    return day.night(day.parser().parse_args(argv), lines.append), lines, marker


def test_a_night_without_its_input_folder_exits_2_starts_no_spark_and_says_missing(tmp_path, capsys):
    (tmp_path / "_runs" / "dc1").mkdir(parents=True)
    (tmp_path / "_runs" / "dc1" / "2026-01-15.json").write_text('{"ok": true, "job_id": "1"}')  # an earlier run's
    rc, lines, marker = _night(tmp_path)
    assert rc == 2
    assert not marker.exists()  # the earlier run's success marker no longer vouches for the day
    m = read_marker_file(failed_path(str(marker)), "77")
    assert m is not None and m.input == "missing" and m.codes == {"preprocess": 2, "index": None, "catalogue": None}
    assert "0 Spark application(s)" in lines[-2] and "index exit not run" in lines[-2]
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "out" / "preprocessed").exists()


def test_a_night_whose_day_another_run_holds_exits_5_and_starts_no_spark(tmp_path, monkeypatch):
    (tmp_path / "bucket" / "warc" / "2026-01" / "15").mkdir(parents=True)
    (tmp_path / "bucket" / "warc" / "2026-01" / "15" / "a.warc.gz").write_bytes(b"")
    held = lease.Lease(str(tmp_path / "out" / "preprocessed" / "2026-01" / "15"), "other run", 0).acquire()
    try:
        rc, lines, marker = _night(tmp_path)
    finally:
        held.release()
    m = read_marker_file(failed_path(str(marker)), "77")
    assert rc == 5 and m is not None and m.busy and m.preprocess_rc == 5 and m.index_rc is None
    assert m.summaries["preprocess"]["busy"] is True and "0 Spark application(s)" in lines[-2]


def test_a_driver_that_died_before_its_marker_leaves_a_failure_marker(tmp_path):
    rc, lines, marker = _night(tmp_path, "--driver-failed", "137")
    m = read_marker_file(failed_path(str(marker)), "77")
    assert rc == 137 and m is not None and not m.ok and m.preprocess_rc == 137 and m.input is None
    assert "driver exited 137" in lines[0]
