"""URL database: one row per URL across days, merged day by day (the sorted merge of Nutch's WebDB).

Layout under the database folder (default ``ROOT/urldb``)::

    _state.json                     current version, days merged, version history (lib.store.versioned)
    _state/after-v000006.json       the state that replaced version 6 (the compare-and-swap chain)
    days/date=YYYY-MM-DD/part=P/    the day's edits: one row per URL seen that day
    v000007-RUN/part=P/             table version 7 (written by run RUN), key-partitioned, sorted by id
    digests/date=YYYY-MM-DD/        the day's captures sorted by payload digest (lib.catalogue.payload_table)

and beside it ``urldb.lock``, the lease (lib.store.lease) that every writer holds: a merge
from reading the state to committing the next one, the purge while it rewrites files.

``part = partition_of(normalized URL, k)`` (lib.pages.keyspace): partition P owns one
MD5 range, like a Nutch WebDB writer. Merging day D joins the previous version with D's
edits on (part, id) and writes the next version under a folder name no other run uses;
the state is committed last, by compare-and-swap on the version read, so readers always
see a complete version and no run's version replaces another's. A re-run or an
out-of-order day replays the stored edits from the newest kept version that precedes it,
so the result is the same as if every day had run once, in date order.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import time
import uuid
from typing import Any

import pandas as pd  # module level: pandas_udf resolves the string type hints here
import pyarrow.parquet as pq
from pyspark.sql import Window
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from lib.catalogue import payload_table, textroots
from lib.catalogue.keys import normalize_url
from lib.errors import DailysliceError
from lib.pages.keyspace import partition_of
from lib.store import lease, storage, versioned

STATE = versioned.POINTER
_TS_CONF = "spark.sql.parquet.outputTimestampType"
DEFAULT_PARTITIONS = 16
DEFAULT_KEEP = 3
DEFAULT_WAIT = 3600.0  # seconds a writer waits for another's merge or purge (the nightly default)
#: fault injection for tests: a file path; a merge creates it just before committing, then sleeps
PAUSE_HOOK = "DAILYSLICE_URLDB_PAUSE_BEFORE_COMMIT"
_EMPTY: dict[str, Any] = {"version": 0, "table": None, "days": [], "partitions": None, "history": []}

EDIT_DDL = (
    "id string, url string, first_ts timestamp, last_ts timestamp, captures long, "
    "digests array<string>, first_digest string, last_digest string, changed_within boolean, "
    "first_root string, last_root string, text_changed_within boolean, part int"
)
TABLE_DDL = (
    "id string, url string, first_seen timestamp, last_seen timestamp, captures long, "
    "n_digests int, digests array<string>, last_digest string, days_seen int, "
    "changed_days array<date>, last_root string, part int"
)


class UrlDbError(DailysliceError, RuntimeError):
    pass


# ---------------------------------------------------------------- state (plain Python)
def read_state(db: str) -> dict[str, Any]:
    """The newest committed state, or an empty state for a new database."""
    return versioned.read(db, _EMPTY)


def lock(db: str, job: str, wait: float = DEFAULT_WAIT, option: str = "--urldb-wait") -> lease.Lease:
    """The database's lease (``DB.lock``), not yet acquired: ``with lock(db, "purge", 60): ...``.
    Acquiring it waits up to ``wait`` seconds, then raises :class:`lib.store.lease.Busy`, whose
    sentence names the holder and ``option``, the caller's option for the wait."""
    return lease.Lease(db, job, wait, busy=f"another run is changing the URL database {db}; nothing done ({option})")


def plan_replay(history: list[dict[str, Any]], merged: list[str], day: str) -> tuple[dict[str, Any] | None, list[str]]:
    """Which kept version to start from and which days to merge on top of it, in order.

    The target is every merged day plus ``day``, in date order. The base is the kept
    version whose days are the longest prefix of the target that ends before ``day``."""
    target = sorted(set(merged) | {day})
    best: dict[str, Any] | None = None
    for v in history:
        days = v["days"]
        if days == target[: len(days)] and all(d < day for d in days):
            if best is None or len(days) > len(best["days"]):
                best = v
    start = len(best["days"]) if best else 0
    return best, target[start:]


