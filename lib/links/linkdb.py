"""The link database: every link seen across days, beside the URL database (docs/links.md).

Layout (default ``ROOT/linkdb``, beside ``ROOT/urldb``)::

    _state.json, _state/after-vN.json     days merged -> their folder, the runs, partitions (lib.store.versioned)
    day=YYYY-MM-DD-RUN/p{q}.parquet       a day's run: its links of target partition q (lib.links.entries)
    run=ID/p{q}.parquet                   a merged run: the links of several days, equal entries folded

Log-structured as the signature store (lib.neardup.sigstore; both use :func:`lib.store.runs.merging`): a
night writes its day as a run of one day and, before adding it, merges the newest runs while the
older is at most twice the newer, so the runs' sizes more than double from newer to older: a
night's cost is its day plus a merge whose amortised cost per entry is O(log days), never a pass
over the history. A re-run of a day writes a new folder that replaces the old one in the state;
the old folder's entries in merged runs are then dead (left out when read, dropped at the next
merge that reads them), so a re-run gives the same answers as a single run. Every writer holds
the URL database's lease (``ROOT/urldb.lock``, lib.store.lease): the catalogue's merges of both
databases and the purge never meet. The state is committed by compare-and-swap (a crashed run
leaves an unreferenced folder, swept by the next commit, and nothing a reader sees).
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import uuid
from typing import Any

from lib.errors import DailysliceError
from lib.links import entries
from lib.store import lease, storage, versioned
from lib.store.runs import merging

FOLDER = "linkdb"  # under ROOT, beside the URL database (ROOT/urldb)
DEFAULT_PARTS = 16
DEFAULT_WAIT = 3600.0  # seconds a writer waits for the URL database's lease (the nightly default)
_EMPTY: dict[str, Any] = {"version": 0, "days": {}, "runs": [], "parts": None}
_FOLDER = re.compile(r"(day=(\d{4}-\d{2}-\d{2})-[0-9a-f]+|run=[0-9a-f]+)(\.tmp)?")


class LinkDbError(DailysliceError, RuntimeError):
    pass


def read_state(db: str) -> dict[str, Any]:
    """The newest committed state (empty before the first merge)."""
    return versioned.read(db, _EMPTY)


def lock(urldb: str, job: str, wait: float = DEFAULT_WAIT, option: str = "--urldb-wait") -> lease.Lease:
    """The URL database's lease (``URLDB.lock``, the one lib.catalogue.urldb.lock takes), not yet
    acquired: the link database is changed under it, so no merge of either meets the purge."""
    return lease.Lease(
        urldb, job, wait, busy=f"another run is changing the URL and link databases ({urldb}); nothing done ({option})"
    )


def folder_day(folder: str) -> str | None:
    """The day of a day's run folder (``day=YYYY-MM-DD-RUN``), None for a merged run's."""
    m = _FOLDER.fullmatch(folder)
    return m.group(2) if m else None


def files(db: str, state: dict[str, Any], q: int) -> list[tuple[str, list[str]]]:
    """The entry files of partition ``q`` in the state's runs, each with its dead days (days whose
    folder in that run is no longer the day's folder: replaced by a re-run)."""
    live = set(state["days"].values())
    out = []
    for r in state["runs"]:
        path = entries.part_path(os.path.join(db, r["name"]), q)
        if os.path.exists(path):
            dead = sorted({d for f in r["days"] if f not in live and (d := folder_day(f))})
            out.append((path, dead))
    return out


def merge_day(db: str, day: dt.date, edges: list[str], parts: int = DEFAULT_PARTS, threads: int = 2) -> dict[str, Any]:
    """Make the link database hold ``day``'s links (its graph ``edges`` files); the caller holds
    :func:`lock`. Idempotent: merging a day again replaces its links. Returns a summary."""
    os.makedirs(db, exist_ok=True)
    state = read_state(db)
    parts = state.get("parts") or parts
    dkey = day.isoformat()
    name = f"day={dkey}-{uuid.uuid4().hex[:12]}"  # a name no other run writes
    con = entries.connect(threads)
    try:
        counts = entries.day_run(con, edges, dkey, os.path.join(db, name), parts)
        kept = dict(state["days"], **{dkey: name})
        live = set(kept.values())
        held = [r for r in state["runs"] if live.intersection(r["days"])]  # a run of replaced days only goes
        k = merging(held, live)
        merged: list[str] = []
        if k > 1:
            run = f"run={uuid.uuid4().hex[:12]}"
            sources = held[-k:]
            for q in range(parts):
                entries.merge_part(
                    con, files(db, {"days": kept, "runs": sources}, q), entries.part_path(os.path.join(db, run), q)
                )
            os.makedirs(os.path.join(db, run), exist_ok=True)
            merged = [r["name"] for r in sources]
            held = held[:-k] + [
                {"name": run, "days": {f: n for r in sources for f, n in r["days"].items() if f in live}}
            ]
    finally:
        con.close()
    held.append({"name": name, "days": {name: sum(counts.values())}})
    new = {"version": int(state["version"]) + 1, "days": kept, "runs": held, "parts": parts}
    versioned.commit(db, int(state["version"]), new)  # the swap: readers see the day from here on
    swept = sweep(db, new, state)
    return {
        "linkdb": db,
        "version": new["version"],
        "links": sum(counts.values()),
        "runs": len(held),
        "merged_runs": merged,
        "swept": swept,
    }


def sweep(db: str, state: dict[str, Any], previous: dict[str, Any]) -> list[str]:
    """Remove the run folders neither ``state`` nor ``previous`` names (a crashed run's, runs
    merged away one commit ago): a reader that started on the previous state still finds its
    files. The caller holds the lease, so no writer is using them."""
    named = {r["name"] for s in (state, previous) for r in s["runs"]}
    gone = []
    for n in sorted(os.listdir(db)):
        if _FOLDER.fullmatch(n) and n not in named:
            shutil.rmtree(os.path.join(db, n), ignore_errors=True)
            gone.append(n)
    return gone


def edges_of(index_day: str) -> list[str] | None:
    """The edge files of a published index day (``graph/edges/*.parquet``), None when the day has
    no complete graph (no ``_SUCCESS``, built with ``--no-graph``) or is not on a local path."""
    if "://" in index_day and not index_day.startswith("file://"):
        return None
    folder = os.path.join(storage.local_path(index_day), "graph", "edges")
    if not os.path.exists(os.path.join(storage.local_path(index_day), "_SUCCESS")) or not os.path.isdir(folder):
        return None
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".parquet"))


def merged_days(state: dict[str, Any]) -> list[str]:
    """The days the database holds, oldest first."""
    return sorted(state["days"])
