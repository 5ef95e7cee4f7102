"""One day's catalogue as jobs/catalogue.py builds it: the day's captures, its CDXJ index
(and the same as CDX) and the default paths around a ``ROOT/preprocessed/YYYY-MM/DD`` input.

The captures are the preprocessed day's ``_captures/`` (:data:`lib.pages.schema.CAPTURE_SCHEMA`),
read with Spark from a local or cluster filesystem (Spark has no S3 connector here): an S3
day is copied there first (:func:`copy_day`).
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pyarrow.dataset as ds

from lib.catalogue import cdx, cdxj, urldb
from lib.pages.schema import CAPTURE_SCHEMA, spark_schema
from lib.runtime import packing
from lib.store import atomic, layout, storage

CDXJ_NAME = "index.cdxj"
CDX_NAME = "index.cdx"
#: a day of at most this many captures has its CDXJ built in the driver (:func:`write_cdxj_local`):
#: below it, starting Spark's sort (a sampling job, a shuffle, Python workers for the SURT keys)
#: costs more than the lines themselves (about 20 s against 0.1 s for 300 captures in a fresh job
#: process); the bytes are the same (tests/catalogue/test_catalogue.py holds both paths equal)
SMALL_DAY = 50_000
#: a day whose captures take at most this many bytes (about 50,000 captures) is small: a local run
#: starts its driver JVM light (:func:`is_small_day`)
SMALL_DAY_BYTES = 16 << 20
#: the capture columns a CDXJ line is made of (lib.catalogue.cdxj.cdxj_line)
CDXJ_COLUMNS = (
    "url",
    "warc_date",
    "record_type",
    "mime_type",
    "http_status",
    "payload_digest",
    "warc_length",
    "warc_offset",
    "warc_file",
)


def local_day(inp: str) -> str:
    """The local folder of a complete preprocessed day: ValueError for S3, FileNotFoundError
    without ``_SUCCESS``."""
    if storage.is_s3(inp):
        raise ValueError(f"catalogue input must be on a local/cluster filesystem (Spark has no S3 here): {inp}")
    src = storage.local_path(inp)
    if not os.path.exists(os.path.join(src, layout.SUCCESS)):
        raise FileNotFoundError(f"{src}: preprocess output is not complete (no {layout.SUCCESS})")
    return src


def copy_day(uri: str, local: str) -> str:
    """Copy an S3 preprocessed day's captures and side files (not its pages: the catalogue
    reads none) to the local folder ``local``, ``_SUCCESS`` last; returns ``local``. The copy
    is what :func:`local_day` then checks."""
    base = uri.rstrip("/")
    files = [
        f
        for f in storage.list_files(uri)
        if f.uri[len(base) + 1 :].startswith((layout.CAPTURES + "/", "_")) or f.uri.endswith("/" + layout.SUCCESS)
    ]
    for f in sorted(files, key=lambda f: f.uri.endswith("/" + layout.SUCCESS)):
        rel = f.uri[len(base) + 1 :]
        if "/" in rel and not rel.startswith(layout.CAPTURES + "/"):
            continue  # a nested marker (language=xxx/_SUCCESS) or other folder's file
        dest = os.path.join(local, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with storage.open_stream(f.uri) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return local


def day_has_captures(src: str) -> bool:
    """Whether a local preprocessed day holds at least one capture row."""
    caps = os.path.join(src, layout.CAPTURES)
    return os.path.isdir(caps) and urldb.count_rows(caps) > 0


def read_captures(spark: Any, src: str) -> Any:
    """The day's captures as a DataFrame (empty, with the schema, when the day has none), in
    tasks planned by bytes, however many files the day's captures come in."""
    packing.plan_spark_reads_by_bytes(spark)
    caps = os.path.join(src, layout.CAPTURES)
    schema = spark_schema(CAPTURE_SCHEMA)
    return spark.read.schema(schema).parquet(caps) if os.path.isdir(caps) else spark.createDataFrame([], schema)


def is_small_day(inp: str | None) -> bool:
    """Whether the preprocessed day at ``inp`` (local or S3) holds at most :data:`SMALL_DAY_BYTES` of
    captures: listed, not read. On such a day the catalogue's JVM runs a few dozen small queries,
    each compiled once and run on a few hundred rows, so C2's compiler threads only compete with
    them for the cores (jobs/catalogue.py starts a local driver JVM light then)."""
    if not inp:
        return False
    try:
        files = storage.list_files(storage.join(inp, layout.CAPTURES), suffixes=(".parquet",))
    except (OSError, FileNotFoundError):
        return False
    return sum(f.size for f in files) <= SMALL_DAY_BYTES


def write_cdxj_local(caps: str, prefix: str | None, dest: str) -> int:
    """Write the sorted CDXJ of the captures under the local folder ``caps`` to ``dest`` (atomically)
    without Spark; returns the line count. The lines and their order are :func:`cdxj.iter_lines`',
    which equal the Spark plan's (:func:`cdxj.cdxj_lines_df`)."""
    # the schema given: a day with no capture files has none to infer (as lib.catalogue.recordstore reads it)
    rows: list[dict[str, Any]] = []
    if os.path.isdir(caps):
        table = ds.dataset(caps, format="parquet", schema=CAPTURE_SCHEMA).to_table(columns=list(CDXJ_COLUMNS))
        rows = table.to_pylist()
    lines = cdxj.iter_lines(rows, prefix)
    with atomic.atomic_file(dest) as out:
        for line in lines:
            out.write(line.encode("utf-8") + b"\n")
    return len(lines)


def write_day_cdxj(captures: Any, src: str, prefix: str | None, work: str) -> dict[str, int]:
    """Write the day's sorted CDXJ to ``work/index.cdxj`` and the same captures as an 11-column
    CDX to ``work/index.cdx``; returns the capture and line counts.

    The totals add up: every capture is a line or counted in ``captures_not_indexed`` (no URL
    or WARC-Date)."""
    caps = os.path.join(src, layout.CAPTURES)
    total = urldb.count_rows(caps) if os.path.isdir(caps) else 0
    if total <= SMALL_DAY:
        lines = write_cdxj_local(caps, prefix, os.path.join(work, CDXJ_NAME))
    else:
        lines = cdxj.write_cdxj(cdxj.cdxj_lines_df(captures, prefix), os.path.join(work, CDXJ_NAME), work)
    cdx_lines = cdx.write_cdx(os.path.join(work, CDXJ_NAME), os.path.join(work, CDX_NAME))
    return {"captures": total, "cdxj_lines": lines, "cdx_lines": cdx_lines, "captures_not_indexed": total - lines}
