"""The CDX Server API over the capture index (lib.catalogue.capindex), and the archive files
behind it, as a FastAPI router: what pywb (``index_paths: cdx+http://HOST/cdx/COLL``,
``archive_paths: http://HOST/archive/COLL/``), OpenWayback and other wayback tools query.

    GET /cdx/{collection}?url=…[&matchType=][&from=][&to=][&filter=…][&fl=][&output=cdxj|json|cdx]
                          [&closest=TS&sort=closest][&sort=reverse][&limit=][&page=&pageSize=][&showNumPages=true]
    GET|HEAD /archive/{collection}/{path}      an archive file under ROOT/warc/ (a single Range honoured)

A collection is a data center's root (``--root DC=ROOT``; one root without a name is
``default``). The query semantics are pywb's (lib.catalogue.cdxquery); a bad query answers 400
with ``{"error": ...}`` naming the parameter, and reads nothing.
"""

from __future__ import annotations

import os
import threading
from itertools import islice
from typing import Iterator

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from lib.catalogue import capindex, cdxquery
from lib.serve.errors import NotFound, QueryError
from lib.serve.files_api import parse_range
from lib.store import layout, storage

CHUNK = 1 << 16


class Collections:
    """The collections the service answers for: a capture-index reader per root, opened on use."""

    def __init__(self, roots: dict[str, str]) -> None:
        self.roots = dict(roots)
        self._readers: dict[str, capindex.Reader] = {}
        self._lock = threading.Lock()

    def root(self, collection: str) -> str:
        if collection not in self.roots:
            raise NotFound(f"unknown collection {collection!r}; known: {', '.join(self.roots)}")
        return self.roots[collection]

    def reader(self, collection: str) -> capindex.Reader:
        root = self.root(collection)
        if storage.is_s3(root):
            raise NotFound(f"collection {collection!r}: the capture index is read from a local root only")
        with self._lock:
            if collection not in self._readers:
                path = os.path.join(root, capindex.FOLDER)
                if not os.path.isdir(path):
                    raise NotFound(f"collection {collection!r} has no capture index ({path})")
                self._readers[collection] = capindex.Reader(path)
            return self._readers[collection]


def _params(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in request.query_params.multi_items():
        out.setdefault(k, []).append(v)
    return out


def answer(q: cdxquery.CdxQuery, lines: Iterator[str]) -> Iterator[str]:
    """The answer lines of ``q`` over the index lines of its range, paged when asked."""
    selected = cdxquery.select(q, lines)
    if q.page is not None:
        selected = islice(selected, q.page * q.page_size, (q.page + 1) * q.page_size)
    return (cdxquery.render(q, rec, line) for line, rec in selected)


def cdx_router(roots: dict[str, str]) -> APIRouter:
    """The CDX server and archive routes over ``roots`` (collection -> published root)."""
    router = APIRouter(tags=["cdx"])
    colls = Collections(roots)

    @router.get("/cdx/{collection}", summary="CDX Server API (pywb / wayback): captures of a URL, a prefix, a host")
    def cdx(collection: str, request: Request) -> Response:
        try:
            q = cdxquery.parse_query(_params(request))
        except cdxquery.CdxQueryError as e:
            raise QueryError(str(e)) from None
        reader = colls.reader(collection)
        if q.show_num_pages:
            n = sum(1 for _ in cdxquery.select(q, reader.lines(q.start, q.end)))
            return Response(f"{-(-n // q.page_size)}\n", media_type="text/plain")
        body = answer(q, reader.lines(q.start, q.end))
        return StreamingResponse((s.encode("utf-8") for s in body), media_type=cdxquery.OUTPUTS[q.output])

    @router.head("/archive/{collection}/{path:path}", operation_id="archive_head", summary="An archive file's size")
    @router.get("/archive/{collection}/{path:path}", operation_id="archive", summary="An archive file (Range)")
    def archive(collection: str, path: str, request: Request) -> Response:
        uri = _archive_uri(colls.root(collection), path)
        try:
            size = storage.size(uri)
        except (FileNotFoundError, OSError):
            raise NotFound(f"no archive file {path!r} in collection {collection!r}") from None
        rng = parse_range(request.headers.get("range"), size)
        start, end, status = (0, size, 200) if rng is None else (rng[0], rng[1], 206)
        headers = {"Accept-Ranges": "bytes", "Content-Length": str(end - start)}
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{size}"
        media = "application/warc" if ".warc" in path else "application/octet-stream"
        if request.method == "HEAD":
            return Response(status_code=status, headers=headers, media_type=media)
        return StreamingResponse(_chunks(uri, start, end), status_code=status, headers=headers, media_type=media)

    return router


def _archive_uri(root: str, path: str) -> str:
    """The file ``path`` under ``root``'s ``warc/`` folder; NotFound for a path that leaves it."""
    parts = path.split("/")
    if not path or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        raise NotFound(f"no archive file {path!r}")
    base = storage.join(root, layout.WARC)
    if storage.is_s3(base):
        return storage.join(base, path)
    real = os.path.realpath(os.path.join(storage.local_path(base), *parts))
    if not real.startswith(os.path.realpath(storage.local_path(base)) + os.sep):
        raise NotFound(f"no archive file {path!r}")
    return real


def _chunks(uri: str, start: int, end: int) -> Iterator[bytes]:
    with storage.open_raw(uri, start, hint=end) as f:
        left = end - start
        while left > 0:
            b = f.read(min(CHUNK, left))
            if not b:
                return
            left -= len(b)
            yield b
