"""``dailyslice plugin``: the plugin gate's command (:mod:`lib.preprocess.gate`).

    dailyslice plugin evaluate NAME --root ROOT [--benchmark DIR ...]   # run it, write its evaluation
    dailyslice plugin show NAME --root ROOT                              # the evaluation of the installed version
    dailyslice plugin expected NAME --reference MODULE:FUNCTION --out FILE   # its expected outputs file

``evaluate`` exits 0 when the plugin is approved, 1 when it is refused (the evaluation says
why; it is written either way), 2 on a usage error (an unknown plugin, bad thresholds).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from lib.errors import DailysliceError
from lib.preprocess import gate
from lib.store import storage


def _reference(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code."""
    ap = argparse.ArgumentParser(prog="dailyslice plugin", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ev = sub.add_parser("evaluate", help="run a plugin over the benchmark pages and write its evaluation")
    ev.add_argument("name")
    ev.add_argument("--root", required=True, help="bucket root: the evaluation goes to shared/auxiliary/plugins/")
    ev.add_argument("--benchmark", action="append", default=[], metavar="DIR", help="more archives to run it on")
    sh = sub.add_parser("show", help="print the evaluation of the installed version")
    sh.add_argument("name")
    sh.add_argument("--root", required=True)
    ex = sub.add_parser("expected", help="write a plugin's expected outputs from a reference implementation")
    ex.add_argument("name")
    ex.add_argument("--reference", required=True, metavar="MODULE:FUNCTION", help="html -> {column: value}")
    ex.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        if a.cmd == "evaluate":
            doc = gate.evaluate(a.root, a.name, a.benchmark)
            shown = ("plugin", "version", "sha256", "approved", "reasons", "measures")
            print(json.dumps({k: doc[k] for k in shown}, indent=1))
            print(f"plugin {a.name}: {'approved' if doc['approved'] else 'refused'}", file=sys.stderr)
            return 0 if doc["approved"] else 1
        if a.cmd == "show":
            ident = gate.identity(a.name)
            path = gate.evaluation_path(a.root, a.name, ident["version"])
            if not storage.exists(path):
                print(f"plugin {a.name} {ident['version']}: no evaluation at {path}", file=sys.stderr)
                return 1
            print(storage.read_bytes(path).decode())
            return 0
        n = gate.write_expected(a.name, _reference(a.reference), a.out)
        print(f"{a.out}: expected outputs of {n} benchmark pages", file=sys.stderr)
        return 0
    except DailysliceError as e:
        print(f"dailyslice plugin: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
