"""``dailyslice``: one command for every entry point of the project (installed with the package).

    dailyslice preprocess --date 2026-01-15 --root s3://crawl-dc1
    dailyslice index --date 2026-01-15 --root /scratch/dc1
    dailyslice serve --root demo --port 8080
    dailyslice COMMAND --help

The Spark jobs are also plain scripts (``spark-submit jobs/index.py ...``), since spark-submit
runs a ``.py`` file; both forms take the same arguments.
"""

from __future__ import annotations

import importlib
import sys

#: command -> (module with main(argv), one line of help)
COMMANDS = {
    "preprocess": ("jobs.preprocess", "WARC/ARC files of a day -> cleaned, language-tagged Parquet"),
    "index": ("jobs.index", "preprocessed day -> CIFF shards, metadata, web graph, anchor texts"),
    "catalogue": ("jobs.catalogue", "a day's CDXJ, URL database merge and report"),
    "extract": ("jobs.extract", "copy records out of archives by offset/length"),
    "on-demand": ("jobs.ondemand", "a request folder (on_demand/<id>) -> a published sub-index (public/<id>)"),
    "exchange": ("jobs.exchange", "merge partner data centers' links into a day's in-links"),
    "purge": ("jobs.purge", "apply the exclusion list to published days (take-downs)"),
    "demo": ("jobs.demo", "sample crawl -> the whole pipeline -> the service, locally"),
    "serve": ("lib.serve.__main__", "the HTTP service over published days"),
    "download": ("lib.serve.client", "download parts of the published index by filter"),
    "build-serving": ("lib.serve.prewarm", "build a day's serving index ahead of the first search"),
    "check-days": ("lib.orchestration.days", "which recent days are complete, changed or missing"),
    "ciff": ("lib.ciff.__main__", "validate, dump or search CIFF files"),
    "query": ("lib.catalogue.__main__", "catalogue queries (captures, URL database)"),
    "placement": ("lib.placement.__main__", "SWAP slices: plan, rebalance, publish"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    return "usage: dailyslice COMMAND [ARGS...]\n\ncommands:\n" + "\n".join(
        f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"dailyslice: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