def table_path(db: str, state: dict[str, Any] | None = None) -> str | None:
    """Folder of the current table version (None before the first merge)."""
    state = state or read_state(db)
    return os.path.join(db, state["table"]) if state.get("table") else None


# ---------------------------------------------------------------- Spark plans
def _udfs(k: int):
    @pandas_udf("string")  # type: ignore[call-overload]  # pyspark's stubs lack the type-hinted form
    def norm(url: pd.Series) -> pd.Series:
        return url.map(normalize_url)

    @pandas_udf("int")  # type: ignore[call-overload]  # pyspark's stubs lack the type-hinted form
    def part(nurl: pd.Series) -> pd.Series:
        return nurl.map(lambda u: partition_of(u, k)).astype("int32")

    return norm, part


def day_edits(captures: Any, k: int) -> Any:
    """One row per URL of the day: first/last capture, count, distinct digests, the
    first and last digest, and whether the digest changed between captures that day; with the
    captures' ``text_root`` (lib.catalogue.textroots, null without one): the first and last
    digest's root, and whether the digest changed to a text of another root that day."""
    norm, part = _udfs(k)
    if textroots.ROOT not in captures.columns:
        captures = textroots.with_roots(captures, None)
    c = captures.where(F.col("url").isNotNull() & F.col("warc_date").isNotNull())
    c = c.withColumn("nurl", norm("url"))
    c = c.withColumn("id", F.sha2(F.col("nurl"), 256)).withColumn("part", part("nurl"))
    order = F.struct("warc_date", "warc_file", "warc_offset")
    w = Window.partitionBy("id").orderBy("warc_date", "warc_file", "warc_offset")
    has = F.col("payload_digest").isNotNull()
    # lag over digest-bearing captures only: a capture without digest says nothing.
    prev = F.last(F.col("payload_digest"), ignorenulls=True).over(w.rowsBetween(Window.unboundedPreceding, -1))
    c = c.withColumn("changed", has & prev.isNotNull() & (F.col("payload_digest") != prev))
    prev_root = F.last(F.when(has, F.coalesce(F.col(textroots.ROOT), F.lit(""))), ignorenulls=True).over(
        w.rowsBetween(Window.unboundedPreceding, -1)
    )
    c = c.withColumn("text_changed", F.col("changed") & other_text(F.col(textroots.ROOT), prev_root))
    return c.groupBy("part", "id").agg(
        F.min_by("url", order).alias("url"),
        F.min("warc_date").alias("first_ts"),
        F.max("warc_date").alias("last_ts"),
        F.count(F.lit(1)).alias("captures"),
        F.array_sort(F.collect_set("payload_digest")).alias("digests"),
        F.min_by("payload_digest", F.when(has, order)).alias("first_digest"),
        F.max_by("payload_digest", F.when(has, order)).alias("last_digest"),
        F.max(F.col("changed")).alias("changed_within"),
        F.min_by(textroots.ROOT, F.when(has, order)).alias("first_root"),
        F.max_by(textroots.ROOT, F.when(has, order)).alias("last_root"),
        F.max(F.col("text_changed")).alias("text_changed_within"),
    )


def other_text(root: Any, before: Any) -> Any:
    """Whether a capture of text root ``root`` is another text than one of root ``before``: the
    roots differ, or either is unknown (null or ""): without roots the digest alone decides."""
    return (F.coalesce(root, F.lit("")) == "") | (F.coalesce(before, F.lit("")) == "") | (root != before)


def new_digest() -> Any:
    """Whether the day's first digest (``e``, the edits) differs from the last one before (``t``,
    the table): the digest rule of ``changed_days`` and of the delta."""
    return (
        F.col("t.last_digest").isNotNull()
        & F.col("e.first_digest").isNotNull()
        & (F.col("t.last_digest") != F.col("e.first_digest"))
    )


