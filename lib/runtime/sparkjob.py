"""Base class for the Spark entry points (the cc-pyspark pattern, with tests).

A job subclasses :class:`SparkJob`, declares its options once, as a frozen dataclass (its
``options_class``, a :class:`~lib.runtime.options.JobOptions` whose fields are
:func:`~lib.runtime.options.opt`: default, help and flag together; the command line is
generated from it), and implements ``run(spark, options) -> JobResult``. The command line is
only a shell: ``main(argv)`` parses it into the options object and calls the job with it, as
Python callers do with ``job.call(options, spark)``. The base class handles the paths
(``--date/--root`` or ``--input/--output``), the input check, the output's lease, the Spark
session (:mod:`lib.runtime.session`), the summary and the exit code
(:mod:`lib.runtime.result`). A run times its named steps with ``self.steps``
(:class:`~lib.runtime.steps.Steps`) and assembles its output in ``self.work_dir(...)``
(:class:`~lib.store.publish.WorkDir`, published in one step); :func:`lib.runtime.maptasks.map_tasks`
runs a function over a list of task indexes and collects its small result rows. A job whose work
is only such tasks sets ``context_only`` and gets a :class:`~lib.runtime.session.ContextOnly` (no
SQL session to build, ~0.5 s of a local run).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from typing import Any

from lib.errors import UsageError
from lib.runtime import localmode
from lib.runtime.options import JobOptions, OptionsT, build_parser
from lib.runtime.result import EXIT_BUSY, EXIT_UNHEALTHY, EXIT_USAGE, JobResult, log
from lib.runtime.session import SharedSession, on_cluster, setup_logging, start_session
from lib.runtime.steps import Steps
from lib.store import layout, lease, s3, storage, update_log
from lib.store.publish import WorkDir


def resolved(path: str | None, what: str) -> str:
    """A folder :meth:`SparkJob.resolve_io` filled (a :class:`UsageError` for options it was not given)."""
    if path is None:
        raise UsageError(f"no {what} folder: the options were not resolved (SparkJob.resolve_io)")
    return path


class SparkJob:
    """Override ``name``, ``input_kind``/``output_kind``, ``options_class`` and ``run``.

    ``run(spark, options)`` is the job's work on resolved options (``input``/``output`` set);
    :meth:`call` wraps it (paths, input check, lease, session, summary) for Python callers
    and :meth:`main` for the command line. ``run`` times its steps with ``self.steps`` (a
    fresh :class:`Steps` per call)."""

    name = "job"
    options_class: type[JobOptions] = JobOptions
    description = ""
    input_kind = layout.WARC
    output_kind = "out"
    light_driver = False  # True: the JVM only schedules Python tasks (LIGHT_DRIVER_OPTS in local runs)
    checks_input = False  # True: a missing --input is a usage error, an empty one exits EXIT_EMPTY (--allow-empty)
    context_only = False  # True: run() uses only spark.sparkContext; a session of its own is a ContextOnly
    _archive: localmode.ArchivePlan | None = None  # the driver JVM's class archive, set by session()

    def __init__(self) -> None:
        self.steps = Steps()

    def light(self, args: JobOptions) -> bool:
        """Whether this run's JVM only schedules Python tasks (``light_driver``, unless the
        job's options add JVM-side work)."""
        return self.light_driver

    def run(self, spark: Any, options: Any) -> JobResult:  # pragma: no cover - abstract
        """The job's work on resolved options (an instance of ``options_class``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ options
    def parser(self) -> argparse.ArgumentParser:
        """The command line, generated from ``options_class`` (:func:`build_parser`)."""
        return build_parser(
            self.options_class,
            f"{self.name}.py",
            self.description,
            input_kind=self.input_kind,
            output_kind=self.output_kind,
        )

    def options_from_argv(self, argv: list[str] | None = None) -> Any:
        """The options object of a command line (argparse exits 2 on a bad one)."""
        return self.options_class.from_args(self.parser().parse_args(argv))

    def resolve_io(self, args: Any) -> Any:
        """The options (an ``options_class``: ``Any`` as in :meth:`run`, so a job's override takes
        its own class) with ``input``/``output`` settled (:meth:`fill_io`)."""
        return self.fill_io(args)

    def fill_io(self, args: OptionsT) -> OptionsT:
        """The options with ``input``/``output`` filled from ``date``/``root`` where not given
        (:class:`UsageError` when neither is there)."""
        inp, out = args.input, args.output
        if inp is None or out is None:
            if args.date is None or args.root is None:
                raise UsageError(f"{self.name}: give --date and --root, or --input and --output")
            inp = inp or layout.day_path(args.root, self.input_kind, args.date)
            out = out or layout.day_path(args.root, self.output_kind, args.date)
        return replace(args, input=inp, output=out)

    # ------------------------------------------------------------------ spark
    def session(self, args: JobOptions) -> Any:
        """A Spark session for this job's options (``master``, ``conf``, ``log_level``); a
        :class:`ContextOnly` for a job that says it needs no more (``context_only``)."""
        spark, self._archive = start_session(self.name, args, light=self.light(args), context_only=self.context_only)
        return spark

    def work_dir(self, spark: Any, args: JobOptions) -> WorkDir:
        """The private folder this run assembles ``args.output`` in (:class:`WorkDir`)."""
        return WorkDir(resolved(args.output, "output"), args.staging, cluster=on_cluster(spark), name=self.name)

    # ------------------------------------------------------------------ call
    def call(self, options: JobOptions, spark: Any = None) -> JobResult:
        """Run the job with ``options`` (an ``options_class``) and return its result.

        Fills ``input``/``output`` from ``date``/``root``, checks the input exists, holds the
        output's lease, starts a session unless ``spark`` is given (and stops only its own; a
        :class:`SharedSession` is started by the first job that gets this far), runs :meth:`run`,
        and completes, logs and (``options.summary``) writes the summary.
        Raises :class:`UsageError` before anything runs when the paths are missing or the input
        does not exist; every later failure is a result that is not ok (``exit_code`` says which).
        """
        args = self.resolve_io(options)
        self._check_input(args)
        self.steps = Steps()
        t0, s3_before = time.time(), s3.counters()
        try:
            held = self._hold_output(args)
        except lease.Busy as e:
            self.last_result = self._refused(args, e)
            return self.last_result
        result = self._run_in_session(spark, args, held)
        self._complete_summary(result, args, held, t0, s3_before)
        self._log_update(result, args)
        self._report(result, args)
        self.last_result = result
        return result

    def _log_update(self, result: JobResult, args: JobOptions) -> None:
        """A published day of a dated job is one line of ``ROOT/shared/auxiliary/logs.csv``
        (:mod:`lib.store.update_log`): what a subscriber polls for."""
        root, day = getattr(args, "root", None), getattr(args, "date", None)
        published = result.ok or result.code == EXIT_UNHEALTHY
        if not (root and day and self.output_kind and published and not result.summary.get("empty")):
            return
        out = resolved(args.output, "output")
        if out != layout.day_path(root, self.output_kind, day) or not storage.exists(storage.join(out, layout.SUCCESS)):
            return  # an output elsewhere (--output), or nothing published
        try:
            upd = update_log.record(root, "day", f"{self.output_kind}/{layout.day_suffix(day)}", detail=self.name)
        except Exception as e:  # the day is published: a log line that cannot be written (disk, S3) is said, not fatal
            log.warning("%s: %s not written: %s", self.name, update_log.path(root), e)
            return
        if upd is not None:
            result.summary["update"] = upd.seq

    def _check_input(self, args: JobOptions) -> None:
        """A usage error when a job that checks its input is given one that does not exist."""
        if self.checks_input and not storage.folder_exists(resolved(args.input, "input")):
            raise UsageError(f"{self.name}: input {args.input} does not exist (mistyped --root, --date or --input?)")

    def _hold_output(self, args: JobOptions) -> lease.Lease | None:
        """The output's lease (:class:`lease.Busy` past ``--wait-lock``), for jobs that check their
        input: one run per output at a time, taken before Spark starts, so refusing is cheap."""
        if not self.checks_input:
            return None
        return lease.Lease(resolved(args.output, "output"), self.name, getattr(args, "wait_lock", 0.0)).acquire()

    def _busy(self, e: lease.Busy) -> None:
        """Say that another run holds what this one needs (the log and stderr)."""
        log.error("%s: %s", self.name, e)
        print(f"{self.name}.py: {e}", file=sys.stderr)

    def _refused(self, args: JobOptions, e: lease.Busy) -> JobResult:
        """The result of a run refused at its lease (nothing ran; its short summary is written)."""
        self._busy(e)
        result = JobResult(
            ok=False, summary={"job": self.name, "ok": False, "error": str(e), "busy": True}, code=EXIT_BUSY
        )
        if args.summary:
            storage.write_bytes(args.summary, json.dumps(result.summary, indent=2).encode())
        return result

    def _run_in_session(self, spark: Any, args: JobOptions, held: lease.Lease | None) -> JobResult:
        """:meth:`run` in ``spark`` or a session of its own (stopped after); the lease released."""
        own = spark is None
        if own or isinstance(spark, SharedSession):
            try:
                spark = self.session(args) if own else spark.get()
            except BaseException:
                if held is not None:
                    held.release()
                raise
        try:
            return self._guarded_run(spark, args)
        finally:
            if held is not None:
                held.release()
            if own:
                localmode.stop(spark, self._archive)

    def _guarded_run(self, spark: Any, args: JobOptions) -> JobResult:
        """:meth:`run`, its exceptions turned into results that are not ok (the code says which)."""
        try:
            return self.run(spark, args)
        except UsageError as e:  # an option problem found in run()
            print(f"{self.name}.py: error: {e}", file=sys.stderr)
            return JobResult(ok=False, summary={"error": str(e)}, code=EXIT_USAGE)
        except lease.Busy as e:  # shared state (the URL database) held by another run past the wait
            self._busy(e)
            return JobResult(ok=False, summary={"error": str(e), "busy": True}, code=EXIT_BUSY)
        except Exception as e:  # the summary must say why a run failed, then exit non-zero
            log.exception("%s failed", self.name)
            return JobResult(ok=False, summary={"error": f"{type(e).__name__}: {e}"})

    def _complete_summary(
        self, result: JobResult, args: JobOptions, held: lease.Lease | None, t0: float, s3_before: dict[str, int]
    ) -> None:
        """What every summary holds: the job, the lease wait, S3 requests, ok, seconds, output."""
        result.summary.setdefault("job", self.name)
        if held is not None and held.waited:
            result.summary["waited_for_lock_seconds"] = held.waited
        driver_s3 = s3.counters_since(s3_before)
        result.summary["s3"] = s3.add_counters(dict(driver_s3), result.summary.get("s3_executors"))
        result.summary["ok"] = result.ok
        result.summary["seconds"] = round(time.time() - t0, 3)
        result.summary.setdefault("output", args.output)

    def _report(self, result: JobResult, args: JobOptions) -> None:
        """The summary on stderr, and in ``args.summary`` when given."""
        text = json.dumps(result.summary, indent=2, sort_keys=True, default=str)
        print(f"== {self.name} summary ==\n{text}", file=sys.stderr)
        if args.summary:
            storage.write_bytes(args.summary, text.encode())

    # ------------------------------------------------------------------ main
    def main(self, argv: list[str] | None = None, spark: Any = None) -> int:
        """The command line: parse ``argv`` into the options, :meth:`call`, return the exit code."""
        setup_logging()
        parser = self.parser()
        options = self.options_class.from_args(parser.parse_args(argv))
        try:
            return self.call(options, spark).exit_code
        except UsageError as e:
            parser.error(str(e))  # exits 2, like argparse's own usage errors
