"""Payload digest -> captures, in a linear-hashing key store (lib.catalogue.linhash) beside the
record store: ``ROOT/digeststore/`` and its lease ``ROOT/digeststore.lock``.

A digest's captures are kept in chunks of at most :data:`CHUNK_BYTES` under the keys
``DIGEST#0``, ``DIGEST#1``, ... (a digest shared by thousands of captures, an empty page or a
tracking pixel, never needs a value larger than a page); each capture is its day, record id,
URL, WARC-Date, record type, HTTP status, MIME type and archive pointer (file, offset, length),
the columns of the URL database's digest table (lib.catalogue.payload_table). A look-up reads the
chunks until one is missing: one page each. Adding a capture reads the digest's chunks first and
keeps one entry per (day, file, offset), so a re-run of a day, or a file registered and then
catalogued by the night, changes nothing; the same record published on two days is two captures,
as in the digest table.

Digests are kept in the canonical spelling of lib.catalogue.payload_table (``sha1:`` + upper-case
base32), whatever the archive wrote. A take-down (purge) rebuilds the store from the published
days (:func:`rebuild`), as it rebuilds the record store: no copy of a purged URL stays.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from itertools import islice
from typing import Any, Iterable, Iterator

from lib.catalogue import recordstore
from lib.catalogue.linhash import Corrupt, LinearHash
from lib.catalogue.payload_table import digest_key
from lib.store import layout, lease

FOLDER = "digeststore"
CHUNK_BYTES = 3000  # one value: below a 4 KiB page with its key
#: the fields of a capture entry, in order (a JSON array: no names repeated in every entry)
ENTRY = (
    "day",
    "record_id",
    "url",
    "warc_date",
    "record_type",
    "http_status",
    "mime_type",
    "warc_file",
    "warc_offset",
    "warc_length",
)
DEFAULT_WAIT = 3600.0


def beside(index: str) -> str:
    """The digest store's folder beside the capture index's (``ROOT/cdxindex`` -> ``ROOT/digeststore``)."""
    return os.path.join(os.path.dirname(index.rstrip("/")) or ".", FOLDER)


def lock(store: str, job: str, wait: float = DEFAULT_WAIT) -> lease.Lease:
    return lease.Lease(store, job, wait, busy=f"another run is changing the digest store {store}")


def _key(digest: str, n: int) -> bytes:
    return f"{digest}#{n}".encode()


def _entry(day: str, row: dict[str, Any]) -> list[Any]:
    d = row.get("warc_date")
    if isinstance(d, dt.datetime):
        d = (d.astimezone(dt.timezone.utc) if d.tzinfo else d.replace(tzinfo=dt.timezone.utc)).isoformat()
    out = [day, *(row.get(k) for k in ENTRY[1:3]), d, *(row.get(k) for k in ENTRY[4:])]
    if len(json.dumps(out)) > CHUNK_BYTES:  # a URL of kilobytes: found through the record store instead
        out[2] = None
    return out


def _chunks(entries: list[list[Any]]) -> Iterator[list[list[Any]]]:
    chunk: list[list[Any]] = []
    size = 2
    for e in entries:
        n = len(json.dumps(e, separators=(",", ":"))) + 1
        if chunk and size + n > CHUNK_BYTES:
            yield chunk
            chunk, size = [], 2
        chunk.append(e)
        size += n
    if chunk:
        yield chunk


def add(
    store: str,
    rows: Iterable[dict[str, Any]],
    day: str,
    whole_day: bool = False,
    job: str = "catalogue",
    wait: float = DEFAULT_WAIT,
) -> dict[str, Any]:
    """Add capture rows of ``day`` (``payload_digest``, ``record_id``, URL, date, pointer) to the
    store, one transaction; ``whole_day``: the rows are the published day's (its last batch): the
    day is marked as held (lib.catalogue.recordstore.day_key). Returns the captures added."""
    by_digest: dict[str, list[list[Any]]] = {}
    for r in rows:
        key = digest_key(r.get("payload_digest"))
        if key and r.get("url") and r.get("warc_file"):
            by_digest.setdefault(key, []).append(_entry(day, r))
    os.makedirs(os.path.dirname(os.path.abspath(store)), exist_ok=True)
    added = 0
    with lock(store, job, wait):
        table = LinearHash(store, writer=True)
        with table.batch() as txn:
            if whole_day:  # the day's marker, in the transaction of its last rows
                txn.set(recordstore.day_key(day), b"1")
            for digest, entries in by_digest.items():
                chunks: list[list[list[Any]]] = []
                while (v := txn.get(_key(digest, len(chunks)))) is not None:
                    chunks.append(json.loads(v))
                seen = {_where(e) for c in chunks for e in c}
                new = []
                for e in entries:
                    if _where(e) not in seen:
                        seen.add(_where(e))
                        new.append(e)
                if not new:
                    continue
                added += len(new)
                n = max(0, len(chunks) - 1)  # the last chunk is written again, filled up
                for chunk in _chunks((chunks[-1] if chunks else []) + new):
                    txn.set(_key(digest, n), json.dumps(chunk, separators=(",", ":")).encode())
                    n += 1
        state = table.state()
    return {"digeststore": store, "added": added, "keys": state["keys"], "buckets": state["buckets"]}


def _where(e: list[Any]) -> tuple[str, str, int]:
    return e[0], e[7], e[8]  # day, file, offset: one capture


def add_day(
    store: str, day: str, rows: Iterable[dict[str, Any]], job: str = "catalogue", wait: float = DEFAULT_WAIT
) -> dict[str, Any]:
    """Add a published day's capture rows in transactions of :data:`recordstore.BATCH` rows (a day
    of millions is never held at once); the day is named in the header with its last batch."""
    rows = iter(rows)
    added = 0
    while True:
        chunk = list(islice(rows, recordstore.BATCH))
        last = len(chunk) < recordstore.BATCH
        out = add(store, chunk, day, last, job, wait)
        added += out["added"]
        if last:
            return dict(out, added=added)


def rebuild(root: str, store: str | None = None, job: str = "rebuild", wait: float = DEFAULT_WAIT) -> dict[str, Any]:
    """Build the store again from every completed preprocessed day's captures under ``root``
    (after a purge, or a torn page), beside the old one, and swap it in."""
    store = store or os.path.join(root, FOLDER)
    tmp = store.rstrip("/") + ".rebuild"
    shutil.rmtree(tmp, ignore_errors=True)
    done = []
    for day in recordstore.published_days(root):
        folder = layout.day_path(root, layout.PREPROCESSED, day)
        if os.path.isdir(os.path.join(folder, layout.CAPTURES)):
            add_day(tmp, day.isoformat(), recordstore.day_rows(folder), job, wait)
            done.append(day.isoformat())
    with lock(store, job, wait):
        old = store.rstrip("/") + ".old"
        shutil.rmtree(old, ignore_errors=True)
        if os.path.exists(store):
            os.rename(store, old)
        if os.path.exists(tmp):
            os.rename(tmp, store)
        shutil.rmtree(old, ignore_errors=True)
    return {"digeststore": store, "days": done, "keys": LinearHash(store).state()["keys"] if done else 0}


def lookup(store: str, digest: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The captures of ``digest`` (any spelling an archive writes) as :data:`ENTRY` dicts, in the
    order they were added; :class:`Corrupt` on a torn page."""
    digest = digest_key(digest) or ""
    if not os.path.exists(os.path.join(store, "header")):
        return []
    table = LinearHash(store)
    out: list[dict[str, Any]] = []
    n = 0
    while (limit is None or len(out) < limit) and (v := table.get(_key(digest, n))) is not None:
        out += [dict(zip(ENTRY, e)) for e in json.loads(v)]
        n += 1
    return out[:limit] if limit is not None else out


