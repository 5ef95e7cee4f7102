"""Which recent days are complete, changed, missing or empty: ``check-days``.

For each day of a window ending at ``--end`` (default yesterday), the day's input folder
(``ROOT/warc/YYYY-MM/DD``) is listed and compared with the input record the published
preprocessed day keeps (``_inputs.json``, :mod:`lib.preprocess.input_manifest`):

=============  ===============================================================  ===========
state          meaning                                                          needs a run
=============  ===============================================================  ===========
complete       published, and the folder holds exactly the recorded files        no
changed        published, but files were added, removed or rewritten since        yes
missing        archives present, no published day (a night that never ran)       yes
empty          no archives and no published day                                 no
unrecorded     published by a release that kept no input record                 no (reported)
=============  ===============================================================  ===========

    python -m lib.orchestration.days --root s3://crawl-dc1 [--output-root ROOT] [--end DAY] [--days 7] [--json]

    python -m lib.orchestration.days ... --datacenters airflow/dags/datacenters.yaml

With ``--datacenters``, the copies that the file's ``replication`` rules ask for are compared too
(:mod:`lib.orchestration.replicas`): each replicated folder of the window (and each undated one)
whose copies are missing or differ by checksum is reported.

Exit 0 when no day needs a run and no copy is missing or differs, 1 otherwise (each is printed),
2 on usage.

The nightly DAG runs the same check itself (its ``catch_up`` task,
:func:`lib.orchestration.nightly.catch_up_days`); :func:`plan_catch_up` is its choice of which days to
queue, which are queued already and which wait for the next check.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from typing import Any, Callable

from lib.errors import ConfigError
from lib.orchestration import replicas
from lib.orchestration.datacenters import load_config
from lib.preprocess.input_manifest import compare, entries
from lib.store import layout, storage
from lib.warc.records import ARCHIVE_SUFFIXES

NEEDS_RUN = ("changed", "missing")
CATCH_UP_PREFIX = "catchup__"

Reader = Callable[[str], "str | bytes | None"]


def read_output(uri: str) -> bytes | None:
    """A published file's bytes, None when it does not exist (the default reader)."""
    return storage.read_bytes(uri) if storage.exists(uri) else None


def fingerprint(input_entries: dict[str, Any], recorded: dict[str, Any] | None) -> str:
    """Ten hex digits naming one state of a day: its input listing (name, size, version) and
    the input record of its published day (None: not published)."""
    doc = json.dumps({"input": input_entries, "record": recorded}, sort_keys=True, default=str)
    return hashlib.sha1(doc.encode()).hexdigest()[:10]


def day_state(root: str, output_root: str, day: dt.date, read: Reader | None = None) -> dict[str, Any]:
    """The state of ``day`` (module table) with what changed and the counts behind it.

    ``read(uri)`` reads a file below ``output_root`` (None: absent); the default reads it
    through :mod:`lib.store.storage`, the DAG passes one that runs ``cat`` where the Slurm jobs
    write (locally or over SSH). A day that needs a run carries a ``fingerprint`` of its state."""
    read = read or read_output
    inp = layout.day_path(root, layout.WARC, day)
    out = layout.day_path(output_root, layout.PREPROCESSED, day)
    files = storage.list_files(inp, ARCHIVE_SUFFIXES)
    published = read(storage.join(out, layout.SUCCESS)) is not None
    row: dict[str, Any] = {
        "day": day.isoformat(),
        "input": inp,
        "files": len(files),
        "bytes": sum(f.size for f in files),
    }
    if not published:
        row["state"] = "missing" if files else "empty"
        if files:
            row["fingerprint"] = fingerprint(entries(inp, files), None)
        return row
    text = read(storage.join(out, layout.INPUTS))
    if not text:
        row["state"] = "unrecorded"
        return row
    recorded = json.loads(text)
    diff = compare(recorded, inp, files)
    row.update(diff)
    row["state"] = "changed" if any(diff.values()) else "complete"
    if row["state"] == "changed":
        row["fingerprint"] = fingerprint(entries(inp, files), recorded)
    return row


def check_days(
    root: str, output_root: str | None, end: dt.date, days: int, read: Reader | None = None
) -> list[dict[str, Any]]:
    """:func:`day_state` of the ``days`` days ending at ``end``, oldest first."""
    return [day_state(root, output_root or root, end - dt.timedelta(days=i), read) for i in range(days - 1, -1, -1)]


