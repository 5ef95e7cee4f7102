"""Browsing a collection, as WarcManager's views do: its archive files (paged), a file's records, a
URL's captures with their duplicates by digest, one capture's record, and free-text search over
its URLs. Plain functions over a local published root (lib.serve.browse_api answers them as JSON
and as pages).

- **Files**: the files registered between nights and still live in the capture index (their
  line counts from its runs), then each published day's files (lib.catalogue.query.files, kept in
  memory per day: a published day changes only when it is published again), newest day first.
- **A file's records**: a published day's captures of the file (lib.catalogue.query.records); a
  registered file not yet in a day is read from the archive by the preprocess reader.
- **A URL's captures** come from the capture index (every day and registration), oldest first;
  a capture whose payload digest an earlier capture of the URL had is a duplicate of that first
  capture (``duplicate_of``: its timestamp); ``versions`` counts the distinct digests.
- **Search**: lib.catalogue.urlsearch over the URL database's URLs and the registered files'.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import duckdb

from lib.catalogue import capindex, capruns, cdxquery, query, register, urldb
from lib.catalogue.cdxj import parse_line, relative_filename
from lib.catalogue.urlsearch import UrlIndex
from lib.errors import UsageError
from lib.store import layout, storage

MAX_PAGE = 1000


class BrowseError(UsageError):
    """A request the views refuse; ``status`` 400 (bad argument) or 404 (nothing there)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


_day_files: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
_indexes: dict[str, tuple[tuple, UrlIndex]] = {}
_lock = threading.Lock()


def _warc(root: str) -> str:
    return storage.join(root, layout.WARC)


def _index(root: str) -> str:
    return os.path.join(root, capindex.FOLDER)


def registered_files(root: str) -> list[dict[str, Any]]:
    """The registered files live in the capture index: filename, day, records (its lines)."""
    index = _index(root)
    if not os.path.isdir(index):
        return []
    state = capindex.read_state(index)
    lines: dict[str, int] = {}
    for r in state["runs"]:
        for folder, n in r["days"].items():
            lines[folder] = lines.get(folder, 0) + n
    out = []
    for name, day in capindex.registered(index).items():
        folder = state["days"][capindex.FILE + name]
        out.append({"filename": name, "day": day, "records": lines.get(folder, 0), "registered": True})
    return sorted(out, key=lambda f: (f["day"], f["filename"]), reverse=True)


def day_files(root: str, day: str) -> list[dict[str, Any]]:
    """A published day's archive files (filename relative to ROOT/warc/, records), remembered."""
    marker = os.path.join(query.day_dir(root, query.parse_day(day)), layout.SUCCESS)
    key = (root, day, os.path.getmtime(marker) if os.path.exists(marker) else 0.0)
    with _lock:
        if key in _day_files:
            return _day_files[key]
    rows = [
        {
            "filename": relative_filename(r["warc_file"], _warc(root)),
            "day": day,
            "records": r["records"],
            "registered": False,
        }
        for r in query.files(root, day)
    ]
    with _lock:
        _day_files[key] = rows
    return rows


