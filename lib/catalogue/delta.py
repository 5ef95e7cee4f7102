"""The daily delta (docs/catalogue.md, "Daily delta"): what changed in the URL database with one
day, as Parquet beside the day's catalogue (``delta/``), for a consumer who mirrors the slices
and wants the changes, not a diff of the whole database.

One row per (kind, URL), sorted by kind then id:

* ``new``: a URL first seen that day (not in the database before the day);
* ``changed``: a URL seen before whose content changed: a payload digest other than its last
  one before the day **and** a text of another near-duplicate class (``text_root``,
  lib.catalogue.textroots: a new date line or counter is not a change), or such a change within
  the day, with ``prev_day`` (its last capture before the day), ``prev_digest`` and
  ``prev_text_root``. Where either capture has no root (no page in the index: not HTML, no
  text, an older day) the digest alone decides, as the URL database's ``changed_days`` does;
* ``gone``: a URL answered 404 or 410 that day (``http_status``, ``reason`` "status"; the
  database keeps it), or purged from the database since the delta written before
  (``reason`` "purged", ``url`` null: lib.purge.urldb_removal's records of ids, listed by the
  next delta written).

The database before the day is the kept table version whose days are exactly the merged days
that precede it (read under the database's lease, so no sweep removes it meanwhile). Applying
the deltas in date order (``new`` adds its URL; ``gone`` with reason "purged" removes it;
``changed`` and the other ``gone`` name a URL already there or new that day) gives the
database's URL set (tested).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import functions as F

from lib.catalogue import urldb
from lib.purge.urldb_removal import PURGED
from lib.store import storage

DELTA = "delta"
GONE_STATUS = (404, 410)
DELTA_DDL = (
    "kind string, id string, url string, digest string, prev_day date, prev_digest string, http_status int, "
    "reason string, text_root string, prev_text_root string"
)


class NoBaseline(urldb.UrlDbError):
    """The database keeps no table of exactly the days before this one (a day merged after a later
    one, or versions pruned by --keep-versions): the day's delta cannot be told, the merge stands."""


def _previous_table(spark: Any, db: str, day: str) -> Any:
    """The database as it was before ``day``: the kept version of exactly the merged days before it."""
    state = urldb.read_state(db)
    before = [d for d in state["days"] if d < day]
    version = next((v for v in state["history"] if v["days"] == before), None)
    if version is None and before:
        raise NoBaseline(
            f"{db}: the table of the days before {day} is no longer kept (--keep-versions): no delta for {day}"
        )
    if version is None:
        return spark.createDataFrame([], urldb.TABLE_DDL)
    return spark.read.schema(urldb.TABLE_DDL).parquet(os.path.join(db, version["table"]))


def delta_frame(spark: Any, db: str, day: dt.date, captures: Any, partitions: int) -> tuple[Any, Any]:
    """The day's delta rows (module doc) from the database ``db`` (the day merged) and its
    captures, and the URLs not listed as changed because only their digest changed (same text root)."""
    dkey = day.isoformat()
    prev = _previous_table(spark, db, dkey).alias("t")
    edits = spark.read.schema(urldb.EDIT_DDL).parquet(os.path.join(db, "days", f"date={dkey}")).alias("e")
    j = edits.join(prev, on=["part", "id"], how="left")
    known = F.col("t.url").isNotNull()
    new_digest = urldb.new_digest()
    within = F.coalesce(F.col("e.text_changed_within"), F.col("e.changed_within"), F.lit(False))
    changed = known & (within | (new_digest & urldb.other_text(F.col("e.first_root"), F.col("t.last_root"))))
    same_text = known & ~changed & (new_digest | F.coalesce(F.col("e.changed_within"), F.lit(False)))
    j = j.withColumn("_same_text", same_text)
    rows = j.where(~known | changed).select(
        F.when(known, F.lit("changed")).otherwise(F.lit("new")).alias("kind"),
        F.col("id"),
        F.col("e.url").alias("url"),
        F.col("e.last_digest").alias("digest"),
        F.when(known, F.to_date(F.col("t.last_seen"))).alias("prev_day"),
        F.when(known, F.col("t.last_digest")).alias("prev_digest"),
        F.lit(None).cast("int").alias("http_status"),
        F.lit(None).cast("string").alias("reason"),
        F.col("e.last_root").alias("text_root"),
        F.when(known, F.col("t.last_root")).alias("prev_text_root"),
    )
    status = captures.where(F.col("http_status").isin(*GONE_STATUS))
    last = F.max_by("http_status", F.struct("warc_date", "warc_file", "warc_offset"))
    gone = (
        urldb.day_edits(status, partitions)
        .select("id", "url")
        .join(
            status.select(F.col("url").alias("u"), "http_status", "warc_date", "warc_file", "warc_offset")
            .groupBy("u")
            .agg(last.alias("http_status")),
            F.col("url") == F.col("u"),
        )
        .select(
            F.lit("gone").alias("kind"),
            "id",
            "url",
            F.lit(None).cast("string").alias("digest"),
            F.lit(None).cast("date").alias("prev_day"),
            F.lit(None).cast("string").alias("prev_digest"),
            F.col("http_status").cast("int"),
            F.lit("status").alias("reason"),
            F.lit(None).cast("string").alias("text_root"),
            F.lit(None).cast("string").alias("prev_text_root"),
        )
    )
    return rows.unionByName(gone).unionByName(_purged(spark, db, dkey)), j.where(F.col("_same_text"))


