"""Captures by payload digest: the URL database's side table sorted by digest (the
``PagesByMD5`` table of Smorul and JaJa's WarcManager), written per day and read one row group at a time.

Layout, beside the day edits of :mod:`lib.catalogue.urldb`::

    ROOT/urldb/digests/date=YYYY-MM-DD/part-*.parquet   one row per capture with a digest,
                                                         range-partitioned and sorted by ``digest``

``digest`` is the canonical key of :func:`digest_key` (``sha1:`` + upper-case base32 for SHA-1,
whatever the archive wrote). DuckDB reads the files: for one digest it reads each file's footer
and only the row group whose min/max brackets it (zone maps on the sorted column); a batch of
many digests is a semi-join, one pass over the files.

A look-up covers the days of the database's current state (``_state.json``): a day whose merge
did not finish is not read, as for the URL table itself.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import threading
from typing import Any, Iterable

import duckdb
import pandas as pd  # module level: pandas_udf resolves the string type hints here
import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from lib.errors import UsageError
from lib.store import storage

DIGESTS = "digests"
#: Rows per row group are about this many bytes of Parquet (parquet-mr's block size): small
#: row groups make a single look-up read little; 1 MiB holds ~10,000 captures.
ROW_GROUP_BYTES = 1 << 20
#: Captures per output file of a day (range partitions of the digest order).
ROWS_PER_FILE = 2_000_000
COLUMNS = [
    "digest",
    "url",
    "day",
    "warc_date",
    "record_type",
    "http_status",
    "mime_type",
    "warc_file",
    "warc_offset",
    "warc_length",
]

_B32 = re.compile(r"[A-Z2-7]{32}")
_HEX = re.compile(r"[0-9a-f]{40}")
_ALGO = re.compile(r"[a-z0-9][a-z0-9-]{0,15}")


class DigestError(UsageError):  # a ValueError too: the CLI's exit 2, HTTP's 400
    """A digest that is neither ``sha1:BASE32``, bare base32 nor hex SHA-1."""


def parse_digest(text: str) -> str:
    """The canonical key of a digest a user typed: ``sha1:BASE32`` (WARC's form), bare
    base32 (CDX's form) and 40-digit hex all give ``sha1:`` + upper-case base32; another
    algorithm's ``algo:value`` is kept as written (algorithm lower-cased). DigestError
    otherwise, naming what was wrong."""
    s = (text or "").strip()
    if not s:
        raise DigestError("empty digest")
    algo, sep, value = s.partition(":")
    if not sep:
        algo, value = "sha1", s
    algo = algo.lower()
    if not _ALGO.fullmatch(algo) or not value:
        raise DigestError(f"malformed digest {text!r}: expected sha1:BASE32, base32 or hex SHA-1")
    if algo != "sha1":
        return f"{algo}:{value}"
    if _B32.fullmatch(value.upper()):
        return "sha1:" + value.upper()
    if _HEX.fullmatch(value.lower()):
        return "sha1:" + base64.b32encode(binascii.unhexlify(value)).decode("ascii")
    raise DigestError(
        f"malformed SHA-1 digest {text!r}: expected 32 base32 characters (A-Z, 2-7) "
        f"or 40 hex digits, got {len(value)} characters"
    )


def digest_key(stored: str | None) -> str | None:
    """The key of a digest as an archive stored it (never raises: an unusual digest keeps its
    own spelling, so it is still found by exactly that text)."""
    if stored is None:
        return None
    try:
        return parse_digest(stored)
    except DigestError:
        return stored.strip() or None


# ---------------------------------------------------------------- write (Spark)
def day_dir(db: str, day: str) -> str:
    return os.path.join(db, DIGESTS, f"date={day}")


def write_day(captures: Any, db: str, day: str, run: str) -> int:
    """Write ``day``'s captures with a payload digest to ``db/digests/date=DAY`` sorted by key;
    returns the rows written. Replaces an earlier run's folder whole (written beside, under a
    name with this ``run``'s id, then swapped in), so a re-run gives the same files. The
    caller holds the database's lease (:func:`lib.catalogue.urldb.lock`)."""

    @pandas_udf("string")  # type: ignore[call-overload]  # pyspark's stubs lack the type-hinted form
    def key(d: pd.Series) -> pd.Series:
        return d.map(digest_key)

    rows = captures.where(F.col("payload_digest").isNotNull() & F.col("url").isNotNull()).select(
        key("payload_digest").alias("digest"),
        "url",
        F.lit(day).cast("date").alias("day"),
        *COLUMNS[3:],
    )
    n = rows.count()
    dest = day_dir(db, day)
    tmp = f"{dest}.tmp-{run}"
    parts = max(1, -(-n // ROWS_PER_FILE))
    conf = rows.sparkSession.conf
    old = conf.get("spark.sql.parquet.outputTimestampType")
    conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        (
            rows.repartitionByRange(parts, "digest")
            .sortWithinPartitions("digest", "warc_date", "warc_file", "warc_offset")
            .write.mode("overwrite")
            .option("parquet.block.size", ROW_GROUP_BYTES)
            .parquet(tmp)
        )
    finally:
        conf.set("spark.sql.parquet.outputTimestampType", old)
    os.makedirs(tmp, exist_ok=True)
    storage.commit_dir(tmp, dest)
    return n


# ---------------------------------------------------------------- read (DuckDB, embedded)
def day_files(db: str, days: Iterable[str]) -> list[str]:
    """The side-table files of ``days`` (days without one are skipped)."""
    out = []
    for d in days:
        folder = day_dir(db, d)
        if os.path.isdir(folder):
            out += sorted(
                os.path.join(folder, n)
                for n in os.listdir(folder)
                if n.endswith(".parquet") and not n.startswith((".", "_"))
            )
    return out


_DB: Any = None
_DB_LOCK = threading.Lock()


def cursor() -> Any:
    """A DuckDB cursor (times in UTC) on one in-memory database per process: opening a database
    costs ~10 ms, more than a look-up; a cursor costs nothing and is one thread's own."""
    global _DB
    with _DB_LOCK:
        if _DB is None:
            db = duckdb.connect()
            db.execute("SET TimeZone='UTC'")
            _DB = db
        return _DB.cursor()


#: up to this many digests are written into the query as an IN list (DuckDB then skips every
#: row group whose min/max excludes them all); more are joined as a table
IN_LIST_MAX = 64


def lookup(files: list[str], keys: Iterable[str], con: Any = None) -> pa.Table:
    """The rows of ``files`` whose digest is one of ``keys`` (canonical keys), ordered by digest,
    day, time, file, offset. The files are sorted by digest, so for a few keys DuckDB reads only
    the row groups whose min/max statistics bracket one of them."""
    wanted = sorted(set(keys))
    con = con or cursor()
    if not files or not wanted:
        return pa.table({c: pa.array([], pa.string()) for c in COLUMNS})
    cols = ", ".join(COLUMNS)
    order = "ORDER BY digest, day, warc_date, warc_file, warc_offset"
    if len(wanted) <= IN_LIST_MAX:
        marks = ", ".join("?" * len(wanted))
        return con.sql(
            f"SELECT {cols} FROM read_parquet(?) WHERE digest IN ({marks}) {order}", params=[files, *wanted]
        ).to_arrow_table()
    con.register("_wanted", pa.table({"digest": pa.array(wanted, pa.string())}))
    try:
        return con.sql(
            f"SELECT {cols} FROM read_parquet(?) s SEMI JOIN _wanted w ON s.digest = w.digest {order}", params=[files]
        ).to_arrow_table()
    finally:
        con.unregister("_wanted")


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """The look-up result as plain rows (the CLI's and the HTTP API's answer)."""
    return table.select(COLUMNS).to_pylist() if table.num_rows else []
