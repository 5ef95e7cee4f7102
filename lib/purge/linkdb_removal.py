"""Remove excluded URLs' links from the link database (:mod:`lib.links.linkdb`).

Every entry file of the database (day runs and merged runs) holds links by source and target
URL: a link whose source or target is excluded goes. Each file with a match is rewritten without
it under a temporary name and renamed over the old one, so a reader sees the old file or the
new one, and a second run finds nothing left. The caller holds the URL database's lease
(:func:`lib.links.linkdb.lock`, the one the purge holds for the URL database): no merge reads or
writes the files meanwhile.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.pages.exclusions import Exclusions


def purge_linkdb(db: str, exclusions: Exclusions) -> dict[str, Any]:
    """Drop the links from or to an excluded URL from every entry file under ``db``; returns the
    entries removed (``rows``) and the files rewritten."""
    out: dict[str, Any] = {"linkdb": db, "rows": 0, "files": 0}
    if not os.path.isdir(db):
        return out
    for d, _, names in sorted(os.walk(db)):
        for n in sorted(names):
            if not n.endswith(".parquet") or n.startswith("."):
                continue
            path = os.path.join(d, n)
            urls = pq.read_table(path, columns=["src_url", "dst_url"])
            mask = pc.or_(exclusions.mask(urls.column("src_url")), exclusions.mask(urls.column("dst_url")))
            hit = pc.sum(mask).as_py() or 0
            if not hit:
                continue
            table = pq.read_table(path)
            tmp = os.path.join(d, "." + n + ".purge")
            pq.write_table(table.filter(pc.invert(mask)), tmp, compression="zstd", row_group_size=16384)
            os.replace(tmp, path)
            out["rows"] += hit
            out["files"] += 1
    return out
