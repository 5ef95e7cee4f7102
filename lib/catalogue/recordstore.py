"""Record id -> capture pointer, in a linear-hashing key store (lib.catalogue.linhash) beside the
capture index: ``ROOT/recordstore/`` and its lease ``ROOT/recordstore.lock``.

The catalogue job adds each day's captures (every record with a WARC-Record-ID: its day, URL,
type, archive file, offset and length); a re-run of the day puts the same keys again, which
changes nothing. Each whole day is a key of its own (``\0day:YYYY-MM-DD``, put in the day's
transaction), so a look-up that finds no key can tell "not in these days" from "a day the store
never saw", however many days there are (a header slot holds 500 bytes). A store that fails a
checksum (a torn write) is rebuilt from the published days' captures (:func:`rebuild`), which is
also how a root catalogued before the store existed gets one.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from itertools import chain, islice
from typing import Any, Iterable, Iterator

import pyarrow.dataset as ds

from lib.catalogue.linhash import Corrupt, LinearHash
from lib.pages.schema import CAPTURE_SCHEMA
from lib.store import layout, lease

FOLDER = "recordstore"
DEFAULT_WAIT = 3600.0
FIELDS = ("url", "record_type", "warc_file", "warc_offset", "warc_length", "http_status", "mime_type", "payload_digest")
BATCH = 200_000  # records per transaction of a rebuild


def beside(index: str) -> str:
    """The record store's folder beside the capture index's (``ROOT/cdxindex`` -> ``ROOT/recordstore``)."""
    return os.path.join(os.path.dirname(index.rstrip("/")) or ".", FOLDER)


def lock(store: str, job: str, wait: float = DEFAULT_WAIT) -> lease.Lease:
    return lease.Lease(store, job, wait, busy=f"another run is changing the record store {store}")


def pointer(day: str, row: dict[str, Any]) -> dict[str, Any]:
    """The value kept for a capture row: its day, the :data:`FIELDS` and ``warc_date`` (ISO 8601, UTC)."""
    d = row.get("warc_date")
    if isinstance(d, dt.datetime):
        d = (d.astimezone(dt.timezone.utc) if d.tzinfo else d.replace(tzinfo=dt.timezone.utc)).isoformat()
    return {"day": day, **{k: row.get(k) for k in FIELDS}, "warc_date": d}


def _items(day: str, rows: Iterable[dict[str, Any]]) -> Iterable[tuple[bytes, bytes]]:
    for r in rows:
        rid = r.get("record_id")
        if not rid or not r.get("warc_file"):
            continue
        yield rid.encode("utf-8"), json.dumps(pointer(day, r), separators=(",", ":")).encode("utf-8")


def add_day(
    store: str, day: str, rows: Iterable[dict[str, Any]], job: str = "catalogue", wait: float = DEFAULT_WAIT
) -> dict[str, Any]:
    """Put ``day``'s capture rows (CAPTURE_SCHEMA dicts) into the store, one transaction."""
    os.makedirs(os.path.dirname(os.path.abspath(store)), exist_ok=True)
    with lock(store, job, wait):
        table = LinearHash(store, writer=True)
        st = table.put_many(chain(_items(day, rows), [(day_key(day), b"1")]))
    return {"recordstore": store, "keys": st["keys"], "buckets": st["buckets"], "level": st["level"]}


def add_records(
    store: str, day: str, rows: Iterable[dict[str, Any]], job: str = "register", wait: float = DEFAULT_WAIT
) -> dict[str, Any]:
    """Put the capture rows of one registered file (a day not yet published) into the store, one
    transaction; the day is not marked as held (the store does not hold that day whole)."""
    os.makedirs(os.path.dirname(os.path.abspath(store)), exist_ok=True)
    with lock(store, job, wait):
        table = LinearHash(store, writer=True)
        st = table.put_many(_items(day, rows))
    return {"recordstore": store, "keys": st["keys"], "buckets": st["buckets"], "level": st["level"]}


