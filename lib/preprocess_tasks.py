"""Executor side of the preprocess job: one task per archive file.

Pages go back to Spark as Arrow batches (Spark writes them partitioned by language);
each file's captures, counters and error report are written beside them as side files
named after the file's URI, so a retried task overwrites its own and nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from lib import storage
from lib.pages import FileProcessor
from lib.schema import CAPTURE_SCHEMA, PAGE_SCHEMA

SIDE_DIRS = ("_captures", "_filestats", "_fileerrors")


def side_name(uri: str) -> str:
    return hashlib.sha1(uri.encode("utf-8")).hexdigest()[:20]


def _write_side(out_dir: str, uri: str, proc: FileProcessor) -> None:
    name = side_name(uri)
    buf = io.BytesIO()
    table = pa.Table.from_pylist(proc.captures, schema=CAPTURE_SCHEMA)
    pq.write_table(table, buf, compression="zstd")
    storage.write_bytes(storage.join(out_dir, "_captures", f"part-{name}.parquet"), buf.getvalue())
    storage.write_bytes(storage.join(out_dir, "_fileerrors", f"{name}.jsonl"),
                        "".join(json.dumps(e, default=str) + "\n" for e in proc.errors).encode())
    # stats last: its presence means this file's side outputs are complete
    storage.write_bytes(storage.join(out_dir, "_filestats", f"{name}.json"), json.dumps(proc.stats.as_dict()).encode())


def process_one(uri: str, size: int, out_dir: str, max_page_bytes: int, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Pages of one archive as Arrow batches; side outputs written when the file is done."""
    proc = FileProcessor(uri, max_page_bytes)
    proc.stats.bytes = size
    buf: list[dict[str, Any]] = []
    try:
        stream = storage.open_stream(uri)
    except Exception as e:  # missing file, permissions, S3 gone: the file is counted, the day goes on
        proc.stats.read += 1
        proc.stats.failed["read_error"] += 1
        proc.errors.append({"file": uri, "offset": None, "kind": "failed", "reason": "read_error",
                            "detail": f"{type(e).__name__}: {e}"})
    else:
        with stream:
            for row in proc.pages(stream):
                buf.append(row)
                if len(buf) >= batch_rows:
                    yield pa.RecordBatch.from_pylist(buf, schema=PAGE_SCHEMA)
                    buf = []
    if buf:
        yield pa.RecordBatch.from_pylist(buf, schema=PAGE_SCHEMA)
    _write_side(out_dir, uri, proc)
    s = proc.stats
    print(f"preprocess: {os.path.basename(uri)}: read {s.read} kept {s.kept} skipped {sum(s.skipped.values())} "
          f"failed {sum(s.failed.values())} in {s.seconds:.1f}s", file=sys.stderr, flush=True)


def make_mapper(files: list[tuple[str, int]], out_dir: str, max_page_bytes: int, batch_rows: int):
    """The mapInArrow function: input rows carry indexes into ``files``."""

    def mapper(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for i in batch.column(0).to_pylist():
                uri, size = files[i]
                yield from process_one(uri, size, out_dir, max_page_bytes, batch_rows)

    return mapper


def merge_side_outputs(out_dir: str, files: list[tuple[str, int]]) -> tuple[dict[str, Any], int]:
    """Combine per-file counters into ``_stats.json`` and reports into ``_errors.jsonl``
    (local/cluster folder); returns (stats, number of report lines)."""
    per_file = []
    totals: dict[str, Any] = {"files": len(files), "bytes": 0, "read": 0, "kept": 0, "skipped": 0, "failed": 0,
                              "skipped_by_reason": {}, "failed_by_reason": {}, "warnings_by_reason": {}}
    missing = []
    for uri, _ in files:
        p = os.path.join(storage.local_path(out_dir), "_filestats", f"{side_name(uri)}.json")
        if not os.path.exists(p):
            missing.append(uri)
            continue
        with open(p) as f:
            s = json.load(f)
        per_file.append(s)
        for k in ("bytes", "read", "kept", "skipped", "failed"):
            totals[k] += s[k]
        for k in ("skipped_by_reason", "failed_by_reason", "warnings_by_reason"):
            for reason, n in s[k].items():
                totals[k][reason] = totals[k].get(reason, 0) + n
    if missing:
        raise RuntimeError(f"no statistics for {len(missing)} input files (first: {missing[0]})")
    lines = 0
    with open(os.path.join(storage.local_path(out_dir), "_errors.jsonl"), "w") as out:
        for uri, _ in files:
            p = os.path.join(storage.local_path(out_dir), "_fileerrors", f"{side_name(uri)}.jsonl")
            with open(p) as f:
                for line in f:
                    out.write(line)
                    lines += 1
    for d in ("_filestats", "_fileerrors"):
        import shutil

        shutil.rmtree(os.path.join(storage.local_path(out_dir), d), ignore_errors=True)
    stats = {"totals": totals, "files": per_file}
    with open(os.path.join(storage.local_path(out_dir), "_stats.json"), "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)
    return stats, lines
