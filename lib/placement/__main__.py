"""``python -m lib.placement``: locate, put, get, ls, rebalance, verify, recover, publish.

Every command but ``locate --slices`` works on a slices config (docs/placement.md).
Output is tab-separated with the slice number last; errors go to stderr with exit 2,
``verify`` exits 1 when it finds problems.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys

from lib.placement import config as _config
from lib.placement.publish_http import publish_http
from lib.placement.rebalance import RebalanceError, plan_moves, rebalance
from lib.placement.slice_publish import local_files, publish_tree
from lib.placement.swap import Collection, PlacementError, check_path, locate


def _coll(args: argparse.Namespace) -> Collection:
    return Collection(_config.load(args.config))


def cmd_locate(args: argparse.Namespace) -> int:
    if args.slices is None and args.config is None:
        raise ValueError("locate needs --slices N or --config CFG")
    coll = _coll(args) if args.config else None
    for p in args.paths:
        check_path(p)
        if coll is not None:
            print(f"{p}\t{coll.uri(p)}\t{coll.locate(p)}")
        else:
            print(f"{p}\t{locate(p, args.slices)}")
    return 0


def cmd_put(args: argparse.Namespace) -> int:
    coll = _coll(args)
    dest = args.dest.strip("/")
    pairs: list[tuple[str | None, str]]
    if args.src == "-":
        pairs = [(None, dest)]
    elif os.path.isdir(args.src):
        pairs = [(os.path.join(args.src, *r.split("/")), f"{dest}/{r}") for r in local_files(args.src)]
    else:
        pairs = [(args.src, dest)]
    for rel in (r for _, r in pairs):
        coll.check_put(rel)  # refuse before writing anything
    for src, rel in pairs:
        uri = coll.put_stream(rel, sys.stdin.buffer) if src is None else coll.put_file(src, rel)
        print(f"{rel}\t{uri}\t{coll.locate(rel)}")
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    coll = _coll(args)
    with coll.open(args.path) as f:
        if args.output in (None, "-"):
            shutil.copyfileobj(f, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        else:
            with open(args.output, "wb") as out:
                shutil.copyfileobj(f, out)
    return 0


def cmd_ls(args: argparse.Namespace) -> int:
    for rel, size, s in _coll(args).ls(args.prefix or ""):
        print(f"{rel}\t{size}\t{s}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    rep = _coll(args).verify()
    for line in rep.problems():
        print(line)
    for s, p in rep.leftovers:
        print(f"leftover: unfinished write {p} on slice {s} (safe to delete)")
    print(f"{'ok' if rep.ok else 'FAILED'}: {rep.files} files, {rep.bytes} bytes, {len(rep.problems())} problems")
    return 0 if rep.ok else 1


def cmd_recover(args: argparse.Namespace) -> int:
    print(json.dumps(_coll(args).recover(args.out)))
    return 0


def cmd_rebalance(args: argparse.Namespace) -> int:
    if args.dry_run:
        coll = _coll(args)
        for r in args.add:
            coll = Collection(_config.SliceConfig(coll.cfg.roots + [r], coll.n))
        moves = plan_moves(coll, args.to)
        for rel, a, b in moves:
            print(f"{rel}\t{a}\t{b}")
        print(f"plan: {len(moves)} of {len(coll.ls())} files move from {coll.n} to {args.to} slices", file=sys.stderr)
        return 0
    hook = None
    if args.crash_after_step is not None:
        steps = [0]

        def hook(step: str, k: int) -> None:  # fault injection for tests: die like a killed process
            steps[0] += 1
            if steps[0] > args.crash_after_step:
                os._exit(70)

    print(json.dumps(rebalance(args.config, args.to, args.add, hook, workers=args.workers)))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    if (args.config is None) == (args.server is None):
        raise ValueError("publish needs --config CFG (slice roots) or --server URL (a SWAP server), not both")
    if args.server is not None:
        print(json.dumps(publish_http(args.day_dir, args.server, args.prefix)))
        return 0
    print(json.dumps(publish_tree(args.day_dir, args.config, args.prefix)))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lib.placement", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name: str, fn, help_: str, config_required: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.add_argument("--config", required=config_required, help="slices config (JSON or TOML)")
        sp.set_defaults(fn=fn)
        return sp

    sp = add("locate", cmd_locate, "print the slice of each path: PATH [URI] SLICE", config_required=False)
    sp.add_argument("--slices", type=int, help="number of slices (instead of --config)")
    sp.add_argument("paths", nargs="+", metavar="PATH")
    sp = add("put", cmd_put, "store a local file ('-' = stdin) or folder at collection path DEST")
    sp.add_argument("src")
    sp.add_argument("dest")
    sp = add("get", cmd_get, "copy a file out of the collection")
    sp.add_argument("path")
    sp.add_argument("-o", "--output", help="output file (default stdout)")
    sp = add("ls", cmd_ls, "list files of all slices: PATH SIZE SLICE")
    sp.add_argument("prefix", nargs="?")
    add("verify", cmd_verify, "check every file is once on the slice locate says, with no collisions")
    sp = add("recover", cmd_recover, "copy all slices into one empty folder and verify it")
    sp.add_argument("--out", required=True)
    sp = add("rebalance", cmd_rebalance, "move to N slices (plan, copy, verify, delete; re-run to resume)")
    sp.add_argument("--to", type=int, required=True)
    sp.add_argument("--add", action="append", default=[], metavar="ROOT", help="append a root to the config first")
    sp.add_argument("--dry-run", action="store_true", help="print the moves (PATH FROM TO) and change nothing")
    sp.add_argument("--workers", type=int, default=1, help="parallel moves (default 1)")
    sp.add_argument("--crash-after-step", type=int, help=argparse.SUPPRESS)
    sp = add(
        "publish",
        cmd_publish,
        "spread a finished output folder (with _SUCCESS) over the slices under PREFIX",
        config_required=False,
    )
    sp.add_argument("--server", help="a SWAP server's URL: publish over HTTP, PREFIX starts with the collection")
    sp.add_argument("day_dir")
    sp.add_argument("--prefix", required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except (PlacementError, RebalanceError, _config.ConfigError, ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
