"""The signature store: what matching a day against the last N days needs (docs/dedup.md, "Across days").

Layout (default ``ROOT/signatures``, beside ``ROOT/urldb``)::

    _state.json, _state/after-vN.json      days kept -> their folder, and the key runs (lib.store.versioned)
    day=YYYY-MM-DD-RUN/sigs/t{t}.arrow     the day's representatives (SIGS_SCHEMA), one file per run of page files
    day=YYYY-MM-DD-RUN/keys/{q}.arrow      their band keys of partition q = key mod parts, sorted (KEYS_SCHEMA):
                                           a run of one day, until a commit merges it
    run=ID/keys/{q}.arrow                  a merged run: the keys of several days, sorted by key, then day (RUN_SCHEMA)

and ``signatures.lock``, the lease (lib.store.lease) held by a lookup and by a commit.

Only representatives are kept (pages whose ``dup_cluster`` is themselves and that have a
signature), each with its ``root``: the earlier day's page it is a copy of (its own ``dup_of``)
or itself. The keys are a log-structured merge: a commit merges the newest runs while the older
one is at most twice the newer (:func:`lib.store.runs.merging`), then adds the day's keys as a run of one day,
so a store of N similar days has about log2(N) + 2 runs at most and a key is rewritten O(log N)
times. A lookup of a day's keys in partition ``q`` memory-maps each run's ``keys/{q}.arrow`` and finds them with
``np.searchsorted``, keeping only entries of the window's days (a run names the day folders it
holds; a replaced or dropped folder is no longer kept, so its entries never match). It reads the
file pages its keys land in and the signatures of the pages they match, never a whole day. The
state is replaced by compare-and-swap under the lease, so two runs of different days that commit
at once both keep their day. Plain Python/numpy (no Spark): lib.neardup.crossday runs these per task.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import time
import uuid
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from lib.errors import DailysliceError
from lib.index.invert import write_arrow
from lib.neardup.minhash import estimate
from lib.store import lease, versioned
from lib.store.runs import merging  # the merge policy (tests call it as sigstore.merging)

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
#: a merged run's keys: ``d`` is the index of the entry's day folder in ``sorted(run["days"])``
RUN_SCHEMA = pa.schema([*KEYS_SCHEMA, ("d", pa.uint16())])
#: where the signature is in the tuples ``today`` gives (lib.neardup.day_clusters.SIGS_SCHEMA)
SIG = 3
_EMPTY = {"version": 0, "days": {}, "parts": None, "bands": None, "perms": None}
_FOLDER = re.compile(r"day=\d{4}-\d{2}-\d{2}-[0-9a-f]+|run=[0-9a-f]+")
#: a merge of runs: (store, new run's name, the runs merged, the day folders it keeps) -> keys per folder
Merge = Callable[[str, str, list[dict[str, Any]], list[str]], dict[str, int]]


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


def runs(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The state's key runs, oldest first: ``name`` (a folder of the store) and ``days`` (the day
    folders whose keys it holds -> their key count). A store written before runs (no ``runs``):
    each kept day's folder is a run of one day, of unknown size (None)."""
    if "runs" in state:
        return state["runs"]
    return [{"name": f, "days": {f: None}} for _, f in sorted(state["days"].items())]


