"""The HTTP service (FastAPI): search over a day or a date range, OpenSearch, index info, the files
API, the catalogue queries and a plain-HTML search page, over published roots.

    GET /search?q=…&day=YYYY-MM-DD[&to=…][&lang=…][&k=10][&k1=][&b=]   JSON hits (MOSAIC/ChatNoir-like)
    GET /searchxml?…same…                                            OpenSearch 1.1 Atom results
    GET /opensearch.xml                                              OpenSearch 1.1 description
    GET /index-info                                                  days, languages, shards, documents
    GET /files, /download/{dc}/{path}, /metadata                     the files API (``files_api``)
    GET /capture/{record_id}, /capture?file=&offset=&length=          one capture's bytes (``capture_api``)
    GET /catalogue/…                                                 the catalogue (``catalogue_api``)
    GET /                                                            the search page

Every error is a 4xx with ``{"error": "..."}``; the OpenAPI description is at /openapi.json, /docs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import threading
from importlib import resources
from typing import Any, Callable

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from lib.catalogue.query import to_json
from lib.serve import opensearch
from lib.serve.capture_api import capture_path, capture_router
from lib.serve.catalogue_api import catalogue_router
from lib.serve.engine import Engine
from lib.serve.errors import NotFound, QueryError, ServeError
from lib.serve.files_api import files_router, install_error_handlers
from lib.serve.slices import SliceStore

MAX_QUERY_CHARS = 512
MAX_RANGE_DAYS = 31
MAX_K = 1000
# words that are query syntax, not terms: a query made only of these (and punctuation) has nothing to look up
OPERATORS = {"and", "or", "not", "near"}
_WORD = re.compile(r"\w+", re.UNICODE)


def check_query(q: str | None, max_chars: int = MAX_QUERY_CHARS) -> str:
    """The query text, or :class:`QueryError` for an empty, over-long or operator-only query."""
    text = (q or "").strip()
    if not text:
        raise QueryError("empty query: give q=some words")
    if len(text) > max_chars:
        raise QueryError(f"query too long: {len(text)} characters, at most {max_chars}")
    words = [w for w in _WORD.findall(text) if w.lower() not in OPERATORS and w.strip("_")]
    if not words:
        raise QueryError(f"query {text!r} has only operators or punctuation, no word to search for")
    return text


def parse_day(text: str, name: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except (TypeError, ValueError):
        raise QueryError(f"{name} must be a date YYYY-MM-DD, got {text!r}") from None


def parse_langs(values: list[str] | None) -> list[str] | None:
    """``lang=eng&lang=deu`` or ``lang=eng,deu`` -> ``["eng", "deu"]``; None when not given."""
    out = [x.strip() for v in values or [] for x in v.split(",") if x.strip()]
    return out or None


def hit_dict(hit: Any) -> dict[str, Any]:
    """A hit as JSON-ready fields, with MOSAIC's names as aliases (id, textSnippet, warcDate)."""
    d = dataclasses.asdict(hit) if dataclasses.is_dataclass(hit) else dict(hit._asdict() if hasattr(hit, "_asdict") else vars(hit))
    out: dict[str, Any] = {}
    for key, v in d.items():
        if isinstance(v, (dt.datetime, dt.date)):
            v = v.isoformat()
        elif hasattr(v, "item"):  # numpy scalars
            v = v.item()
        out[key] = v
    out["score"] = float(out["score"])
    out.setdefault("id", out.get("record_id"))
    out["textSnippet"] = out.get("snippet")
    out["warcDate"] = out.get("warc_date")
    if out.get("record_id"):  # the capture behind the hit: the archive member, and the page alone
        out["capture_url"] = capture_path(out["record_id"])
        out["content_url"] = out["capture_url"] + "?contentonly=true"
    return out


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _static(name: str) -> str:
    return resources.files("lib.serve").joinpath("static", name).read_text(encoding="utf-8")


