"""Record-level keys of the catalogue: SURT keys, CDX timestamps, digests (URL ids: lib.pages.weburls).

Plain functions (no Spark) so they are testable alone and usable in pandas UDFs.
"""

from __future__ import annotations

import datetime as dt

from lib.pages.weburls import normalize_url, surt_key, url_id  # noqa: F401  (re-exported: ids and SURT keys)


def timestamp14(micros: int) -> str:
    """14-digit UTC timestamp ``YYYYmmddHHMMSS`` from microseconds since the epoch."""
    t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(micros))
    return t.strftime("%Y%m%d%H%M%S")


def strip_digest(digest: str | None) -> str | None:
    """Digest as pywb's CDXJ writes it: ``sha1:BASE32`` -> ``BASE32``, others unchanged."""
    if digest and digest.lower().startswith("sha1:"):
        return digest[5:]
    return digest
