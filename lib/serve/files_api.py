"""HTTP routes of the slice API (FastAPI): the filtered manifest, ranged downloads, the metadata export.

    GET  /files?day=YYYY-MM-DD[&to=][&dc=][&lang=][&tld=][&part=]   JSON manifest
    GET  /download/{dc}/{path}                                      the file (Range, HEAD)
    GET  /metadata?day=..[&to=][&dc=][&lang=][&tld=][&host=][&domain=]  Parquet stream

Filters are repeatable or comma-separated. Errors are JSON ``{"error": "..."}`` with a 4xx status:
the app (``lib.serve.app``) answers each serving error with its status (QueryError 400, NotFound 404).
"""

from __future__ import annotations

import re

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import Response, StreamingResponse

from lib.serve import export
from lib.serve.errors import QueryError
from lib.serve.http_errors import install_error_handlers
from lib.serve.published import SliceStore

_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


class RangeNotSatisfiable(QueryError):
    """A Range header past the end of the file (416)."""

    status = 416

    def __init__(self, message: str, size: int):
        super().__init__(message)
        self.size = size

    def headers(self) -> dict[str, str]:
        return {"Content-Range": f"bytes */{self.size}", "Accept-Ranges": "bytes"}


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """``[start, end)`` of a single ``bytes=a-b``, ``a-`` or ``-n`` range; None for no header (or
    a unit other than bytes, which RFC 9110 says to ignore). QueryError for a malformed or
    multi-range header, RangeNotSatisfiable for one that starts past the end."""
    if not header:
        return None
    header = header.strip()
    if not header.lower().startswith("bytes="):
        return None
    m = _RANGE_RE.match(header.replace(" ", ""))
    if not m or (not m[1] and not m[2]):
        raise QueryError(f"malformed or multi-part Range header {header!r}: one 'bytes=a-b', 'a-' or '-n'")
    if not m[1]:  # suffix: the last n bytes
        n = int(m[2])
        if n == 0 or size == 0:
            raise RangeNotSatisfiable(f"Range {header!r} selects no byte of a {size}-byte file", size)
        return max(0, size - n), size
    start = int(m[1])
    end = int(m[2]) + 1 if m[2] else size
    if m[2] and end <= start:
        raise QueryError(f"malformed Range {header!r}: last byte before first")
    if start >= size:
        raise RangeNotSatisfiable(f"Range {header!r} starts past the end of a {size}-byte file", size)
    return start, min(end, size)


def files_router(store: SliceStore) -> APIRouter:
    """The slice API's routes over ``store``."""
    router = APIRouter(tags=["files"])

    @router.get("/files", summary="Manifest of the published files matching the filters")
    def files(day: str = Query(..., description="first day, YYYY-MM-DD"),
              to: str | None = Query(None, description="last day (inclusive), YYYY-MM-DD"),
              dc: str | None = Query(None, description="data center"),
              lang: list[str] | None = Query(None, description="ISO 639-3 languages (repeat or comma-separate)"),
              tld: list[str] | None = Query(None, description="TLD groups (folder names: de, uk, other, ...)"),
              part: list[str] | None = Query(None, description="ciff, metadata, graph, preprocessed, catalogue")) -> dict:
        entries = store.list_files(day, to, dc=dc, langs=lang, tlds=tld, parts=part)
        return {"files": [e.to_json() for e in entries], "total_bytes": sum(e.size for e in entries),
                "count": len(entries), "days": sorted({e.day for e in entries})}

    # GET and HEAD as two routes over one function, so each gets its own OpenAPI operation id
    @router.head("/download/{dc}/{path:path}", summary="Size, sha256 and ETag of one published file",
                 operation_id="download_head")
    @router.get("/download/{dc}/{path:path}", summary="One published file; honours a single Range",
                operation_id="download")
    def download(dc: str, path: str, request: Request) -> Response:
        entry = store.resolve(dc, path)
        etag = f'"{entry.sha256}"'
        headers = {"Accept-Ranges": "bytes", "ETag": etag, "X-Sha256": entry.sha256}
        rng = parse_range(request.headers.get("range"), entry.size)  # RangeNotSatisfiable: 416
        if_range = request.headers.get("if-range")
        if rng is not None and if_range and if_range.strip() != etag:
            rng = None  # the file changed since the client's partial copy: send it whole
        start, end, status = (0, entry.size, 200) if rng is None else (rng[0], rng[1], 206)
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{entry.size}"
        headers["Content-Length"] = str(end - start)
        media = "application/octet-stream"
        if request.method == "HEAD":
            return Response(status_code=status, headers=headers, media_type=media)
        return StreamingResponse(store.read(entry, start, end), status_code=status, headers=headers, media_type=media)

    @router.get("/metadata", summary="Rows of the matching metadata, as a Parquet stream")
    def metadata(day: str = Query(..., description="first day, YYYY-MM-DD"),
                 to: str | None = Query(None), dc: str | None = Query(None),
                 lang: list[str] | None = Query(None), tld: list[str] | None = Query(None),
                 host: list[str] | None = Query(None, description="exact host names"),
                 domain: list[str] | None = Query(None, description="domain suffix: the domain and its subdomains")
                 ) -> StreamingResponse:
        body = export.export(store, day, to, dc=dc, langs=lang, tlds=tld, hosts=host, domains=domain)
        name = f"metadata-{day}" + (f"_{to}" if to else "") + ".parquet"
        return StreamingResponse(body, media_type=export.MEDIA_TYPE,
                                 headers={"Content-Disposition": f'attachment; filename="{name}"'})

    return router


def create_app(store: SliceStore) -> FastAPI:
    """A FastAPI app with only the slice API (tests, and a service without search)."""
    app = FastAPI(title="Daily index slices: files")
    install_error_handlers(app)
    app.include_router(files_router(store))
    return app
