"""The capture index: one CDXJ index over every published day, keyed as the CDXJ is (SURT key,
then timestamp), for the CDX server (lib.serve.cdx_api). See docs/catalogue.md, section 1c.

Layout (default ``ROOT/cdxindex``, beside the URL database ``ROOT/urldb``)::

    _state.json, _state/after-vN.json    the days kept -> their folder, and the runs (lib.store.versioned)
    day=YYYY-MM-DD-RUN/                  a day's lines as a run of one source (lib.catalogue.capruns)
    post=HASH-RUN/                       a batch of lines POSTed to the CDX server (its source ``post:HASH``)
    file=HASH-RUN/                       the lines of one archive file registered between nights (``file:NAME``)
    run=ID/                              a merged run: the lines of several day folders, sorted

and ``cdxindex.lock``, the lease (lib.store.lease) every writer holds.

Log-structured, as the signature store (lib.neardup.sigstore) keeps its keys: a day is written as a
sorted run of its own, then a commit merges the newest runs while the older is at most twice the
newer (:func:`lib.store.runs.merging`), so N days make about log2(N) + 2 runs. A look-up reads
the blocks its key range spans in each run (a bisection of each run's in-memory block index), so
its cost grows with log2 of the days, not with the days. Why not one ZipNum cluster rebuilt
nightly: that rewrites the whole archive every night; the runs rewrite a line O(log N) times.

Each line belongs to a source, the day folder it was written by (``day=D-RUN``); the state names
the live folder of each day. A re-run of a day writes a new folder and commits it in place of the
old one: the old lines stay in older merged runs until their next merge, but no look-up returns
them (only live sources' lines are kept), so a re-run adds nothing twice. A crashed run's folder
is named by no state: invisible, swept later. The state is replaced by compare-and-swap under the
lease, so runs that meet both keep their day.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import re
import shutil
import threading
import time
import uuid
from typing import Any, Iterable, Iterator

from lib.catalogue import capruns
from lib.catalogue.cdxj import parse_line
from lib.errors import DailysliceError
from lib.pages.exclusions import Exclusions
from lib.store import lease, versioned
from lib.store.runs import merging

FOLDER = "cdxindex"  # under ROOT, beside the URL database
DEFAULT_WAIT = 3600.0
STALE_SECONDS = 86400.0  # an unreferenced folder this old is a crashed run's: swept
_EMPTY: dict[str, Any] = {"version": 0, "days": {}, "runs": []}
_NAME = re.compile(r"(day=\d{4}-\d{2}-\d{2}-[0-9a-f]+|(post|file)=[0-9a-f]{16}-[0-9a-f]+|run=[0-9a-f]+)(\.tmp)?")
FILE = "file:"  # the source key of a registered file: ``file:`` + its CDXJ filename


class CapIndexError(DailysliceError, RuntimeError):
    pass


def beside(urldb: str) -> str:
    """The capture index's folder beside a URL database folder (``ROOT/urldb`` -> ``ROOT/cdxindex``)."""
    return os.path.join(os.path.dirname(urldb.rstrip("/")) or ".", FOLDER)


def read_state(index: str) -> dict[str, Any]:
    """The index's newest committed state (empty before the first commit)."""
    return versioned.read(index, _EMPTY)


def lock(index: str, job: str, wait: float = DEFAULT_WAIT) -> lease.Lease:
    """The index's lease (``INDEX.lock``), not yet acquired."""
    return lease.Lease(index, job, wait, busy=f"another run is changing the capture index {index}")


def _sources(run: dict[str, Any]) -> list[str]:
    return sorted(run["days"])


def _cdxj_rows(path: str, files: set[str] | None = None) -> Iterator[tuple[str, int]]:
    """The lines of a day's sorted CDXJ file as (line, 0), checked as they are read; the archive
    file names the lines point to are collected in ``files``."""
    prev = ""
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line:
                continue
            fields = parse_line(line, f"{path}:{n}")[2]
            if files is not None and "filename" in fields:
                files.add(fields["filename"])
            if line < prev:
                raise CapIndexError(f"{path}:{n}: line out of order (the day's CDXJ must be sorted)")
            prev = line
            yield line, 0


