"""The per-file logs beside the page files (lib.preprocess.filelogs), as a task writes them and
as a take-down copy of the day (lib.pages.exclude.filter_day) carries them on."""

from __future__ import annotations

import json
import os

import pyarrow.parquet as pq

from lib.pages import exclusions
from lib.pages.exclude import filter_day
from lib.preprocess import filelogs
from lib.preprocess.tasks import TaskSettings, process_task
from lib.store import layout, storage
from tests.helpers_warc import good_pages, warc_gz


def _task_day(tmp_path):
    inp = tmp_path / "warc"
    inp.mkdir()
    pages = good_pages(6)
    (inp / "a.warc.gz").write_bytes(warc_gz([r for _, r in pages[:4]]))
    (inp / "b.warc.gz").write_bytes(b"not an archive\n" * 20)
    files = [(storage.normalize(str(inp / n)), (inp / n).stat().st_size) for n in ("a.warc.gz", "b.warc.gz")]
    out = tmp_path / "day"
    rows = process_task(files, TaskSettings(str(out), 10 << 20, 2, input_root=str(inp)))
    return out, rows, [u for u, _ in pages[:4]]


def test_a_task_writes_one_log_per_page_file(tmp_path):
    out, rows, urls = _task_day(tmp_path)
    pages = [p for p in rows[0]["outputs"] if p.endswith(".parquet") and "language=" in p]
    assert pages
    total = 0
    for p in pages:
        (line,) = filelogs.read(layout.file_log_name(p))
        meta = pq.read_metadata(p)
        assert (line["rows"], line["bytes"], line["row_groups"]) == (meta.num_rows, os.path.getsize(p), 1)
        assert line["language"] == layout.language_of(os.path.dirname(p))
        # the task's two archives: 4 pages kept from one, the other unreadable, its error counted
        assert [(a["file"].rsplit("/", 1)[1], a["kept"], a["failed"]) for a in line["archives"]] == [
            ("a.warc.gz", 4, 0),
            ("b.warc.gz", 0, 1),
        ]
        assert line["errors"]["failed"] == 1 and line["errors"]["report_lines"] == sum(
            r["errors"].count("\n") for r in rows
        )
        total += line["rows"]
    assert total == len(urls)


def test_a_take_down_copy_adds_a_purged_line_and_leaves_the_source_log_alone(tmp_path):
    out, rows, urls = _task_day(tmp_path)
    rule = json.dumps({"url": urls[0], "date": "2026-12-01", "reason": "test"})
    dest = tmp_path / "copy"
    got = filter_day(str(out), str(dest), exclusions.parse(rule + "\n"), how="link")
    assert got["pages"]["excluded"] == 1 and got["pages"]["files_changed"] == 1
    changed = [
        os.path.relpath(os.path.join(d, n), dest)
        for d, _, names in os.walk(dest)
        for n in names
        if n.endswith(layout.FILE_LOG_SUFFIX) and len(filelogs.read(os.path.join(d, n))) == 2
    ]
    assert len(changed) == 1
    written, purged = filelogs.read(dest / changed[0])
    page_file = dest / changed[0].replace("_part-", "part-").replace(".log.gz", ".zstd.parquet")
    assert purged["event"] == "purged" and purged["excluded"] == 1
    left = pq.read_metadata(page_file).num_rows if page_file.exists() else 0
    assert purged["rows"] == left == written["rows"] - 1
    assert purged["bytes"] == (os.path.getsize(page_file) if page_file.exists() else 0)
    # the source's log (the copy's was a hard link to it) still has its one line
    assert filelogs.read(out / changed[0]) == [written]
