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

from lib.catalogue import cdx, cdxj, urldb
from lib.pages.schema import CAPTURE_SCHEMA, spark_schema
from lib.runtime import packing
from lib.store import layout, storage

CDXJ_NAME = "index.cdxj"
CDX_NAME = "index.cdx"


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


def write_day_cdxj(captures: Any, src: str, prefix: str | None, work: str) -> dict[str, int]:
    """Write the day's sorted CDXJ to ``work/index.cdxj`` and the same captures as an 11-column
    CDX to ``work/index.cdx``; returns the capture and line counts.

    The totals add up: every capture is a line or counted in ``captures_not_indexed`` (no URL
    or WARC-Date)."""
    caps = os.path.join(src, layout.CAPTURES)
    total = urldb.count_rows(caps) if os.path.isdir(caps) else 0
    lines = cdxj.write_cdxj(cdxj.cdxj_lines_df(captures, prefix), os.path.join(work, CDXJ_NAME), work)
    cdx_lines = cdx.write_cdx(os.path.join(work, CDXJ_NAME), os.path.join(work, CDX_NAME))
    return {"captures": total, "cdxj_lines": lines, "cdx_lines": cdx_lines, "captures_not_indexed": total - lines}
