"""A task of several archives (lib.preprocess.tasks.process_task) and the job on a day cut two
ways: the same records in many small archives and in few large ones give the same pages and
counters, in a handful of Parquet files; a file that cannot be opened is counted and the task
goes on; a retried task rewrites its own files byte for byte."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from devtools.corpus_cuts import cut_corpus, documents
from jobs import preprocess
from lib.preprocess import tasks, tasktime
from lib.preprocess.plan import OPEN_COST_BYTES, plan, task_name
from lib.preprocess.tasks import TaskSettings, process_task, remove_strays
from lib.store import layout, storage
from tests.helpers_warc import good_pages, warc_gz


def _day(tmp_path):
    inp = tmp_path / "warc"
    inp.mkdir()
    pages = good_pages(9)
    (inp / "a.warc.gz").write_bytes(warc_gz([r for _, r in pages[:3]]))
    (inp / "c.warc.gz").write_bytes(warc_gz([r for _, r in pages[3:6]]))
    (inp / "d.warc.gz").write_bytes(b"not an archive\n" * 20)
    (inp / "e.warc.gz").write_bytes(warc_gz([r for _, r in pages[6:]]))
    files = [
        (storage.normalize(str(inp / n)), (inp / n).stat().st_size if (inp / n).exists() else 10)
        for n in ("a.warc.gz", "b.warc.gz", "c.warc.gz", "d.warc.gz", "e.warc.gz")
    ]
    return inp, files, [u for u, _ in pages]


def test_a_task_reads_its_archives_in_turn_and_counts_each_one(tmp_path):
    inp, files, urls = _day(tmp_path)  # b.warc.gz is listed but gone when the task opens it
    out = tmp_path / "out"
    rows = process_task(files, TaskSettings(str(out), 10 << 20, 2, input_root=str(inp)))
    assert [r["file"] for r in rows] == [u for u, _ in files]
    stats = [json.loads(r["stats"]) for r in rows]
    assert [(s["read"], s["kept"], s["failed"]) for s in stats] == [
        (3, 3, 0),
        (1, 0, 1),
        (3, 3, 0),
        (1, 0, 1),
        (3, 3, 0),
    ]
    assert stats[1]["failed_by_reason"] == {"read_error": 1} and stats[3]["failed_by_reason"] == {"not_an_archive": 1}
    assert "b.warc.gz" in rows[1]["errors"] and "read_error" in rows[1]["errors"]
    name = task_name(["a.warc.gz", "b.warc.gz", "c.warc.gz", "d.warc.gz", "e.warc.gz"])
    assert rows[0]["outputs"] == [
        str(out / "language=eng" / f"part-{name}-00000.zstd.parquet"),
        str(out / "_captures" / f"part-{name}.parquet"),
    ]
    assert all(r["outputs"] == [] for r in rows[1:])
    written = pq.read_table(rows[0]["outputs"][0]).to_pylist()
    assert [r["url"] for r in written] == urls  # archives in the order given, records in file order
    assert [r["warc_file"].rsplit("/", 1)[1] for r in written] == ["a.warc.gz"] * 3 + ["c.warc.gz"] * 3 + [
        "e.warc.gz"
    ] * 3
    assert pq.read_table(rows[0]["outputs"][1]).num_rows == 9


def test_files_roll_by_size_and_a_retry_rewrites_them_byte_for_byte(tmp_path, monkeypatch):
    inp, files, urls = _day(tmp_path)
    files = [f for f in files if not f[0].endswith(("b.warc.gz", "d.warc.gz"))]
    monkeypatch.setattr(tasks, "ROW_GROUP_ROWS", 2)  # a row group every 2 pages; each one over 1 byte: a file each
    out = tmp_path / "out"
    settings = TaskSettings(str(out), 10 << 20, 1, input_root=str(inp), file_bytes=1)
    first = process_task(files, settings)
    parts = [p for p in first[0]["outputs"] if "language=" in p]
    assert [p.rsplit("-", 1)[1] for p in parts] == [f"{i:05d}.zstd.parquet" for i in range(5)]
    assert [r["url"] for p in parts for r in pq.read_table(p).to_pylist()] == urls
    before = {p: open(p, "rb").read() for p in first[0]["outputs"]}
    (out / "language=eng" / ".part-killed-attempt.zstd.parquet").write_bytes(b"half")
    (out / "language=eng" / "part-an-old-plan-00000.zstd.parquet").write_bytes(b"PAR1")
    (out / "language=eng" / "_part-an-old-plan-00000.log.gz").write_bytes(b"its log")
    again = process_task(files, settings)  # a retried attempt
    assert again[0]["outputs"] == first[0]["outputs"]
    assert {p: open(p, "rb").read() for p in again[0]["outputs"]} == before
    assert remove_strays(str(out), again) == 3
    logs = [layout.file_log_name(p) for p in parts]  # each page file's log stays beside it (lib.preprocess.filelogs)
    assert sorted(str(p) for p in out.rglob("*") if p.is_file()) == sorted([*before, *logs])


@pytest.mark.parametrize("task_mb", [1, 128])
def test_a_day_cut_small_or_large_keeps_the_same_pages_and_counts(corpus, tmp_path, spark, task_mb):
    small, large = cut_corpus(str(corpus), str(tmp_path / "cuts"), 4)
    outs, stats = {}, {}
    for cut, inp in (("small", small), ("large", large)):
        outs[cut] = tmp_path / cut
        args = ["--input", inp, "--output", str(outs[cut]), "--task-bytes", str(task_mb << 20)]
        assert preprocess.main(args, spark=spark) in (0, 3)
        stats[cut] = json.loads((outs[cut] / "_stats.json").read_text())
    small_files = sorted(p.name for p in tmp_path.joinpath("cuts", "small", "warc").iterdir())
    assert len(small_files) > 100 and [f["file"].rsplit("/", 1)[1] for f in stats["small"]["files"]] == small_files
    keys = ("files", "bytes")
    t_small, t_large = ({k: v for k, v in stats[c]["totals"].items() if k not in keys} for c in ("small", "large"))
    assert t_small == t_large and t_small["kept"] > 300
    assert t_small["read"] == t_small["kept"] + t_small["skipped"] + t_small["failed"]
    assert stats["small"]["totals"]["bytes"] == sum(
        p.stat().st_size for p in tmp_path.joinpath("cuts", "small", "warc").iterdir()
    )
    assert documents(str(outs["small"])) == documents(str(outs["large"]))
    pages = {c: sorted(outs[c].glob("language=*/*.parquet")) for c in outs}
    languages = len({p.parent.name for p in pages["small"]})
    # 1 MiB tasks of files costing 512 KiB more than their size: one file (or range of a .warc.gz
    # over 1 MiB) a task; 128 MiB: the small day (about 180 MB with the open costs) is cut for the
    # task slots, balanced: a multiple of the slots, twice as many when an even split would take a
    # task over the limit
    tasks_small = len(list(outs["small"].glob("_captures/*.parquet")))
    slots = spark.sparkContext.defaultParallelism
    listing = sorted((str(p), p.stat().st_size) for p in tmp_path.joinpath("cuts", "small", "warc").iterdir())
    ranges = len(plan(listing, task_mb << 20, OPEN_COST_BYTES, slots)[0])
    assert ranges > len(small_files) if task_mb == 1 else ranges == len(small_files)
    assert tasks_small == ranges if task_mb == 1 else tasks_small in (slots, 2 * slots)
    assert len(pages["small"]) <= tasks_small * languages
    if task_mb == 128:  # was a file per archive and language
        assert len(pages["small"]) <= 2 * slots * languages < len(small_files) // 3


def test_a_task_times_itself_and_the_run_adds_the_tasks_up(tmp_path):
    inp, files, urls = _day(tmp_path)
    first = process_task(files[:3], TaskSettings(str(tmp_path / "o1"), 10 << 20, 2, input_root=str(inp)))
    second = process_task(files[3:], TaskSettings(str(tmp_path / "o2"), 10 << 20, 2, input_root=str(inp)))
    assert all(r.get("timing") is None for r in first[1:] + second[1:])  # the task's first row carries it
    t1, t2 = (json.loads(rows[0]["timing"]) for rows in (first, second))
    assert (t1["files"], t1["pages"], t2["files"], t2["pages"]) == (3, 6, 2, 3)
    assert (
        t1["task"] == task_name(["a.warc.gz", "b.warc.gz", "c.warc.gz"]) and t2["worker_task"] == t1["worker_task"] + 1
    )
    assert t1["start"] <= t1["end"] <= t2["start"] <= t2["end"] and t1["wall"] == pytest.approx(
        t1["end"] - t1["start"], abs=0.002
    )
    assert 0 < t1["arrow_cpu"] + t1["parquet_cpu"] <= t1["cpu"]
    run = tasktime.summarize([None, second[0]["timing"], first[0]["timing"]])  # rows without timing are skipped
    assert [t["task"] for t in run["tasks"]] == [t1["task"], t2["task"]] and run["tasks"][0]["start"] == 0.0
    assert (run["pages"], run["workers"]) == (9, 1) and run["span"] == pytest.approx(t2["end"] - t1["start"], abs=0.002)
    assert run["task_cpu"] == pytest.approx(t1["cpu"] + t2["cpu"], abs=0.002)
    assert run["pages_per_task_cpu_second"] == pytest.approx(9 / run["task_cpu"], rel=0.01)
    assert tasktime.summarize([None]) == {"tasks": []}
