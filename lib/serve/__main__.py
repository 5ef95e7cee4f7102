"""``python -m lib.serve`` (or ``dailyslice-serve``): the service over published roots.

    python -m lib.serve --root ROOT [--root DC=ROOT ...] [--host 127.0.0.1] [--port 8080] [--cache DIR]
        [--archives ROOT] [--replay PYWB_COLLECTION_URL]

ROOT is a local folder or ``s3://bucket/prefix`` in the published layout
``ROOT/{index,preprocessed,catalogue}/YYYY-MM/DD``; ``DC=ROOT`` names a data center. Prints the
service's URL, then serves until Ctrl-C. See docs/serve.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from urllib.parse import quote

from lib.serve.app import create_app, roots_from_args
from lib.serve.server import bind, make_server, run, url_of


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lib.serve", description=__doc__.split("\n")[0])
    p.add_argument(
        "--root",
        action="append",
        required=True,
        metavar="[DC=]ROOT",
        help="published root (local path, s3:// or a SWAP collection http://SERVER/get/COLL/PREFIX); "
        "repeat with DC=ROOT for more data centers",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080, help="0: any free port (the URL is printed)")
    p.add_argument("--cache", help="folder for the serving index and downloaded S3 objects")
    p.add_argument("--max-range-days", type=int, default=31, help="widest date range one search may span")
    p.add_argument("--replay", help="pywb collection URL for replay links on the page (e.g. http://localhost:8090/day)")
    p.add_argument(
        "--archives",
        action="append",
        default=[],
        metavar="ROOT",
        help="folder or s3:// prefix whose archives /capture?file= may read and POST /catalogue/files may "
        "register, or a SWAP server's http://SERVER/get/COLL prefix (read only) (repeatable; ROOT/warc/ may "
        "always be registered); captures by record id need none",
    )
    p.add_argument(
        "--serve-noarchive",
        action="store_true",
        help="hand out /capture/RECORD_ID also for pages that say noarchive (an archive's own use; docs/robots.md)",
    )
    p.add_argument("--lazy", action="store_true", help="build the search engine on the first search, not at start")
    p.add_argument("--example", help="print an example search URL for this query once started")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        roots = roots_from_args(args.root)
    except ValueError as e:
        print(f"serve: {e}", file=sys.stderr)
        return 2
    try:
        sock = bind(args.host, args.port)
    except OSError as e:
        print(f"serve: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 2
    url = url_of(sock)
    t = time.perf_counter()
    app = create_app(
        roots,
        args.cache,
        max_range_days=args.max_range_days,
        replay_url=args.replay,
        archive_roots=[
            a if a.startswith(("s3://", "http://", "https://")) else os.path.abspath(a) for a in args.archives
        ],
        serve_noarchive=args.serve_noarchive,
        write_token=os.environ.get("DAILYSLICE_CDX_TOKEN") or None,  # from the environment: never in ps
    )
    if not args.lazy:
        try:
            app.state.searcher.get()
            print(f"serve: search engine ready in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        except Exception as e:  # files and catalogue still work; searches will say why
            print(
                f"serve: no search engine ({type(e).__name__}: {e}); files and catalogue still served", file=sys.stderr
            )
    print(f"serving {', '.join(f'{dc}={r}' for dc, r in roots.items())} on {url}/", flush=True)
    if args.example:
        print(f"  search: {url}/?q={quote(args.example)}", flush=True)
    run(make_server(app, log_level="info", access_log=False), sock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
