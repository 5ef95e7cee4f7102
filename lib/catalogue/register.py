"""Register one archive file between nights (WarcManager's "Register new ARC/WARC files"): its
records are indexed in-process and added to the capture index (a source of its own), the record
store and the digest store, so the CDX server, ``/capture/{record_id}`` and the digest look-up
answer for them at once, without waiting for the night.

- **What a record becomes** is what the night makes of it: the captures are read by the
  preprocess's own reader (lib.preprocess.archive_pages.FileProcessor, captures only: no page rows) and
  the lines are lib.catalogue.cdxj's, so a registered file's lines are byte for byte the ones
  the night's catalogue writes for it (the same archive prefix ``ROOT/warc/``, the same ARC ids).
- **Where from.** A local path or ``file://`` URI, or an ``s3://`` URI below an archives root
  that is a bucket prefix (the service's ``--archives s3://bucket/prefix``): the object is read
  with one streamed GET, and its lines name it by its full URI, as the night names a file outside
  ``ROOT/warc/``. A missing object or bucket answers 404, one the store refuses 403.
- **Its day** is the day folder of its path below ``ROOT/warc/`` (``YYYY-MM/DD/...``: where
  the night reads it from); a file elsewhere belongs to the UTC day of its first capture's
  WARC-Date.
- **Once.** The capture index keys the file by its CDXJ filename: the same lines again change
  nothing; the night's catalogue of the day, whose lines name the same file, retires the
  registration in its commit (lib.catalogue.capindex.add_day); a file whose lines a day's run
  already holds is not added again. The stores keep one entry per record id.
- **Nothing half-registered.** The whole file is read and checked before anything is written:
  an unreadable file, one that is no archive, a truncated or damaged record, or a file without
  any capture is refused (:class:`RegisterError`, naming the offset and the reason). The stores
  are written first and the capture index last (its commit is the registration): a failure
  between leaves record ids pointing at real records of the file, which the next registration
  of it completes.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from lib.catalogue import capindex, cdxj, digeststore, recordstore
from lib.errors import UsageError
from lib.pages import exclusions
from lib.preprocess.archive_pages import FileProcessor
from lib.store import layout, locations, storage

#: record damage that refuses a file (a reason of lib.warc.records, as a warning)
REFUSED_WARNINGS = ("truncated_record", "multi_record_member")
MAX_PAGE_BYTES = 10 << 20  # preprocess's default --max-page-bytes: an oversized record's capture as the night's


class RegisterError(UsageError):
    """A file that is not registered, and why; ``status`` is the HTTP answer (400, 403, 404)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def below(uri: str, roots: list[str]) -> str:
    """``uri`` (a path, ``file://`` or ``s3://``) normalised, if it lies below one of ``roots``;
    RegisterError 403 otherwise (``..`` and symlinks out of a root included)."""
    if not uri or "\x00" in uri:
        raise RegisterError("give the file as a path or an s3:// URI")
    if storage.is_s3(uri):
        if any(p in (".", "..", "") for p in uri[len("s3://") :].split("/")):
            raise RegisterError(f"{uri}: '.', '..' and empty segments are refused", 403)
        for r in roots:
            if storage.is_s3(r) and uri.startswith(r.rstrip("/") + "/"):
                return uri
    else:
        real = os.path.realpath(storage.local_path(uri) if uri.startswith("file://") else uri)
        for r in roots:
            if not storage.is_s3(r) and real.startswith(os.path.realpath(storage.local_path(r)) + os.sep):
                return storage.normalize(real)
    raise RegisterError(f"{uri} is not below an archives root of the service ({', '.join(roots)})", 403)


def path_day(uri: str, warc_root: str) -> dt.date | None:
    """The day of a file below ``warc_root`` in a ``YYYY-MM/DD/`` folder (None elsewhere)."""
    base = storage.normalize(warc_root).rstrip("/") + "/"
    if not uri.startswith(base):
        return None
    parts = uri[len(base) :].split("/")
    if len(parts) < 3:
        return None
    try:
        return dt.date.fromisoformat(f"{parts[0]}-{parts[1]}")
    except ValueError:
        return None


