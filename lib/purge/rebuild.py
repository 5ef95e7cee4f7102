"""Purge one published day: the day rebuilt without its excluded pages, swapped in whole.

A day is its ``preprocessed``, ``index`` and ``catalogue`` folders. :func:`purge_day`

1. decides whether the day holds anything the list matches: page or capture rows of the
   preprocessed day, or in-link rows (``graph/inlinks``) of the index, i.e. links to an
   excluded page from the day's other pages;
2. builds the new folders beside the old ones (``DAY.purge-new``): the preprocessed day
   without the excluded rows (:func:`lib.pages.exclude.filter_day`, the other files
   hard-linked), then the index job and the catalogue job (:class:`Rebuild`, run by
   ``jobs/purge.py``) on it with the list in force and each job's own options of that day
   (the index's ``_stats.json`` ``args``, the catalogue's ``_SUCCESS`` ``args``). The index is
   therefore the one a day built without the page gets: the same docids, shards,
   statistics, metadata and graph (a test holds them byte for byte);
3. swaps the folders in (each ``_SUCCESS`` last, :func:`lib.store.storage.commit_dir`).

A journal (``ROOT/_purge/pending/DAY.json``) is written before anything changes and
removed after the audit entry: a purge that crashed in the build leaves only ``.purge-new``
folders, which the next run removes; one that crashed in the swap is finished by the next
run. Published days live on a local or cluster filesystem (as the nightly job writes them).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from typing import Any, Callable, Protocol

import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.store import layout, storage
from lib.errors import DailysliceError
from lib.pages.exclusions import Exclusions
from lib.pages.exclude import day_matches, filter_day

KINDS = (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE)
NEW = ".purge-new"


class PurgeError(DailysliceError, RuntimeError):
    """A rebuild job failed: the day is left as it was."""


class Rebuild(Protocol):
    """The two jobs a purge re-runs on the purged preprocessed day (jobs/purge.py runs them in
    its Spark session); each returns the job's exit code. ``recorded``: the options the day was
    built with, as its output records them (:func:`recorded_options`; missing ones are the
    job's defaults)."""

    def index(self, day: dt.date, inp: str, out: str, exclusions_uri: str, recorded: dict[str, Any]) -> int: ...

    def catalogue(self, day: dt.date, inp: str, out: str, index: str, exclusions_uri: str,
                  recorded: dict[str, Any]) -> int: ...


def recorded_options(path: str) -> dict[str, Any]:
    """The ``args`` block of a JSON side file (an index's ``_stats.json``, a catalogue's
    ``_SUCCESS``): the options the day was built with; ``{}`` when it records none (no file,
    an empty marker, a day built before the record). A file that is not JSON is a
    :class:`PurgeError`: rebuilding with other options would change the day."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError as e:
        raise PurgeError(f"{path}: not the JSON the job wrote ({e}): the day is unchanged") from None
    return (doc.get("args") if isinstance(doc, dict) else None) or {}


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def swap(new: str, final: str) -> None:
    """Put the rebuilt folder ``new`` in place of ``final`` (``_SUCCESS`` removed first, the old
    folder removed last: :func:`lib.store.storage.commit_dir`)."""
    storage.commit_dir(new, final)


def journal_path(root: str, day: dt.date) -> str:
    return os.path.join(root, layout.PURGE, "pending", f"{day.isoformat()}.json")


def _write_json(path: str, doc: dict[str, Any]) -> None:
    storage.write_bytes(path, json.dumps(doc, indent=1, sort_keys=True, default=str).encode(), fsync=True)


def _success(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, layout.SUCCESS))


def graph_hits(index_day: str, exclusions: Exclusions) -> int:
    """In-link rows (distinct excluded destinations) of the day's graph the list matches."""
    inl = os.path.join(index_day, "graph", "inlinks")
    if not os.path.isdir(inl):
        return 0
    n = 0
    for name in os.listdir(inl):
        if name.endswith(".parquet"):
            urls = pq.read_table(os.path.join(inl, name), columns=["dst_url"]).column("dst_url")
            n += pc.sum(exclusions.mask(urls)).as_py() or 0
    return n


def _counts(dirs: dict[str, str]) -> dict[str, Any]:
    """What the audit compares before and after: documents, graph rows, CDXJ lines."""
    out: dict[str, Any] = {}
    stats = os.path.join(dirs[layout.INDEX], layout.STATS)
    if os.path.exists(stats):
        s = json.loads(open(stats, encoding="utf-8").read())
        out["index_docs"] = s.get("totals", {}).get("docs")
        for k, v in (s.get("graph") or {}).items():
            if k in ("edges", "inlinks", "hosts"):
                out[f"graph_{k}"] = v
    cdxj = os.path.join(dirs[layout.CATALOGUE], "index.cdxj")
    if os.path.exists(cdxj):
        with open(cdxj, "rb") as f:
            out["cdxj_lines"] = sum(1 for _ in f)
    return out


def _purged_stats(old: str, new: str, removed: dict[str, Any], when: str) -> None:
    """The new day's ``_stats.json``: the removed pages move from kept to skipped ('excluded'),
    so the totals still add up, and a ``purged`` block says when and how many."""
    path = os.path.join(new, layout.STATS)
    if os.path.lexists(path):
        os.remove(path)  # a hard link to the published file: never write through it
    src = os.path.join(old, layout.STATS)
    stats = json.loads(open(src, encoding="utf-8").read()) if os.path.exists(src) else {"totals": {}}
    t = stats.setdefault("totals", {})
    pages = removed["pages"]["excluded"]
    if "kept" in t:
        t["kept"] -= pages
        t["skipped"] = t.get("skipped", 0) + pages
        by = t.setdefault("skipped_by_reason", {})
        by["excluded"] = by.get("excluded", 0) + pages
    stats.setdefault("purged", []).append({"time": when, "pages": pages, "captures": removed["captures"]["excluded"]})
    storage.write_bytes(path, json.dumps(stats, indent=1, sort_keys=True).encode())


def _resume(root: str, day: dt.date, dirs: dict[str, str], log: Any) -> dict[str, Any] | None:
    """Finish or undo a purge of ``day`` that crashed; the audit entry it would have written
    when it had reached the swap, else None."""
    path = journal_path(root, day)
    if not os.path.exists(path):
        return None
    j = json.loads(open(path, encoding="utf-8").read())
    entry = None
    if j.get("phase") == "swap":
        for kind in j["kinds"]:
            new = dirs[kind] + NEW
            if os.path.isdir(new) and _success(new):
                swap(new, dirs[kind])
        entry = dict(j["audit"], resumed=now())
        log(f"purge {day}: finished the swap of a crashed run")
    else:
        log(f"purge {day}: removed the unfinished build of a crashed run")
    for kind in KINDS:
        shutil.rmtree(dirs[kind] + NEW, ignore_errors=True)
    return entry


def purge_day(root: str, day: dt.date, exclusions: Exclusions, exclusions_uri: str, rebuild: Rebuild,
              audit: Callable[[dict[str, Any]], None], log: Callable[[str], None] = print) -> dict[str, Any]:
    """Purge ``day`` under the local ``root`` (module doc): ``rebuild`` runs the index and
    catalogue jobs, ``audit(entry)`` records what was removed. Returns the day's outcome:
    ``state`` is ``purged``, ``clean`` (nothing matched) or ``not published``."""
    dirs = {k: layout.day_path(root, k, day) for k in KINDS}
    resumed = _resume(root, day, dirs, log)
    if resumed is not None:
        audit(resumed)
    if os.path.exists(journal_path(root, day)):
        os.remove(journal_path(root, day))
    pre = dirs[layout.PREPROCESSED]
    if not _success(pre):
        return {"day": day.isoformat(), "state": "not published"}
    hits = {"rows": day_matches(pre, exclusions), "inlinks": graph_hits(dirs[layout.INDEX], exclusions)}
    if not hits["rows"] and not hits["inlinks"]:
        return {"day": day.isoformat(), "state": "clean"}
    when = now()
    journal = journal_path(root, day)
    _write_json(journal, {"phase": "build", "day": day.isoformat(), "started": when})
    new = {k: d + NEW for k, d in dirs.items()}
    for d in new.values():
        shutil.rmtree(d, ignore_errors=True)
    before = _counts(dirs)
    try:
        removed, kinds = _build(rebuild, day, dirs, new, exclusions, exclusions_uri, when)
    except BaseException:  # the published day is untouched: drop the half-built one
        for d in new.values():
            shutil.rmtree(d, ignore_errors=True)
        os.remove(journal)
        raise
    after = _counts({k: new[k] if k in kinds else dirs[k] for k in KINDS})
    entry = {
        "time": when, "day": day.isoformat(), "root": root, "folders": [dirs[k] for k in kinds],
        "rules": [r.as_dict() for r in exclusions.rules], "exclusions": exclusions_uri,
        "removed": {"pages": removed["pages"]["excluded"], "captures": removed["captures"]["excluded"],
                    **{k: (before[k] or 0) - (after.get(k) or 0) for k in before if before[k] is not None}},
        "records": removed["removed"],
    }
    _write_json(journal, {"phase": "swap", "day": day.isoformat(), "kinds": kinds, "audit": entry})
    for kind in kinds:  # each folder whole, its _SUCCESS last
        swap(new[kind], dirs[kind])
    audit(entry)
    os.remove(journal)
    log(f"purge {day}: removed {entry['removed']}")
    return {"day": day.isoformat(), "state": "purged", "removed": entry["removed"]}


def _build(rebuild: Rebuild, day: dt.date, dirs: dict[str, str], new: dict[str, str],
           exclusions: Exclusions, exclusions_uri: str, when: str) -> tuple[dict[str, Any], list[str]]:
    """The new folders of the day (``.purge-new``); returns the filter's counts and the kinds built."""
    pre = dirs[layout.PREPROCESSED]
    removed = filter_day(pre, new[layout.PREPROCESSED], exclusions, how="link")
    _purged_stats(pre, new[layout.PREPROCESSED], removed, when)
    with open(os.path.join(pre, layout.SUCCESS), "rb") as f:
        marker = f.read()
    storage.write_bytes(os.path.join(new[layout.PREPROCESSED], layout.SUCCESS), marker, fsync=True)
    kinds = [layout.PREPROCESSED]
    if _success(dirs[layout.INDEX]):
        rc = rebuild.index(day, new[layout.PREPROCESSED], new[layout.INDEX], exclusions_uri,
                           recorded_options(os.path.join(dirs[layout.INDEX], layout.STATS)))
        if rc != 0:
            raise PurgeError(f"{day}: the index job on the purged day exited {rc}: the day is unchanged")
        kinds.append(layout.INDEX)
    if _success(dirs[layout.CATALOGUE]):
        index = new[layout.INDEX] if layout.INDEX in kinds else dirs[layout.INDEX]
        rc = rebuild.catalogue(day, new[layout.PREPROCESSED], new[layout.CATALOGUE], index, exclusions_uri,
                               recorded_options(os.path.join(dirs[layout.CATALOGUE], layout.SUCCESS)))
        if rc != 0:
            raise PurgeError(f"{day}: the catalogue job on the purged day exited {rc}: the day is unchanged")
        kinds.append(layout.CATALOGUE)
    return removed, kinds
