"""Errors of the serving package: the HTTP layer maps QueryError to 400 and NotFound to 404."""

from __future__ import annotations

from lib.core.errors import DailysliceError


class ServeError(DailysliceError):
    """Base class of the errors the serving package raises on purpose."""


class QueryError(ServeError, ValueError):
    """A request the service refuses as malformed or out of bounds (bad request: 400)."""


class NotFound(ServeError, LookupError):
    """A day, data center, file or shard that is not published (404)."""
