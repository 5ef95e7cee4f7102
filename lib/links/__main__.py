"""``python -m lib.links`` (``dailyslice webgraph``): the host and domain graphs of a window of the
link database with PageRank and harmonic centrality for every vertex, in Common Crawl's layout.

    python -m lib.links --root ROOT graph [--window 90|all] [--until YYYY-MM-DD]

Writes ``ROOT/webgraph/window=N/until=DAY/{host,domain}/{vertices,edges,ranks}.parquet`` and
``_SUCCESS`` last (docs/links.md). Exit 0 written, 2 bad input or no link database.
"""

from __future__ import annotations

import argparse
import json
import sys

from lib.links import hostgraph, inlinks
from lib.links.urls import BadUrl


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lib.links", description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True, help="bucket root (its linkdb/ is read, webgraph/ written)")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("graph", help="host and domain graphs of a window with their ranks, as Parquet")
    g.add_argument("--window", help=f"days up to --until, or 'all' (default {inlinks.DEFAULT_WINDOW})")
    g.add_argument("--until", help="the window's last day (default: the newest merged day)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        out = hostgraph.publish(args.root, inlinks.parse_window(args.window), inlinks.parse_day(args.until))
    except (inlinks.BadInput, BadUrl, inlinks.NoLinks) as e:
        print(f"links: {e}", file=sys.stderr)
        return 2
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
