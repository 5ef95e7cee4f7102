"""Errors of the serving package: the HTTP layer answers each with its ``status`` (QueryError 400, NotFound 404)."""

from __future__ import annotations

from lib.errors import DailysliceError


class ServeError(DailysliceError):
    """Base class of the errors the serving package raises on purpose; ``status`` is the HTTP answer's."""

    status = 400

    def headers(self) -> dict[str, str] | None:
        """Extra HTTP headers of the answer (None: none)."""
        return None


class QueryError(ServeError, ValueError):
    """A request the service refuses as malformed or out of bounds (bad request: 400)."""


class NotFound(ServeError, LookupError):
    """A day, data center, file or shard that is not published (404)."""

    status = 404


class DayNotPublished(NotFound, QueryError):
    """A search over days none of which has a published index: 404 over HTTP, and a QueryError to the
    engine's callers (the search they asked for cannot be answered)."""
