"""Record-level keys of the catalogue: SURT keys, CDX timestamps, digests (URL ids: lib.core.urls).

Plain functions (no Spark) so they are testable alone and usable in pandas UDFs.
"""

from __future__ import annotations

import datetime as dt
import re

import surt as _surt

from lib.core.urls import normalize_url, url_id  # noqa: F401  (re-exported: the pages' id)

# CDXJ lines are "KEY TS JSON": a key must never contain whitespace or control characters,
# or byte order of lines would no longer be the order of (key, timestamp).
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")


def _escape(text: str) -> str:
    return _UNSAFE.sub(lambda m: "%{:02x}".format(ord(m.group())), text)


def surt_key(url: str) -> str:
    """SURT key of ``url`` as pywb computes it (``surt.surt`` defaults: lowercased,
    ``www.`` dropped, query sorted, fragment removed); never contains whitespace.

    URLs the surt package cannot parse fall back to the lowercased URL, so every capture
    still gets a line (pywb would look such a URL up by the same fallback)."""
    try:
        key = _surt.surt(url)
    except Exception:
        key = url.strip().lower()
    return _escape(key)


def timestamp14(micros: int) -> str:
    """14-digit UTC timestamp ``YYYYmmddHHMMSS`` from microseconds since the epoch."""
    t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(micros))
    return t.strftime("%Y%m%d%H%M%S")


def strip_digest(digest: str | None) -> str | None:
    """Digest as pywb's CDXJ writes it: ``sha1:BASE32`` -> ``BASE32``, others unchanged."""
    if digest and digest.lower().startswith("sha1:"):
        return digest[5:]
    return digest