def find(
    query: np.ndarray, stored: np.ndarray, cap: int, d: np.ndarray | None = None, ok: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (i in ``query``, j in ``stored``) of equal keys; ``stored`` sorted. At most ``cap``
    stored positions per query key and day (a key shared by thousands of kept pages is
    boilerplate, not a copy: the bound keeps the work at query x cap per day). ``d``: the day of
    each stored key (a merged run, sorted by key then day), ``ok`` the days to keep, by index."""
    lo = np.searchsorted(stored, query, "left")
    hi = np.searchsorted(stored, query, "right")
    seg_i, seg_lo, seg_n = np.arange(query.size), lo, np.minimum(hi - lo, cap)
    heavy = np.flatnonzero(hi - lo > cap)
    if d is not None and heavy.size:  # the cap is per day, as when each day was searched alone: a segment per day
        days = np.flatnonzero(ok) if ok is not None else np.unique(d)  # the days kept: no segment for the others
        light = hi - lo <= cap
        segs = [(seg_i[light], lo[light], seg_n[light])]
        for h in heavy.tolist():
            ds = d[lo[h] : hi[h]]
            a, b = np.searchsorted(ds, days, "left"), np.searchsorted(ds, days, "right")
            segs.append((np.full(days.size, h), lo[h] + a, np.minimum(b - a, cap)))
        seg_i, seg_lo, seg_n = (np.concatenate(c) for c in zip(*segs))
    i = np.repeat(seg_i, seg_n)
    j = np.repeat(seg_lo - np.cumsum(seg_n) + seg_n, seg_n) + np.arange(int(seg_n.sum()))
    if d is not None and ok is not None:
        keep = ok[d[j]]
        i, j = i[keep], j[keep]
    return i, j


def lookup(
    query: dict[str, np.ndarray],
    today: Callable[[np.ndarray, np.ndarray], dict[tuple[int, int], tuple]],
    store: str,
    run: dict[str, Any],
    allowed: set[str],
    q: int,
    threshold: float,
    cap: int,
) -> dict[str, list]:
    """The verified matches of one partition's keys of the day against one key run of the store.

    ``query``: ``key``, ``t``, ``row`` arrays (a key of the day's page at row ``row`` of its
    ``sigs`` file ``t``); ``today(ts, rows)`` gives those pages' (record id, ..., signature) by
    (t, row), read only for the keys that matched. Only entries of the day folders in ``allowed``
    (the window) match. Returns lists ``rid``, ``match`` (the kept page's record id),
    ``root_day``, ``root_id``: one row per (page, kept page) pair whose estimated Jaccard is at
    least ``threshold``."""
    out: dict[str, list] = {"rid": [], "match": [], "root_day": [], "root_id": []}
    folders = sorted(run["days"])
    ok = np.array([f in allowed for f in folders], bool)
    path = keys_path(os.path.join(store, run["name"]), q)
    if not ok.any() or not os.path.exists(path) or not query["key"].size:
        return out
    with pa.memory_map(path) as m:
        kt = pa.ipc.open_file(m).read_all()
        d = kt.column("d").to_numpy() if "d" in kt.column_names else None
        i, j = find(query["key"], kt.column("key").to_numpy(), cap, d, ok)  # zero-copy: only pages searched are read
        if not i.size:
            return out
        kd = d[j].astype(np.int64) if d is not None else np.zeros(j.size, np.int64)
        kts, krows = kt.column("t").to_numpy()[j], kt.column("row").to_numpy()[j]
    qts, qrows = query["t"][i].tolist(), query["row"][i].tolist()
    pairs = sorted(set(zip(qts, qrows, kd.tolist(), kts.tolist(), krows.tolist())))
    mine = today(np.array([p[0] for p in pairs], np.int32), np.array([p[1] for p in pairs], np.int32))
    want: dict[tuple[int, int], set[int]] = {}
    for p in pairs:
        want.setdefault((p[2], p[3]), set()).add(p[4])
    kept: dict[tuple[int, int, int], tuple] = {}
    for (fd, t), rs in want.items():
        idx = sorted(rs)
        got = read_arrow(sigs_path(os.path.join(store, folders[fd]), t)).take(pa.array(idx, pa.int32()))
        cols = [got.column(c).to_pylist() for c in ("record_id", "sig", "root_day", "root_id")]
        kept.update(zip(((fd, t, r) for r in idx), zip(*cols)))
    for qt, qr, fd, t, r in pairs:  # two pages sharing several bands: one comparison
        page, (rid, sig, root_day, root_id) = mine[(qt, qr)], kept[(fd, t, r)]
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


def merge_part(store: str, name: str, sources: list[dict[str, Any]], folders: list[str], q: int) -> dict[str, int]:
    """Partition ``q`` of the merge of the runs ``sources`` into run ``name``: their entries of the
    day ``folders`` (the others are dropped), sorted by key, then day, the order within a day
    kept; written only if any. Returns the keys written per folder."""
    index = {f: k for k, f in enumerate(folders)}
    parts = []
    for r in sources:
        path = keys_path(os.path.join(store, r["name"]), q)
        if not os.path.exists(path):
            continue
        tab = read_arrow(path)
        old = np.array([index.get(f, -1) for f in sorted(r["days"])], np.int64)
        d = old[tab.column("d").to_numpy()] if "d" in tab.column_names else np.full(tab.num_rows, old[0])
        sel = d >= 0
        parts.append([tab.column(c).to_numpy()[sel] for c in ("key", "t", "row")] + [d[sel].astype(np.uint16)])
    cols = [np.concatenate(c) for c in zip(*parts)] if parts else []
    if cols and cols[0].size:
        order = np.lexsort((np.arange(cols[0].size), cols[3], cols[0]))  # the position: a day's order kept
        write_arrow(keys_path(os.path.join(store, name), q), pa.table([c[order] for c in cols], schema=RUN_SCHEMA))
    counts = np.bincount(cols[3], minlength=len(folders)) if cols else np.zeros(len(folders), np.int64)
    return dict(zip(folders, counts.tolist()))


def merge_local(parts: int) -> Merge:
    """A merge of every partition in this process (the tests', the benchmark's, a store's first)."""

    def merge(store: str, name: str, sources: list[dict[str, Any]], folders: list[str]) -> dict[str, int]:
        total = dict.fromkeys(folders, 0)
        for q in range(parts):
            for f, n in merge_part(store, name, sources, folders, q).items():
                total[f] += n
        return total

    return merge


def commit(
    store: str,
    day: str,
    folder: str,
    days: int,
    shape: dict[str, int | None],
    keys: int = 0,
    merge: Merge | None = None,
) -> dict[str, Any]:
    """Make ``folder`` (written under the store, ``keys`` band keys) the kept copy of ``day``, drop
    the days ``days`` or more before the newest kept one, merge the newest runs before it
    (:func:`merging`; ``merge`` writes the merged run, default in this process), add the day's
    keys as a run of one day, and sweep what no state names; the caller holds the lease. A day
    already past the window (a backfill older than it) is not kept: returns the new state."""
    state = read_state(store)
    name = os.path.basename(folder)
    kept = dict(state["days"], **{day: name})
    newest = dt.date.fromisoformat(max(kept))
    first = (newest - dt.timedelta(days=days - 1)).isoformat()
    kept = {d: f for d, f in kept.items() if d >= first}
    live = set(kept.values())
    held = [r for r in runs(state) if live.intersection(r["days"])]  # a run of only dropped days goes
    shape = {k: state.get(k) if v is None else v for k, v in shape.items()}  # a day without signatures
    k = merging(held, live)  # the runs before this day's: a re-run of the newest day rewrites no merged run
    if k > 1:
        run = f"run={uuid.uuid4().hex[:12]}"
        folders = sorted({f for r in held[-k:] for f in r["days"] if f in live})
        counts = (merge or merge_local(int(shape.get("parts") or DEFAULT_PARTS)))(store, run, held[-k:], folders)
        held[-k:] = [{"name": run, "days": {f: int(counts.get(f, 0)) for f in folders}}]
    if name in live:
        held.append({"name": name, "days": {name: keys}})
    new = {"version": int(state["version"]) + 1, "days": kept, "runs": held, **shape}
    versioned.commit(store, int(state["version"]), new)
    before = set(state["days"].values()) | {r["name"] for r in runs(state)} | {name}
    _sweep(store, before, live | {r["name"] for r in held}, {r["name"] for r in held})
    return new


def _sweep(store: str, before: set[str], now: set[str], named_runs: set[str]) -> None:
    """Remove the folders the commit replaced or dropped, and folders no state names that are
    older than a day (a crashed run's): a run writing its folder now is younger. A kept day's
    keys that a merged run now holds go too."""
    for name in os.listdir(store):
        path = os.path.join(store, name)
        if not _FOLDER.fullmatch(name):
            continue
        if name in now:
            if name not in named_runs and name.startswith("day="):
                shutil.rmtree(os.path.join(path, "keys"), ignore_errors=True)
            continue
        if name in before or time.time() - os.path.getmtime(path) > STALE_SECONDS:
            shutil.rmtree(path, ignore_errors=True)