def claim_purged(db: str, day: str) -> list[str]:
    """The purge records (lib.purge.urldb_removal) the delta of ``day`` lists: those no delta has
    listed yet are moved under ``purged/date=DAY/`` (the caller holds the database's lease), so the
    next delta written after a purge lists its URLs once, and a re-run of that day again."""
    folder = os.path.join(db, PURGED)
    mine = os.path.join(folder, f"date={day}")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.startswith("p-") and name.endswith(".arrow"):
            os.makedirs(mine, exist_ok=True)
            os.replace(os.path.join(folder, name), os.path.join(mine, name))
    return sorted(os.path.join(mine, n) for n in os.listdir(mine)) if os.path.isdir(mine) else []


def _purged(spark: Any, db: str, day: str) -> Any:
    """``gone`` rows (reason ``purged``, ``id`` only: the URL is taken down) of the URLs purged
    from the database that the day's delta lists."""
    ids = []
    for f in claim_purged(db, day):
        with pa.memory_map(f) as m:
            ids += pa.ipc.open_file(m).read_all().column("id").to_pylist()
    return spark.createDataFrame(
        [("gone", i, None, None, None, None, None, "purged", None, None) for i in ids], DELTA_DDL
    )


def write_delta(spark: Any, db: str, day: dt.date, captures: Any, dest: str, partitions: int, wait: float) -> dict:
    """Write the day's delta under ``dest`` (a local folder, the catalogue's work folder's
    ``delta/``) holding the database's lease; returns the counts by kind, and ``same_text``: the
    URLs seen before with a new digest but the same text root (not listed)."""
    db = storage.local_path(db)
    tmp = dest.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    with urldb.lock(db, "catalogue delta", wait):
        df, same_text = delta_frame(spark, db, day, captures, partitions)
        unchanged_text = same_text.count()
        df.repartition(1).sortWithinPartitions("kind", "id").write.mode("overwrite").parquet(tmp)
    for dirpath, _, names in os.walk(tmp):  # Hadoop's side files are not part of the output
        for n in names:
            if n.startswith(".") or n == "_SUCCESS":
                os.remove(os.path.join(dirpath, n))
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(tmp, dest)
    counts = {k: 0 for k in ("new", "changed", "gone")}
    # counted from the files just written, in this process: a Spark job here cost more than the rows
    files = sorted(os.path.join(d, n) for d, _, names in os.walk(dest) for n in names if n.endswith(".parquet"))
    for f in files:
        for pair in pq.read_table(f, columns=["kind"]).column("kind").value_counts().to_pylist():
            counts[pair["values"]] = counts.get(pair["values"], 0) + pair["counts"]
    counts["same_text"] = unchanged_text
    return counts