def _merged(index: str, sources: list[dict[str, Any]], folders: list[str]) -> Iterator[tuple[str, int]]:
    """The lines of the runs ``sources`` that belong to ``folders``, merged in line order, with
    their source index in ``folders``."""
    pos = {f: k for k, f in enumerate(folders)}

    def live(r: dict[str, Any]) -> Iterator[tuple[str, int]]:
        mine = [pos.get(f, -1) for f in _sources(r)]
        run = capruns.Run(os.path.join(index, r["name"]))
        try:
            for line, src in run.all():
                if mine[src] >= 0:
                    yield line, mine[src]
        finally:
            run.close()

    return heapq.merge(*(live(r) for r in sources))


def add_day(index: str, day: str, cdxj: str, job: str = "catalogue", wait: float = DEFAULT_WAIT) -> dict[str, Any]:
    """Make the lines of ``cdxj`` (the day's sorted CDXJ) the index's lines of ``day``, replacing
    an earlier run's; returns a summary. The day's run is written first under a name no other run
    uses, then committed under the lease (merging runs as :func:`lib.store.runs.merging` says).

    Files registered between nights (:func:`add_file`) whose lines the day now holds (the day's
    CDXJ names the same archive file) are retired in the same commit: their lines count once."""
    files: set[str] = set()
    out = add_source(index, day, f"day={day}", _cdxj_rows(cdxj, files), job, wait, retire=files)
    return out


def add_file(
    index: str, filename: str, day: str, lines: list[str], job: str = "register", wait: float = DEFAULT_WAIT
) -> dict[str, Any]:
    """Add the CDXJ lines of one archive file registered between nights (any order) as the source
    ``file:FILENAME`` of ``day``. The same lines again change nothing (``unchanged``); a file whose
    first line a day's run already holds is that day's already (``unchanged``, ``covered``: the
    night's catalogue reached it); other lines under the same name replace the file's."""
    rows = sorted(set(lines))
    digest = hashlib.sha256("".join(r + "\n" for r in rows).encode("utf-8")).hexdigest()[:16]
    key = FILE + filename
    state = read_state(index)
    base = {"capindex": index, "source": key, "day": day, "lines": 0, "unchanged": True}
    if state["days"].get(key, "").startswith(f"file={digest}-"):
        return base
    covered = covering_day(index, rows[0]) if rows else None
    if covered is not None:
        return dict(base, covered=covered)
    out = add_source(index, key, f"file={digest}", ((r, 0) for r in rows), job, wait, files={key: day})
    return dict(out, source=key, day=day, unchanged=False)


def covering_day(index: str, line: str) -> str | None:
    """The day whose live run holds exactly ``line`` (None: no day's does)."""
    state = read_state(index)
    owner = {folder: key for key, folder in state["days"].items() if not key.startswith((FILE, "post:"))}
    for r in state["runs"]:
        folders = _sources(r)
        run = capruns.Run(os.path.join(index, r["name"]))
        try:
            for _, src in run.range(line, line + "\x00"):
                if folders[src] in owner:
                    return owner[folders[src]]
        finally:
            run.close()
    return None


def registered(index: str) -> dict[str, str]:
    """The registered files still live in the index: CDXJ filename -> its day."""
    state = read_state(index)
    return {k[len(FILE) :]: d for k, d in state.get("files", {}).items() if k in state["days"]}