def merge(table: Any, edits: Any, day: dt.date) -> Any:
    """Next table version: full outer join of ``table`` and the day's ``edits`` on (part, id)."""
    t, e = table.alias("t"), edits.alias("e")
    j = t.join(e, on=["part", "id"], how="full_outer")
    seen = F.col("e.captures").isNotNull()
    changed = seen & (F.coalesce(F.col("e.changed_within"), F.lit(False)) | new_digest())
    old_days = F.coalesce(F.col("t.changed_days"), F.array().cast("array<date>"))
    digests = F.array_sort(
        F.array_distinct(
            F.concat(
                F.coalesce(F.col("t.digests"), F.array().cast("array<string>")),
                F.coalesce(F.col("e.digests"), F.array().cast("array<string>")),
            )
        )
    )
    return j.select(
        F.col("id"),
        F.coalesce(F.col("t.url"), F.col("e.url")).alias("url"),
        F.least(F.col("t.first_seen"), F.col("e.first_ts")).alias("first_seen"),
        F.greatest(F.col("t.last_seen"), F.col("e.last_ts")).alias("last_seen"),
        (F.coalesce(F.col("t.captures"), F.lit(0)) + F.coalesce(F.col("e.captures"), F.lit(0)))
        .cast("long")
        .alias("captures"),
        F.size(digests).cast("int").alias("n_digests"),
        digests.alias("digests"),
        F.coalesce(F.col("e.last_digest"), F.col("t.last_digest")).alias("last_digest"),
        (F.coalesce(F.col("t.days_seen"), F.lit(0)) + F.when(seen, 1).otherwise(0)).cast("int").alias("days_seen"),
        F.when(changed, F.array_append(old_days, F.lit(day))).otherwise(old_days).alias("changed_days"),
        F.when(F.col("e.last_digest").isNotNull(), F.col("e.last_root"))
        .otherwise(F.col("t.last_root"))
        .alias("last_root"),
        F.col("part"),
    )


def write_tasks(k: int, slots: int) -> int:
    """How many tasks write a ``k``-part table: one per part, but never more than the ``slots``
    (cores) that run them. A task writes each of its parts to its own file, sorted by id, so the
    files hold the same rows in the same order whatever the count; on a small day each task
    costs more than its rows (16 tasks on 2 cores took ~1.5 s of a ~100-capture day's merge)."""
    return max(1, min(k, slots))


def _write_sorted(df: Any, dest: str, k: int, run: str) -> None:
    """Write a table/edit set partitioned by ``part``, one file per part, sorted by id;
    the folder appears under its final name only when complete. ``run``: this run's id, in
    the work folder's name, so two runs never share one (nor Spark's ``_temporary`` in it)."""
    tmp = f"{dest.rstrip('/')}.tmp-{run}"
    shutil.rmtree(tmp, ignore_errors=True)
    conf = df.sparkSession.conf
    old = conf.get(_TS_CONF)
    conf.set(_TS_CONF, "TIMESTAMP_MICROS")  # UTC-adjusted micros, not legacy INT96: readers see instants
    tasks = write_tasks(k, df.sparkSession.sparkContext.defaultParallelism)
    try:
        # sorted by part first: each task's writer closes one part's file before the next opens
        df.repartition(tasks, "part").sortWithinPartitions("part", "id").write.mode("overwrite").partitionBy(
            "part"
        ).parquet(tmp)
    finally:
        conf.set(_TS_CONF, old)
    os.makedirs(tmp, exist_ok=True)  # an empty day writes no files
    storage.commit_dir(tmp, dest)


def _edits_dir(db: str, day: str) -> str:
    return os.path.join(db, "days", f"date={day}")


def merge_day(
    spark: Any,
    db: str,
    day: dt.date,
    captures: Any,
    partitions: int = DEFAULT_PARTITIONS,
    keep: int = DEFAULT_KEEP,
    wait: float = DEFAULT_WAIT,
    job: str = "catalogue",
    roots: Any = None,
) -> dict[str, Any]:
    """Store ``day``'s edits and make the table include them; returns a summary.

    Holds the database's lease throughout (waits up to ``wait`` seconds for another writer,
    else :class:`lib.store.lease.Busy`) and commits by compare-and-swap, so a merge that
    returns has its day in the database whatever ran beside it. Idempotent: running the
    same day again with the same captures gives the same table. ``roots``: the day's text roots
    (lib.catalogue.textroots.day_roots), joined to the captures for the edits only."""
    if storage.is_s3(db) or "://" in db and not db.startswith("file://"):
        raise UrlDbError(f"URL database must be on a local/cluster filesystem, got {db!r}")
    db = storage.local_path(db)
    os.makedirs(os.path.dirname(os.path.abspath(db)), exist_ok=True)
    with lock(db, job, wait) as held:
        summary = _merge_locked(spark, db, day, captures, partitions, keep, roots)
    summary["waited_seconds"] = held.waited
    return summary


