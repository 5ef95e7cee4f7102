"""The HTTP service (FastAPI): search over a day or a date range, OpenSearch, index info, the files
API, the catalogue queries and a plain-HTML search page, over published roots.

    GET /search?q=…&day=YYYY-MM-DD[&to=…][&lang=…][&k=10][&k1=][&b=]   JSON hits (MOSAIC/ChatNoir-like)
        [&prior=pagerank|harmonic&prior_weight=1&prior_level=host&prior_window=90]   BM25 + host rank (``prior``)
    GET /searchxml?…same…                                            OpenSearch 1.1 Atom results
    GET /opensearch.xml                                              OpenSearch 1.1 description
    GET /index-info                                                  days, languages, shards, documents
    GET /files, /download/{dc}/{path}, /metadata                     the files API (``files_api``)
    GET /capture/{record_id}, /capture?file=&offset=&length=          one capture's bytes (``capture_api``)
    GET /catalogue/…                                                 the catalogue (``catalogue_api``)
    GET /cdx/{collection}?url=…, /archive/{collection}/{path}         CDX Server API, archive files (``cdx_api``)
    POST /catalogue/files                                            register an archive file (``register_api``)
    GET /collections/{c}/…, /browse/{c}/…                           files, records, URLs, search (``browse_api``)
    GET /public, /public/{dc}/{id}/search, …/files/{path}            on-demand sub-indices (``subindex_api``)
    GET /updates, /updates/{dc}/{id}/files/{path}                    index updates for mirrors (``updates_api``)
    GET /feed?after=N, /feed.csv                                     the root's updates, logs.csv (``feed_api``)
    GET /                                                            the search page

Every error is a 4xx with ``{"error": "..."}``; the OpenAPI description is at /openapi.json, /docs.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import threading
from importlib import resources
from typing import Any, Callable

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, Response

from lib.catalogue.query import to_json
from lib.serve import opensearch
from lib.serve import prior as prior_mod
from lib.serve.browse_api import browse_router
from lib.serve.capture_api import capture_path, capture_router, completeness_finder, record_finder
from lib.serve.catalogue_api import catalogue_router
from lib.serve.cdx_api import cdx_router
from lib.serve.community_api import community_router
from lib.serve.engine import MAX_K, MAX_QUERY_CHARS, MAX_RANGE_DAYS, Engine, check_query
from lib.serve.errors import NotFound
from lib.serve.feed_api import feed_router
from lib.serve.files_api import files_router
from lib.serve.http_errors import install_error_handlers
from lib.serve.published import SliceStore, parse_day, split_values
from lib.serve.register_api import register_router
from lib.serve.subindex_api import subindex_router
from lib.serve.updates_api import updates_router


def hit_dict(hit: Any) -> dict[str, Any]:
    """A hit as JSON-ready fields, with MOSAIC's names as aliases (id, textSnippet, warcDate)."""
    d = (
        dataclasses.asdict(hit)
        if dataclasses.is_dataclass(hit) and not isinstance(hit, type)
        else dict(hit._asdict() if hasattr(hit, "_asdict") else vars(hit))
    )
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


def _static(name: str) -> str:
    return resources.files("lib.serve").joinpath("static", name).read_text(encoding="utf-8")


@dataclasses.dataclass(frozen=True)
class SearchArgs:
    """The query parameters of /search and /searchxml, declared once: the class is their FastAPI
    dependency (``Depends()``), so both endpoints take, check and describe the same parameters."""

    q: str | None = Query(None, description="query words (BM25, OR of the terms)")
    day: str | None = Query(None, description="first day, YYYY-MM-DD (default: the newest published day)")
    to: str | None = Query(None, description="last day of the range, YYYY-MM-DD (default: day)")
    lang: list[str] | None = Query(
        None, description="languages (ISO 639-3 as in the index: eng, deu, ...); repeat or comma-separate"
    )
    k: int = Query(10, ge=1, le=MAX_K, description="number of hits")
    k1: float | None = Query(None, ge=0.0, le=10.0, description="BM25 k1 (default 0.9)")
    b: float | None = Query(None, ge=0.0, le=1.0, description="BM25 b (default 0.4)")
    collapse: bool = Query(
        True, description="fold a day's near-duplicates (dup_cluster) into one hit that counts its copies"
    )
    prior: str | None = Query(
        None,
        description="static prior: none (default: plain BM25), pagerank or harmonic; the score becomes "
        "bm25 + prior_weight * the hit's host rank, log-scaled into [0, 1] (docs/serve.md, Static prior)",
    )
    prior_weight: float | None = Query(
        None, description=f"the most BM25 points the prior can add (default {prior_mod.DEFAULT_WEIGHT:g})"
    )
    prior_level: str | None = Query(None, description="host (default) or domain: whose rank the hit gets")
    prior_window: str | None = Query(
        None, description=f"the web graph's window: days or all (default {prior_mod.DEFAULT_WINDOW})"
    )


#: the media types of the OpenSearch answers: Atom results and the description document
ATOM = "application/atom+xml"
DESCRIPTION = "application/opensearchdescription+xml"


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