def add_lines(index: str, lines: list[str], job: str = "post", wait: float = DEFAULT_WAIT) -> dict[str, Any]:
    """Add a batch of CDXJ lines (checked, any order: lib.catalogue.cdxlines) as a source of its
    own, named by the hash of its sorted lines: the same batch posted again changes nothing."""
    rows = sorted(set(lines))
    digest = hashlib.sha256("".join(r + "\n" for r in rows).encode("utf-8")).hexdigest()[:16]
    key = f"post:{digest}"
    if key in read_state(index)["days"]:
        return {"capindex": index, "source": key, "lines": 0, "unchanged": True}
    out = add_source(index, key, f"post={digest}", ((r, 0) for r in rows), job, wait, keep=True)
    return dict(out, source=key, unchanged=out["lines"] == 0)


def add_source(
    index: str,
    key: str,
    prefix: str,
    rows: Iterable[tuple[str, int]],
    job: str,
    wait: float,
    keep: bool = False,
    retire: set[str] | None = None,
    files: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write ``rows`` (sorted (line, 0)) as the run ``PREFIX-RUN`` and commit it as the live folder
    of source ``key`` (a day, a posted batch or a registered file); ``keep``: a source already
    there is left as it is (its run is dropped), else replaced. ``retire``: archive file names
    (filled while the rows are written) whose registered sources the commit drops; ``files``:
    registered sources -> their day, kept in the state."""
    os.makedirs(index, exist_ok=True)
    name = f"{prefix}-{uuid.uuid4().hex[:12]}"
    t0 = time.time()
    lines = capruns.write_run(os.path.join(index, name), rows)
    with lock(index, job, wait) as held:
        state = read_state(index)
        if keep and key in state["days"]:  # committed by another request meanwhile
            shutil.rmtree(os.path.join(index, name), ignore_errors=True)
            return {"capindex": index, "version": state["version"], "lines": 0, "waited_seconds": held.waited}
        kept = dict(state["days"], **{key: name})
        gone = {FILE + f for f in retire or ()} & set(kept) - {key}
        for src_key in gone:  # a registered file the day's lines now hold: its lines count once
            del kept[src_key]
        reg = {f: d for f, d in dict(state.get("files", {}), **(files or {})).items() if f in kept}
        live = set(kept.values())
        held_runs = [r for r in state["runs"] if live.intersection(r["days"])]
        k = merging(held_runs, live)
        merged = 0
        if k > 1:
            run = f"run={uuid.uuid4().hex[:12]}"
            folders = sorted({f for r in held_runs[-k:] for f in r["days"] if f in live})
            counts = dict.fromkeys(folders, 0)

            def counted() -> Iterator[tuple[str, int]]:
                for line, src in _merged(index, held_runs[-k:], folders):
                    counts[folders[src]] += 1
                    yield line, src

            merged = capruns.write_run(os.path.join(index, run), counted())
            held_runs[-k:] = [{"name": run, "days": counts}]
        held_runs.append({"name": name, "days": {name: lines}})
        new = {"version": int(state["version"]) + 1, "days": kept, "runs": held_runs, "files": reg}
        versioned.commit(index, int(state["version"]), new)
        _sweep(index, new, {r["name"] for r in state["runs"]})
    return {
        "capindex": index,
        "version": new["version"],
        "lines": lines,
        "runs": len(held_runs),
        "merged_lines": merged,
        "replaced": state["days"].get(key),
        "retired_files": sorted(g[len(FILE) :] for g in gone),
        "waited_seconds": held.waited,
        "seconds": round(time.time() - t0, 3),
    }


def purge(index: str, exclusions: Exclusions, job: str = "purge", wait: float = DEFAULT_WAIT) -> dict[str, Any]:
    """Remove the lines of excluded URLs from every run (each run holding one is rewritten under a
    new name and swapped in by one commit); returns the lines removed and the runs rewritten."""
    out: dict[str, Any] = {"capindex": index, "lines": 0, "runs": 0}
    if not os.path.isdir(index):
        return out
    with lock(index, job, wait):
        state = read_state(index)
        runs = []
        for r in state["runs"]:
            run = capruns.Run(os.path.join(index, r["name"]))
            try:
                hit = _excluded(run.all(), exclusions)
            finally:
                run.close()
            if not hit:
                runs.append(r)
                continue
            name = f"run={uuid.uuid4().hex[:12]}"
            folders = _sources(r)
            counts = dict.fromkeys(folders, 0)

            def kept(r: dict[str, Any] = r) -> Iterator[tuple[str, int]]:
                src_run = capruns.Run(os.path.join(index, r["name"]))
                try:
                    for line, src in src_run.all():
                        if not exclusions.match(_url(line)):
                            counts[folders[src]] += 1
                            yield line, src
                finally:
                    src_run.close()

            capruns.write_run(os.path.join(index, name), kept())
            runs.append({"name": name, "days": counts})
            out["lines"] += hit
            out["runs"] += 1
        if out["runs"]:
            new = dict(state, version=int(state["version"]) + 1, runs=runs)
            versioned.commit(index, int(state["version"]), new)
            _sweep(index, new, {r["name"] for r in state["runs"]})
    return out


def _url(line: str) -> str | None:
    return parse_line(line)[2].get("url")


def _excluded(rows: Iterable[tuple[str, int]], exclusions: Exclusions) -> int:
    return sum(1 for line, _ in rows if exclusions.match(_url(line)))


def _sweep(index: str, state: dict[str, Any], before: set[str]) -> None:
    """Remove the run folders ``state`` no longer names that the state before it named
    (``before``), and folders no state names that are older than a day (a crashed run's: a run
    writing its day's folder now, before its commit, is younger)."""
    named = {r["name"] for r in state["runs"]}
    for name in os.listdir(index):
        if not _NAME.fullmatch(name) or name in named:
            continue
        path = os.path.join(index, name)
        if name in before or time.time() - os.path.getmtime(path) > STALE_SECONDS:
            shutil.rmtree(path, ignore_errors=True)


class Reader:
    """Look-ups over the index's committed state: opened runs are kept (runs are immutable) and
    dropped when a newer state no longer names them."""

    def __init__(self, index: str) -> None:
        self.index = index
        self._runs: dict[str, capruns.Run] = {}
        self._lock = threading.Lock()
        self._held: tuple[int, list[tuple[capruns.Run, list[bool]]]] | None = None

    def _current(self) -> list[tuple[capruns.Run, list[bool]]]:
        """The runs of the newest state with their live sources, kept while no state follows it:
        a look-up then costs one existence check, not a read of a state that grows with the days."""
        held = self._held
        if held is not None and not versioned.superseded(self.index, held[0]):
            return held[1]
        try:
            state = read_state(self.index)
            opened = self._open(state)
        except FileNotFoundError:  # a commit swept a run between our read of the state and its opening
            state = read_state(self.index)
            opened = self._open(state)
        self._held = (int(state["version"]), opened)
        return opened

    def _open(self, state: dict[str, Any]) -> list[tuple[capruns.Run, list[bool]]]:
        live = set(state["days"].values())
        with self._lock:
            names = {r["name"] for r in state["runs"]}
            for gone in set(self._runs) - names:
                self._runs.pop(gone).close()
            out = []
            for r in state["runs"]:
                if r["name"] not in self._runs:
                    self._runs[r["name"]] = capruns.Run(os.path.join(self.index, r["name"]))
                out.append((self._runs[r["name"]], [f in live for f in _sources(r)]))
        return out

    def lines(self, start: str, end: str) -> Iterator[str]:
        """The live lines ``start <= line < end`` of every run, merged in order (lazily: a caller
        that stops early reads no further block)."""

        def one(run: capruns.Run, ok: list[bool]) -> Iterator[str]:
            return (line for line, src in run.range(start, end) if ok[src])

        return heapq.merge(*(one(run, ok) for run, ok in self._current()))

    def days(self) -> list[str]:
        """The days in the index."""
        return sorted(read_state(self.index)["days"])
