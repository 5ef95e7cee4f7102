"""A day published in batches through ``dailyslice day`` (jobs/day.py) on the demo crawl, in the test
session's Spark: each batch's index update published for mirrors when the root publishes updates
(issue 57 pt 1), the batches searchable with the statistics of one index of their union (pt 2), and
the closed day consolidated from its batches, equal to the day indexed in one run (pt 3)."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
import shutil
import threading
import time

import pytest

from jobs import day
from lib.index import mirror_apply
from lib.index.mirror_updates import complete, read_manifest, updates_dir
from lib.index.shard_digests import diff, shard_digests
from lib.orchestration import chain
from lib.orchestration.marker import read_marker_file
from lib.preprocess import batches
from lib.serve.engine import Engine
from lib.serve.serving_index import published_slices
from lib.store import layout
from lib.warc.sample import write_sample_crawl

DAY = dt.date(2026, 1, 15)
OLD = time.time() - 3600  # an archive closed an hour ago
INDEX_ARGS = "--index-args=--min-group-docs 1 --docs-per-shard 20 --no-graph"


def _day(spark, root: pathlib.Path, *extra: str) -> tuple[int, list[str]]:
    """One run of ``dailyslice day`` on ``root`` in the session's Spark; its exit code and its lines."""
    lines: list[str] = []
    argv = ["--date", DAY.isoformat(), "--input-root", str(root), "--output-root", str(root), "--settle", "600"]
    rc = day.night(day.parser().parse_args(argv + [INDEX_ARGS, *extra]), lines.append, spark=spark)
    return rc, lines


def _marker(root: pathlib.Path, batch: int | None = None):
    name = DAY.isoformat() + ("" if batch is None else f".batch={batch}") + ".json"
    return read_marker_file(str(root / layout.RUNS / "default" / name))


@pytest.fixture(scope="module")
def batched(spark, tmp_path_factory):
    """The demo crawl's three archives arriving one by one, a batch tick after each, on a root that
    publishes mirror updates; and the same archives indexed in one run on another root."""
    base = tmp_path_factory.mktemp("day-batches")
    root, whole = base / "root", base / "whole"
    archives = sorted(write_sample_crawl(str(root), DAY, 3, 12))
    shutil.copytree(root / layout.WARC, whole / layout.WARC)
    os.makedirs(updates_dir(str(root)))
    runs = []
    for i, a in enumerate(archives):
        for later in archives[i + 1 :]:
            os.utime(later, (time.time(), time.time()))  # not arrived yet: still being written
        os.utime(a, (OLD, OLD))
        runs.append(_day(spark, root, "--batch"))
        if i == 1:  # batch 2 killed after its pages were published, while its index was being written
            idx = pathlib.Path(layout.day_path(str(root), layout.INDEX, DAY))
            shutil.move(idx / "batch=2", idx / "batch=2.tmp-0badc0de")
            (idx / "batch=2.tmp-0badc0de" / layout.SUCCESS).unlink()
            killed = _day(spark, root, "--batch")
    assert _day_whole({"whole": whole, "spark": spark}) == 0
    return {"root": root, "whole": whole, "runs": runs, "archives": archives, "spark": spark, "killed": killed}


def _day_whole(b: dict) -> int:
    """The one-run root's day: preprocessed and indexed at once from all its archives (what a
    consolidated day must equal; its catalogue is not what is compared)."""
    a = day.parser().parse_args(
        ["--date", DAY.isoformat(), "--input-root", str(b["whole"]), "--output-root", str(b["whole"]), INDEX_ARGS]
    )
    paths = chain.DayPaths(a.date, a.input_root, a.output_root)
    codes, _ = day.run_steps(day.plan_options(a, paths, None), b["spark"], lambda line: None, chain.STEPS[:2])
    return chain.night_exit(codes, chain.STEPS[:2])


