"""The per-file log beside each page file: when it was written, and its stats.

The design names one ``Date-{class}-{split}.log.gz`` beside each ``Date-{class}-{split}.parquet``,
"zipped log file for written parquet files (when + stats)". Here a page file is
``language=xxx/part-<task>-<n>.zstd.parquet`` and its log ``language=xxx/_part-<task>-<n>.log.gz``
(:func:`lib.store.layout.file_log_name`). A task writes the logs of its files once they are
closed, from their Parquet footers and the task's counters: one gzipped JSON line::

    {"event": "written", "written": "2026-01-16T02:10:11.123+00:00", "file": "part-….zstd.parquet",
     "language": "eng", "languages": {"eng": 412}, "rows": 412, "bytes": 1833472, "row_groups": 1,
     "task": "…", "archives": [{"file": "…", "read": …, "kept": …, "skipped": …, "failed": …}],
     "errors": {"failed": 3, "by_reason": {"http_parse": 3}, "report_lines": 3}}

``archives`` and ``errors`` are those of the task's archives, whose pages the file holds (a
task's pages of one language go to one file until it is full, then the next). The cost is one
footer read and one small write per file, never per page.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
from typing import Any, Sequence

import pyarrow.parquet as pq

from lib.preprocess.file_counters import FileResult
from lib.store import atomic, layout


def _archives(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    archives: list[dict[str, Any]] = []
    by_reason: dict[str, int] = {}
    failed = lines = 0
    for r in rows:
        res = FileResult.from_json(r["stats"])
        counts = {"read": res.read, "kept": res.kept, "skipped": res.skipped, "failed": res.failed}
        archives.append({"file": res.file, "start": r["start"], **counts})
        failed += res.failed
        for k, v in res.failed_by_reason.items():
            by_reason[k] = by_reason.get(k, 0) + v
        lines += r["errors"].count("\n")
    return archives, {"failed": failed, "by_reason": by_reason, "report_lines": lines}


def entry(pages_file: str, task: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The log line of one closed page file (a local path) of task ``task`` with result ``rows``."""
    meta = pq.read_metadata(pages_file)
    st = os.stat(pages_file)
    lang = layout.language_of(os.path.dirname(pages_file)) or ""
    archives, errors = _archives(rows)
    return {
        "event": "written",
        "written": dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).isoformat(timespec="milliseconds"),
        "file": os.path.basename(pages_file),
        "language": lang,
        "languages": {lang: meta.num_rows},
        "rows": meta.num_rows,
        "bytes": st.st_size,
        "row_groups": meta.num_row_groups,
        "task": task,
        "archives": archives,
        "errors": errors,
    }


def write(pages: Sequence[str], task: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    """Write the log beside each of a task's page files (local paths); returns the logs' paths."""
    out = []
    for p in pages:
        line = json.dumps(entry(p, task, rows), sort_keys=True) + "\n"
        dest = layout.file_log_name(p)
        atomic.write_bytes(dest, gzip.compress(line.encode(), mtime=0))
        out.append(dest)
    return out


def read(log_file: str) -> list[dict[str, Any]]:
    """The lines of a per-file log."""
    with gzip.open(log_file, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]