def create_app(
    roots: dict[str, str],
    cache_dir: str | None = None,
    *,
    max_range_days: int = MAX_RANGE_DAYS,
    max_query_chars: int = MAX_QUERY_CHARS,
    warm: bool = False,
    engine: Engine | None = None,
    store: SliceStore | None = None,
    replay_url: str | None = None,
    archive_roots: list[str] | None = None,
    serve_noarchive: bool = False,
    write_token: str | None = None,
) -> FastAPI:
    """The service over ``roots`` (data center -> local path or ``s3://`` root in the published layout).

    ``max_range_days`` and ``max_query_chars`` are the limits of the engine built here (a given ``engine``
    keeps its own); ``warm`` builds the search engine at start-up instead of on the first search; ``replay_url`` (a pywb
    collection URL such as ``http://localhost:8080/day``) adds a replay link to every hit on the page;
    ``archive_roots`` (local folders or ``s3://`` prefixes) are where ``/capture?file=`` may read;
    ``serve_noarchive`` hands out the captures of pages that say noarchive too (archive use);
    ``write_token`` enables ``POST /cdx/{collection}`` for clients that send it (none: no writes).
    """
    if not roots:
        raise ValueError("no root: give at least one published root")
    searcher = Searcher(
        lambda: (
            engine
            if engine is not None
            else Engine(roots, cache_dir=cache_dir, max_range_days=max_range_days, max_query_chars=max_query_chars)
        )
    )
    app = FastAPI(
        title="daily-index-slice",
        version="1",
        description="Search and download published daily index slices: exact global BM25 over every "
        "shard of a day or a date range, filtered file manifests and ranged downloads, "
        'the crawl catalogue. Errors are 4xx with {"error": "..."}.',
    )
    app.state.searcher = searcher
    install_error_handlers(app)  # each ServeError its status, a bad parameter 400, an unknown path 404

    if warm:

        @app.on_event("startup")
        def _warm() -> None:
            searcher.get()

    def run_search(args: SearchArgs):
        eng = searcher.get()
        text = check_query(args.q, eng.max_query_chars)  # the engine checks it too: here for the answer's meta.query
        day = args.day
        if not day:
            known = eng.days()
            if not known:
                raise NotFound("no searchable day is published under the roots")
            day = known[-1].isoformat()
        d0 = parse_day(day, "day")
        d1 = parse_day(args.to, "to") if args.to else d0
        langs = split_values(args.lang)
        kw: dict[str, Any] = {}
        if args.k1 is not None:
            kw["k1"] = args.k1
        if args.b is not None:
            kw["b"] = args.b
        wanted = prior_mod.parse(args.prior, args.prior_weight, args.prior_level, args.prior_window)
        if wanted is not None:  # only then: a search without it is called exactly as before
            kw["prior"] = wanted
        res = eng.search(
            text, d0, d1, langs=langs, k=args.k, collapse=args.collapse, **kw
        )  # range, languages, k, k1, b: the engine's rules
        return text, d0, d1, langs, res

    @app.get("/search", tags=["search"], summary="Search a day or a date range (exact global BM25)")
    def search(args: SearchArgs = Depends()) -> dict:
        text, d0, d1, langs, res = run_search(args)
        results = [hit_dict(h) for h in res.hits]
        meta_prior = {}
        if res.prior is not None:  # the prior's fields appear only when one was asked for
            meta_prior = {"prior": res.prior}
            for r, (bm25, value) in zip(results, res.parts or []):
                r["bm25"], r["prior"] = bm25, value
        return {
            "meta": {
                "query": text,
                "query_time_ms": res.query_time_ms,
                "total_results": res.total_results,
                "excluded": res.excluded,
                "warnings": res.warnings,
                "days": [str(x) for x in res.days],
                "shards": res.shards,
                "languages": langs,
                "k": args.k,
                **meta_prior,
            },
            "results": results,
        }

    @app.get("/searchxml", **_xml_route("Search, answered as OpenSearch 1.1 Atom", ATOM))
    def searchxml(request: Request, args: SearchArgs = Depends()) -> Response:
        text, d0, d1, langs, res = run_search(args)
        body = opensearch.atom(
            str(request.base_url).rstrip("/"),
            str(request.url),
            text,
            d0,
            d1,
            langs,
            args.k,
            res.total_results,
            [hit_dict(h) for h in res.hits],
        )
        return Response(body, media_type=f"{ATOM}; charset=utf-8")

    @app.get("/opensearch.xml", **_xml_route("OpenSearch 1.1 description document", DESCRIPTION))
    def opensearch_description(request: Request) -> Response:
        body = opensearch.description(str(request.base_url).rstrip("/"))
        return Response(body, media_type=f"{DESCRIPTION}; charset=utf-8")

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
    app.include_router(
        capture_router(
            record_finder(roots, searcher.get),
            list(archive_roots or []),
            lambda url: searcher.get().exclusions.match(url),
            serve_noarchive,
            completeness_finder(roots),
        )
    )
    app.include_router(catalogue_router({dc: r for dc, r in roots.items()}))
    app.include_router(cdx_router(dict(roots), write_token))  # a collection per data center's root
    local = {dc: r for dc, r in roots.items() if not r.startswith(("s3://", "http://", "https://"))}
    if local:  # files are registered into a local root's catalogue only
        app.include_router(register_router(local, list(archive_roots or []), write_token))
        app.include_router(browse_router(local, list(archive_roots or [])))
    app.include_router(subindex_router(dict(roots)))
    app.include_router(community_router(dict(roots)))
    app.include_router(updates_router(dict(roots)))
    app.include_router(feed_router(dict(roots)))
    return app


def _xml_route(summary: str, media_type: str) -> dict[str, Any]:
    """The route options of a search endpoint that answers ``media_type`` (OpenSearch XML), not JSON."""
    return {
        "tags": ["search"],
        "summary": summary,
        "response_class": Response,
        "responses": {200: {"content": {media_type: {}}}},
    }


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
        out[dc] = root if root.startswith(("s3://", "http://", "https://")) else os.path.abspath(root)
    return out
