"""Pages published on an earlier day that now say noindex (docs/robots.md, "Take-downs and signals").

A page that asks not to be indexed is left out of the day that sees it, but the days already
published keep it: nothing is purged by itself, since a page may say noindex for a day by
mistake and the operator decides. The daily report lists such URLs, so that the operator can
put them on the exclusion list and run ``purge``. Plain pyarrow over the day's page files and
the earlier days' metadata stores (their ``url`` column only).
"""

from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.store import layout, storage

#: how many earlier days are searched for the day's noindex URLs
LOOKBACK_DAYS = 30
#: URLs listed at most (the count says how many there are)
MAX_LISTED = 200


def noindex_urls(day_path: str) -> list[str]:
    """The URLs of the pages of the local preprocessed day ``day_path`` that say noindex."""
    urls: set[str] = set()
    for d, _, names in os.walk(day_path):
        if not os.path.relpath(d, day_path).split(os.sep, 1)[0].startswith(layout.LANG_PREFIX):
            continue
        for n in names:
            if not n.endswith(".parquet") or n[0] in "._":
                continue
            path = os.path.join(d, n)
            if "ows_index" not in pq.read_schema(path).names:  # a day preprocessed before the column existed
                continue
            t = pq.read_table(path, columns=["url", "ows_index"])
            urls.update(t.filter(pc.equal(t.column("ows_index"), False)).column("url").to_pylist())
    return sorted(u for u in urls if u)


def published_before(root: str, day: dt.date, urls: list[str], lookback_days: int = LOOKBACK_DAYS) -> list[dict]:
    """Of ``urls``, those in the metadata store of a published index day of the ``lookback_days``
    before ``day``: (url, day) rows, the latest day each, sorted by URL."""
    if not urls:
        return []
    wanted = pa.array(urls, pa.string())
    found: dict[str, str] = {}
    for back in range(lookback_days, 0, -1):  # oldest first: a later day overwrites
        d = day - dt.timedelta(days=back)
        base = layout.day_path(root, layout.INDEX, d)
        if not storage.exists(storage.join(base, layout.SUCCESS)):
            continue
        for f in storage.list_files(base, [".parquet"]):
            if not os.path.basename(f.uri).startswith("metadata-"):
                continue
            with storage.open_stream(f.uri) as fh:
                got = pq.read_table(fh, columns=["url"]).column("url")
            for u in got.filter(pc.is_in(got, value_set=wanted)).to_pylist():
                found[u] = d.isoformat()
    return [{"url": u, "day": found[u]} for u in sorted(found)]


def report(root: str, day: dt.date, day_path: str, lookback_days: int = LOOKBACK_DAYS) -> dict:
    """The report's block: the day's noindex pages, and those published on an earlier day."""
    urls = noindex_urls(day_path)
    earlier = published_before(root, day, urls, lookback_days)
    return {
        "noindex_pages": len(urls),
        "published_earlier": len(earlier),
        "lookback_days": lookback_days,
        "urls": earlier[:MAX_LISTED],
    }