def get(store: str, record_id: str) -> dict[str, Any] | None:
    """The capture pointer of ``record_id`` (``day``, ``warc_date`` and :data:`FIELDS`: ``url``,
    ``record_type``, ``warc_file``, ``warc_offset``, ``warc_length``, ...); None when absent.
    :class:`Corrupt` on a torn page."""
    if not os.path.exists(os.path.join(store, "header")):
        return None
    value = LinearHash(store).get(record_id.encode("utf-8"))
    return json.loads(value) if value is not None else None


def day_key(day: str) -> bytes:
    """The key marking a whole day as held (no record id starts with a NUL byte)."""
    return b"\0day:" + day.encode()


def held(table: LinearHash, among: Iterable[str]) -> set[str]:
    """The days of ``among`` whose every capture ``table`` holds (their marker key is in it)."""
    return {d for d in among if table.get(day_key(d)) is not None}


def days(store: str, among: Iterable[str]) -> set[str]:
    """The days of ``among`` the store holds whole (empty without a store)."""
    if not os.path.exists(os.path.join(store, "header")):
        return set()
    return held(LinearHash(store), among)


def day_rows(day_dir: str) -> Iterator[dict[str, Any]]:
    """The capture rows of a local preprocessed day (its ``_captures/`` Parquet), streamed in
    batches: the driver reads them without a Spark job, never the whole day at once."""
    caps = os.path.join(day_dir, layout.CAPTURES)
    if not os.path.isdir(caps):
        return
    # the schema given: a day with no capture files (an empty day published with --allow-empty) has none
    schema = CAPTURE_SCHEMA
    for batch in ds.dataset(caps, format="parquet", schema=schema).to_batches(
        columns=["record_id", "warc_date", *FIELDS]
    ):
        yield from batch.to_pylist()


def rebuild(root: str, store: str | None = None, job: str = "rebuild", wait: float = DEFAULT_WAIT) -> dict[str, Any]:
    """Build the store again from every completed preprocessed day's captures under ``root``,
    beside the old one, and swap it in under the lease; returns the days and keys."""
    store = store or os.path.join(root, FOLDER)
    with lock(store, job, wait):
        tmp = store.rstrip("/") + ".rebuild"
        shutil.rmtree(tmp, ignore_errors=True)
        table = LinearHash(tmp, writer=True)
        done: list[str] = []
        for day in published_days(root):
            folder = layout.day_path(root, layout.PREPROCESSED, day)
            if not os.path.isdir(os.path.join(folder, layout.CAPTURES)):
                continue
            done.append(day.isoformat())
            rows = day_rows(folder)
            while True:  # transactions of BATCH records: a day of millions never held in memory at once
                chunk = list(islice(rows, BATCH))
                if len(chunk) < BATCH:
                    table.put_many(chain(_items(day.isoformat(), chunk), [(day_key(day.isoformat()), b"1")]))
                    break
                table.put_many(_items(day.isoformat(), chunk))
        old = store.rstrip("/") + ".old"
        shutil.rmtree(old, ignore_errors=True)
        if os.path.exists(store):
            os.rename(store, old)
        os.rename(tmp, store)
        shutil.rmtree(old, ignore_errors=True)
        return {"recordstore": store, "days": done, "keys": LinearHash(store).state()["keys"]}


def published_days(root: str) -> list[dt.date]:
    """The days of ``root`` whose preprocessed folder is complete (``_SUCCESS``), in date order."""
    base = os.path.join(root, layout.PREPROCESSED)
    out = []
    for month in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for d in sorted(os.listdir(os.path.join(base, month))):
            try:
                day = dt.date.fromisoformat(f"{month}-{d}")
            except ValueError:
                continue
            if os.path.exists(os.path.join(layout.day_path(root, layout.PREPROCESSED, day), layout.SUCCESS)):
                out.append(day)
    return out


__all__ = ["Corrupt", "add_day", "add_records", "beside", "day_key", "days", "get", "held", "pointer", "rebuild"]
