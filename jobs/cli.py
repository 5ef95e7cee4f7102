"""``dailyslice``: one command for every entry point of the project (installed with the package).

    dailyslice preprocess --date 2026-01-15 --root s3://crawl-dc1
    dailyslice index --date 2026-01-15 --root /scratch/dc1
    dailyslice serve --root demo --port 8080
    dailyslice COMMAND --help

Every command of the project is listed by ``dailyslice --help``: the commands below, and the
other ways in (:data:`ELSEWHERE`): the Spark jobs are also plain scripts (``spark-submit
jobs/index.py ...``, since spark-submit runs a ``.py`` file; both forms take the same
arguments), each command's module runs as ``python -m MODULE``, ``dailyslice-serve`` is
``dailyslice serve``, and the developer tools live outside the installed package.
"""

from __future__ import annotations

import importlib
import sys

#: command -> (module with main(argv), one line of help)
COMMANDS = {
    "preprocess": ("jobs.preprocess", "WARC/ARC files of a day -> cleaned, language-tagged Parquet"),
    "index": ("jobs.index", "preprocessed day -> CIFF shards, metadata, web graph, anchor texts"),
    "catalogue": ("jobs.catalogue", "a day's CDXJ, URL database merge and report"),
    "day": ("jobs.day", "a day's whole chain (preprocess, index, catalogue) in one Spark application, and its marker"),
    "extract": ("jobs.extract", "copy records out of archives by offset/length"),
    "webgraph": ("lib.links.__main__", "host and domain graphs of a window of the link database, with their ranks"),
    "on-demand": ("jobs.ondemand", "a request folder (on_demand/<id>) -> a published sub-index (public/<id>)"),
    "community": ("lib.community.__main__", "check and publish community parties' uploads; a party's S3 permissions"),
    "exchange": ("jobs.exchange", "merge partner data centers' links into a day's in-links"),
    "purge": ("jobs.purge", "apply the exclusion list to published days (take-downs)"),
    "demo": ("jobs.demo", "sample crawl -> the whole pipeline -> the service, locally"),
    "serve": ("lib.serve.__main__", "the HTTP service over published days"),
    "search": (
        "lib.serve.search_command",
        "search published days (BM25, or with a host-rank prior)",
    ),
    "download": ("lib.serve.client", "download parts of the published index by filter"),
    "mirror": ("lib.serve.mirror_command", "index updates: publish them, apply them in order to a local copy"),
    "build-serving": ("lib.serve.prewarm", "build a day's serving index ahead of the first search"),
    "check-days": ("lib.orchestration.days", "which recent days are complete, changed or missing"),
    "ciff": ("lib.ciff.__main__", "validate, dump or search CIFF files"),
    "query": ("lib.catalogue.__main__", "catalogue queries (captures, URL database)"),
    "placement": ("lib.placement.__main__", "SWAP slices: plan, rebalance, publish"),
    "swap-server": ("lib.placement.net.__main__", "a SWAP server: GET/PUT with redirects to the slice's holder, peers"),
    "list-records": ("lib.extract.record_list", "the records of whole archives as an extract input list"),
    "index-digest": ("lib.index.shard_digests", "content digests of an index day's shards (write or check)"),
    "sample-crawl": ("lib.warc.sample", "write a small synthetic crawl in the bucket layout"),
    "plugin": ("lib.preprocess.plugin", "the plugin gate: evaluate an enrichment plugin on benchmark pages"),
    "auxiliary": ("lib.store.auxiliary", "shared models and filters (ROOT/shared/auxiliary): add a version, list"),
}

#: the other ways in: what runs them, and what they are
ELSEWHERE = {
    "spark-submit jobs/JOB.py ARGS": "a Spark job as a script (preprocess, index, catalogue, extract, ondemand, ...)",
    "python -m MODULE ARGS": "any command above by its module (e.g. python -m jobs.index, python -m lib.ciff)",
    "dailyslice-serve ARGS": "the same as dailyslice serve",
    "make demo | demo-s3 | test | lint | typecheck | asan": "the demo, on local files or a loopback S3 server; the "
    "test suite and its checks (ruff, mypy, the walker under AddressSanitizer)",
    "python -m devtools.seaweed -- CMD": "run CMD against a loopback S3 server (SeaweedFS; developers)",
    "python -m devtools.realday --out DIR": "a real-shaped day in two cuts, from the real samples (benchmarks, tests)",
    "python -m devtools.label_maintext_kinds": "the main-text kinds set's labels: audit, show one page's",
    "python scripts/compare_outputs.py --base COMMIT": "this checkout's outputs against a commit's, byte for byte",
    "bash scripts/install-system-deps.sh": "the system packages the tests need (Java, Chromium, Slurm, ...)",
    "python scripts/gen_lexwalk_rules.py": "lib/html/native/lexwalk_rules.h from lib/html/rules.py (setup.py runs it)",
    "python scripts/asan_walk.py": "the compiled walker under ASan and UBSan over the real pages (make asan)",
    "python -m benchmarks.NAME": "a benchmark (docs/benchmarks.md)",
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    commands = "\n".join(f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items())
    elsewhere = "\n".join(f"  {how}\n      {text}" for how, text in ELSEWHERE.items())
    return (
        f"usage: dailyslice COMMAND [ARGS...]\n\ncommands (dailyslice COMMAND --help for each):\n{commands}\n\n"
        f"other ways in:\n{elsewhere}"
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