def test_each_batch_publishes_its_mirror_update_after_its_index(batched):
    root = batched["root"]
    assert [rc for rc, _ in batched["runs"]] == [0, 0, 0]
    done = complete(updates_dir(str(root)))
    assert [seq for seq, _ in done] == [1, 2, 3]
    for n, (seq, folder) in enumerate(done, 1):
        man = read_manifest(folder)
        assert man["target"] == f"index/2026-01/15/batch={n}"
        m = _marker(root, n)
        assert m is not None and m.ok and m.summaries["index"] is not None
        if n != 2:  # batch 2's marker is its re-run's (below)
            assert m.mirror_update == {"id": man["id"], "target": man["target"]}
        docs = sum(s["docs"] for s in man["shards"].values())
        assert docs == m.summaries["index"]["totals"]["docs"] > 0  # the update holds the batch's documents
    # the re-run of batch 2's index (killed before it published) changed nothing: no new update
    rerun = _marker(root, 2)
    assert rerun is not None and rerun.index_rc == 0 and rerun.preprocess_rc == 0
    assert rerun.mirror_update == {"unchanged": "index/2026-01/15/batch=2"}
    assert not chain.publishes_updates(str(batched["whole"]))  # no public/_updates/ there: auto publishes none


def test_a_batch_killed_between_its_pages_and_its_index_is_indexed_by_the_next_tick(batched):
    rc, lines = batched["killed"]
    assert rc == 0 and any("batch 2 of 2026-01-15 has its pages published but not its index" in x for x in lines)
    idx = pathlib.Path(layout.day_path(str(batched["root"]), layout.INDEX, DAY))
    assert (idx / "batch=2" / layout.SUCCESS).is_file() and not list(idx.glob("batch=2.tmp-*"))
    assert sorted(p.name for p in idx.glob("batch=*")) == ["batch=1", "batch=2", "batch=3"]


def _scores(engine: Engine, q: str) -> dict[str, float]:
    r = engine.search(q, DAY, k=100)
    return {h.record_id: h.score for h in r.hits}


QUERIES = [
    "public libraries budget",
    "museum exhibition history printing",
    "walking memory",
    "Bibliotheken Haushalt",
    "musée exposition",
]


@pytest.fixture(scope="module")
def engines(batched, tmp_path_factory):
    cache = tmp_path_factory.mktemp("day-batches-cache")
    batched_engine = Engine({"dc1": str(batched["root"])}, cache_dir=str(cache / "b"), refresh_seconds=0)
    whole_engine = Engine({"dc1": str(batched["whole"])}, cache_dir=str(cache / "w"))
    return batched_engine, whole_engine


def test_a_days_batches_are_searched_with_the_statistics_of_one_index_of_them(engines):
    batched_engine, whole_engine = engines
    assert published_slices(batched_engine.roots["dc1"]) == {DAY: (1, 2, 3)}  # the day is not closed yet
    parts = batched_engine._partitions([DAY])
    assert [p.batch for p in parts] == [1, 2, 3]
    whole = whole_engine._partitions([DAY])
    assert sum(s.docs for p in parts for s in p.shards) == sum(s.docs for p in whole for s in p.shards)
    compared = 0
    for q in QUERIES:
        got, want = _scores(batched_engine, q), _scores(whole_engine, q)
        assert set(got) == set(want), q  # every matching document, from whichever batch holds it
        for rid, score in want.items():
            assert got[rid] == pytest.approx(score, rel=1e-6), (q, rid)
        compared += len(want)
    assert compared > 20
    # one batch alone would score differently: the statistics are the day's, not a batch's
    one = Engine({"dc1": str(batched_engine.roots["dc1"])}, cache_dir=batched_engine.cache_dir, refresh_seconds=1e9)
    one._slices = {"dc1": {DAY: (1,)}}
    alone = _scores(one, QUERIES[2])
    assert alone and any(
        alone[r] != pytest.approx(s, rel=1e-6) for r, s in _scores(whole_engine, QUERIES[2]).items() if r in alone
    )