def catch_up_run_id(row: dict[str, Any]) -> str:
    """The run id a catch-up run of ``row``'s day gets: ``catchup__<day>__<fingerprint>``.
    The same day in the same state always gets the same id, so a second check finds the run
    it queued instead of queueing the day again; a day that changes again after its catch-up
    run (another late file) gets a new one."""
    return f"{CATCH_UP_PREFIX}{row['day']}__{row['fingerprint']}"


def plan_catch_up(
    rows: list[dict[str, Any]], own_day: str, limit: int, existing: Callable[[str], str | None]
) -> dict[str, Any]:
    """Which days of ``rows`` (:func:`check_days`, oldest first) a check queues.

    Every ``changed`` or ``missing`` day other than ``own_day`` (the run's own day, which the
    run itself processes) gets :func:`catch_up_run_id`. ``existing(run_id)`` is the state of a
    run with that id, or None when there is none: such a day is ``already_queued`` (with the
    run's state). Of the others, the oldest ``limit`` are ``to_queue`` (the oldest leave the
    window first), the rest ``deferred`` to the next check. Nothing that needs a run is left
    out of the answer."""
    states: dict[str, list[str]] = {}
    for r in rows:
        states.setdefault(r["state"], []).append(r["day"])
    plan: dict[str, Any] = {
        "window": [rows[0]["day"], rows[-1]["day"]] if rows else [],
        "own_day": own_day,
        "limit": limit,
        "states": states,
        "changes": {
            r["day"]: {k: r[k] for k in ("added", "removed", "modified")} for r in rows if r["state"] == "changed"
        },
        "to_queue": [],
        "already_queued": [],
        "deferred": [],
    }
    for r in rows:
        if r["state"] not in NEEDS_RUN or r["day"] == own_day:
            continue
        item = {
            "day": r["day"],
            "state": r["state"],
            "run_id": catch_up_run_id(r),
            "files": r["files"],
            "bytes": r["bytes"],
        }
        found = existing(item["run_id"])
        if found is not None:
            plan["already_queued"].append({**item, "run_state": found})
        elif len(plan["to_queue"]) < limit:
            plan["to_queue"].append(item)
        else:
            plan["deferred"].append(item)
    return plan


def describe(row: dict[str, Any]) -> str:
    """One line for a person: day, state, and what changed."""
    extra = ""
    if row["state"] == "changed":
        parts = [
            f"{k} {', '.join(row[k][:5])}{' …' if len(row[k]) > 5 else ''}"
            for k in ("added", "removed", "modified")
            if row.get(k)
        ]
        extra = " (" + "; ".join(parts) + ")"
    elif row["state"] == "missing":
        extra = f" ({row['files']} archives, {row['bytes']:,} bytes, no published day)"
    return f"{row['day']}  {row['state']:<10}{extra}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lib.orchestration.days", description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True, help="bucket root holding warc/YYYY-MM/DD (local folder or s3://)")
    p.add_argument("--output-root", help="root of the published days (default: --root)")
    p.add_argument(
        "--end",
        type=dt.date.fromisoformat,
        default=dt.date.today() - dt.timedelta(days=1),
        help="last day of the window, YYYY-MM-DD (default: yesterday)",
    )
    p.add_argument("--days", type=int, default=7, help="days in the window (default 7)")
    p.add_argument("--json", action="store_true", help="one JSON document instead of a table")
    p.add_argument(
        "--datacenters",
        help="data-center config (datacenters.yaml): also compare the copies its replication rules ask for",
    )
    a = p.parse_args(argv)
    if a.days < 1:
        p.error("--days must be at least 1")
    cfgs = None
    if a.datacenters:
        try:
            cfgs = load_config(a.datacenters)
        except (ConfigError, OSError) as e:
            p.error(str(e))
    rows = check_days(a.root, a.output_root, a.end, a.days)
    todo = [r["day"] for r in rows if r["state"] in NEEDS_RUN]
    window = [dt.date.fromisoformat(r["day"]) for r in rows]
    copies = replicas.check_replicas(cfgs, window) if cfgs else []
    bad = [c for c in copies if c["state"] in replicas.PROBLEMS]
    if a.json:
        doc: dict[str, Any] = {"days": rows, "needs_run": todo}
        if cfgs:
            doc["replication"] = {"folders": copies, "problems": len(bad)}
        print(json.dumps(doc, indent=1))
    else:
        for r in rows:
            print(describe(r))
        print(f"{len(todo)} day(s) need a run" + (f": {', '.join(todo)}" if todo else ""))
        if cfgs:
            for c in copies:
                print(replicas.describe(c))
            print(f"{len(bad)} replicated folder(s) with copies missing or different, of {len(copies)} checked")
    return 1 if todo or bad else 0


if __name__ == "__main__":
    sys.exit(main())