def files(root: str, page: int = 0, size: int = 100) -> dict[str, Any]:
    """Page ``page`` of the collection's files, ``size`` a page (module doc)."""
    if page < 0 or not 1 <= size <= MAX_PAGE:
        raise BrowseError(f"page must be >= 0 and size 1..{MAX_PAGE}")
    every = registered_files(root)
    for day in reversed(query.list_days(root)):
        every += day_files(root, day.isoformat())
    return {
        "total": len(every),
        "page": page,
        "size": size,
        "pages": -(-len(every) // size),
        "files": every[page * size : (page + 1) * size],
    }


def archive_uri(root: str, filename: str) -> str:
    """The archive a CDXJ filename names: below ROOT/warc/ when relative, else the URI itself."""
    if "://" in filename or filename.startswith("/"):
        return storage.normalize(filename)
    if any(p in ("", ".", "..") for p in filename.split("/")):
        raise BrowseError(f"no archive file {filename!r}", 404)
    return storage.join(storage.normalize(_warc(root)), filename)


def file_records(root: str, filename: str, day: str | None = None) -> dict[str, Any]:
    """The records of one archive file, by offset: ``warc_offset``, ``warc_length``,
    ``record_type``, ``warc_date``, ``url``, ``http_status``, ``mime_type``, ``payload_digest``,
    ``record_id``."""
    uri = archive_uri(root, filename)
    known = {f["filename"]: f for f in registered_files(root)}
    days = [day] if day else [d.isoformat() for d in reversed(query.list_days(root))]
    for d in days:
        if any(f["filename"] == filename for f in day_files(root, d)):
            rows = [r for r in query.records(root, uri, d) if r["warc_file"] == uri]
            return {"filename": filename, "day": d, "registered": False, "records": rows}
    if filename in known:
        caps = register.read_captures(uri, None)
        cols = ("warc_offset", "warc_length", "record_type", "warc_date", "url", "http_status", "mime_type")
        rows = [
            {**{k: c[k] for k in cols}, "payload_digest": c["payload_digest"], "record_id": c["record_id"]}
            for c in caps
        ]
        return {"filename": filename, "day": known[filename]["day"], "registered": True, "records": rows}
    raise BrowseError(f"no archive file {filename!r} in the collection", 404)


def url_captures(root: str, url: str) -> dict[str, Any]:
    """Every capture of ``url`` in the capture index, oldest first, with duplicates by digest."""
    try:
        q = cdxquery.parse_query({"url": [url]})
    except cdxquery.CdxQueryError as e:
        raise BrowseError(str(e)) from None
    if not os.path.isdir(_index(root)):
        raise BrowseError("the collection has no capture index", 404)
    first: dict[str, str] = {}
    caps = []
    # one key's lines come in timestamp order: the first capture of a digest is met first
    for line in capindex.Reader(_index(root)).lines(q.start, q.end):
        key, ts, f = parse_line(line)
        digest = f.get("digest")
        dup = digest is not None and digest in first
        caps.append(
            {
                "timestamp": ts,
                "url": f.get("url"),
                "status": f.get("status"),
                "mime": f.get("mime"),
                "digest": digest,
                "duplicate": dup,
                "duplicate_of": first.get(digest) if dup and digest else None,
                "filename": f.get("filename"),
                "offset": int(f["offset"]) if "offset" in f else None,
                "length": int(f["length"]) if "length" in f else None,
            }
        )
        if digest is not None:
            first.setdefault(digest, ts)
    return {"url": url, "key": q.start, "captures": caps, "versions": len(first)}


def _registered_urls(root: str) -> list[str]:
    """The URLs of the lines of registered files still live in the capture index."""
    index = _index(root)
    state = capindex.read_state(index)
    folders = {f for k, f in state["days"].items() if k.startswith(capindex.FILE)}
    out = []
    for r in state["runs"]:
        srcs = sorted(r["days"])
        mine = [s in folders for s in srcs]
        if not any(mine):
            continue
        run = capruns.Run(os.path.join(index, r["name"]))
        try:
            out += [parse_line(line)[2].get("url", "") for line, src in run.all() if mine[src]]
        finally:
            run.close()
    return [u for u in out if u]


def url_index(root: str) -> UrlIndex:
    """The word index of the collection's URLs, built once per state of its sources."""
    db = os.path.join(root, "urldb")
    table = urldb.table_path(db) if os.path.isdir(db) else None
    index = _index(root)
    version = capindex.read_state(index)["version"] if os.path.isdir(index) else 0
    key = (table, version)
    with _lock:
        held = _indexes.get(root)
        if held and held[0] == key:
            return held[1]
    urls = _registered_urls(root) if version else []
    if table:
        glob = os.path.join(table, "**", "*.parquet")
        urls += [u for (u,) in duckdb.connect().execute("SELECT url FROM read_parquet(?)", [glob]).fetchall() if u]
    built = UrlIndex(urls)
    with _lock:
        _indexes[root] = (key, built)
    return built


def search(root: str, text: str, limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Ranked URLs for the words of ``text`` (lib.catalogue.urlsearch)."""
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise BrowseError(f"limit must be 1..{MAX_PAGE} and offset >= 0")
    ix = url_index(root)
    try:
        total, hits = ix.search(text, limit, offset)
    except ValueError as e:
        raise BrowseError(str(e)) from None
    return {"query": text, "total": total, "urls": len(ix), "offset": offset, "hits": hits}
