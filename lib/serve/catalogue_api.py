"""The catalogue's read-only queries (``lib.catalogue.query``) as a FastAPI router.

    GET /catalogue/days                          completed days
    GET /catalogue/captures?url=URL              captures of a URL with duplicate markers
    GET /catalogue/digest/{digest}               captures with that payload digest, all days
    GET /catalogue/search?prefix=P&contains=S    URLs of the URL database (&limit=N)
    GET /catalogue/files?day=YYYY-MM-DD          archive files of a day and their record counts
    GET /catalogue/records?file=NAME[&day=D]     records of one archive file
    GET /catalogue/stats?day=YYYY-MM-DD          per-day statistics
    GET /catalogue/inlinks?url=URL&window=N      links pointing to a URL over a window (the link database)
    GET /catalogue/path?from=A&to=B&window=N     shortest path of followed links over a window (&max_hops, &timeout,
                                                 &level=host: between hosts)

Every endpoint takes ``dc=`` to pick a data center's root (default: the first root). Answers are
JSON with dates as ISO 8601; bad arguments give 400, unknown days 404, both as ``{"error": ...}``.
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import APIRouter, Query
from fastapi.responses import Response

from lib.catalogue import query
from lib.catalogue.query import to_json
from lib.links import inlinks as links
from lib.links import paths
from lib.links.urls import BadUrl
from lib.serve.errors import NotFound, QueryError


def _call(fn: Callable[[], Any]) -> Response:
    """Run a catalogue query; its errors become the serving layer's (400/404)."""
    try:
        result = fn()
    except (query.NotFound, links.NoLinks, paths.NoRoute) as e:
        raise NotFound(str(e)) from None
    except (query.QueryError, links.BadInput, BadUrl) as e:
        raise QueryError(str(e)) from None
    return Response(to_json(result), media_type="application/json")


def catalogue_router(roots: dict[str, str]) -> APIRouter:
    """Router over the catalogues of ``roots`` (data center -> bucket root)."""
    r = APIRouter(prefix="/catalogue", tags=["catalogue"])
    default = next(iter(roots))

    def root_of(dc: str | None) -> str:
        if dc is None:
            return roots[default]
        if dc not in roots:
            raise NotFound(f"unknown data center {dc!r}; known: {', '.join(roots)}")
        return roots[dc]

    def required(name: str, v: str | None) -> str:
        if not v:
            raise QueryError(f"missing query parameter {name!r}")
        return v

    @r.get("/days", summary="Completed days (preprocess folder with _SUCCESS)")
    def days(dc: str | None = None) -> Response:
        return _call(lambda: [d.isoformat() for d in query.list_days(root_of(dc))])

    @r.get("/captures", summary="Captures of a URL with duplicate markers")
    def captures(url: str | None = None, dc: str | None = None) -> Response:
        return _call(lambda: query.captures(root_of(dc), required("url", url)))

    @r.get("/digest/{digest}", summary="Captures with a payload digest (sha1:BASE32, base32 or hex SHA-1)")
    def digest(digest: str, dc: str | None = None) -> Response:
        return _call(lambda: query.digest(root_of(dc), digest))

    @r.get("/search", summary="URL-prefix / substring search in the URL database")
    def search(
        prefix: str | None = None,
        contains: str | None = None,
        limit: int = Query(100, ge=1, le=100_000),
        dc: str | None = None,
    ) -> Response:
        return _call(lambda: query.search(root_of(dc), prefix, contains, limit))

    @r.get("/files", summary="Archive files of a day and their record counts")
    def files(day: str | None = None, dc: str | None = None) -> Response:
        return _call(lambda: query.files(root_of(dc), required("day", day)))

    @r.get("/records", summary="Records of one archive file")
    def records(file: str | None = None, day: str | None = None, dc: str | None = None) -> Response:
        return _call(lambda: query.records(root_of(dc), required("file", file), day))

    @r.get("/stats", summary="Statistics of a day")
    def stats(day: str | None = None, dc: str | None = None) -> Response:
        return _call(lambda: query.stats(root_of(dc), required("day", day)))

    @r.get("/inlinks", summary="Links pointing to a URL over a window of days, with first and last seen")
    def inlinks(
        url: str | None = None,
        window: str | None = None,
        until: str | None = None,
        limit: int = Query(links.MAX_ROWS, ge=1, le=100_000),
        dc: str | None = None,
    ) -> Response:
        return _call(lambda: links.request(query.local_root(root_of(dc)), required("url", url), window, until, limit))

    @r.get("/path", summary="Shortest path of followed links from one URL to another over a window of days")
    def path(
        source: str | None = Query(None, alias="from"),
        target: str | None = Query(None, alias="to"),
        window: str | None = None,
        until: str | None = None,
        max_hops: int = paths.DEFAULT_HOPS,
        timeout: float = paths.DEFAULT_TIMEOUT,
        level: str = "url",
        dc: str | None = None,
    ) -> Response:
        return _call(
            lambda: paths.request(
                query.local_root(root_of(dc)), source, target, window, until, max_hops, timeout, level
            )
        )

    return r