def _merge_locked(
    spark: Any, db: str, day: dt.date, captures: Any, partitions: int, keep: int, roots: Any
) -> dict[str, Any]:
    os.makedirs(db, exist_ok=True)
    run = uuid.uuid4().hex[:12]
    state = read_state(db)
    k = state.get("partitions") or partitions
    if state.get("partitions") and partitions != k:
        raise UrlDbError(f"{db} has {k} partitions; re-partitioning to {partitions} is not supported")
    dkey = day.isoformat()
    rows = day_edits(captures if roots is None else textroots.with_roots(captures, roots), k)
    _write_sorted(rows, _edits_dir(db, dkey), k, run)
    digest_rows = payload_table.write_day(
        captures, db, dkey, run
    )  # the side table by digest (lib.catalogue.payload_table)

    base, replay = plan_replay(state["history"], state["days"], dkey)
    table = (
        spark.read.schema(TABLE_DDL).parquet(os.path.join(db, base["table"]))
        if base
        else spark.createDataFrame([], TABLE_DDL)
    )
    version = max([v["version"] for v in state["history"]] + [0]) + 1
    history = list(state["history"])
    for d in replay:
        edits = spark.read.schema(EDIT_DDL).parquet(_edits_dir(db, d))
        name = f"v{version:06d}-{run}"  # a name no other run writes: versions are never overwritten
        _write_sorted(merge(table, edits, dt.date.fromisoformat(d)), os.path.join(db, name), k, run)
        done = (base["days"] if base else []) + replay[: replay.index(d) + 1]
        history.append({"version": version, "table": name, "days": done})
        table = spark.read.schema(TABLE_DDL).parquet(os.path.join(db, name))
        version += 1
    history = history[-keep:]
    new_state = {
        "version": history[-1]["version"],
        "table": history[-1]["table"],
        "days": history[-1]["days"],
        "partitions": k,
        "history": history,
    }
    _pause_for_tests()
    versioned.commit(db, int(state["version"]), new_state)  # the swap: readers switch to the new version here
    kept = {v["table"] for v in history}
    _sweep(db, kept)
    return {
        "urldb": db,
        "version": new_state["version"],
        "replayed_days": replay,
        "urls": count_rows(os.path.join(db, new_state["table"])),
        "digest_rows": digest_rows,
    }


def _sweep(db: str, kept: set[str]) -> None:
    """Remove older versions and what runs that died left (work folders): we hold the lease,
    so no other writer is using them."""
    for folder, pattern in (
        (db, r"v\d{6}(-[0-9a-f]+)?(\.tmp(-[0-9a-f]+)?|\.old)?"),
        (os.path.join(db, "days"), r".*\.tmp-[0-9a-f]+"),
        (os.path.join(db, payload_table.DIGESTS), r".*\.tmp-[0-9a-f]+"),
    ):
        for name in os.listdir(folder) if os.path.isdir(folder) else []:
            if re.fullmatch(pattern, name) and name not in kept:
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def _pause_for_tests() -> None:
    """With :data:`PAUSE_HOOK` set, say so in the file it names and sleep: a point just before
    the commit where a test kills the run (nothing in production sets it)."""
    flag = os.environ.get(PAUSE_HOOK)
    if flag:
        storage.write_bytes(flag, str(os.getpid()).encode())
        time.sleep(3600)


def count_rows(folder: str) -> int:
    """Rows of a Parquet folder from the file footers (no Spark job)."""
    n = 0
    for dirpath, _, names in os.walk(folder):
        n += sum(pq.read_metadata(os.path.join(dirpath, f)).num_rows for f in names if f.endswith(".parquet"))
    return n
