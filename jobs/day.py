"""A day's chain in one Spark application: preprocess, index, then catalogue, and the marker.

    dailyslice day --date 2026-01-15 --input-root s3://crawl-dc1 --output-root /scratch/dc1
    spark-submit jobs/day.py --date 2026-01-15 --input-root ROOT --output-root OUT --data-center dc1 \\
        --job-id 4242 --marker OUT/_runs/dc1/2026-01-15.json --run-logs LOGS/run-4242

The steps and the rule for which exit codes let the next one run are
:mod:`lib.orchestration.chain`'s; the marker is :class:`lib.orchestration.marker.Marker`. Each
step is its job's :meth:`~lib.runtime.sparkjob.SparkJob.call` with the options its command line
would give (``--preprocess-args`` and the like add to it, as that job's flags), in one
:class:`~lib.runtime.session.SharedSession`: one driver JVM a night, not one a job, started only
once a step gets past its input check and lease. deploy/common/run-day.sh sets up the allocation
(Slurm, Magpie) and submits this; ``dailyslice demo`` calls :func:`run_steps`.

``--batch`` runs the day's next batch instead (lib/preprocess/batches.py): the archives that
arrived since the last batch, preprocessed and indexed on their own
(:data:`lib.orchestration.chain.BATCH_STEPS`) and published under the day as ``batch=N/``,
``_SUCCESS`` last, with the marker ``_runs/DC/DATE.batch=N.json``; every tick also writes its marker to
``--marker`` (default ``_runs/DC/DATE.tick.json``): the batch's, or one with ``nothing_new`` when it found
nothing new (exit 0). ``--plan-only`` only looks: that marker and 0, or 10 when there is a batch to run.
A batch whose pages were published but not its index (killed between the two) is indexed first.
The night of a day that has published batches consolidates them (:func:`close_day`) instead of
reading the day's archives again. After a step ``index`` exited 0, the slice's index update for
mirrors is published (``--mirror-updates``, :func:`lib.orchestration.chain.publishes_updates`).

Exit codes: the night's (:func:`lib.orchestration.chain.night_exit`): 0 every step exited 0 (the
marker ``MARKER`` is written); otherwise ``MARKER.failed.json`` is, and 1 a step failed, 2 no
input folder (or bad arguments: then no marker), 3 published, indexed and catalogued but
unhealthy, 4 no archives in the input folder, 5 another run of the day held its lease.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import shlex
import shutil
import sys
import time
from typing import Any, Callable, Mapping

from jobs.catalogue import CatalogueJob
from jobs.index import IndexJob
from jobs.preprocess import PreprocessJob
from lib.errors import UsageError
from lib.index.mirror_updates import publish_update, target_of
from lib.orchestration import chain
from lib.orchestration.marker import remove_markers, tick_path
from lib.preprocess import batches
from lib.preprocess.consolidate import consolidate
from lib.runtime.options import JobOptions, parse_date
from lib.runtime.result import EXIT_FAILED, EXIT_UNHEALTHY, EXIT_USAGE, JobResult, log
from lib.runtime.session import SharedSession, setup_logging
from lib.runtime.sparkjob import SparkJob
from lib.store import layout, storage
from lib.warc.records import ARCHIVE_SUFFIXES

#: the job of each step of the chain (lib.orchestration.chain.STEPS names them)
JOBS: dict[str, type[SparkJob]] = {"preprocess": PreprocessJob, "index": IndexJob, "catalogue": CatalogueJob}
#: a night whose archives take at most this many bytes starts a local driver JVM light (C1 only, the serial
#: collector: LIGHT_DRIVER_OPTS): about the archives of a day the catalogue calls small (lib.catalogue.day_captures)
LIGHT_NIGHT_BYTES = 1 << 30
#: ``--plan-only``'s exit code when the tick has a batch to run (none of the night's codes)
EXIT_WORK = 10


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dailyslice day", description=__doc__.splitlines()[0])
    p.add_argument("--date", type=parse_date, required=True, help="day to process, YYYY-MM-DD")
    p.add_argument("--input-root", required=True, help="bucket root holding warc/YYYY-MM/DD (s3:// or a path)")
    p.add_argument("--output-root", required=True, help="cluster filesystem root of preprocessed/, index/, ...")
    p.add_argument("--data-center", default="default", help="name in the marker (default: %(default)s)")
    p.add_argument("--job-id", help="the run's id in the marker (default: local-PID)")
    p.add_argument(
        "--marker",
        help="the marker file (default: OUTPUT_ROOT/_runs/DATA_CENTER/DATE.json; with --batch the tick's, "
        "default DATE.tick.json, and a batch's own is DATE.batch=N.json)",
    )
    p.add_argument("--log", help="the run log the marker names")
    p.add_argument("--run-logs", help="folder of the run's other logs: summaries/, _errors.jsonl")
    p.add_argument("--urldb", help="the URL database the catalogue merges into (default: OUTPUT_ROOT/urldb)")
    p.add_argument("--signatures", help="the index's signature store (default: OUTPUT_ROOT/signatures)")
    p.add_argument(
        "--linkdb", help="the link database the catalogue merges the day's links into (default: OUTPUT_ROOT/linkdb)"
    )
    p.add_argument(
        "--no-links",
        action="store_true",
        help="leave the link database alone: the catalogue runs without --links (the night's default on a local "
        "output root merges the day's graph edges into it, under the URL database's lease; docs/links.md)",
    )
    p.add_argument("--exclusions", help="take-down list (default: OUTPUT_ROOT/_exclusions.jsonl when it exists)")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting (repeat)")
    p.add_argument("--log-level", default="WARN", help="Spark log level (default: %(default)s)")
    for name in chain.STEP_NAMES:
        p.add_argument(
            f"--{name}-args",
            default="",
            metavar="ARGS",
            help=f"more {name} flags, one shell string (--{name}-args='--flag value')",
        )
    p.add_argument(
        "--batch",
        action="store_true",
        help="run the day's next batch instead of the whole night: the archives arrived since the last batch, "
        "preprocessed and indexed on their own and published under the day as batch=N/ (lib/preprocess/batches.py)",
    )
    p.add_argument(
        "--settle",
        type=float,
        default=batches.SETTLE_SECONDS,
        metavar="SECONDS",
        help="a batch takes a local archive once it is this old: it may still be written (default: %(default)s)",
    )
    p.add_argument(
        "--plan-only",
        action="store_true",
        help=f"with --batch: only look: nothing to do writes the tick's nothing_new marker and exits 0, a batch to "
        f"run exits {EXIT_WORK} with nothing written (run-day.sh asks before it starts Spark)",
    )
    p.add_argument(
        "--mirror-updates",
        choices=chain.MIRROR_MODES,
        default="auto",
        help="publish the index update of the day (or batch) for mirrors once its index is published: auto when "
        "OUTPUT_ROOT/public/_updates/ exists, on, off (default: %(default)s; docs/mirror.md)",
    )
    p.add_argument(
        "--driver-failed",
        type=int,
        metavar="RC",
        help="write only the failure marker of a night whose driver exited RC before writing one (run-day.sh)",
    )
    return p


def step_argv(
    name: str,
    paths: chain.DayPaths,
    exclusions: str | None,
    summaries: str | None,
    extra: str = "",
    only: list[str] | None = None,
) -> list[str]:
    """The command line of step ``name`` of the night at ``paths`` (what run-day.sh gave each job);
    for a batch (``paths.batch``), preprocess reads the archives ``only`` names and the index matches
    no other day (the day's consolidation does)."""
    s = chain.step(name)
    argv = ["--date", paths.date.isoformat(), "--output", paths.output(s.output_kind)]
    argv += ["--input", paths.archives if s.input_kind == layout.WARC else paths.output(s.input_kind)]
    if name == "preprocess" and only is not None:
        argv += ["--only", batches.only_list(only)]
    if name == "index":
        argv += ["--dup-store", paths.signatures_dir]
        # a batch matches no other day (its day does, once closed), and a batch of archives with no page
        # (robots.txt, non-HTML) is published empty: else its taken archives would leave it unindexed for good
        argv += ["--dup-days", "0", "--allow-empty"] if paths.batch else []
    if name == "catalogue":
        argv += ["--index", paths.output(layout.INDEX), "--urldb", paths.urldb_dir, "--warc-prefix", paths.warc_prefix]
        if paths.links:  # the night keeps the link database current (lib/orchestration/chain.py)
            argv += ["--links", "--linkdb", paths.linkdb_dir]
    if summaries:
        argv += ["--summary", os.path.join(summaries, f"{name}.json")]
    if exclusions:
        argv += ["--exclusions", exclusions]
    return argv + shlex.split(extra)


def plan_options(
    a: argparse.Namespace, paths: chain.DayPaths, exclusions: str | None, only: list[str] | None = None
) -> dict[str, JobOptions]:
    """Each step's options, from its command line (argparse exits 2 on a bad one, before anything runs)."""
    summaries = os.path.join(a.run_logs, "summaries") if a.run_logs else None
    out = {}
    for name in (s.name for s in paths.steps):
        argv = step_argv(name, paths, exclusions, summaries, getattr(a, f"{name}_args"), only)
        out[name] = JOBS[name]().options_from_argv(argv)
    return out


def plain(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary as its JSON file holds it (what the marker embeds)."""
    return json.loads(json.dumps(summary, sort_keys=True, default=str))


def run_step(name: str, options: JobOptions, spark: Any) -> JobResult:
    """Step ``name`` in ``spark`` (a session or a :class:`SharedSession`); a usage error found before
    it ran is a result with :data:`EXIT_USAGE`, any other exception one with :data:`EXIT_FAILED`."""
    try:
        return JOBS[name]().call(options, spark)
    except UsageError as e:
        print(f"{name}: error: {e}", file=sys.stderr, flush=True)
        return JobResult(ok=False, summary={}, code=EXIT_USAGE)
    except Exception:  # the session did not start, or the job broke outside its run
        log.exception("%s failed", name)
        return JobResult(ok=False, summary={}, code=EXIT_FAILED)


def run_steps(
    options: Mapping[str, JobOptions],
    spark: Any,
    say: Callable[[str], None] = print,
    steps: tuple[chain.Step, ...] = chain.STEPS,
    before: tuple[dict[str, int | None], dict[str, dict[str, Any] | None]] | None = None,
) -> tuple[dict[str, int | None], dict[str, dict[str, Any] | None]]:
    """The chain's steps in order, each only when :func:`chain.may_run` lets it; the exit codes and
    the summaries by step name (None: not run, or it wrote no summary). ``before``: the codes and
    summaries of steps already run another way (a closing day's consolidation)."""
    codes: dict[str, int | None] = dict(before[0]) if before else {}
    summaries: dict[str, dict[str, Any] | None] = dict(before[1]) if before else {}
    for s in steps:
        if s.name in codes:  # run already (``before``)
            continue
        if not chain.may_run(s, codes):
            codes[s.name], summaries[s.name] = None, None
            continue
        say(f"day: {dt.datetime.now(dt.timezone.utc):%Y-%m-%dT%H:%M:%SZ} {s.name}")
        result = run_step(s.name, options[s.name], spark)
        codes[s.name], summaries[s.name] = result.exit_code, plain(result.summary) if result.summary else None
    return codes, summaries


def light_night(archives: str) -> bool:
    """Whether the night's archives are few enough for a light local driver JVM (:data:`LIGHT_NIGHT_BYTES`):
    every step's JVM then only schedules Python tasks and runs small queries."""
    try:
        return sum(f.size for f in storage.list_files(archives, ARCHIVE_SUFFIXES)) <= LIGHT_NIGHT_BYTES
    except (OSError, FileNotFoundError):
        return True  # preprocess says what is wrong with the input; no JVM starts for it


def day_paths(a: argparse.Namespace) -> chain.DayPaths:
    """Where the night ``a`` (the command line's) reads and writes, and whether it merges the links.

    The link database merges a day's graph edges read from a local (cluster filesystem) index day, so
    a night publishing to ``s3://`` leaves it alone unless ``--linkdb`` is given, rather than merging
    nothing each night (docs/links.md); an ``s3://`` ``--linkdb`` is refused."""
    if a.linkdb and storage.is_s3(a.linkdb):
        raise UsageError(f"day: --linkdb {a.linkdb}: the link database lives on a local or cluster filesystem")
    links = not a.no_links and (bool(a.linkdb) or not storage.is_s3(a.output_root))
    return chain.DayPaths(a.date, a.input_root, a.output_root, a.urldb, a.signatures, linkdb=a.linkdb, links=links)


def close_day(
    a: argparse.Namespace,
    paths: chain.DayPaths,
    exclusions: str | None,
    spark: Any,
    say: Callable[[str], None],
) -> tuple[dict[str, int | None], dict[str, dict[str, Any] | None]]:
    """The night of a day published in batches: the archives no batch took yet preprocessed as its last
    batch, the batches consolidated into the day (lib/preprocess/consolidate.py), then the day indexed
    and catalogued as any night. The ``preprocess`` step's code is the last batch's (0 without one),
    or 1 when the consolidation failed; its summary says what was consolidated."""
    day_pre = paths.output(layout.PREPROCESSED)
    summary: dict[str, Any] = {}
    code: int | None = 0
    tail = batches.next_batch(paths.archives, day_pre, settle=0)  # the day is over: nothing is still written
    if tail is not None:
        bpaths = dataclasses.replace(paths, batch=tail.number)
        say(f"day: closing {a.date}: batch {tail.number} of the {len(tail.files)} archive(s) no batch took")
        opts = plan_options(a, bpaths, exclusions, tail.names(paths.archives))
        codes, sums = run_steps(opts, spark, say, chain.STEPS[:1])
        code, summary["last_batch"] = codes["preprocess"], sums["preprocess"]
    if code in (0, EXIT_UNHEALTHY):
        say(f"day: {dt.datetime.now(dt.timezone.utc):%Y-%m-%dT%H:%M:%SZ} consolidate")
        try:
            summary["consolidated"] = consolidate(day_pre)
        except Exception as e:  # the batches stay as they were: the next night consolidates them again
            log.exception("consolidating the batches of %s failed", a.date)
            summary["error"] = f"{type(e).__name__}: {e}"
            code = EXIT_FAILED
    options = plan_options(a, paths, exclusions)
    return run_steps(options, spark, say, chain.STEPS[1:], ({"preprocess": code}, {"preprocess": summary}))


def publish_mirror_update(paths: chain.DayPaths, say: Callable[[str], None]) -> dict[str, Any]:
    """The index update of the slice the chain just published (:func:`publish_update`): the marker's
    ``mirror_update`` record, ``{"id", "target"}``, ``{"unchanged": target}`` or ``{"error": why}``."""
    target = target_of(paths.date, paths.batch)
    try:
        man = publish_update(paths.output_root, paths.date, paths.batch)
    except Exception as e:  # the slice is published; its update is not: the marker says why, the night fails
        log.exception("the mirror update of %s failed", target)
        return {"error": f"{type(e).__name__}: {e}", "target": target}
    if man is None:
        say(f"day: mirror update of {target}: nothing changed since its last update")
        return {"unchanged": target}
    say(f"day: mirror update {man['id']} of {target} published")
    return {"id": man["id"], "target": target}


def night(a: argparse.Namespace, say: Callable[[str], None] = print, spark: Any = None) -> int:
    """Run the night ``a`` describes (the command line's), write its marker; its exit code. ``spark``:
    a session to run the steps in (a test's, or the demo's) instead of the night's own application."""
    if a.plan_only and not a.batch:
        raise UsageError("day: --plan-only plans a batch tick: it needs --batch")
    paths = day_paths(a)
    job_id = a.job_id or f"local-{os.getpid()}"
    # a tick's marker is the tick's, whatever it does: its caller cannot know the batch's number beforehand
    tick = (a.marker or tick_path(a.output_root, a.data_center, a.date.isoformat())) if a.batch else None
    if a.driver_failed is not None:  # before planning: the batch the dead driver ran may look published now
        marker_file = tick or a.marker or os.path.join(a.output_root, layout.RUNS, a.data_center, f"{a.date}.json")
        remove_markers(marker_file)
        m = chain.make_marker(paths, a.data_center, job_id, {"preprocess": a.driver_failed}, {})
        path = dataclasses.replace(m, input=None, busy=False).write(marker_file)  # the driver's code, not preprocess's
        say(f"day: the driver exited {a.driver_failed} before it wrote a marker; marker {path}")
        return a.driver_failed or EXIT_FAILED
    only: list[str] | None = None
    behind: list[int] = []
    if tick:
        remove_markers(tick)  # an earlier tick's marker must not vouch for this one
        planned = chain.plan_batch(paths, a.settle, say)
        if planned is None:  # ok, nothing run: the caller tells this from a failure by the marker's nothing_new
            say(f"day: marker {chain.nothing_new_marker(paths, a.data_center, job_id, a.log, a.run_logs).write(tick)}")
            return 0
        paths, only, behind = planned
        if a.plan_only:
            return EXIT_WORK
    name = f"{a.date.isoformat()}.json" if paths.batch is None else f"{a.date.isoformat()}.batch={paths.batch}.json"
    marker_file = os.path.join(a.output_root, layout.RUNS, a.data_center, name) if tick else a.marker
    marker_file = marker_file or os.path.join(a.output_root, layout.RUNS, a.data_center, name)
    remove_markers(marker_file)  # a marker of an earlier run of the day must not vouch for this one
    exclusions = chain.exclusions_for(a.output_root, a.exclusions)
    say(f"day: exclusion list {exclusions or 'none'}")
    options = plan_options(a, paths, exclusions, only)
    # a day some batches were published of, not yet closed: this night consolidates them (close_day)
    closing = paths.batch is None and bool(batches.published_batches(paths.output(layout.PREPROCESSED)))
    base = JobOptions(master=a.master, conf=tuple(a.conf), log_level=a.log_level)
    shared = SharedSession("day", base, light=light_night(paths.archives))
    t0 = time.perf_counter()
    try:
        session = shared if spark is None else spark
        if closing:
            codes, summaries = close_day(a, paths, exclusions, session, say)
        elif behind:
            codes, summaries = run_steps(options, session, say, paths.steps, ({"preprocess": 0}, {"preprocess": None}))
        else:
            codes, summaries = run_steps(options, session, say, paths.steps)
    finally:
        shared.stop()
    update = None
    if codes.get("index") == 0 and chain.publishes_updates(a.output_root, a.mirror_updates):
        update = publish_mirror_update(paths, say)
    pre = codes.get("preprocess")
    errors = os.path.join(paths.output(layout.PREPROCESSED), layout.ERRORS)
    if a.run_logs and pre in (0, EXIT_UNHEALTHY) and os.path.isfile(errors):  # the bad-record report, with the logs
        shutil.copyfile(errors, os.path.join(a.run_logs, layout.ERRORS))
    m = chain.make_marker(
        paths, a.data_center, job_id, codes, summaries, log=a.log, run_logs=a.run_logs, mirror_update=update
    )
    path = m.write(marker_file)
    if tick:
        m.write(tick)
    say(
        f"day: {chain.describe(codes, paths.steps)}; {shared.starts} Spark application(s), "
        f"{time.perf_counter() - t0:.1f} s"
    )
    say(f"day: marker {path}")
    if update and "error" in update:
        say(f"day: the mirror update of {update['target']} failed: {update['error']}")
        return EXIT_FAILED  # published but not for mirrors: `dailyslice mirror publish` (or a re-run) adds it
    return chain.night_exit(codes, paths.steps)


def main(argv: list[str] | None = None) -> int:
    setup_logging()
    a = parser().parse_args(argv)
    if a.run_logs:
        os.makedirs(os.path.join(a.run_logs, "summaries"), exist_ok=True)
    try:
        return night(a, lambda line: print(line, flush=True))
    except UsageError as e:
        print(f"day: error: {e}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
