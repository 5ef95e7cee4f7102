"""Errors of the serving layer: the HTTP service maps them to 4xx answers."""

from __future__ import annotations


class ServeError(Exception):
    """Base of every error the serving layer raises on purpose."""


class QueryError(ServeError, ValueError):
    """A request that cannot be answered as asked: bad query, unknown day or language, range too wide."""


class NotFound(ServeError, LookupError):
    """Something named in a request does not exist."""
