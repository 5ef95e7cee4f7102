"""``dailyslice search``: the service's search from the command line, over published roots.

    dailyslice search --root ROOT "library budget" [--day YYYY-MM-DD] [--to YYYY-MM-DD] [--lang eng] [-k 10]
        [--prior pagerank|harmonic] [--prior-weight 1] [--prior-level host|domain] [--prior-window 90|all]
        [--no-collapse] [--cache DIR] [--json]

The same engine and rules as ``GET /search`` (lib.serve.engine; the prior: lib.serve.prior). Prints
one line per hit (rank, score, day, URL; with a prior also its BM25 and prior) or, with ``--json``,
the hits as ``/search`` gives them. Exit 0 answered (no hits included), 2 bad input or nothing
published to search.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from lib.serve import prior as prior_mod
from lib.serve.app import hit_dict, roots_from_args
from lib.serve.engine import Engine
from lib.serve.errors import NotFound, ServeError
from lib.serve.published import parse_day, split_values


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dailyslice search", description=__doc__.split("\n")[0])
    p.add_argument("query", help="query words (BM25, OR of the terms)")
    p.add_argument("--root", action="append", required=True, metavar="[DC=]ROOT", help="published root (repeatable)")
    p.add_argument("--day", help="first day (default: the newest published day)")
    p.add_argument("--to", help="last day of the range (default: --day)")
    p.add_argument("--lang", action="append", help="languages (ISO 639-3), repeat or comma-separate")
    p.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    p.add_argument("--prior", help="static prior: none (default), pagerank or harmonic (docs/serve.md)")
    p.add_argument(
        "--prior-weight", type=float, help=f"the most BM25 points it adds (default {prior_mod.DEFAULT_WEIGHT:g})"
    )
    p.add_argument("--prior-level", help="host (default) or domain")
    p.add_argument("--prior-window", help=f"the web graph's window: days or all (default {prior_mod.DEFAULT_WINDOW})")
    p.add_argument("--no-collapse", action="store_true", help="keep near-duplicates apart (the service folds them)")
    p.add_argument("--cache", help="folder for the serving index (default: the service's)")
    p.add_argument("--json", action="store_true", help="the hits as JSON, as GET /search gives them")
    return p


def answer(engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
    """The search's answer: ``meta`` (query, days, prior when one is used) and ``results``."""
    wanted = prior_mod.parse(args.prior, args.prior_weight, args.prior_level, args.prior_window)
    days = engine.days()
    if not args.day and not days:
        raise NotFound("no searchable day is published under the roots")
    d0 = parse_day(args.day, "day") if args.day else days[-1]
    d1 = parse_day(args.to, "to") if args.to else d0
    kw: dict[str, Any] = {"prior": wanted} if wanted is not None else {}
    res = engine.search(
        args.query, d0, d1, langs=split_values(args.lang), k=args.k, collapse=not args.no_collapse, **kw
    )
    results = [hit_dict(h) for h in res.hits]
    meta: dict[str, Any] = {"query": args.query, "days": res.days, "total_results": res.total_results}
    if res.prior is not None:
        meta["prior"] = res.prior
        for r, (bm25, value) in zip(results, res.parts or []):
            r["bm25"], r["prior"] = bm25, value
    if res.warnings:
        meta["warnings"] = res.warnings
    return {"meta": meta, "results": results}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        engine = Engine(roots_from_args(args.root), cache_dir=args.cache)
        out = answer(engine, args)
    except (ServeError, ValueError) as e:
        print(f"search: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return 0
    for w in out["meta"].get("warnings", []):
        print(f"warning: {w}", file=sys.stderr)
    for i, r in enumerate(out["results"], 1):
        extra = f"\tbm25={r['bm25']:.4f} prior={r['prior']:.4f}" if "bm25" in r else ""
        print(f"{i}\t{r['score']:.4f}\t{r['day']}\t{r['url'] or r['record_id']}{extra}")
    if not out["results"]:
        print("no matching documents", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
