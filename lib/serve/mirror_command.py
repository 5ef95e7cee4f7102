"""``dailyslice mirror``: publish index updates, and keep a local copy equal by applying them (docs/mirror.md).

    dailyslice mirror publish --root ROOT --date 2026-01-15 [--batch N]   the next update of a published slice
    dailyslice mirror apply --dest COPY --server URL [--dc DC]            fetch and apply every missing update
    dailyslice mirror apply --dest COPY --from ROOT                       the same from a root on a filesystem
    dailyslice mirror apply --dest COPY --update FOLDER                   one downloaded update folder
    dailyslice mirror check --dest COPY                                   is the copy complete at its update

Over HTTP, each update's files (its ``_manifest.json`` first) are fetched into
``COPY/_incoming/ID/`` with the download client (:func:`lib.serve.client.fetch_one`: resumed with
``Range``/``If-Range``, each file checked against its sha256), then applied
(:func:`lib.index.mirror_apply.apply_update`) and the folder removed. Exit codes: 0 done (or nothing to
do), 1 a download or a check failed (the copy stays at its last complete update), 2 usage,
3 an update out of order (the message names the missing one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
from typing import IO

import httpx

from lib.errors import UsageError
from lib.index.mirror_apply import apply_all, apply_update, problems, read_state, recover
from lib.index.mirror_updates import OutOfOrder, UpdateError, publish_update, updates_dir
from lib.pages.exclusions import for_job as exclusions_for
from lib.serve.client import fetch_one

INCOMING = "_incoming"


def fetch_updates(client: httpx.Client, copy: str, dc: str | None, out: IO[str]) -> int:
    """Fetch and apply, in order, every update the server has after the copy's; 0 or 1 (module doc)."""
    state = recover(copy, read_state(copy)) if os.path.isdir(copy) else read_state(copy)
    params = {"after": str(state["seq"]), **({"dc": dc} if dc else {})}
    r = client.get("/updates", params=params)
    if r.status_code != 200:
        raise UsageError(f"server refused /updates ({r.status_code}): {r.text[:200]}")
    items = r.json()["updates"]
    dcs = sorted({u["dc"] for u in items})
    if len(dcs) > 1:
        raise UsageError(f"the server publishes updates of {', '.join(dcs)}: give --dc (a copy follows one sequence)")
    for item in items:
        inc = os.path.join(copy, INCOMING, item["id"])
        results = [fetch_one(client, f, inc) for f in item["files"]]
        failed = [x for x in results if x.status == "failed"]
        fetched = sum(x.fetched for x in results)
        if failed:
            print(f"update {item['id']}: INCOMPLETE, {len(failed)} of {len(results)} files not verified:", file=out)
            for x in failed:
                print(f"  {x.path}: {x.error}", file=out)
            return 1  # what arrived stays in _incoming: the next run resumes it
        outcome = apply_update(copy, inc)
        shutil.rmtree(inc)
        print(f"update {item['id']} ({item['target']}): {outcome}, {fetched:,} bytes transferred", file=out)
    print(f"{copy} is at update {read_state(copy)['applied']}", file=out)
    return 0


def _publish(a: argparse.Namespace, out: IO[str]) -> int:
    day = dt.date.fromisoformat(a.date)
    man = publish_update(a.root, day, a.batch, exclusions=exclusions_for(a.root, a.exclusions))
    if man is None:
        print(f"{a.date}: unchanged since its last update; nothing published", file=out)
    else:
        c = man["counts"]
        print(
            f"update {man['id']} ({man['target']}, follows {man['previous']}): {c['added']} added, "
            f"{c['replaced']} replaced, removed {c['removed']} -> {updates_dir(a.root)}/{man['id']}",
            file=out,
        )
    return 0


def _apply(a: argparse.Namespace, out: IO[str]) -> int:
    if a.server:
        with httpx.Client(base_url=a.server, timeout=httpx.Timeout(60.0, connect=10.0)) as client:
            return fetch_updates(client, a.dest, a.dc, out)
    if a.update:
        print(f"update {a.update}: {apply_update(a.dest, a.update)}", file=out)
        return 0
    for uid, outcome in apply_all(a.dest, updates_dir(a.source)):
        print(f"update {uid}: {outcome}", file=out)
    print(f"{a.dest} is at update {read_state(a.dest)['applied']}", file=out)
    return 0


def _check(a: argparse.Namespace, out: IO[str]) -> int:
    bad = problems(a.dest)
    for line in bad:
        print(f"INCOMPLETE: {line}", file=out)
    if not bad:
        print(f"{a.dest}: complete at update {read_state(a.dest)['applied']}", file=out)
    return 1 if bad else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="dailyslice mirror", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pub = sub.add_parser("publish", help="publish the next update of a published slice (ROOT/public/_updates)")
    pub.add_argument("--root", required=True, help="published root (local or cluster filesystem)")
    pub.add_argument("--date", required=True, help="the day YYYY-MM-DD")
    pub.add_argument("--batch", type=int, help="a batch of the day (index/YYYY-MM/DD/batch=N)")
    pub.add_argument(
        "--exclusions", help="take-down list (default ROOT/_exclusions.jsonl): removals it matches are 'purged'"
    )
    app = sub.add_parser("apply", help="apply the missing updates to a local copy, in order")
    app.add_argument("--dest", required=True, help="the local copy")
    src = app.add_mutually_exclusive_group(required=True)
    src.add_argument("--server", help="base URL of the service")
    src.add_argument("--from", dest="source", help="a published root on a filesystem")
    src.add_argument("--update", help="one update folder (downloaded)")
    app.add_argument("--dc", help="data center (when the server has several)")
    chk = sub.add_parser("check", help="is the copy complete at the update it records")
    chk.add_argument("--dest", required=True, help="the local copy")
    return p.parse_args(argv)


def main(argv: list[str] | None = None, out: IO[str] = sys.stdout) -> int:
    a = parse_args(argv)
    try:
        return {"publish": _publish, "apply": _apply, "check": _check}[a.command](a, out)
    except OutOfOrder as e:
        print(f"mirror: {e}", file=sys.stderr)
        return 3
    except UsageError as e:
        print(f"mirror: {e}", file=sys.stderr)
        return 2
    except UpdateError as e:
        print(f"mirror: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
