"""The signature store's merged key runs (lib/neardup/sigstore.py, docs/dedup.md "Across days"): a
store built over many commits (12 days, window 5, a re-run of a middle day, backfills inside and
past the window) gives, for every day looked up, the same verified matches through its runs as a
brute-force search of each kept day's own keys (plain Python, first ``cap`` entries per key and
day, as when each day was searched alone); a store written before runs (no ``runs`` in its state)
is read and merged; a run's days that left the window never match and are dropped when merged."""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil

import numpy as np
import pyarrow as pa
import pytest

from lib.index.invert import write_arrow
from lib.neardup import crossday, sigstore
from lib.neardup.clusters import band_matrix
from lib.neardup.minhash import estimate

PARTS, CAP, THRESHOLD, WINDOW = 4, 2, 0.7, 5
START = dt.date(2026, 2, 1)
SHAPE: dict[str, int | None] = {"parts": PARTS, "bands": 16, "perms": 128}


def _date(k: int) -> str:
    return (START + dt.timedelta(days=k)).isoformat()


class _Days:
    """Days of random signatures: fresh pages, near copies (10 of 128 slots changed) of earlier
    days' pages, and one boilerplate signature repeated on every day (more than ``CAP`` times, so
    the per-day cap decides which entries match)."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(47)
        self.boiler = self.rng.integers(0, 2**32, 128, dtype=np.uint32)
        self.made: list[np.ndarray] = []

    def day(self, tag: str) -> tuple[list[str], np.ndarray]:
        fresh = self.rng.integers(0, 2**32, (12, 128), dtype=np.uint32)
        picks = [self.made[i].copy() for i in self.rng.integers(0, len(self.made), 6)] if self.made else []
        for s in picks:
            s[self.rng.choice(128, 10, replace=False)] = self.rng.integers(0, 2**32, 10, dtype=np.uint32)
        sigs = np.vstack([fresh, *[p[None] for p in picks], np.tile(self.boiler, (3, 1))])
        self.made += list(fresh)
        return [f"{tag}-{i}" for i in range(len(sigs))], sigs


def _keys(sigs: np.ndarray) -> dict[int, dict[str, np.ndarray]]:
    """The pages' band keys by partition (key mod PARTS), sorted by key, the page order kept."""
    keys = band_matrix(sigs)
    flat, rows = keys.ravel(), np.repeat(np.arange(sigs.shape[0], dtype=np.int32), keys.shape[1])
    out = {}
    for q in range(PARTS):
        sel = flat % PARTS == q
        order = np.argsort(flat[sel], kind="stable")
        out[q] = {"key": flat[sel][order], "t": np.zeros(order.size, np.int32), "row": rows[sel][order]}
    return out


def _write_day(store: str, day: str, run: str, rids: list[str], sigs: np.ndarray) -> tuple[str, int]:
    """A day folder as lib.neardup.crossday writes it (one ``sigs`` file, keys by partition)."""
    folder = os.path.join(store, sigstore.day_folder(day, run))
    n = len(rids)
    write_arrow(
        sigstore.sigs_path(folder, 0),
        pa.table(
            [rids, [f"https://x.example/{r}" for r in rids], [day] * n, [1000] * n,
             [s.tobytes() for s in sigs], [day] * n, rids],
            schema=sigstore.SIGS_SCHEMA,
        ),
    )  # fmt: skip
    keys = _keys(sigs)
    for q, k in keys.items():
        write_arrow(sigstore.keys_path(folder, q), pa.table([k["key"], k["t"], k["row"]], schema=sigstore.KEYS_SCHEMA))
    return folder, sum(k["key"].size for k in keys.values())


def _through_runs(store: str, day: str, rids: list[str], sigs: np.ndarray) -> list[tuple]:
    """(page, kept page, root day, root id) verified through the store's runs (a pair met in several
    partitions: once)."""
    state = sigstore.read_state(store)
    allowed = {f for _, f in sigstore.window(state, day, WINDOW)}
    mine = {(0, i): (r, day, 1000, s.tobytes()) for i, (r, s) in enumerate(zip(rids, sigs))}
    found: list[tuple] = []
    for q, query in _keys(sigs).items():
        for run in sigstore.runs(state):
            got = sigstore.lookup(query, lambda ts, rows: mine, store, run, allowed, q, THRESHOLD, CAP)
            found += zip(got["rid"], got["match"], got["root_day"], got["root_id"])
    return sorted(set(found))


def _brute_force(copies: dict[str, tuple[list[str], np.ndarray]], state: dict, day: str, rids, sigs) -> list[tuple]:
    """Each kept day of the window searched alone, in plain Python, from the day's own pages."""
    found = set()
    for d, f in sigstore.window(state, day, WINDOW):
        kept_rids, kept_sigs = copies[f]
        entries: dict[int, list[int]] = {}
        for q, k in _keys(kept_sigs).items():
            for key, row in zip(k["key"].tolist(), k["row"].tolist()):
                entries.setdefault(key, []).append(row)
        for i, page in enumerate(band_matrix(sigs)):
            for key in page.tolist():
                for row in entries.get(key, [])[:CAP]:
                    if estimate(sigs[i].tobytes(), kept_sigs[row].tobytes()) >= THRESHOLD:
                        found.add((rids[i], kept_rids[row], d, kept_rids[row]))
    return sorted(found)


