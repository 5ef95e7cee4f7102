"""A link's URLs as the link database keys them: checked, normalised, hashed and partitioned."""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit

from lib.errors import UsageError
from lib.pages.keyspace import partition_of
from lib.pages.weburls import normalize_url


class BadUrl(UsageError, ValueError):
    """A URL that cannot be normalised (no http(s) scheme, no host, a malformed port or address)."""


def checked(url: str) -> str:
    """``url`` normalised (lib.pages.weburls.normalize_url), or :class:`BadUrl` saying why not: the
    link database holds http(s) URLs with a host only, so anything else cannot be in it."""
    text = (url or "").strip()
    if not text:
        raise BadUrl("empty URL")
    try:
        p = urlsplit(text)
        host, _ = p.hostname, p.port  # .port raises ValueError on a port out of range or not a number
    except ValueError as e:
        raise BadUrl(f"cannot normalise URL {text!r}: {e}") from None
    if p.scheme.lower() not in ("http", "https"):
        raise BadUrl(f"cannot normalise URL {text!r}: not an http(s) URL (scheme {p.scheme or 'missing'!r})")
    if not host:
        raise BadUrl(f"cannot normalise URL {text!r}: no host")
    return normalize_url(text)


def key(url: str, parts: int) -> tuple[str, int]:
    """(id, partition) of a URL: the URL database's id (sha256 of the normalised URL) and the
    key-space partition of the normalised URL (lib.pages.keyspace), as the URL database has them."""
    n = normalize_url(url)
    return hashlib.sha256(n.encode("utf-8")).hexdigest(), partition_of(n, parts)  # = url_id, normalised once