def s3_error(uri: str, e: Exception) -> RegisterError:
    """The answer to an S3 error reading ``uri``: 404 for a missing object or bucket, 403 for a
    refused one, else 404 "cannot be read" (as an unreadable local file), with the store's code."""
    code = str(e.response.get("Error", {}).get("Code", "")) if isinstance(e, ClientError) else ""
    if code in ("404", "NoSuchKey", "NotFound", "NoSuchBucket"):
        return RegisterError(f"{uri}: no such object", 404)
    if code in ("403", "AccessDenied"):
        return RegisterError(f"{uri}: the object store refuses it ({code})", 403)
    return RegisterError(f"{uri}: cannot be read: {code or e}; nothing registered", 404)


def read_captures(uri: str, name: str | None = None, excl: exclusions.Exclusions | None = None) -> list[dict]:
    """The capture rows of the whole archive ``uri``, as preprocess reads them; RegisterError
    (404 missing, 400 damaged or no archive) naming the offset and the reason."""
    proc = FileProcessor(uri, MAX_PAGE_BYTES, name=name, exclusions=excl or exclusions.NONE, captures_only=True)
    try:
        size = storage.size(uri)
        stream = storage.open_stream(uri)
    except FileNotFoundError:
        raise RegisterError(f"{uri}: no such file", 404) from None
    except OSError as e:
        raise RegisterError(f"{uri}: cannot be read: {e}", 404) from None
    except (ClientError, BotoCoreError) as e:  # an s3:// URI: the HEAD or the GET answered no
        raise s3_error(uri, e) from None
    if size == 0:
        raise RegisterError(f"{uri}: an empty file is not an archive")
    try:
        with stream:
            for _ in proc.pages(stream):
                pass
    except (ClientError, BotoCoreError) as e:  # the object went away or the store stopped answering mid-read
        raise s3_error(uri, e) from None
    bad = [e for e in proc.errors if e["kind"] == "failed" or e["reason"] in REFUSED_WARNINGS]
    if proc.stats.failed or bad:
        first = bad[0] if bad else {"offset": None, "reason": next(iter(proc.stats.failed)), "detail": ""}
        where = f"offset {first['offset']}" if first["offset"] is not None else "the file"
        raise RegisterError(f"{uri}: {where}: {first['reason']}: {first['detail']}; nothing registered")
    caps = [c for c in proc.captures if c.get("url") and c.get("warc_date")]
    if not caps:
        raise RegisterError(f"{uri}: no capture record (response, revisit, resource) in it; nothing registered")
    if any(c.get("warc_offset") is None or c.get("warc_length") is None for c in caps):
        raise RegisterError(f"{uri}: records without a byte range of their own; nothing registered")
    return caps


def register(root: str, uri: str, roots: list[str], job: str = "register", wait: float = 30.0) -> dict[str, Any]:
    """Register the archive ``uri`` (below one of ``roots``) into the catalogue of the local
    ``root``: its captures into the capture index, the record store and the digest store. Returns
    the file's CDXJ filename, day, records and whether anything changed."""
    t0 = time.monotonic()
    uri = below(uri, roots)
    warc_root = storage.join(root, layout.WARC)
    day = path_day(uri, warc_root)
    name = None
    if day is not None:  # named as the night names it (ARC record ids derive from the name)
        name = locations.archive_name(uri, storage.join(warc_root, layout.day_suffix(day)))
    caps = read_captures(uri, name, exclusions.load(exclusions.default_uri(root)))  # take-downs, as the night
    if day is None:
        first = caps[0]["warc_date"]
        day = (first.astimezone(dt.timezone.utc) if first.tzinfo else first).date()
    filename = cdxj.relative_filename(uri, warc_root)
    lines = cdxj.iter_lines(caps, warc_root)
    index = os.path.join(root, capindex.FOLDER)
    rs = recordstore.add_records(os.path.join(root, recordstore.FOLDER), day.isoformat(), caps, job, wait)
    ds = digeststore.add(os.path.join(root, digeststore.FOLDER), caps, day.isoformat(), False, job, wait)
    out = capindex.add_file(index, filename, day.isoformat(), lines, job, wait)
    return {
        "file": uri,
        "filename": filename,
        "day": day.isoformat(),
        "records": len(caps),
        "lines": len(lines),
        "unchanged": out["unchanged"],
        "covered_by_day": out.get("covered"),
        "record_store_keys": rs["keys"],
        "digests_added": ds["added"],
        "seconds": round(time.monotonic() - t0, 3),
    }