def record_ids(store: str, digest: str) -> list[str]:
    """The record ids of the captures of ``digest``."""
    return [e["record_id"] for e in lookup(store, digest)]


def days(store: str, among: Iterable[str]) -> set[str]:
    """The days of ``among`` the store holds whole (empty without a store)."""
    if not os.path.exists(os.path.join(store, "header")):
        return set()
    return recordstore.held(LinearHash(store), among)


def captures(root: str, digests_: list[str]) -> list[dict[str, Any]]:
    """The captures of ``digests_`` (canonical keys) under ``root`` as the URL database's digest
    table lists them (lib.catalogue.payload_table.COLUMNS: dates as dates), by digest, day, time, file
    and offset."""
    out = []
    for key in sorted(set(digests_)):
        for e in lookup(os.path.join(root, FOLDER), key):
            if e["url"] is None:  # left out of an oversized entry: the record store has it
                e["url"] = (recordstore.get(os.path.join(root, recordstore.FOLDER), e["record_id"]) or {}).get("url")
            out.append(
                {
                    "digest": key,
                    "url": e["url"],
                    "day": dt.date.fromisoformat(e["day"]),
                    "warc_date": dt.datetime.fromisoformat(e["warc_date"]) if e["warc_date"] else None,
                    **{k: e[k] for k in ENTRY[4:]},
                }
            )
    out.sort(key=lambda r: (r["digest"], r["day"], r["warc_date"] or _EPOCH, r["warc_file"], r["warc_offset"]))
    return out


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


__all__ = ["FOLDER", "Corrupt", "add", "add_day", "beside", "captures", "days", "lookup", "rebuild", "record_ids"]
