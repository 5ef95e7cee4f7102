"""HTTP routes that hand out one capture: the archive member behind a search hit, or its payload.

    GET /capture/{record_id}[?contentonly=true][&decode=false]            by a published page's record id
    GET /capture?file=URI&offset=N&length=N[&contentonly=true][&decode=false]   by archive pointer
    GET /capture/completeness/{record_id}      how complete the page is in time (JSON, lib.catalogue.completeness)

WarcManager's "Download File" and ``contentonly=true``: the member is the record's bytes as stored
(a gzip member, zstd or LZ4 frame, or a plain record: ``application/warc``, a download); with
``contentonly`` the HTTP payload, content-decoded as preprocess decodes it (``decode=false``: as
transferred, the bytes ``WARC-Payload-Digest`` covers), with the page's own Content-Type. Both
are streaming ranged reads (:mod:`lib.extract.capture`) from local or ``s3://`` archives.

A record id is looked up in each root's record store (lib.catalogue.recordstore: linear hashing,
one bucket read) for its day, then in that day's published metadata only, so its pointer comes
from the published index; where the stores do not cover every served day (a root catalogued
before them, a store that fails its checksum), in every served day, newest first
(:func:`record_finder`). A pointer given by hand must lie below one of the service's archive
roots (``--archives``): without any, the pointer form is refused (403), so the service never
reads a file nobody published. A capture whose URL is on the exclusion list is withheld (451
Unavailable For Legal Reasons), by record id or by pointer.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from typing import Any, Callable
from urllib.parse import quote

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, StreamingResponse

from lib.catalogue import completeness, recordstore
from lib.extract.capture import CaptureError, open_capture
from lib.store import locations, storage

#: HTTP status of each CaptureError reason
STATUS = {
    "missing-file": 404,
    "escapes-root": 403,
    "bad-range": 400,
    "past-eof": 400,
    "not-archive": 400,
    "not-record": 400,
    "too-large": 413,
    "read-error": 502,
}


def record_finder(roots: dict[str, str], engine: Callable[[], Any]) -> Callable[[str], dict | None]:
    """``lookup(record_id)`` for :func:`capture_router`: the record stores of ``roots`` give the
    day, ``engine().find_record(rid, day)`` the published page of that day; a scan of every served
    day only when the stores do not cover them all."""

    def find(record_id: str) -> dict | None:
        page = _find(record_id)
        root = roots.get(page["dc"]) if page else None
        if page and root and storage.httpread.is_http(root) and page.get("warc_file"):
            page = dict(page, warc_file=on_swap_root(page["warc_file"], root))
        return page

    def _find(record_id: str) -> dict | None:
        eng = engine()
        served = {d.isoformat() for d in eng.days()}
        covered: set[str] = set()
        whole = True
        for root in roots.values():
            store = os.path.join(root, recordstore.FOLDER)
            if storage.is_s3(root) or storage.httpread.is_http(root):  # no record store read remotely: scan
                whole = False
                continue
            try:
                hit = recordstore.get(store, record_id)
                covered |= recordstore.days(store, served)
            except recordstore.Corrupt:  # a torn store: the scan answers until it is rebuilt
                whole = False
                continue
            if hit and hit["day"] in served:
                page = eng.find_record(record_id, dt.date.fromisoformat(hit["day"]))
                if page is not None:
                    return page
        if whole and served <= covered:
            return None
        return eng.find_record(record_id)

    return find


_WARC_DAY = re.compile(r"(?:^|/)(warc/\d{4}-\d{2}/\d{2}/[^?#]+)$")


def on_swap_root(warc_file: str, root: str) -> str:
    """A page's archive pointer as read from a SWAP root: the pointer names the file where the day
    was preprocessed (``.../warc/YYYY-MM/DD/NAME``); the day's archives are published with it, so
    the same ``warc/...`` path below the root is the copy to read. Any other pointer is kept."""
    m = _WARC_DAY.search(warc_file)
    return f"{root.rstrip('/')}/{m[1]}" if m else warc_file


def completeness_finder(roots: dict[str, str]) -> Callable[[str], dict | None]:
    """``answer(record_id)``: how complete the published page ``record_id`` is in time
    (lib.catalogue.completeness), from the first local root whose record store has it; the
    data center is named in the answer."""

    def answer(record_id: str) -> dict | None:
        for dc, root in roots.items():
            if storage.is_s3(root) or storage.httpread.is_http(root):
                continue
            try:
                got = completeness.for_record(storage.local_path(root), record_id)
            except recordstore.Corrupt:  # a torn store: the next root, then 404 until it is rebuilt
                continue
            if got is not None:
                return dict(got, dc=dc)
        return None

    return answer


def capture_path(record_id: str) -> str:
    """The service path of a record's capture (the hits' ``capture_url``)."""
    return "/capture/" + quote(record_id, safe=":@")


def within_roots(file: str, roots: list[str]) -> bool:
    """Whether ``file`` (an absolute path, ``file://``, ``s3://`` or ``http(s)://`` URI) lies below one of
    ``roots``."""
    uri = locations.normalize(file)
    if storage.httpread.is_http(uri):  # a SWAP server's /get/ URL below an http root
        if {"..", "."} & set(uri.split("?")[0].split("/")[3:]) or "?" in uri or "#" in uri:
            return False
        return any(uri.startswith(r.rstrip("/") + "/") for r in roots if storage.httpread.is_http(r))
    if storage.is_s3(uri):
        if {"..", "."} & set(uri.split("/")[3:]):
            return False
        return any(storage.is_s3(r) and uri.startswith(locations.normalize(r).rstrip("/") + "/") for r in roots)
    path = os.path.realpath(storage.local_path(uri))
    return any(
        not storage.is_s3(r)
        and not storage.httpread.is_http(r)
        and path.startswith(os.path.realpath(storage.local_path(r)).rstrip("/") + "/")
        for r in roots
    )


def error_response(e: CaptureError) -> JSONResponse:
    """A capture that cannot be read, as its JSON answer (the reason's status)."""
    return JSONResponse(
        {"error": str(e), "reason": e.reason, "file": e.file, "offset": e.offset}, status_code=STATUS.get(e.reason, 400)
    )


def withheld(url: str | None) -> JSONResponse:
    """451: the capture's URL is on the exclusion list (a take-down)."""
    return JSONResponse(
        {"error": "this capture is withheld: its URL is on the exclusion list", "reason": "excluded", "url": url},
        status_code=451,
    )


def respond(
    file: str,
    offset: int,
    length: int,
    content_only: bool,
    decode: bool,
    extra: dict[str, str],
    excluded: Callable[[str | None], bool],
) -> StreamingResponse | JSONResponse:
    """The capture at ``file``/``offset``/``length`` streamed (the member, or its payload with
    ``content_only``), or the JSON answer of why not (unreadable, withheld)."""
    try:
        cap = open_capture(file, offset, length, content_only=content_only, decode=decode)
    except CaptureError as e:
        return error_response(e)
    if excluded(cap.url or cap.warc_headers.get("warc-target-uri")):
        cap.close()
        return withheld(cap.url)
    headers = {
        "X-Archive-File": quote(cap.file, safe=":/"),
        "X-Archive-Offset": str(offset),
        "X-Archive-Length": str(length),
        **extra,
    }
    if cap.size is not None:
        headers["Content-Length"] = str(cap.size)
    if content_only:
        if cap.status is not None:
            headers["X-Http-Status"] = str(cap.status)
        digest = cap.warc_headers.get("warc-payload-digest")
        if digest:
            headers["X-Payload-Digest"] = digest
        headers["Content-Disposition"] = "inline"
    else:
        stem = os.path.basename(cap.file.rstrip("/")) or "capture"
        headers["Content-Disposition"] = f'attachment; filename="{quote(stem)}-{offset}.record"'
    return StreamingResponse(iter(cap), media_type=cap.content_type, headers=headers)


def capture_router(
    lookup: Callable[[str], dict | None],
    archive_roots: list[str],
    excluded: Callable[[str | None], bool] = lambda url: False,
    serve_noarchive: bool = False,
    completeness: Callable[[str], dict | None] | None = None,
) -> APIRouter:
    """The capture routes; ``lookup(record_id)`` finds a published page's pointer (or None);
    ``completeness(record_id)`` answers ``/capture/completeness/{record_id}`` (:func:`completeness_finder`);
    a capture whose URL ``excluded`` matches is withheld (451), whichever way it is asked for;
    a published page that says noarchive is not handed out by its record id unless
    ``serve_noarchive`` (an archive's own use)."""
    router = APIRouter(tags=["captures"])

    @router.get("/capture/completeness/{record_id:path}", summary="How complete a page is in time")
    def page_completeness(record_id: str) -> JSONResponse:
        # before /capture/{record_id:path}, which would take "completeness/..." as a record id
        answer = completeness(record_id) if completeness is not None else None
        if answer is None:
            return JSONResponse({"error": f"no published page has record id {record_id!r}"}, status_code=404)
        if excluded(answer.get("url")):
            return withheld(answer.get("url"))
        return JSONResponse(answer)

    only = Query(False, description="the HTTP payload instead of the archive member (WarcManager's contentonly)")
    dec = Query(True, description="with contentonly: undo Content-Encoding (false: the payload as transferred)")

    @router.get(
        "/capture/{record_id:path}",
        summary="One published page's capture, by its record id",
        response_class=StreamingResponse,
    )
    def by_record(record_id: str, contentonly: bool = only, decode: bool = dec):
        page = lookup(record_id)
        if page is None:
            return JSONResponse({"error": f"no published page has record id {record_id!r}"}, status_code=404)
        if not page.get("warc_file") or page.get("warc_offset") is None or not page.get("warc_length"):
            return JSONResponse(
                {"error": f"record {record_id!r} has no archive pointer in its metadata"}, status_code=404
            )
        if page.get("excluded"):
            return withheld(page.get("url"))
        if "noarchive" in (page.get("robots") or "") and not serve_noarchive:
            return JSONResponse(
                {
                    "error": "the page says noarchive: its capture is not handed out by this service",
                    "reason": "noarchive",
                    "url": page.get("url"),
                },
                status_code=403,
            )
        extra = {"X-Record-Id": quote(record_id, safe=":@<>"), "X-Day": page["day"], "X-Data-Center": page["dc"]}
        return respond(
            page["warc_file"], int(page["warc_offset"]), int(page["warc_length"]), contentonly, decode, extra, excluded
        )

    @router.get("/capture", summary="One capture by archive file, offset and length", response_class=StreamingResponse)
    def by_pointer(
        file: str = Query(..., description="archive URI (absolute path, file:// or s3://) below an archive root"),
        offset: int = Query(..., ge=0),
        length: int = Query(..., ge=1),
        contentonly: bool = only,
        decode: bool = dec,
    ):
        if not archive_roots:
            return JSONResponse(
                {"error": "captures by file are not enabled: start the service with --archives ROOT"}, status_code=403
            )
        if not within_roots(file, archive_roots):
            return JSONResponse(
                {"error": f"{file} is not below an archive root of this service ({', '.join(archive_roots)})"},
                status_code=403,
            )
        return respond(file, offset, length, contentonly, decode, {}, excluded)

    return router
