"""Apply the exclusion list to days already published (take-downs).

    python jobs/purge.py --root ROOT [--exclusions URI] [--from DAY] [--to DAY] [--day DAY ...]
                        [--urldb DIR | --no-urldb] [--stage-config datacenters.yaml --data-center DC]
                        [--dry-run] [--master local[2]] [--wait-lock SECONDS]

For each published day in range (default: every day under ``ROOT/preprocessed``) that holds
a page, capture or in-link the list matches, the day is rebuilt without them and swapped in
(:mod:`lib.purge.rebuild`; the index and catalogue jobs run in this process's Spark session); then the URL
database loses the matching rows
(:mod:`lib.purge.urldb_removal`) and the capture index beside it its lines
(:func:`lib.catalogue.capindex.purge`) and, with ``--stage-config``, each purged day is staged again to the
data center's staging target (stale files there are deleted, ``_SUCCESS`` last). Every
removal is appended to ``ROOT/_purge/audit.jsonl`` (:mod:`lib.purge.audit`): when, which rules, which day and
folders, how many pages, captures, documents, graph rows and CDXJ lines, and the removed
records (URL, record id, archive, offset). Idempotent: a second run finds every day clean.

Locks (:mod:`lib.store.lease`): the whole run holds ``ROOT/_purge.lock`` (one purge at a time
per root: its journals and audit log), each day's rebuild holds that day's output leases (the
ones its preprocess, index and catalogue runs take), and the URL database's removal holds the
database's lease (:func:`lib.catalogue.urldb.lock`), so it never meets a merge. Each waits up
to ``--wait-lock`` seconds (default an hour).

Exit 0 when every day is purged or clean, 1 when a day failed (the others still run; the
failed day is left as it was), 2 on usage, 5 when a lock was held past ``--wait-lock`` (one
line names the holder; what was done before is kept and audited, a re-run finishes it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from jobs import catalogue as catalogue_job
from jobs import index as index_job
from lib.catalogue import capindex, digeststore, recordstore
from lib.catalogue.urldb import DEFAULT_WAIT
from lib.catalogue.urldb import lock as urldb_lock
from lib.errors import ConfigError, UsageError
from lib.index.mirror_updates import UpdateError, publish_update, updates_dir
from lib.links.linkdb import FOLDER
from lib.neardup import sigstore
from lib.orchestration.datacenters import load_config
from lib.orchestration.stage_outputs import stage_outputs
from lib.pages import exclusions as excl_mod
from lib.pages.exclude import day_matches
from lib.purge.audit import append_audit, audit_path, day_folders
from lib.purge.linkdb_removal import purge_linkdb
from lib.purge.rebuild import KINDS, PurgeError, graph_hits, now, purge_day
from lib.purge.urldb_removal import purge_urldb
from lib.runtime.localmode import stop_session
from lib.runtime.result import EXIT_BUSY, EXIT_USAGE, JobResult
from lib.runtime.session import setup_logging
from lib.store import layout, lease, storage, update_log
from lib.text import stoplists


def _exit_code(run: Any) -> int:
    """A job's exit code: its result's, or :data:`EXIT_USAGE` for options it refused."""
    try:
        result: JobResult = run()
    except UsageError as e:
        print(f"purge: {e}", file=sys.stderr)
        return EXIT_USAGE
    return result.exit_code


class JobRebuild:
    """:class:`lib.purge.rebuild.Rebuild` with the project's jobs, called as functions in one Spark
    session, each with the options the day was built with (recorded in its output) and the
    purged day's paths and exclusion list over them."""

    def __init__(self, spark: Any, root: str):
        self.spark, self.root = spark, root

    def index(self, day: dt.date, inp: str, out: str, exclusions_uri: str, recorded: dict[str, Any]) -> int:
        # the stop-word lists the day was built with, not the root's current ones: same terms
        stats = storage.join(layout.day_path(self.root, layout.INDEX, day), layout.STATS)
        built_with = json.loads(storage.read_bytes(stats)).get("built_with") if storage.exists(stats) else None
        options = replace(
            index_job.IndexOptions.from_record(recorded),
            input=inp,
            output=out,
            date=day,
            exclusions=exclusions_uri,
            allow_empty=True,
            dup_store=os.path.join(self.root, sigstore.FOLDER),  # the day's kept signatures replaced too
        )
        lists = stoplists.refs_of_day(built_with, self.root)
        return _exit_code(lambda: index_job.run(self.spark, options, lists))

    def catalogue(
        self, day: dt.date, inp: str, out: str, index: str, exclusions_uri: str, recorded: dict[str, Any]
    ) -> int:
        options = replace(
            catalogue_job.CatalogueOptions.from_record(recorded),
            input=inp,
            output=out,
            date=day,
            root=self.root,
            no_urldb=True,
            index=index,
            exclusions=exclusions_uri,
            allow_empty=True,
        )
        return _exit_code(lambda: catalogue_job.run(self.spark, options))


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    """The command; ``spark``: a session to run the rebuilds in (default: one of its own)."""
    p = argparse.ArgumentParser(prog="jobs/purge.py", description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True, help="bucket root of the published days (local or cluster filesystem)")
    p.add_argument("--exclusions", help="the exclusion list (default ROOT/_exclusions.jsonl)")
    p.add_argument("--from", dest="first", type=dt.date.fromisoformat, help="first day (YYYY-MM-DD)")
    p.add_argument("--to", dest="last", type=dt.date.fromisoformat, help="last day (YYYY-MM-DD)")
    p.add_argument("--day", action="append", type=dt.date.fromisoformat, default=[], help="a day (repeatable)")
    p.add_argument("--urldb", help="URL database folder (default ROOT/urldb)")
    p.add_argument("--no-urldb", action="store_true", help="leave the URL database alone")
    p.add_argument("--stage-config", help="data-center config (datacenters.yaml) whose staging target is updated")
    p.add_argument("--data-center", help="the data center of --stage-config")
    p.add_argument("--dry-run", action="store_true", help="report what matches, change nothing")
    p.add_argument("--master", help="Spark master for the rebuilds (default local[*])")
    p.add_argument(
        "--wait-lock",
        type=float,
        default=DEFAULT_WAIT,
        metavar="SECONDS",
        help=f"wait this long for another purge, a run publishing a day or a URL database merge "
        f"(default %(default)s; 0: refuse at once, exit {EXIT_BUSY})",
    )
    a = p.parse_args(argv)
    setup_logging()
    if storage.is_s3(a.root):
        p.error("--root must be a local or cluster filesystem path (published days are swapped by rename)")
    root = storage.local_path(a.root)
    try:  # the shared take-down list (shared/auxiliary/filters) is checked against its sha256 here
        uri = a.exclusions or excl_mod.default_uri(root)
        if not uri:  # only without a root, which the parser requires
            p.error("give --exclusions or --root")
        rules = excl_mod.load(uri, required=True)
    except (FileNotFoundError, ConfigError) as e:
        p.error(str(e))
    if not rules:
        p.error(f"{uri} holds no rule: nothing to purge")
    if bool(a.stage_config) != bool(a.data_center):
        p.error("--stage-config and --data-center go together")
    stage_spec = None
    if a.stage_config:
        stage_spec = load_config(a.stage_config)[a.data_center]["staging"]
    days = sorted(set(a.day)) or [
        d for d in day_folders(root) if (a.first is None or d >= a.first) and (a.last is None or d <= a.last)
    ]
    print(f"purge: {rules.describe()}; {len(days)} day(s) under {root}", file=sys.stderr, flush=True)
    try:
        with ExitStack() as held:
            if not a.dry_run:
                held.enter_context(
                    lease.Lease(os.path.join(root, "_purge"), "purge", a.wait_lock, busy="another purge is running")
                )
            return _purge(a, root, uri, rules, days, stage_spec, spark)
    except lease.Busy as e:
        print(f"purge: {e}", file=sys.stderr, flush=True)
        return EXIT_BUSY


