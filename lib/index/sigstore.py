"""The signature store: what matching a day against the last N days needs (docs/dedup.md, "Across days").

Layout (default ``ROOT/signatures``, beside ``ROOT/urldb``)::

    _state.json, _state/after-vN.json      days kept -> their folder (lib.store.versioned)
    day=YYYY-MM-DD-RUN/sigs/t{t}.arrow     the day's representatives (SIGS_SCHEMA), one file per run of page files
    day=YYYY-MM-DD-RUN/keys/{q}.arrow      their band keys of partition q = key mod parts, sorted (KEYS_SCHEMA)

and ``signatures.lock``, the lease (lib.store.lease) held by a lookup and by a commit.

Only representatives are kept (pages whose ``dup_cluster`` is themselves and that have a
signature), each with its ``root``: the earlier day's page it is a copy of (its own ``dup_of``)
or itself. A lookup of a day's keys in partition ``q`` memory-maps each kept day's
``keys/{q}.arrow`` and finds them with ``np.searchsorted``: it reads the file pages its keys land
in and the signatures of the pages they match, never a whole day. The state is replaced by
compare-and-swap under the lease, so two runs of different days that commit at once both
keep their day. Plain Python/numpy (no Spark): lib.index.crossday runs these per task.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import time
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from lib.errors import DailysliceError
from lib.store import lease, versioned
from lib.text.minhash import estimate

FOLDER = "signatures"  # under ROOT, beside the URL database (ROOT/urldb)
DEFAULT_DAYS = 30
DEFAULT_PARTS = 64
DEFAULT_WAIT = 3600.0  # seconds a run waits for another's lookup or commit
STALE_SECONDS = 86400.0  # an unreferenced day folder this old is a crashed run's: swept
SIGS_SCHEMA = pa.schema(
    [
        ("record_id", pa.string()),
        ("url", pa.string()),
        ("capture", pa.string()),
        ("text_len", pa.int64()),
        ("sig", pa.binary()),
        ("root_day", pa.string()),
        ("root_id", pa.string()),
    ]
)
KEYS_SCHEMA = pa.schema([("key", pa.uint64()), ("t", pa.int32()), ("row", pa.int32())])
#: where the signature is in the tuples ``today`` gives (lib.index.dedup.SIGS_SCHEMA)
SIG = 3
_EMPTY = {"version": 0, "days": {}, "parts": None, "bands": None, "perms": None}
_FOLDER = re.compile(r"day=\d{4}-\d{2}-\d{2}-[0-9a-f]+")


class StoreError(DailysliceError, RuntimeError):
    pass


def read_state(store: str) -> dict[str, Any]:
    """The store's newest committed state (empty before the first commit)."""
    return versioned.read(store, _EMPTY)


def lock(store: str, job: str, wait: float = DEFAULT_WAIT) -> lease.Lease:
    """The store's lease (``STORE.lock``), not yet acquired."""
    return lease.Lease(store, job, wait, busy=f"another run is reading or changing the signature store {store}")


def window(state: dict[str, Any], day: str, days: int) -> list[tuple[str, str]]:
    """(day, folder) of the kept days a lookup of ``day`` matches: strictly before it and within
    ``days`` of it (a backfilled day sees only the days before it), oldest first."""
    first = (dt.date.fromisoformat(day) - dt.timedelta(days=days)).isoformat()
    return sorted((d, f) for d, f in state["days"].items() if first <= d < day)


def check_shape(state: dict[str, Any], parts: int, bands: int, perms: int | None) -> None:
    """StoreError when the store's signatures are partitioned or banded otherwise than this run's
    (they would never share a key); a day without signatures (``perms`` None) fits any store."""
    if state.get("parts") is not None and state["parts"] != parts:
        raise StoreError(f"the signature store has {state['parts']} partitions, this run {parts}")
    if perms is not None and state.get("bands") is not None and (state["bands"], state["perms"]) != (bands, perms):
        raise StoreError(
            f"the signature store holds {state['perms']} slots in {state['bands']} bands; "
            f"this run has {perms} in {bands} (--dup-bands): use another --dup-store or the store's setting"
        )


def day_folder(day: str, run: str) -> str:
    return f"day={day}-{run}"


def sigs_path(folder: str, t: int) -> str:
    return os.path.join(folder, "sigs", f"t{t:06d}.arrow")


def keys_path(folder: str, q: int) -> str:
    return os.path.join(folder, "keys", f"{q}.arrow")


def read_arrow(path: str) -> pa.Table:
    """An Arrow IPC file, memory-mapped."""
    with pa.memory_map(path) as m:
        return pa.ipc.open_file(m).read_all()


