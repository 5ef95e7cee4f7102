"""Each capture's text root: which near-duplicate class its main text belongs to, across days
(docs/catalogue.md, "Daily delta"; docs/dedup.md).

The index job gives every metadata row ``dup_cluster`` (the day's representative of its cluster)
and ``dup_of``/``dup_of_day`` (the earlier day's text it repeats, lib.neardup.crossday). The root
of a page is its representative's: the representative's ``dup_of`` when it repeats an earlier
day, else the representative itself on this day; the signature store keeps each representative
with exactly this root, so a URL whose text comes back the next day, changed by a date line,
gets the same root again, and a URL whose text really changed gets another.

A root is ``YYYY-MM-DD/RECORD-ID``. Captures the index holds no page for (not HTML, no text, a
revisit, an index run elsewhere) have none: the delta then falls back to the payload digest alone.
"""

from __future__ import annotations

import datetime as dt
import glob
import os
from typing import Any

from pyspark.sql import functions as F

from lib.store import layout, storage

ROOT = "text_root"
_COLUMNS = ("warc_file", "warc_offset", "record_id", "dup_cluster", "dup_of", "dup_of_day")


def metadata_files(index_day: str | None) -> list[str]:
    """The index day's metadata store files (every language), or [] when the day has no index on
    a local or cluster filesystem (an S3 index is not read: the delta uses digests alone)."""
    if not index_day or storage.is_s3(index_day):
        return []
    base = storage.local_path(index_day)
    return sorted(glob.glob(os.path.join(base, "**", layout.METADATA_GLOB), recursive=True))


def _root(day_col: Any, id_col: Any) -> Any:
    return F.concat(F.date_format(day_col, "yyyy-MM-dd"), F.lit("/"), id_col)


def roots_frame(spark: Any, files: list[str], day: dt.date) -> Any:
    """(warc_file, warc_offset, text_root) of every page of the metadata files."""
    meta = spark.read.parquet(*files).select(*_COLUMNS)
    reps = (
        meta.where(F.col("record_id") == F.col("dup_cluster"))
        .groupBy(F.col("record_id").alias("rep"))
        .agg(F.min(F.struct("dup_of_day", "dup_of")).alias("r"))
    )
    own = _root(F.lit(day.isoformat()).cast("date"), F.col("dup_cluster"))
    earlier = F.when(F.col("r.dup_of").isNotNull(), _root(F.col("r.dup_of_day"), F.col("r.dup_of")))
    return (
        meta.join(reps, F.col("dup_cluster") == F.col("rep"), "left")
        .select("warc_file", "warc_offset", F.coalesce(earlier, own).alias(ROOT))
        .dropDuplicates(["warc_file", "warc_offset"])
    )


def day_roots(spark: Any, index_day: str | None, day: dt.date) -> tuple[Any, dict[str, Any]]:
    """The day's roots (:func:`roots_frame`, None when the index has no metadata here) and what
    was read: the metadata files, or why none."""
    files = metadata_files(index_day)
    if not files:
        why = "index on S3" if index_day and storage.is_s3(index_day) else "no index metadata"
        return None, {"metadata_files": 0, "skipped": why}
    return roots_frame(spark, files, day), {"metadata_files": len(files)}


def with_roots(captures: Any, roots: Any) -> Any:
    """The captures with their ``text_root`` (null where ``roots`` has no page, or all null
    without ``roots``)."""
    if roots is None:
        return captures.withColumn(ROOT, F.lit(None).cast("string"))
    return captures.join(roots, on=["warc_file", "warc_offset"], how="left")
