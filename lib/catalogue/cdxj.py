"""CDXJ per day: ``SURT 14-digit-timestamp {json}`` lines, sorted bytewise, as pywb reads them.

The JSON holds ``url, mime, status, digest, length, offset, filename`` (strings, as
pywb's own indexer writes them; null values are left out). Revisit records get
``mime: warc/revisit`` and no status, as pywb's indexer writes them, so pywb resolves
them to the original capture.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from typing import Any, Iterable, Iterator

import pandas as pd  # module level: pandas_udf resolves the string type hints here
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf

from lib.catalogue.keys import strip_digest, surt_key, timestamp14
from lib.errors import DailysliceError
from lib.store import atomic, storage


class CDXJError(DailysliceError, ValueError):
    """A line that is not ``KEY TIMESTAMP {json}``; names the file and line number."""


def prefix_uri(prefix: str | None) -> str | None:
    """The archive prefix as ``warc_file`` values spell it: a normalized URI (``file://``
    absolute path or ``s3://``) ending in ``/``. Accepts a plain path, ``file://`` or
    ``s3://``, with or without the trailing slash."""
    if not prefix:
        return None
    return storage.normalize(prefix).rstrip("/") + "/"


def relative_filename(warc_file: str, prefix: str | None) -> str:
    """``warc_file`` relative to ``prefix`` (the collection's archive path, as pywb's
    ``archive_paths`` resolves it), else as is."""
    base = prefix_uri(prefix)
    if base and warc_file.startswith(base):
        return warc_file[len(base) :]
    return warc_file


def cdxj_fields(cap: dict[str, Any], prefix: str | None = None) -> dict[str, str]:
    """The JSON block of one capture row (CAPTURE_SCHEMA dict)."""
    mime = "warc/revisit" if cap.get("record_type") == "revisit" else cap.get("mime_type")
    values = {
        "url": cap.get("url"),
        "mime": mime,
        "status": None if cap.get("record_type") == "revisit" else cap.get("http_status"),
        "digest": strip_digest(cap.get("payload_digest")),
        "length": cap.get("warc_length"),
        "offset": cap.get("warc_offset"),
        "filename": relative_filename(cap["warc_file"], prefix) if cap.get("warc_file") else None,
    }
    return {k: str(v) for k, v in values.items() if v is not None}


def cdxj_line(cap: dict[str, Any], prefix: str | None = None) -> str:
    """One CDXJ line (no newline) for a capture row; ``warc_date`` is a datetime."""
    d = cap["warc_date"]
    if d.tzinfo is not None:
        d = d.astimezone(dt.timezone.utc).replace(tzinfo=None)
    micros = (d - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    body = json.dumps(cdxj_fields(cap, prefix), ensure_ascii=False, separators=(",", ":"))
    return f"{surt_key(cap['url'])} {timestamp14(micros)} {body}"


def parse_line(line: str, where: str = "<cdxj>") -> tuple[str, str, dict[str, str]]:
    """Split a CDXJ line into (key, timestamp, fields); ``where`` names it in errors."""
    parts = line.rstrip("\n").split(" ", 2)
    if len(parts) != 3:
        raise CDXJError(f"{where}: expected 'KEY TIMESTAMP {{json}}', got {line[:80]!r}")
    key, ts, body = parts
    if len(ts) != 14 or not ts.isdigit():
        raise CDXJError(f"{where}: timestamp must be 14 digits, got {ts!r}")
    try:
        fields = json.loads(body)
    except json.JSONDecodeError as e:
        raise CDXJError(f"{where}: bad JSON block: {e}") from None
    if not isinstance(fields, dict):
        raise CDXJError(f"{where}: JSON block is not an object")
    return key, ts, fields


def read_cdxj(path: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    """Parse every line of a CDXJ file, checking the bytewise sort order."""
    prev = b""
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if raw < prev:
                raise CDXJError(f"{path}:{n}: line out of order (not sorted bytewise)")
            prev = raw
            yield parse_line(raw.decode("utf-8"), f"{path}:{n}")


def _key_ts_udf():
    @pandas_udf("string")  # type: ignore[call-overload]  # pyspark's stubs lack the type-hinted form
    def key_ts(url: pd.Series, micros: pd.Series) -> pd.Series:
        return pd.Series([f"{surt_key(u)} {timestamp14(m)}" for u, m in zip(url, micros)])

    return key_ts


def cdxj_lines_df(captures: Any, prefix: str | None = None) -> Any:
    """Spark plan: capture rows -> one column ``line``, sorted bytewise (range partitioned).
    Captures without URL or WARC-Date (unparseable in the archive) cannot be indexed and
    are left out; the job counts them.

    Sorting whole lines equals sorting by (key, timestamp) because keys hold no byte
    below '!' and timestamps are fixed-width; ties break on the JSON (file, offset)."""
    fname = F.col("warc_file")
    prefix = prefix_uri(prefix)
    if prefix:
        fname = F.when(fname.startswith(prefix), F.expr(f"substring(warc_file, {len(prefix) + 1})")).otherwise(fname)
    mime = F.when(F.col("record_type") == "revisit", F.lit("warc/revisit")).otherwise(F.col("mime_type"))
    digest = F.regexp_replace(F.col("payload_digest"), "^(?i)sha1:", "")
    body = F.to_json(
        F.struct(
            F.col("url").alias("url"),
            mime.alias("mime"),
            F.when(F.col("record_type") != "revisit", F.col("http_status").cast("string")).alias("status"),
            digest.alias("digest"),
            F.col("warc_length").cast("string").alias("length"),
            F.col("warc_offset").cast("string").alias("offset"),
            fname.alias("filename"),
        )
    )
    # Spark's to_json writes compact JSON ({"a":"b"}); cdxj_line writes the same bytes.
    key_ts = _key_ts_udf()(F.col("url"), F.unix_micros(F.col("warc_date")))
    valid = captures.where(F.col("url").isNotNull() & F.col("warc_date").isNotNull())
    return valid.select(F.concat_ws(" ", key_ts, body).alias("line")).orderBy("line")


def write_cdxj(lines_df: Any, dest_file: str, work_dir: str) -> int:
    """Write the sorted ``line`` column as one file (atomically); returns the line count.

    Executors write range-ordered part files under ``work_dir``; the driver concatenates
    them in part order, which is the global sort order."""
    spark_out = os.path.join(work_dir, "cdxj-parts")
    shutil.rmtree(spark_out, ignore_errors=True)
    lines_df.write.mode("overwrite").text(spark_out)
    parts = sorted(p for p in os.listdir(spark_out) if p.startswith("part-"))
    count = 0
    with atomic.atomic_file(dest_file) as out:
        for p in parts:
            with open(os.path.join(spark_out, p), "rb") as f:
                for raw in f:
                    out.write(raw)
                    count += 1
    shutil.rmtree(spark_out, ignore_errors=True)
    return count


def iter_lines(rows: Iterable[dict[str, Any]], prefix: str | None = None) -> list[str]:
    """Sorted CDXJ lines for capture rows in memory (small inputs, tests, tools); rows
    without URL or date are left out, as in :func:`cdxj_lines_df`."""
    lines = (cdxj_line(r, prefix) for r in rows if r.get("url") and r.get("warc_date"))
    return sorted(lines, key=lambda s: s.encode("utf-8"))