def _day_leases(root: str, day: dt.date, wait: float) -> ExitStack:
    """The leases of ``day``'s published folders, held while the day is rebuilt and swapped."""
    stack = ExitStack()
    try:
        for kind in KINDS:
            stack.enter_context(
                lease.Lease(layout.day_path(root, kind, day), "purge", wait, busy="a run is publishing this day")
            )
    except BaseException:  # the ones already held are released
        stack.close()
        raise
    return stack


def _purge(
    a: argparse.Namespace,
    root: str,
    uri: str,
    rules: excl_mod.Exclusions,
    days: list[dt.date],
    stage_spec: dict[str, Any] | None,
    spark: Any,
) -> int:
    """The purge of ``days`` (``a``: the parsed command line), under the purge lock."""
    own = spark is None
    results: list[dict[str, Any]] = []
    failed = busy = 0
    t0 = time.time()
    try:
        for i, day in enumerate(days, 1):
            dirs = {k: layout.day_path(root, k, day) for k in (layout.PREPROCESSED, layout.INDEX)}
            if a.dry_run:
                r = {
                    "day": day.isoformat(),
                    "matches": day_matches(dirs[layout.PREPROCESSED], rules)
                    if os.path.isdir(dirs[layout.PREPROCESSED])
                    else 0,
                    "inlinks": graph_hits(dirs[layout.INDEX], rules),
                }
            else:
                if spark is None:
                    spark = index_job.IndexJob().session(index_job.IndexOptions(master=a.master))
                try:
                    with _day_leases(root, day, a.wait_lock):
                        r = purge_day(
                            root,
                            day,
                            rules,
                            uri,
                            JobRebuild(spark, root),
                            lambda e: append_audit(root, e),
                            lambda m: print(m, file=sys.stderr, flush=True),
                        )
                except lease.Busy as e:  # the day is left as it was; a re-run purges it
                    busy += 1
                    r = {"day": day.isoformat(), "state": "busy", "error": str(e)}
                    print(f"purge: {e}", file=sys.stderr, flush=True)
                except (PurgeError, OSError, RuntimeError) as e:
                    failed += 1
                    r = {"day": day.isoformat(), "state": "failed", "error": f"{type(e).__name__}: {e}"}
                if r.get("state") == "purged":  # one line of ROOT/shared/auxiliary/logs.csv (lib.store.update_log)
                    update_log.record(root, "purge", day.isoformat(), detail=json.dumps(r.get("removed"), default=str))
                if r.get("state") == "purged" and os.path.isdir(updates_dir(root)):  # mirrors get the take-down
                    try:
                        r["update"] = (publish_update(root, day, exclusions=rules) or {}).get("id")
                    except (UpdateError, lease.Busy, OSError) as e:  # `dailyslice mirror publish` catches up later
                        failed += 1
                        r["update_error"] = f"{type(e).__name__}: {e}"
                if r.get("state") == "purged" and stage_spec:
                    outs = {
                        k: layout.day_path(root, k, day) for k in (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE)
                    }
                    r["staged"] = stage_outputs({k: v for k, v in outs.items() if os.path.isdir(v)}, stage_spec, day)
                    append_audit(root, {"time": now(), "day": day.isoformat(), "staged": r["staged"]})
            results.append(r)
            print(
                f"purge: [{i}/{len(days)}] {day} {r.get('state', 'dry run')} "
                f"{json.dumps(r.get('removed') or {k: r[k] for k in ('matches', 'inlinks') if k in r})}",
                file=sys.stderr,
                flush=True,
            )
        db = None if a.no_urldb else storage.local_path(a.urldb or os.path.join(root, layout.URLDB))
        urldb_result = None
        capindex_result = None
        if db and not a.dry_run:
            with urldb_lock(db, "purge", a.wait_lock, "--wait-lock"):
                urldb_result = purge_urldb(db, rules)
                # the link database beside it, under the same lease (lib/links/linkdb.py)
                links_result = purge_linkdb(os.path.join(root, FOLDER), rules)
                urldb_result["linkdb_rows"] = links_result["rows"]
            # the capture index beside it loses the same URLs' lines (its own lease; the day CDXJ files were rebuilt)
            capindex_result = capindex.purge(capindex.beside(db), rules, "purge", a.wait_lock)
            store = recordstore.beside(capindex.beside(db))
            if os.path.isdir(store) and capindex_result["lines"]:  # no copy of a taken-down URL stays in it
                capindex_result["recordstore"] = recordstore.rebuild(root, store, "purge", a.wait_lock)
            dstore = digeststore.beside(capindex.beside(db))
            if os.path.isdir(dstore) and capindex_result["lines"]:  # it keeps URLs too
                capindex_result["digeststore"] = digeststore.rebuild(root, dstore, "purge", a.wait_lock)
            if urldb_result["rows"] or urldb_result["linkdb_rows"]:
                append_audit(
                    root,
                    {
                        "time": now(),
                        "urldb": db,
                        "rules": [r.as_dict() for r in rules.rules],
                        "removed": {"urldb_rows": urldb_result["rows"], "linkdb_rows": urldb_result["linkdb_rows"]},
                        "urls": urldb_result["urls"],
                    },
                )
    finally:
        if own and spark is not None:
            stop_session(spark)
    summary = {
        "root": root,
        "exclusions": uri,
        "rules": len(rules),
        "days": results,
        "urldb": urldb_result,
        "capindex": capindex_result,
        "failed_days": failed,
        "busy_days": busy,
        "seconds": round(time.time() - t0, 1),
        "audit": audit_path(root),
    }
    print(json.dumps(summary, indent=1, default=str))
    return 1 if failed else EXIT_BUSY if busy else 0


if __name__ == "__main__":
    sys.exit(main())