class Searcher:
    """The engine, built on first use (a root without an index still serves files and the catalogue)."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self._factory = factory
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    def get(self) -> Engine:
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    self._engine = self._factory()
        return self._engine


def create_app(roots: dict[str, str], cache_dir: str | None = None, *, max_range_days: int = MAX_RANGE_DAYS,
               max_query_chars: int = MAX_QUERY_CHARS, warm: bool = False, engine: Engine | None = None,
               store: SliceStore | None = None, replay_url: str | None = None,
               archive_roots: list[str] | None = None) -> FastAPI:
    """The service over ``roots`` (data center -> local path or ``s3://`` root in the published layout).

    ``warm`` builds the search engine at start-up instead of on the first search; ``replay_url`` (a pywb
    collection URL such as ``http://localhost:8080/day``) adds a replay link to every hit on the page;
    ``archive_roots`` (local folders or ``s3://`` prefixes) are where ``/capture?file=`` may read.
    """
    if not roots:
        raise ValueError("no root: give at least one published root")
    searcher = Searcher(lambda: engine if engine is not None else Engine(roots, cache_dir=cache_dir))
    app = FastAPI(title="daily-index-slice", version="1",
                  description="Search and download published daily index slices: exact global BM25 over every "
                              "shard of a day or a date range, filtered file manifests and ranged downloads, "
                              "the crawl catalogue. Errors are 4xx with {\"error\": \"...\"}.")
    app.state.searcher = searcher
    install_error_handlers(app)  # QueryError 400, NotFound 404, a Range past the end 416

    @app.exception_handler(NotFound)
    async def _not_found(request: Request, exc: NotFound) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(ServeError)
    async def _serve_error(request: Request, exc: ServeError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x not in ("query", "path"))
            parts.append(f"{where}: {e.get('msg')}" + (f" (got {e['input']!r})" if "input" in e else ""))
        return _error(400, "; ".join(parts) or "bad request")

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        msg = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and msg == "Not Found":
            msg = f"unknown path {request.url.path!r}"
        return JSONResponse({"error": msg}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    if warm:
        @app.on_event("startup")
        def _warm() -> None:
            searcher.get()

    def run_search(q: str | None, day: str | None, to: str | None, lang: list[str] | None, k: int,
                   k1: float | None, b: float | None):
        text = check_query(q, max_query_chars)
        eng = searcher.get()
        known = eng.days()
        if not day:
            if not known:
                raise NotFound("no searchable day is published under the roots")
            day = known[-1].isoformat() if isinstance(known[-1], dt.date) else str(known[-1])
        d0 = parse_day(day, "day")
        d1 = parse_day(to, "to") if to else d0
        if d1 < d0:
            raise QueryError(f"to={d1} is before day={d0}")
        if (d1 - d0).days + 1 > max_range_days:
            raise QueryError(f"range {d0}..{d1} is {(d1 - d0).days + 1} days; at most {max_range_days}")
        have = {x if isinstance(x, dt.date) else dt.date.fromisoformat(str(x)) for x in known}
        in_range = sorted(x for x in have if d0 <= x <= d1)
        if not in_range:
            raise NotFound(f"no published index for {d0}" + (f"..{d1}" if d1 != d0 else "")
                           + f"; days: {', '.join(str(x) for x in sorted(have)) or 'none'}")
        langs = parse_langs(lang)
        if langs:
            avail = set(eng.languages(d0, d1))
            unknown = [x for x in langs if x not in avail]
            if unknown:
                raise QueryError(f"unknown language {', '.join(unknown)} for {d0}"
                                 + (f"..{d1}" if d1 != d0 else "") + f"; available: {', '.join(sorted(avail))}")
        kw: dict[str, Any] = {}
        if k1 is not None:
            kw["k1"] = k1
        if b is not None:
            kw["b"] = b
        res = eng.search(text, d0, d1, langs=langs, k=k, **kw)
        return text, d0, d1, langs, res

    SearchParams = dict(
        q=Query(None, description="query words (BM25, OR of the terms)"),
        day=Query(None, description="first day, YYYY-MM-DD (default: the newest published day)"),
        to=Query(None, description="last day of the range, YYYY-MM-DD (default: day)"),
        lang=Query(None, description="languages (ISO 639-3 as in the index: eng, deu, ...); repeat or comma-separate"),
        k=Query(10, ge=1, le=MAX_K, description="number of hits"),
        k1=Query(None, ge=0.0, le=10.0, description="BM25 k1 (default 0.9)"),
        b=Query(None, ge=0.0, le=1.0, description="BM25 b (default 0.4)"),
    )

    @app.get("/search", tags=["search"], summary="Search a day or a date range (exact global BM25)")
    def search(q: str | None = SearchParams["q"], day: str | None = SearchParams["day"],
               to: str | None = SearchParams["to"], lang: list[str] | None = SearchParams["lang"],
               k: int = SearchParams["k"], k1: float | None = SearchParams["k1"],
               b: float | None = SearchParams["b"]) -> dict:
        text, d0, d1, langs, res = run_search(q, day, to, lang, k, k1, b)
        return {"meta": {"query": text, "query_time_ms": res.query_time_ms, "total_results": res.total_results,
                         "excluded": res.excluded, "warnings": res.warnings,
                         "days": [str(x) for x in res.days], "shards": res.shards, "languages": langs, "k": k},
                "results": [hit_dict(h) for h in res.hits]}

    @app.get("/searchxml", tags=["search"], summary="Search, answered as OpenSearch 1.1 Atom",
             response_class=Response, responses={200: {"content": {"application/atom+xml": {}}}})
    def searchxml(request: Request, q: str | None = SearchParams["q"], day: str | None = SearchParams["day"],
                  to: str | None = SearchParams["to"], lang: list[str] | None = SearchParams["lang"],
                  k: int = SearchParams["k"], k1: float | None = SearchParams["k1"],
                  b: float | None = SearchParams["b"]) -> Response:
        text, d0, d1, langs, res = run_search(q, day, to, lang, k, k1, b)
        body = opensearch.atom(str(request.base_url).rstrip("/"), str(request.url), text, d0, d1, langs, k,
                               res.total_results, [hit_dict(h) for h in res.hits])
        return Response(body, media_type="application/atom+xml; charset=utf-8")

    @app.get("/opensearch.xml", tags=["search"], summary="OpenSearch 1.1 description document",
             response_class=Response, responses={200: {"content": {"application/opensearchdescription+xml": {}}}})
    def opensearch_description(request: Request) -> Response:
        body = opensearch.description(str(request.base_url).rstrip("/"))
        return Response(body, media_type="application/opensearchdescription+xml; charset=utf-8")

    @app.get("/index-info", tags=["search"], summary="Days, languages, shards and documents of the index")
    def index_info() -> Response:
        info = searcher.get().index_info()
        return Response(to_json(info), media_type="application/json")

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        html = _static("search.html")
        if replay_url:
            html = html.replace('data-replay=""', f'data-replay="{_attr(replay_url)}"', 1)
        return HTMLResponse(html)

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in ("search.js", "search.css"):
            raise NotFound(f"no static file {name!r}")
        kind = "text/javascript" if name.endswith(".js") else "text/css"
        return Response(_static(name), media_type=f"{kind}; charset=utf-8")

    app.include_router(files_router(store if store is not None else SliceStore(roots, cache_dir=cache_dir)))
    app.include_router(capture_router(lambda rid: searcher.get().find_record(rid), list(archive_roots or []),
                                      lambda url: searcher.get().exclusions.match(url)))
    app.include_router(catalogue_router({dc: r for dc, r in roots.items()}))
    return app


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def roots_from_args(values: list[str]) -> dict[str, str]:
    """``--root ROOT`` and ``--root DC=ROOT`` options -> data center -> root (the first without a name is "default")."""
    out: dict[str, str] = {}
    for v in values:
        dc, sep, root = v.partition("=")
        if not sep or "/" in dc or dc.startswith("s3:"):
            dc, root = ("default" if "default" not in out else f"dc{len(out)}"), v
        if dc in out:
            raise ValueError(f"data center {dc!r} given twice")
        out[dc] = root if root.startswith("s3://") else os.path.abspath(root)
    return out
