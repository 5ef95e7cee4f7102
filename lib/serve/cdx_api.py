"""The CDX Server API over the capture index (lib.catalogue.capindex), and the archive files
behind it, as a FastAPI router: what pywb (``index_paths: cdx+http://HOST/cdx/COLL``,
``archive_paths: http://HOST/archive/COLL/``), OpenWayback and other wayback tools query.

    GET /cdx/{collection}?url=…[&matchType=][&from=][&to=][&filter=…][&fl=][&output=cdxj|json|cdx]
                          [&closest=TS&sort=closest][&sort=reverse][&limit=][&page=&pageSize=][&showNumPages=true]
    POST /cdx/{collection}                     CDXJ or 11-column CDX lines into the index (OutbackCDX's
                                               write; ``Authorization: Bearer TOKEN``)
    GET|HEAD /archive/{collection}/{path}      an archive file under ROOT/warc/ (a single Range honoured)

A collection is a data center's root (``--root DC=ROOT``; one root without a name is
``default``). The query semantics are pywb's (lib.catalogue.cdxquery); a bad query answers 400
with ``{"error": ...}`` naming the parameter, and reads nothing. Writes need the service's token
(``create_app(write_token=...)``, ``$DAILYSLICE_CDX_TOKEN``): none configured, no write is taken;
a missing token is 401, a wrong one 403; a batch with a bad line is refused whole (400, the line
named); the same batch posted twice is added once.
"""

from __future__ import annotations

import hmac
import os
import threading
from itertools import islice
from typing import Iterator

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from lib.catalogue import capindex, cdxlines, cdxquery
from lib.serve.errors import NotFound, QueryError, ServeError
from lib.serve.files_api import parse_range
from lib.serve.published import read_range
from lib.store import layout, lease, storage

MAX_POST_BYTES = 256 << 20  # one POSTed batch
POST_WAIT = 30.0  # seconds a POST waits for the index's lease (a nightly merge), then 503


class Unauthorized(ServeError):
    status = 401

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": "Bearer"}


class Forbidden(ServeError):
    status = 403


class Busy(ServeError):
    status = 503


class TooLarge(ServeError):
    status = 413


def check_token(header: str | None, token: str | None) -> None:
    """Refuse a write without the service's token (compared in constant time)."""
    if not token:
        raise Forbidden("writes are not enabled: start the service with a write token ($DAILYSLICE_CDX_TOKEN)")
    if not header:
        raise Unauthorized("a write needs 'Authorization: Bearer TOKEN'")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Forbidden("wrong token")


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

    def index(self, collection: str) -> str:
        """The local folder of a collection's capture index (for writes: created on first use)."""
        root = self.root(collection)
        if storage.is_s3(root):
            raise NotFound(f"collection {collection!r}: the capture index is kept on a local root only")
        return os.path.join(root, capindex.FOLDER)

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


def cdx_router(roots: dict[str, str], write_token: str | None = None) -> APIRouter:
    """The CDX server and archive routes over ``roots`` (collection -> published root); POSTs
    need ``write_token``."""
    router = APIRouter(tags=["cdx"])
    colls = Collections(roots)

    @router.post("/cdx/{collection}", summary="Add CDXJ or CDX lines to the collection's index (OutbackCDX)")
    async def post(collection: str, request: Request) -> dict:
        check_token(request.headers.get("authorization"), write_token)
        index = colls.index(collection)
        body = await request.body()
        if len(body) > MAX_POST_BYTES:
            raise TooLarge(f"a batch of {len(body)} bytes; at most {MAX_POST_BYTES}: post it in parts")
        try:
            lines = cdxlines.parse_batch(body.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise QueryError(f"the batch is not UTF-8: byte {e.start}") from None
        except cdxlines.CdxLineError as e:
            raise QueryError(f"{e}; nothing of the batch was added") from None
        try:
            out = capindex.add_lines(index, lines, "cdx-post", POST_WAIT)
        except lease.Busy as e:
            raise Busy(f"{e}; nothing added, try again") from None
        return {"source": out["source"], "added": out["lines"], "unchanged": out["unchanged"]}

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
        return StreamingResponse(read_range(uri, start, end), status_code=status, headers=headers, media_type=media)

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