@pytest.fixture(scope="module")
def closed(spark, batched, engines):
    """The nightly run of the batched day (its consolidation), while a reader queries the service's engine."""
    engine = engines[0]
    for q in QUERIES:
        engine.search(q, DAY)  # the batches are served
    # a late archive, arrived after the last batch tick: the night takes it as the last batch
    late = write_sample_crawl(str(batched["root"]), DAY, 1, 12, seed=11, crawler="crawler2")
    write_sample_crawl(str(batched["whole"]), DAY, 1, 12, seed=11, crawler="crawler2")
    for p in late:
        os.utime(p, (OLD, OLD))
    stop, seen, errors = threading.Event(), [], []

    def read() -> None:
        while not stop.is_set():
            try:
                r = engine.search(QUERIES[0], DAY, k=5)
                seen.append((len(r.hits), tuple(p.batch for p in engine._partitions([DAY]))))
            except Exception as e:  # any error is what the test looks for
                errors.append(repr(e))
            time.sleep(0.02)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        rc, lines = _day(spark, batched["root"])
        deadline = time.time() + 60
        while time.time() < deadline and (not seen or seen[-1][1] != (None,)):
            time.sleep(0.1)  # the reader's next refresh switches to the day
    finally:
        stop.set()
        reader.join()
    return {"rc": rc, "lines": lines, "seen": seen, "errors": errors}


def test_the_night_consolidates_the_batches_into_the_day_of_one_run(batched, closed):
    root, whole = batched["root"], batched["whole"]
    assert closed["rc"] == 0, closed["lines"]
    # the whole root indexes the late archive too: re-run it as one run over all four archives
    m = _marker(root)
    assert m is not None and m.ok
    assert m.summaries["preprocess"]["consolidated"]["batches"] == [1, 2, 3, 4]  # 4: the late archive
    pre = pathlib.Path(layout.day_path(str(root), layout.PREPROCESSED, DAY))
    assert not list(pre.glob("batch=*")) and (pre / layout.SUCCESS).is_file()
    inputs = json.loads((pre / layout.INPUTS).read_text())
    assert inputs["count"] == 4 and inputs["batches"] == [1, 2, 3, 4]
    idx = pathlib.Path(layout.day_path(str(root), layout.INDEX, DAY))
    assert not list(idx.glob("batch=*"))
    assert _day_whole(batched) == 0
    want = shard_digests(layout.day_path(str(whole), layout.INDEX, DAY), canonical=True)
    got = shard_digests(idx, canonical=True)
    assert want and diff(got, want) == []
    assert m.mirror_update is not None and m.mirror_update["target"] == "index/2026-01/15"
    # a mirror that applied the batches' updates and then the day's equals the published root
    copy = root.parent / "mirror-copy"
    applied = mirror_apply.apply_all(str(copy), updates_dir(str(root)))
    assert [outcome for _, outcome in applied] == ["applied"] * 4
    assert mirror_apply.problems(str(copy)) == []
    assert diff(shard_digests(copy / layout.INDEX / "2026-01" / "15", canonical=True), got) == []
    # no tick after the close takes an archive again
    assert batches.next_batch(layout.day_path(str(root), layout.WARC, DAY), str(pre), 0) is None


def test_the_service_switches_from_the_batches_to_the_day_without_a_gap(closed):
    assert closed["errors"] == []
    assert closed["seen"] and all(n == 5 for n, _ in closed["seen"])  # never an empty answer
    assert closed["seen"][0][1] == (1, 2, 3) and closed["seen"][-1][1] == (None,)


def test_auto_publishes_only_where_the_root_has_updates(tmp_path):
    assert not chain.publishes_updates(str(tmp_path))
    assert chain.publishes_updates(str(tmp_path), "on") and not chain.publishes_updates(str(tmp_path), "off")
    os.makedirs(updates_dir(str(tmp_path)))
    assert chain.publishes_updates(str(tmp_path)) and not chain.publishes_updates(str(tmp_path), "off")
    with pytest.raises(ValueError, match="'sometimes' is none of auto, on, off"):
        chain.publishes_updates(str(tmp_path), "sometimes")


def test_a_batch_is_indexed_even_when_its_archives_hold_no_page(tmp_path):
    """A batch of archives without pages (robots.txt, non-HTML) must be published empty: its archives
    are taken, so an index refusing it would leave the batch unindexed at every tick."""
    batch = chain.DayPaths(DAY, str(tmp_path), str(tmp_path), batch=3)
    argv = day.step_argv("index", batch, None, None)
    assert "--allow-empty" in argv and argv[argv.index("--dup-days") + 1] == "0"
    assert argv[argv.index("--input") + 1].endswith("preprocessed/2026-01/15/batch=3")
    whole = day.step_argv("index", chain.DayPaths(DAY, str(tmp_path), str(tmp_path)), None, None)
    assert "--allow-empty" not in whole and "--dup-days" not in whole  # a day without pages is an error
