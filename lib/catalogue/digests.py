"""Captures by payload digest: the URL database's side table sorted by digest (seed 000's
``PagesByMD5``), written per day and read one row group at a time.

Layout, beside the day edits of :mod:`lib.catalogue.urldb`::

    ROOT/urldb/digests/date=YYYY-MM-DD/part-*.parquet   one row per capture with a digest,
                                                         range-partitioned and sorted by ``digest``

``digest`` is the canonical key of :func:`digest_key` (``sha1:`` + upper-case base32 for SHA-1,
whatever the archive wrote), so a look-up reads, per day, the footer of the file whose range
holds the key and the one row group whose min/max brackets it. Footers are cached per process
(keyed by path, size and mtime): a long-running service reads each footer once.

A look-up covers the days of the database's current state (``_state.json``): a day whose merge
did not finish is not read, as for the URL table itself.
"""

from __future__ import annotations

import base64
import bisect
import binascii
import os
import re
import shutil
from typing import Any, Iterable

import pandas as pd  # module level: pandas_udf resolves the string type hints here
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from lib.core import storage

DIGESTS = "digests"
#: Rows per row group are about this many bytes of Parquet (parquet-mr's block size): small
#: row groups make a single look-up read little; 1 MiB holds ~10,000 captures.
ROW_GROUP_BYTES = 1 << 20
#: Captures per output file of a day (range partitions of the digest order).
ROWS_PER_FILE = 2_000_000
COLUMNS = ["digest", "url", "day", "warc_date", "record_type", "http_status", "mime_type",
           "warc_file", "warc_offset", "warc_length"]

_B32 = re.compile(r"[A-Z2-7]{32}")
_HEX = re.compile(r"[0-9a-f]{40}")
_ALGO = re.compile(r"[a-z0-9][a-z0-9-]{0,15}")


class DigestError(ValueError):
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
    raise DigestError(f"malformed SHA-1 digest {text!r}: expected 32 base32 characters (A-Z, 2-7) "
                      f"or 40 hex digits, got {len(value)} characters")


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


def write_day(captures: Any, db: str, day: str) -> int:
    """Write ``day``'s captures with a payload digest to ``db/digests/date=DAY`` sorted by key;
    returns the rows written. Replaces an earlier run's folder whole (written beside, then
    swapped in), so a re-run gives the same files."""
    @pandas_udf("string")
    def key(d: pd.Series) -> pd.Series:
        return d.map(digest_key)

    rows = captures.where(F.col("payload_digest").isNotNull() & F.col("url").isNotNull()).select(
        key("payload_digest").alias("digest"), "url", F.lit(day).cast("date").alias("day"), "warc_date",
        "record_type", "http_status", "mime_type", "warc_file", "warc_offset", "warc_length")
    n = rows.count()
    dest = day_dir(db, day)
    tmp = dest + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    parts = max(1, -(-n // ROWS_PER_FILE))
    conf = rows.sparkSession.conf
    old = conf.get("spark.sql.parquet.outputTimestampType")
    conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        (rows.repartitionByRange(parts, "digest").sortWithinPartitions("digest", "warc_date", "warc_file", "warc_offset")
         .write.mode("overwrite").option("parquet.block.size", ROW_GROUP_BYTES).parquet(tmp))
    finally:
        conf.set("spark.sql.parquet.outputTimestampType", old)
    os.makedirs(tmp, exist_ok=True)
    storage.commit_dir(tmp, dest)
    return n


# ---------------------------------------------------------------- read (plain Python)
_FOOTERS: dict[tuple[str, int, int], tuple[pq.FileMetaData, list[tuple[str, str]]]] = {}


def _footer(path: str) -> tuple[pq.FileMetaData, list[tuple[str, str]]]:
    """A file's footer and each row group's (min, max) digest, cached by path, size and mtime."""
    st = os.stat(path)
    k = (path, st.st_size, st.st_mtime_ns)
    hit = _FOOTERS.get(k)
    if hit is None:
        md = pq.read_metadata(path)
        col = md.schema.names.index("digest")
        ranges = []
        for i in range(md.num_row_groups):
            s = md.row_group(i).column(col).statistics
            # a row group without statistics must be read: the widest range
            ranges.append((s.min, s.max) if s is not None and s.has_min_max else ("", "\U0010ffff"))
        if len(_FOOTERS) > 100_000:
            _FOOTERS.clear()
        hit = _FOOTERS[k] = (md, ranges)
    return hit


def day_files(db: str, days: Iterable[str]) -> list[str]:
    """The side-table files of ``days`` (days without one are skipped)."""
    out = []
    for d in days:
        folder = day_dir(db, d)
        if os.path.isdir(folder):
            out += sorted(os.path.join(folder, n) for n in os.listdir(folder)
                          if n.endswith(".parquet") and not n.startswith((".", "_")))
    return out


def lookup(files: list[str], keys: Iterable[str]) -> pa.Table:
    """The rows of ``files`` whose digest is one of ``keys`` (canonical keys), reading only
    the row groups whose min/max brackets one of them; ordered by digest, day, time, file,
    offset."""
    wanted = sorted(set(keys))
    tables = []
    for path in files:
        md, ranges = _footer(path)
        groups = []
        for i, (lo, hi) in enumerate(ranges):
            j = bisect.bisect_left(wanted, lo)
            if j < len(wanted) and wanted[j] <= hi:
                groups.append(i)
        if groups:
            t = pq.ParquetFile(path, metadata=md).read_row_groups(groups, columns=COLUMNS)
            tables.append(t.filter(pc.is_in(t.column("digest"), value_set=pa.array(wanted, pa.string()))))
    if not tables:
        return pa.table({c: pa.array([], pa.string()) for c in COLUMNS}).slice(0, 0)
    t = pa.concat_tables(tables, promote_options="permissive")
    return t.sort_by([(c, "ascending") for c in ("digest", "day", "warc_date", "warc_file", "warc_offset")])


def rows(table: pa.Table) -> list[dict[str, Any]]:
    """The look-up result as plain rows (the CLI's and the HTTP API's answer)."""
    return table.select(COLUMNS).to_pylist() if table.num_rows else []
