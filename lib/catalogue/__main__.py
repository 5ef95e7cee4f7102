"""``python -m lib.catalogue``: query the catalogue, serve it, (re)write a day's report.

    python -m lib.catalogue --root ROOT days
    python -m lib.catalogue --root ROOT captures URL
    python -m lib.catalogue --root ROOT digest SHA1 [SHA1 ...]
    python -m lib.catalogue --root ROOT search --prefix https://example.com/ [--contains news]
    python -m lib.catalogue --root ROOT files 2026-01-15
    python -m lib.catalogue --root ROOT records FILE [--day 2026-01-15]
    python -m lib.catalogue --root ROOT stats 2026-01-15
    python -m lib.catalogue --root ROOT report 2026-01-15 [--out FILE]
    python -m lib.catalogue --root ROOT inlinks URL [--window DAYS|all] [--until DAY] [--limit N]
    python -m lib.catalogue --root ROOT path FROM TO [--hosts] [--window DAYS|all] [--max-hops 4] [--timeout 10]

The HTTP API is part of the one serving process: ``python -m lib.serve --root ROOT`` answers the
catalogue queries under ``/catalogue/`` (days, captures, search, files, records, stats) next to
search and downloads; ``serve`` here only says so.

``--json`` prints JSON for programs; the default is a table for people. The catalogue of a
day is built by the Spark job ``python jobs/catalogue.py --date D --root ROOT`` (a job, so
not reachable from here: lib never imports jobs); ``build`` only says so.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from typing import Any

from lib.catalogue import query, report
from lib.links import inlinks as links
from lib.links import paths
from lib.links.urls import BadUrl
from lib.store import layout

SERVE_MOVED = (
    "catalogue: the HTTP API is served by the one service: python -m lib.serve --root ROOT "
    "[--host 127.0.0.1] [--port 8080]; the catalogue queries are under /catalogue/ "
    "(/catalogue/days, /catalogue/captures?url=..., ...). See docs/serve.md"
)
BUILD_MOVED = (
    "catalogue: the build is the Spark job jobs/catalogue.py: "
    "python jobs/catalogue.py --date YYYY-MM-DD --root ROOT (options: --help)"
)


def _cell(v: Any, width: int = 64) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        v = ",".join(_cell(x, width) for x in v)
    elif isinstance(v, dt.datetime):
        v = v.strftime("%Y-%m-%d %H:%M:%S")
    text = str(v)
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(rows: list[dict[str, Any]]) -> str:
    """Rows as an aligned text table (columns of the first row)."""
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def format_stats(s: dict[str, Any]) -> str:
    out = []
    for k, v in s.items():
        if isinstance(v, list):
            out += [f"\n{k}:", format_table(v)]
        elif isinstance(v, dict):
            out += [f"\n{k}:"] + [f"  {kk}: {json.dumps(vv, default=str)}" for kk, vv in v.items()]
        else:
            out.append(f"{k}: {v}")
    return "\n".join(out)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lib.catalogue", description=__doc__.split("\n")[0])
    p.add_argument(
        "--root", default=os.environ.get("CATALOGUE_ROOT", "."), help="bucket root (default $CATALOGUE_ROOT or .)"
    )
    p.add_argument("--json", action="store_true", help="JSON output for programs")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="moved: python jobs/catalogue.py --date D --root R (the Spark job)", add_help=False)
    sub.add_parser("days", help="completed days")
    c = sub.add_parser("captures", help="captures of a URL with duplicate markers")
    c.add_argument("url")
    dg = sub.add_parser("digest", help="captures with a payload digest (sha1:BASE32, base32 or hex), all days")
    dg.add_argument("digest", nargs="+")
    s = sub.add_parser("search", help="URL prefix/substring search in the URL database")
    s.add_argument("--prefix")
    s.add_argument("--contains")
    s.add_argument("--limit", type=int, default=100)
    f = sub.add_parser("files", help="archive files of a day and their record counts")
    f.add_argument("day")
    r = sub.add_parser("records", help="records of one archive file")
    r.add_argument("file")
    r.add_argument("--day")
    st = sub.add_parser("stats", help="statistics of a day")
    st.add_argument("day")
    rp = sub.add_parser("report", help="(re)write a day's HTML report")
    rp.add_argument("day")
    rp.add_argument("--out", help="default ROOT/catalogue/YYYY-MM/DD/report.html")
    rp.add_argument("--index", help="the day's index output (default ROOT/index/YYYY-MM/DD)")
    il = sub.add_parser("inlinks", help="links pointing to a URL over a window of days (the link database)")
    il.add_argument("url")
    il.add_argument("--window", help=f"days up to --until, or 'all' (default {links.DEFAULT_WINDOW})")
    il.add_argument("--until", help="the window's last day, YYYY-MM-DD (default: the newest merged day)")
    il.add_argument("--limit", type=int, default=links.MAX_ROWS, help="in-links listed (default %(default)s)")
    pa = sub.add_parser("path", help="shortest path of followed links between two URLs over a window")
    pa.add_argument("source", metavar="FROM")
    pa.add_argument("target", metavar="TO")
    pa.add_argument("--window", help=f"days up to --until, or 'all' (default {links.DEFAULT_WINDOW})")
    pa.add_argument("--until", help="the window's last day, YYYY-MM-DD (default: the newest merged day)")
    pa.add_argument("--max-hops", type=int, default=paths.DEFAULT_HOPS, help="default %(default)s")
    pa.add_argument("--timeout", type=float, default=paths.DEFAULT_TIMEOUT, help="seconds (default %(default)s)")
    pa.add_argument("--hosts", action="store_true", help="FROM and TO are hosts: a path in the host graph")
    sub.add_parser("serve", help="moved: python -m lib.serve --root ROOT (catalogue under /catalogue/)", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "build" in argv[:1]:  # before parsing: the job's own options would be unknown here
        print(BUILD_MOVED, file=sys.stderr)
        return 2
    args, extra = parser().parse_known_args(argv)
    if args.cmd == "serve":  # its old --host/--port belong to the service now
        print(SERVE_MOVED, file=sys.stderr)
        return 2
    if extra:
        parser().error(f"unrecognized arguments: {' '.join(extra)}")
    if args.cmd == "build":
        print(BUILD_MOVED, file=sys.stderr)
        return 2
    root = args.root
    try:
        if args.cmd == "report":
            day = query.parse_day(args.day)
            out = args.out or os.path.join(
                layout.day_path(query.local_root(root), layout.CATALOGUE, day), report.REPORT
            )
            result: Any = {"report": report.write_report(root, day, out, args.index)}
        elif args.cmd == "days":
            result = [{"day": d.isoformat()} for d in query.list_days(root)]
        elif args.cmd == "captures":
            result = query.captures(root, args.url)
        elif args.cmd == "digest":
            result = query.digest(root, args.digest)
        elif args.cmd == "search":
            result = query.search(root, args.prefix, args.contains, args.limit)
        elif args.cmd == "files":
            result = query.files(root, args.day)
        elif args.cmd == "records":
            result = query.records(root, args.file, args.day)
        elif args.cmd == "inlinks":
            result = links.request(query.local_root(root), args.url, args.window, args.until, args.limit)
        elif args.cmd == "path":
            result = paths.request(
                query.local_root(root),
                args.source,
                args.target,
                args.window,
                args.until,
                args.max_hops,
                args.timeout,
                "host" if args.hosts else "url",
            )
        else:
            result = query.stats(root, args.day)
    except paths.NoRoute as e:
        print(f"catalogue: {e}", file=sys.stderr)
        return 1
    except (query.QueryError, links.BadInput, BadUrl, links.NoLinks) as e:
        print(f"catalogue: {e}", file=sys.stderr)
        return 2
    if args.cmd in ("inlinks", "path") and not args.json:
        rows = "inlinks" if args.cmd == "inlinks" else "hops"
        print(format_stats({k: v for k, v in result.items() if k != rows}))
        result = result[rows]
    if args.json:
        sys.stdout.write(query.to_json(result).decode("utf-8") + "\n")
    elif isinstance(result, list):
        print(format_table(result))
    else:
        print(format_stats(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
