"""The night's chain, declared once: its steps, which exit codes let the next one run, the
night's own exit code and the marker it leaves (:mod:`lib.orchestration.marker`).

A day of a data center is preprocess -> index -> catalogue. ``dailyslice day`` (jobs/day.py)
runs the steps in one Spark application by this declaration; deploy/common/run-day.sh (Slurm,
Magpie) calls it, the demo runs it in-process and the nightly DAG reads the marker it writes.
Nothing here starts Spark or imports a job: the rules are plain functions over exit codes,
tested without a cluster (tests/orchestration/test_chain.py).

The rules (exit codes of :mod:`lib.runtime.result`):

* index runs when preprocess exited 0 or 3 (3: it published an unhealthy day, too many failed
  records or unreadable files, :mod:`lib.preprocess.health`: index it anyway, it is the best we
  have);
* catalogue (CDXJ, URL database merge, report, which shows the index's shard sizes) runs when
  index exited 0; it merges the day's links into the link database too (``--links``, under the
  URL database's lease; default on for a night, ``dailyslice day --no-links`` leaves it out:
  docs/links.md), so in-links, paths and the web graph of a window are current after each night;
* the night is ok (the success marker) only when all three exited 0. Otherwise its exit code
  is 3 when preprocess published an unhealthy day and index and catalogue still succeeded on
  it; 2 or 4 when preprocess found no input folder or no archives in it (the marker's
  ``input``: "missing" or "empty"); 5 when another run of the day held its lease; 1 for
  anything else, a failed catalogue included: its day is published and indexed but not
  complete (no success marker, so the DAG neither stages nor skips it; a re-run redoes the
  whole day, and the URL database merge is idempotent).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from lib.index.mirror_updates import updates_dir
from lib.orchestration.marker import INPUT_STATES, Marker
from lib.preprocess import batches
from lib.preprocess.batches import batch_path
from lib.runtime.result import EXIT_BUSY, EXIT_EMPTY, EXIT_FAILED, EXIT_OK, EXIT_UNHEALTHY, EXIT_USAGE
from lib.store import layout, storage

#: exit codes by step name; None: the step did not run
Codes = Mapping[str, "int | None"]


@dataclass(frozen=True)
class Step:
    """One job of the chain: what it reads and writes (layout kinds) and when it may run."""

    name: str
    input_kind: str
    output_kind: str
    after: str | None  # the step whose exit code decides whether this one runs (None: the first)
    runs_on: frozenset[int]  # the exit codes of ``after`` that let it run
    why: str


STEPS: tuple[Step, ...] = (
    Step("preprocess", layout.WARC, layout.PREPROCESSED, None, frozenset(), "the day's archives -> pages"),
    Step(
        "index",
        layout.PREPROCESSED,
        layout.INDEX,
        "preprocess",
        frozenset({EXIT_OK, EXIT_UNHEALTHY}),
        "an unhealthy day (3) is published: it is indexed anyway, the best there is",
    ),
    Step(
        "catalogue",
        layout.PREPROCESSED,
        layout.CATALOGUE,
        "index",
        frozenset({EXIT_OK}),
        "its report shows the index's shard sizes: an indexed day only",
    ),
)
STEP_NAMES = tuple(s.name for s in STEPS)
#: a batch of a day (lib/preprocess/batches.py): preprocessed and indexed on its own, published under
#: the day as batch=N/; the catalogue (URL database, CDXJ, report) is the day's, when the day closes
BATCH_STEPS: tuple[Step, ...] = STEPS[:2]


def step(name: str) -> Step:
    """The step called ``name`` (KeyError for one the chain does not have)."""
    for s in STEPS:
        if s.name == name:
            return s
    raise KeyError(f"the chain has no step {name!r} (steps: {', '.join(STEP_NAMES)})")


def may_run(s: Step, codes: Codes) -> bool:
    """Whether step ``s`` runs after the exit codes so far (its ``after`` step's code in ``runs_on``)."""
    return s.after is None or codes.get(s.after) in s.runs_on


def night_ok(codes: Codes, steps: tuple[Step, ...] = STEPS) -> bool:
    """Whether every step ran and exited 0 (the success marker)."""
    return all(codes.get(s.name) == EXIT_OK for s in steps)


def night_exit(codes: Codes, steps: tuple[Step, ...] = STEPS) -> int:
    """The night's (or a batch's, ``steps``) exit code from its steps' (the module docstring has the rule)."""
    if night_ok(codes, steps):
        return EXIT_OK
    pre = codes.get("preprocess")
    if pre == EXIT_UNHEALTHY and all(codes.get(s.name) == EXIT_OK for s in steps[1:]):
        return EXIT_UNHEALTHY  # published, indexed and catalogued, but unhealthy
    if pre in (EXIT_USAGE, EXIT_EMPTY):  # no input folder (2) or no archives in it (4): nothing published
        return int(pre)
    if pre == EXIT_BUSY:  # another run of the day holds the output's lease: this one did nothing
        return EXIT_BUSY
    return EXIT_FAILED


def describe(codes: Codes, steps: tuple[Step, ...] = STEPS) -> str:
    """One line of the steps' exit codes: ``preprocess exit 0, index exit 0, catalogue exit not run``."""
    return ", ".join(f"{s.name} exit {'not run' if codes.get(s.name) is None else codes[s.name]}" for s in steps)


#: when the chain publishes a slice's index update for mirrors (docs/mirror.md) after its index step
MIRROR_MODES = ("auto", "on", "off")


def publishes_updates(output_root: str, mode: str = "auto") -> bool:
    """Whether the chain publishes index updates: ``on``, ``off``, or ``auto``: when the root has
    ``public/_updates/`` (a root that publishes updates made that folder with its first one; a root
    that does not is not given one behind its operator's back)."""
    if mode not in MIRROR_MODES:
        raise ValueError(f"mirror updates: {mode!r} is none of {', '.join(MIRROR_MODES)}")
    if mode != "auto":
        return mode == "on"
    return not storage.is_s3(output_root) and os.path.isdir(updates_dir(output_root))


@dataclass(frozen=True)
class DayPaths:
    """Where a night reads and writes: the day's archives under ``input_root`` (a bucket root
    holding ``warc/``), its outputs under ``output_root`` (the cluster filesystem)."""

    date: dt.date
    input_root: str
    output_root: str
    urldb: str | None = None  # default OUTPUT_ROOT/urldb
    signatures: str | None = None  # default OUTPUT_ROOT/signatures
    batch: int | None = None  # a batch of the day: its outputs are the day's batch=N/ folders
    linkdb: str | None = None  # default OUTPUT_ROOT/linkdb
    links: bool = True  # the catalogue merges the day's links into the link database (docs/links.md)

    @property
    def archives(self) -> str:
        return layout.day_path(self.input_root.rstrip("/"), layout.WARC, self.date)

    @property
    def warc_prefix(self) -> str:
        """The folder the catalogue's CDXJ names archives relative to."""
        return storage.join(self.input_root.rstrip("/"), layout.WARC)

    def output(self, kind: str) -> str:
        """The day's output folder of ``kind`` (preprocessed, index, catalogue), or the batch's in it."""
        day = layout.day_path(self.output_root, kind, self.date)
        return day if self.batch is None else batch_path(day, self.batch)

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps this run has: a batch's, or the whole night's."""
        return STEPS if self.batch is None else BATCH_STEPS

    @property
    def outputs(self) -> dict[str, str]:
        """The published folders by kind, as the marker records them."""
        return {s.output_kind: self.output(s.output_kind) for s in self.steps}

    @property
    def urldb_dir(self) -> str:
        return self.urldb or os.path.join(self.output_root, layout.URLDB)

    @property
    def signatures_dir(self) -> str:
        return self.signatures or os.path.join(self.output_root, "signatures")

    @property
    def linkdb_dir(self) -> str:
        return self.linkdb or os.path.join(self.output_root, "linkdb")


def exclusions_for(output_root: str, given: str | None) -> str | None:
    """The take-down list the three steps apply: the one given, else ``OUTPUT_ROOT/_exclusions.jsonl``
    when it exists (lib/pages/exclusions.py), else none."""
    if given:
        return given
    at_root = os.path.join(output_root, layout.EXCLUSIONS)
    return at_root if os.path.isfile(at_root) else None


def make_marker(
    paths: DayPaths,
    data_center: str,
    job_id: str,
    codes: Codes,
    summaries: Mapping[str, dict[str, Any] | None],
    *,
    log: str | None = None,
    run_logs: str | None = None,
    mirror_update: dict[str, Any] | None = None,
) -> Marker:
    """The marker of a night whose steps exited ``codes`` with ``summaries`` (by step name);
    ``mirror_update``: the index update it published (an ``error`` in it: the night is not ok)."""
    pre = codes.get("preprocess")
    return Marker(
        ok=night_ok(codes, paths.steps) and not (mirror_update and "error" in mirror_update),
        date=paths.date.isoformat(),
        data_center=data_center,
        job_id=job_id,
        preprocess_rc=pre,
        index_rc=codes.get("index"),
        catalogue_rc=codes.get("catalogue"),
        outputs=paths.outputs,
        summaries={s.name: summaries.get(s.name) for s in paths.steps},
        health=(summaries.get("preprocess") or {}).get("health"),
        input=INPUT_STATES.get(pre) if pre is not None else None,
        busy=pre == EXIT_BUSY,
        log=log,
        run_logs=run_logs,
        urldb=paths.urldb_dir,
        finished=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        batch=paths.batch,
        mirror_update=mirror_update,
    )


def nothing_new_marker(
    paths: DayPaths, data_center: str, job_id: str, log: str | None = None, run_logs: str | None = None
) -> Marker:
    """The marker of a batch tick that found nothing to do: ok, no step run, nothing published."""
    return Marker(
        ok=True,
        date=paths.date.isoformat(),
        data_center=data_center,
        job_id=job_id,
        preprocess_rc=None,
        log=log,
        run_logs=run_logs,
        finished=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        nothing_new=True,
    )


def plan_batch(
    paths: DayPaths, settle: float, say: Callable[[str], None]
) -> tuple[DayPaths, list[str] | None, list[int]] | None:
    """What a batch tick of the day at ``paths`` runs: the paths of its batch, the archives it reads
    (None: the batch is published, only its index runs) and the batches left unindexed; None when
    there is nothing to do (lib/preprocess/batches.py)."""
    behind = batches.unindexed(paths.output(layout.PREPROCESSED), paths.output(layout.INDEX))
    if behind:  # a batch killed after its pages were published, before its index was: index it first
        say(f"day: batch {behind[0]} of {paths.date} has its pages published but not its index: indexing it")
        return dataclasses.replace(paths, batch=behind[0]), None, behind
    plan = batches.next_batch(paths.archives, paths.output(layout.PREPROCESSED), settle)
    if plan is None:
        say(f"day: no new archives for a batch of {paths.date} under {paths.archives}: nothing to do")
        return None
    only = plan.names(paths.archives)
    say(
        f"day: batch {plan.number} of {paths.date}: {len(only)} archive(s) new since the last batch "
        f"({plan.taken_before} taken before, {len(plan.waiting)} still being written)"
    )
    return dataclasses.replace(paths, batch=plan.number), only, []
