"""Merge partner data centers' links into one index day's in-links (no Spark: one DuckDB).

    python jobs/exchange.py --root ROOT --date 2026-01-15 --partner dc-b=ROOT_B [--partner dc-c=ROOT_C]
    python jobs/exchange.py --day ROOT/index/2026-01/15 --date 2026-01-15 --partner dc-b=ROOT_B

ROOTs are local folders or ``s3://bucket/prefix`` (a day is ``ROOT/index/YYYY-MM/DD``).
Publishes the day's ``graph/outbound/``, rewrites ``graph/inlinks`` as the local in-links
(kept in ``graph/inlinks_local/``) plus the partners' links to this day's hosts, writes
``anchors-{n}.ciff.gz`` beside every shard and records what it merged in
``graph/_exchange.json`` (printed on stdout). A partner without a day is recorded as
missing, never waited for. See docs/index.md, "Across data centers".

The day is changed under its lease (``ROOT/index/YYYY-MM/DD.lock``, :mod:`lib.store.lease`, the
one the index job holds while it publishes the day): two exchanges of one day, or an exchange
and a re-index, never interleave. A second run waits up to ``--wait-lock`` seconds (default an
hour), then exits 5 with one line naming the holder.

Exit codes: 0 done (or nothing to do); 1 failed; 2 usage (the day is not complete); 5 the
day's lease was held past ``--wait-lock``: nothing was changed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from lib.index.graph_exchange import exchange_day
from lib.orchestration.exchange_task import day_lock
from lib.store import layout, lease, storage

DEFAULT_WAIT = 3600.0
EXIT_BUSY = 5  # the Spark jobs' code for the same (lib.runtime.result), without importing Spark


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--root", help="this data center's root (the day is ROOT/index/YYYY-MM/DD)")
    where.add_argument("--day", help="the index day folder itself")
    p.add_argument("--date", required=True, type=dt.date.fromisoformat, help="the day (YYYY-MM-DD)")
    p.add_argument("--partner", action="append", default=[], metavar="DC=ROOT", help="a partner's root (repeat)")
    p.add_argument(
        "--lookback-days",
        type=int,
        default=7,
        help="a partner without this day: take its latest day up to this many days earlier (default 7)",
    )
    p.add_argument("--work", help="local scratch folder (default: a temporary one)")
    p.add_argument("--force", action="store_true", help="rewrite even if the same partner days were merged")
    p.add_argument(
        "--exclusions",
        metavar="URI",
        help="take-down list (default ROOT/_exclusions.jsonl when it exists; 'none': no list)",
    )
    p.add_argument(
        "--wait-lock",
        type=float,
        default=DEFAULT_WAIT,
        metavar="SECONDS",
        help=f"wait this long for another run changing the day (default %(default)s; 0: refuse at once, "
        f"exit {EXIT_BUSY})",
    )
    args = p.parse_args(argv)
    try:
        args.partners = dict(x.split("=", 1) for x in args.partner)
    except ValueError:
        p.error("--partner takes DC=ROOT")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    day = args.day or layout.day_path(args.root, layout.INDEX, args.date)
    if not storage.exists(storage.join(day, layout.SUCCESS)):
        print(f"exchange: {day} is not a finished index day (no {layout.SUCCESS})", file=sys.stderr)
        return 2
    try:
        with day_lock(day, wait=args.wait_lock):
            record = exchange_day(
                day, args.date, args.partners, args.lookback_days, args.work, args.force, args.exclusions
            )
    except lease.Busy as e:
        print(f"exchange: {e}", file=sys.stderr)
        return EXIT_BUSY
    except Exception as e:  # one line for the operator, the traceback below
        print(f"exchange: {day}: {e}", file=sys.stderr)
        raise
    print(json.dumps(record, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