def find(query: np.ndarray, stored: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (i in ``query``, j in ``stored``) of equal keys; ``stored`` sorted. At most ``cap``
    stored positions per query key (a key shared by thousands of kept pages is boilerplate, not
    a copy: the bound keeps the work at query x cap)."""
    lo = np.searchsorted(stored, query, "left")
    hi = np.minimum(np.searchsorted(stored, query, "right"), lo + cap)
    n = hi - lo
    i = np.repeat(np.arange(query.size), n)
    j = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
    return i, j


def lookup(
    query: dict[str, np.ndarray],
    today: Callable[[np.ndarray, np.ndarray], dict[tuple[int, int], tuple]],
    folder: str,
    q: int,
    threshold: float,
    cap: int,
) -> dict[str, list]:
    """The verified matches of one partition's keys of the day against one kept day's folder.

    ``query``: ``key``, ``t``, ``row`` arrays (a key of the day's page at row ``row`` of its
    ``sigs`` file ``t``); ``today(ts, rows)`` gives those pages' (record id, ..., signature) by
    (t, row), read only for the keys that matched. Returns lists ``rid``, ``match`` (the kept
    page's record id), ``root_day``, ``root_id``: one row per (page, kept page) pair whose
    estimated Jaccard is at least ``threshold``."""
    out: dict[str, list] = {"rid": [], "match": [], "root_day": [], "root_id": []}
    path = keys_path(folder, q)
    if not os.path.exists(path) or not query["key"].size:
        return out
    with pa.memory_map(path) as m:
        kt = pa.ipc.open_file(m).read_all()
        i, j = find(query["key"], kt.column("key").to_numpy(), cap)  # zero-copy: only the pages searched are read
        if not i.size:
            return out
        kts, krows = kt.column("t").to_numpy()[j], kt.column("row").to_numpy()[j]
    pairs = sorted(set(zip(query["t"][i].tolist(), query["row"][i].tolist(), kts.tolist(), krows.tolist())))
    mine = today(np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))
    want: dict[int, set[int]] = {}
    for p in pairs:
        want.setdefault(p[2], set()).add(p[3])
    kept: dict[tuple[int, int], tuple] = {}
    for t, rs in want.items():
        idx = sorted(rs)
        got = read_arrow(sigs_path(folder, t)).take(pa.array(idx, pa.int32()))
        cols = [got.column(c).to_pylist() for c in ("record_id", "sig", "root_day", "root_id")]
        kept.update(zip(((t, r) for r in idx), zip(*cols)))
    for qt, qr, t, r in pairs:  # two pages sharing several bands: one comparison
        page, (rid, sig, root_day, root_id) = mine[(qt, qr)], kept[(t, r)]
        if estimate(page[SIG], sig) >= threshold:
            out["rid"].append(page[0])
            out["match"].append(rid)
            out["root_day"].append(root_day)
            out["root_id"].append(root_id)
    return out


def earliest(matches: dict[str, list]) -> dict[str, tuple[str, str]]:
    """record id -> (day, record id) its ``dup_of`` names: of the kept pages it matched, the root
    of the earliest day, then the smallest record id (a rule every re-run repeats)."""
    best: dict[str, tuple[str, str]] = {}
    for rid, day, root in zip(matches["rid"], matches["root_day"], matches["root_id"]):
        if rid not in best or (day, root) < best[rid]:
            best[rid] = (day, root)
    return best


def commit(store: str, day: str, folder: str, days: int, shape: dict[str, int | None]) -> dict[str, Any]:
    """Make ``folder`` (written under the store) the kept copy of ``day``, drop the days ``days``
    or more before the newest kept one, and sweep what no state names; the caller holds the
    lease. A day already past the window (a backfill older than it) is not kept: returns the
    new state."""
    state = read_state(store)
    kept = dict(state["days"], **{day: os.path.basename(folder)})
    newest = dt.date.fromisoformat(max(kept))
    first = (newest - dt.timedelta(days=days - 1)).isoformat()
    kept = {d: f for d, f in kept.items() if d >= first}
    shape = {k: state.get(k) if v is None else v for k, v in shape.items()}  # a day without signatures
    new = {"version": int(state["version"]) + 1, "days": kept, **shape}
    versioned.commit(store, int(state["version"]), new)
    _sweep(store, set(state["days"].values()) | {os.path.basename(folder)}, set(kept.values()))
    return new


def _sweep(store: str, before: set[str], now: set[str]) -> None:
    """Remove the folders the commit replaced or dropped, and folders no state names that are
    older than a day (a crashed run's): a run writing its folder now is younger."""
    for name in os.listdir(store):
        path = os.path.join(store, name)
        if not _FOLDER.fullmatch(name) or name in now:
            continue
        if name in before or time.time() - os.path.getmtime(path) > STALE_SECONDS:
            shutil.rmtree(path, ignore_errors=True)