@pytest.mark.parametrize("old_store", [False, True], ids=["runs", "store-without-runs"])
def test_merged_runs_match_as_each_kept_day_searched_alone(tmp_path, old_store):
    store = str(tmp_path / "sigs")
    os.makedirs(store)
    days = _Days()
    copies: dict[str, tuple[list[str], np.ndarray]] = {}
    # (day number, run id): 0..8 in order, a re-run of day 5, 10 and 11, a backfill of day 9 (in
    # the window), one of day 2 (past it: matched, not kept), then day 12
    plan = [(k, f"{k:04x}") for k in range(9)] + [(5, "aaaa"), (10, "0010"), (11, "0011"), (9, "0009"), (2, "bbbb")]
    plan.append((12, "0012"))
    matched = 0
    for step, (k, run) in enumerate(plan):
        day = _date(k)
        rids, sigs = days.day(f"{day}-{run}")
        state = sigstore.read_state(store)
        got = _through_runs(store, day, rids, sigs)
        assert got == _brute_force(copies, state, day, rids, sigs), f"{day} (step {step})"
        matched += len(got)
        folder, n = _write_day(store, day, run, rids, sigs)
        copies[os.path.basename(folder)] = (rids, sigs)
        if old_store and k == 5 and run == "aaaa":  # as the code before runs left it: no runs in the state
            _drop_runs(store)
        with sigstore.lock(store, f"test {day}", 60):
            state = sigstore.commit(store, day, folder, WINDOW, SHAPE, n)
        held = [f for r in state["runs"] for f in r["days"] if f in state["days"].values()]
        assert sorted(held) == sorted(state["days"].values())  # each kept day in exactly one run
        assert len(state["runs"]) <= math.log2(len(state["days"])) + 2
    assert matched > 100  # copies, boilerplate over the cap, the re-run's old copy and the backfills all met
    state = sigstore.read_state(store)
    assert sorted(state["days"]) == [_date(k) for k in range(8, 13)]
    assert any(r["name"].startswith("run=") for r in state["runs"])
    names = {r["name"] for r in state["runs"]} | set(state["days"].values())
    assert sorted(n for n in os.listdir(store) if n.startswith(("day=", "run="))) == sorted(names)
    for r in state["runs"]:  # a run whose days all left goes; a day's own keys only while it is its own run
        assert set(state["days"].values()).intersection(r["days"])
    for f in state["days"].values():
        assert os.path.isdir(os.path.join(store, f, "keys")) == any(r["name"] == f for r in state["runs"])


def _drop_runs(store: str) -> None:
    """Rewrite the store as the code before runs did: a state without ``runs``, each kept day's keys
    in its own folder (merged runs unmerged back into their days)."""
    state = sigstore.read_state(store)
    for run in state["runs"]:
        folders = sorted(run["days"])
        for f in folders:
            if run["name"] == f or f not in state["days"].values():
                continue
            for q in range(PARTS):
                path = sigstore.keys_path(os.path.join(store, run["name"]), q)
                if os.path.exists(path):
                    t = sigstore.read_arrow(path)
                    t = t.filter(pa.compute.equal(t.column("d"), folders.index(f))).select(["key", "t", "row"])
                    write_arrow(sigstore.keys_path(os.path.join(store, f), q), t.cast(sigstore.KEYS_SCHEMA))
        if run["name"].startswith("run="):
            shutil.rmtree(os.path.join(store, run["name"]))
    old = {k: v for k, v in state.items() if k != "runs"}
    sigstore.versioned.commit(store, state["version"], dict(old, version=state["version"] + 1))


def test_a_merge_in_spark_tasks_writes_what_one_in_process_does(spark, tmp_path):
    store = str(tmp_path / "sigs")
    days = _Days()
    runs: list[dict] = []
    folders: list[str] = []
    for k in range(3):
        rids, sigs = days.day(_date(k))
        folder, n = _write_day(store, _date(k), f"{k:04x}", rids, sigs)
        runs.append({"name": os.path.basename(folder), "days": {os.path.basename(folder): n}})
        folders.append(os.path.basename(folder))
    live = folders[1:]  # the first day has left the window: its entries are dropped
    local = sigstore.merge_local(PARTS)(store, "run=000000000001", runs, live)
    tasks = crossday.spark_merge(spark, [[0, 2], [1, 3]])(store, "run=000000000002", runs, live)
    assert local == tasks == {f: r["days"][f] for f, r in zip(folders[1:], runs[1:])}
    for q in range(PARTS):
        one, two = (
            sigstore.read_arrow(sigstore.keys_path(os.path.join(store, f"run=00000000000{i}"), q)) for i in (1, 2)
        )
        assert one.equals(two) and one.num_rows == sum(
            sigstore.read_arrow(sigstore.keys_path(os.path.join(store, f), q)).num_rows for f in live
        )
        assert one.column("key").to_numpy().tolist() == sorted(one.column("key").to_numpy().tolist())
