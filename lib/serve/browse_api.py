"""Browsing a collection (WarcManager's "List all ARC files", "Retrieve the detailed contents of
any WARC/ARC file", "Retrieve details for a URL", "Query for URL's based on a free-text string"),
each answer as JSON and as a page (lib.catalogue.browse; pages: lib.serve.browse_pages):

    GET /collections/{c}/files?page=&size=          /browse/{c}/files      the collection's files, paged
    GET /collections/{c}/file?name=F[&day=D]        /browse/{c}/file       a file's records
    GET /collections/{c}/url?url=U                  /browse/{c}/url        a URL's captures and duplicates
    GET /collections/{c}/search?q=WORDS             /browse/{c}/search     ranked URLs for words
    GET /collections/{c}/record?filename=&offset=&length=   /browse/{c}/record   one capture's headers
    GET /browse/{c}/payload?filename=&offset=&length=       the capture's payload (as /capture?contentonly)

A file is named as the CDXJ names it (relative to ``ROOT/warc/``, or a URI for a file registered
from another archives root, which must lie below one). A capture of an excluded URL (the root's
take-down list) answers 451. Bad arguments answer 400, unknown files 404, ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from lib.catalogue import browse, register
from lib.catalogue.query import to_json
from lib.extract.capture import CaptureError, open_capture
from lib.pages import exclusions
from lib.serve import browse_pages
from lib.serve.capture_api import error_response, respond, withheld
from lib.serve.cdx_api import Collections, Forbidden
from lib.serve.errors import NotFound, QueryError
from lib.store import layout, storage


def _json(obj: Any) -> Response:
    return Response(to_json(obj), media_type="application/json")


def browse_router(roots: dict[str, str], archive_roots: list[str]) -> APIRouter:
    """The browse routes over the local ``roots`` (collection -> published root)."""
    router = APIRouter(tags=["browse"])
    colls = Collections(roots)

    def root(c: str) -> str:
        colls.index(c)  # 404 for an unknown collection or one on S3
        return storage.local_path(colls.root(c))

    async def call(fn: Callable[..., Any], *args: Any) -> Any:
        # DuckDB and archive reads in a worker thread: the event loop keeps answering
        try:
            return await run_in_threadpool(fn, *args)
        except (browse.BrowseError, register.RegisterError) as e:
            raise (NotFound if e.status == 404 else Forbidden if e.status == 403 else QueryError)(str(e)) from None

    def record_uri(c: str, filename: str) -> str:
        """The archive of a capture: below ROOT/warc/, or below an archives root."""
        r = root(c)
        uri = browse.archive_uri(r, filename)
        try:
            return register.below(uri, [storage.join(r, layout.WARC), *archive_roots])
        except register.RegisterError as e:
            raise NotFound(f"no archive file {filename!r} in collection {c!r}: {e}") from None

    def record(c: str, filename: str, offset: int, length: int) -> dict[str, Any] | JSONResponse:
        uri = record_uri(c, filename)
        try:
            cap = open_capture(uri, offset, length, content_only=True, decode=False)
        except CaptureError as e:
            return error_response(e)
        cap.close()
        if exclusions.load(exclusions.default_uri(root(c))).match(cap.url):
            return withheld(cap.url)
        return {
            "filename": filename,
            "offset": offset,
            "length": length,
            "url": cap.url,
            "record_type": cap.rec_type,
            "status": cap.status,
            "warc_headers": cap.warc_headers,
            "http_headers": cap.http_headers,
        }

    size_q = Query(100, ge=1, le=browse.MAX_PAGE)

    @router.get("/collections/{c}/files", summary="The collection's archive files, paged")
    async def files_json(c: str, page: int = Query(0, ge=0), size: int = size_q) -> Response:
        return _json(await call(browse.files, root(c), page, size))

    @router.get("/browse/{c}/files", response_class=HTMLResponse, summary="Page: the collection's files")
    async def files_html(c: str, page: int = Query(0, ge=0), size: int = size_q) -> HTMLResponse:
        return HTMLResponse(browse_pages.files_page(c, await call(browse.files, root(c), page, size)))

    @router.get("/collections/{c}/file", summary="An archive file's records (offset, type, URL, digest)")
    async def file_json(c: str, name: str, day: str | None = None) -> Response:
        return _json(await call(browse.file_records, root(c), name, day))

    @router.get("/browse/{c}/file", response_class=HTMLResponse, summary="Page: an archive file's records")
    async def file_html(c: str, name: str, day: str | None = None) -> HTMLResponse:
        return HTMLResponse(browse_pages.file_page(c, await call(browse.file_records, root(c), name, day)))

    @router.get("/collections/{c}/url", summary="A URL's captures, oldest first, with duplicates by digest")
    async def url_json(c: str, url: str) -> Response:
        return _json(await call(browse.url_captures, root(c), url))

    @router.get("/browse/{c}/url", response_class=HTMLResponse, summary="Page: a URL's versions")
    async def url_html(c: str, url: str) -> HTMLResponse:
        return HTMLResponse(browse_pages.url_page(c, await call(browse.url_captures, root(c), url)))

    lim = Query(20, ge=1, le=browse.MAX_PAGE)

    @router.get("/collections/{c}/search", summary="URLs ranked for the words of their host and path")
    async def search_json(c: str, q: str, limit: int = lim, offset: int = Query(0, ge=0)) -> Response:
        return _json(await call(browse.search, root(c), q, limit, offset))

    @router.get("/browse/{c}/search", response_class=HTMLResponse, summary="Page: URLs for words")
    async def search_html(c: str, q: str, limit: int = lim, offset: int = Query(0, ge=0)) -> HTMLResponse:
        return HTMLResponse(browse_pages.search_page(c, await call(browse.search, root(c), q, limit, offset)))

    pos = Query(..., ge=0)
    ln = Query(..., ge=1)

    @router.get("/collections/{c}/record", summary="One capture's WARC and HTTP headers")
    async def record_json(c: str, filename: str, offset: int = pos, length: int = ln) -> Response:
        ans = await call(record, c, filename, offset, length)
        return ans if isinstance(ans, JSONResponse) else _json(ans)

    @router.get("/browse/{c}/record", response_class=HTMLResponse, summary="Page: one capture")
    async def record_html(c: str, filename: str, offset: int = pos, length: int = ln) -> Response:
        ans = await call(record, c, filename, offset, length)
        return ans if isinstance(ans, JSONResponse) else HTMLResponse(browse_pages.record_page(c, ans))

    @router.get("/browse/{c}/payload", summary="One capture's payload, as crawled")
    def payload(c: str, filename: str, offset: int = pos, length: int = ln) -> Response:
        excl = exclusions.load(exclusions.default_uri(root(c)))
        return respond(record_uri(c, filename), offset, length, True, True, {}, excl.match)

    return router
