"""Build the serving index of published index days ahead of the first query, and report its cost.

    python -m lib.serve.prewarm --root ROOT --date D [--to D] [--cache DIR] [--dc NAME]

ROOT is a local path or ``s3://`` URI in the published layout; the cache defaults to
``~/.cache/dailyslice/serving`` (lib.serve.serving_index). A day whose current version is
already built is not built again (its folder is keyed by the day's ``_stats.json``, ``_SUCCESS``
and file list). Prints one JSON line per day: seconds, bytes, whether it was built now, and the
shards it had to leave out (``skipped``: path, documents, reason; docs/serve.md, "Empty and
broken shards"). Exit 0; 1 when a shard was left out (the rest of the day is built and served);
2 when no day is published in the range.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from lib.serve.serving_index import default_cache, ensure_built, published_days


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--date", required=True, type=dt.date.fromisoformat)
    ap.add_argument("--to", type=dt.date.fromisoformat, default=None)
    ap.add_argument("--cache", default=None, help="cache folder (default: ~/.cache/dailyslice/serving)")
    ap.add_argument("--dc", default="default", help="data center name (the cache's first level)")
    a = ap.parse_args(argv)
    last = a.to or a.date
    days = [d for d in published_days(a.root) if a.date <= d <= last]
    if not days:
        print(f"no published index day in {a.date}..{last} under {a.root}", file=sys.stderr)
        return 2
    rc = 0
    for d in days:
        rep = ensure_built(a.root, d, a.cache or default_cache(), a.dc)
        print(json.dumps({"day": d.isoformat(), "path": rep.path, "seconds": round(rep.seconds, 3),
                          "bytes": rep.bytes, "built": rep.built, "skipped": rep.skipped}))
        for k in rep.skipped:
            print(f"{d}: shard {k['path']} left out: {k['reason']}", file=sys.stderr)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
