"""HTTP route of the update feed: ``ROOT/shared/auxiliary/logs.csv`` for subscribers to poll.

    GET /feed?after=N[&dc=][&limit=]    the updates after seq N (JSON), oldest first
    GET /feed.csv?after=N[&dc=]         the same lines as CSV, with the header

A subscriber keeps the ``last`` seq of its previous answer and asks again with ``after=last``:
it gets each update once, in the order written (:mod:`lib.store.update_log`). ``dc`` picks the
data center's root (default: the first one served).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from lib.serve.errors import NotFound
from lib.store import update_log

MAX_LIMIT = 10000


def feed_router(roots: dict[str, str]) -> APIRouter:
    """The ``/feed`` routes over ``roots`` (data center -> root)."""
    router = APIRouter(tags=["feed"])

    def _root(dc: str | None) -> tuple[str, str]:
        if not roots:
            raise NotFound("no root is served")
        name = dc or next(iter(roots))
        if name not in roots:
            raise NotFound(f"no data center {name!r}; served: {', '.join(roots)}")
        return name, roots[name]

    @router.get("/feed", summary="the updates of a root after seq N (days, sub-indices, models, plugins, purges)")
    def feed(
        after: int = Query(0, ge=0, description="the last seq the subscriber has seen"),
        dc: str | None = Query(None, description="data center (default: the first root)"),
        limit: int = Query(1000, ge=1, le=MAX_LIMIT),
    ) -> dict[str, Any]:
        name, root = _root(dc)
        got = update_log.read(root, after, limit)
        last = got[-1].seq if got else after
        return {"dc": name, "after": after, "last": last, "updates": [u.to_json() for u in got]}

    @router.get("/feed.csv", summary="the same updates as CSV lines", response_class=Response)
    def feed_csv(after: int = Query(0, ge=0), dc: str | None = Query(None)) -> Response:
        _, root = _root(dc)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(update_log.HEADER)
        for u in update_log.read(root, after):
            w.writerow(u.to_json().values())
        return Response(buf.getvalue(), media_type="text/csv; charset=utf-8")

    return router
