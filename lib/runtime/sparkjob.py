"""Base class for the Spark entry points (the cc-pyspark pattern, with tests).

A job subclasses :class:`SparkJob`, declares its options twice, once as a frozen dataclass
(its ``options_class``, a :class:`JobOptions` with the job's fields and defaults) and once as
the command line (``add_arguments``, whose ``dest`` names are the dataclass's fields; the
dataclass's defaults are the parser's), and implements ``run(spark, options) -> JobResult``.
The command line is only a shell: ``main(argv)`` parses it into the options object and calls
the job with it, as Python callers do with ``job.call(options, spark)``. The base class
handles the common options (``--date/--root`` or ``--input/--output``), the Spark session (an
existing one in tests, ``local[*]`` under plain ``python``, whatever ``spark-submit``
configured otherwise),
forwarding S3 settings to executors, shipping ``lib`` to a cluster, the summary and the
exit code, and the phases every job shares: :class:`Steps` times the named steps of a run
(the seconds the summaries report); :func:`lib.runtime.maptasks.map_tasks` runs a function
over a list of task indexes and collects its small result rows. A job whose work is only such
tasks sets ``context_only`` and gets a :class:`ContextOnly` (no SQL session to build, ~0.5 s
of a local run). What only a local driver JVM gains (class
archive, light JVM options, the compiled worker daemon) is in :mod:`lib.runtime.localmode`, which
the base class calls and which does nothing under ``spark-submit``.

Exit codes (``SparkJob.main``): 0 success; 1 the run failed (an exception: nothing was
published) or, for jobs without a code of their own, the job reported ``ok = false``; 2 usage
(bad or missing options, an input folder or S3 prefix that does not exist: nothing is
published, no Spark starts); 3 the output was published but the day is unhealthy (preprocess:
see :mod:`lib.preprocess.health`); 4 the input day exists but holds nothing to work on (no
archives, no pages, no captures): nothing is published unless ``--allow-empty`` asked for an
empty output; 5 another run of the same output holds its lease (:mod:`lib.store.lease`) and
``--wait-lock`` did not outlast it, or another run held the shared state the job changes (the
catalogue's URL database) longer than the job waits for it: nothing was published.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import uuid
import zipfile
from contextlib import contextmanager
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, Iterator, TypeVar

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from lib.errors import UsageError
from lib.runtime import localmode
from lib.store import atomic, layout, lease, s3, storage

log = logging.getLogger("dailyslice")

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNHEALTHY, EXIT_EMPTY, EXIT_BUSY = 0, 1, 2, 3, 4, 5


@dataclass
class JobResult:
    ok: bool
    summary: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    code: int = EXIT_FAILED  # exit code when not ok

    @property
    def exit_code(self) -> int:
        """The process exit code of this result (:data:`EXIT_OK` when ok)."""
        return EXIT_OK if self.ok else self.code


OptionsT = TypeVar("OptionsT", bound="JobOptions")


@dataclass(frozen=True)
class JobOptions:
    """The options every job takes (the common command-line options, same names and defaults).

    A job's own options subclass this. ``input``/``output`` may be left out when ``date`` and
    ``root`` are given (:meth:`SparkJob.resolve_io` fills them); sequences are tuples, so an
    options object is a value: a run never changes it, :func:`dataclasses.replace` makes another.
    """

    date: dt.date | None = None
    root: str | None = None
    input: str | None = None
    output: str | None = None
    master: str | None = None
    partitions: int = 0
    staging: str | None = None
    conf: tuple[str, ...] = ()  # KEY=VALUE Spark settings
    summary: str | None = None  # also write the run summary (JSON) to this file
    log_level: str = "WARN"
    exclusions: str | None = None

    @classmethod
    def from_args(cls: type[OptionsT], args: argparse.Namespace) -> OptionsT:
        """The options of a parsed command line (lists become tuples)."""
        given = vars(args)
        return cls(
            **{f.name: tuple(v) if isinstance(v := given[f.name], list) else v for f in fields(cls) if f.name in given}
        )

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every field's default, by name (what the command line's parser defaults to)."""
        return {f.name: f.default if f.default is not MISSING else f.default_factory() for f in fields(cls)}


class Steps:
    """Wall time per named step of a run, in seconds (ms precision): where a day's time went.

    ``with steps("map"): ...`` records the block's duration under ``"map"`` once the block
    finishes (a step that raised is not recorded: the run failed and says why instead).
    Steps may run in other threads (the index's graph beside its map). ``seconds`` is the
    dict the jobs report in their summaries.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - start, 3)


@dataclass(frozen=True)
class DayJobOptions(JobOptions):
    """The options of a job that checks its input day (``checks_input``): it holds a lease on
    its output and refuses an empty day unless asked."""

    wait_lock: float = 0.0  # seconds to wait for another run of the same output (0: refuse at once)
    allow_empty: bool = False  # publish an empty output when the input day holds nothing


def empty_input(job: str, args: DayJobOptions, what: str) -> JobResult | None:
    """The result of a run whose input day holds nothing (``what``: "no archives", ...):
    None when ``--allow-empty`` asks for an empty output, else a failed result with
    :data:`EXIT_EMPTY` and a clear line, logged now; the caller publishes nothing."""
    if args.allow_empty:
        log.warning("%s: %s in %s: publishing an empty output (--allow-empty)", job, what, args.input)
        return None
    line = f"{job}: {what} in {args.input}: nothing published (--allow-empty publishes an empty day)"
    log.error("%s", line)
    return JobResult(ok=False, summary={"error": line, "empty": True}, output=args.output, code=EXIT_EMPTY)


def parse_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--date must be YYYY-MM-DD, got {text!r}") from None


class WorkDir:
    """A job's output, assembled in a private folder and published in one step.

    Local or cluster-filesystem output is built in a sibling ``OUT.tmp-XXXXXXXX`` (same
    filesystem, so publishing is a rename; leftovers of crashed earlier runs are removed
    first). Output bound for S3 is built under ``staging`` (which must be a filesystem all
    executors share when they are not local) and uploaded with ``_SUCCESS`` last. Used as a
    context manager, an exception discards the folder, so a failed run publishes nothing.
    """

    def __init__(self, output: str, staging: str | None = None, *, cluster: bool = False, name: str = "job"):
        self.output = output
        self.to_s3 = storage.is_s3(output)
        if self.to_s3:
            if cluster and not staging:
                raise ValueError(
                    f"{name}: S3 output on a cluster needs --staging DIR on a file system all executors share"
                )
            base = staging or tempfile.mkdtemp(prefix=f"{name}-staging-")
            self.path = os.path.join(base, f"run-{uuid.uuid4().hex[:8]}")
        else:
            self.final = storage.local_path(output).rstrip("/")
            for stale in glob.glob(self.final + ".tmp-*"):
                shutil.rmtree(stale, ignore_errors=True)
            self.path = f"{self.final}.tmp-{uuid.uuid4().hex[:8]}"
        os.makedirs(self.path)

    def __enter__(self) -> "WorkDir":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.discard()

    def publish(self, marker: Any = "") -> None:
        """Write ``_SUCCESS`` (``marker`` as text, or JSON) last, then swap in or upload."""
        text = marker if isinstance(marker, str) else json.dumps(marker, sort_keys=True, default=str)
        atomic.write_bytes(os.path.join(self.path, layout.SUCCESS), text.encode(), fsync=True)
        if self.to_s3:
            storage.upload_tree(self.path, self.output)
        else:
            storage.commit_dir(self.path, self.final)

    def discard(self) -> None:
        """Remove the folder (a no-op after a local publish, which moved it into place)."""
        shutil.rmtree(self.path, ignore_errors=True)


def _zip_lib() -> str:
    """Zip the whole ``lib`` package (this module sits in ``lib/runtime``) so executors on other
    machines can import it."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(tempfile.mkdtemp(prefix="dailyslice-pyfiles-"), "lib.zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, dirnames, files in os.walk(here):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    full = os.path.join(dirpath, f)
                    z.write(full, os.path.join("lib", os.path.relpath(full, here)))
    return out


def setup_logging() -> None:
    """The jobs' log lines on stderr (INFO and up; py4j's only from WARNING): for commands."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # its shutdown chatter, not ours


def use_this_python() -> None:
    """Make Spark's Python workers run this interpreter (the venv's), unless told otherwise.

    Without it PySpark starts workers with whatever ``python3`` is first on PATH, which on a
    machine where the venv is not activated lacks pyarrow and everything else."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def on_cluster(spark: Any) -> bool:
    """Whether executors run outside this process (anything but a ``local[...]`` master)."""
    return not spark.sparkContext.master.startswith("local")


class ContextOnly:
    """What a job whose work is Python RDD tasks uses of a SparkSession: its ``sparkContext``
    (and ``stop``). Such a job (``SparkJob.context_only``) starts no SQL session of its own:
    building one costs ~0.5 s of the JVM before the first task can be asked for
    (docs/preprocess.md, "Where the job's time goes"). A caller's own SparkSession serves too."""

    def __init__(self, sc: SparkContext) -> None:
        self.sparkContext = sc

    def stop(self) -> None:
        self.sparkContext.stop()


class SparkJob:
    """Override ``name``, ``input_kind``/``output_kind``, ``options_class``, ``add_arguments``
    and ``run``.

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

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:  # pragma: no cover - default
        pass

    def run(self, spark: Any, options: Any) -> JobResult:  # pragma: no cover - abstract
        """The job's work on resolved options (an instance of ``options_class``)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ options
    def parser(self) -> argparse.ArgumentParser:
        p = argparse.ArgumentParser(prog=f"{self.name}.py", description=self.description)
        p.add_argument("--date", type=parse_date, help="day to process, YYYY-MM-DD")
        p.add_argument("--root", help="bucket root (local path, file:// or s3://bucket/prefix)")
        p.add_argument("--input", help=f"input folder (overrides ROOT/{self.input_kind}/YYYY-MM/DD)")
        p.add_argument("--output", help=f"output folder (overrides ROOT/{self.output_kind}/YYYY-MM/DD)")
        p.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
        p.add_argument("--partitions", type=int, default=0, help="Spark tasks (default: one per input file)")
        p.add_argument("--staging", help="local/cluster folder for output bound for S3 (default: a temp folder)")
        p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting")
        p.add_argument("--summary", help="also write the run summary (JSON) to this file")
        p.add_argument("--log-level", default="WARN", help="Spark log level (default WARN)")
        p.add_argument(
            "--exclusions",
            metavar="URI",
            help="exclusion list (take-downs, lib.pages.exclusions) to apply: a local path or s3:// URI that "
            "must exist, or 'none' (default ROOT/_exclusions.jsonl when it exists)",
        )
        if self.checks_input:
            p.add_argument(
                "--wait-lock",
                type=float,
                default=0.0,
                metavar="SECONDS",
                help=f"wait this long for another run of the same output to finish (default: refuse at "
                f"once, exit {EXIT_BUSY})",
            )
            p.add_argument(
                "--allow-empty",
                action="store_true",
                help=f"publish an empty output when the input day holds nothing (default: exit {EXIT_EMPTY}, "
                "nothing published)",
            )
        self.add_arguments(p)
        known = {a.dest for a in p._actions}
        p.set_defaults(
            **{
                k: list(v) if isinstance(v, tuple) else v  # one place for the defaults: the options
                for k, v in self.options_class.defaults().items()
                if k in known
            }
        )
        return p

    def options_from_argv(self, argv: list[str] | None = None) -> Any:
        """The options object of a command line (argparse exits 2 on a bad one)."""
        return self.options_class.from_args(self.parser().parse_args(argv))

    def resolve_io(self, args: OptionsT) -> OptionsT:
        """The options with ``input``/``output`` filled from ``date``/``root`` where not given
        (:class:`UsageError` when neither is there)."""
        if args.input is None or args.output is None:
            if args.date is None or args.root is None:
                raise UsageError(f"{self.name}: give --date and --root, or --input and --output")
        return replace(
            args,
            input=args.input or layout.day_path(args.root, self.input_kind, args.date),
            output=args.output or layout.day_path(args.root, self.output_kind, args.date),
        )

    # ------------------------------------------------------------------ spark
    def session(self, args: JobOptions) -> Any:
        """A Spark session for this job's options (``master``, ``conf``, ``log_level``); a
        :class:`ContextOnly` for a job that says it needs no more (``context_only``)."""
        use_this_python()
        settings = {
            "spark.app.name": f"dailyslice-{self.name}",
            "spark.ui.showConsoleProgress": "true",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
            "spark.sql.sources.partitionOverwriteMode": "static",
        }
        if args.master:
            settings["spark.master"] = args.master
        settings.update({f"spark.executorEnv.{k}": v for k, v in s3.s3_env().items()})
        conf = dict(kv.partition("=")[::2] for kv in args.conf)
        self._archive = localmode.prepare(conf, args.master, self.light(args))  # local runs only
        settings.update(conf)
        if self.context_only:
            spark: Any = ContextOnly(SparkContext.getOrCreate(SparkConf().setAll(list(settings.items()))))
        else:
            b = SparkSession.builder
            for k, v in settings.items():
                b = b.config(k, v)
            spark = b.getOrCreate()
        spark.sparkContext.setLogLevel(args.log_level)
        if on_cluster(spark):
            spark.sparkContext.addPyFile(_zip_lib())
        return spark

    def work_dir(self, spark: Any, args: JobOptions) -> WorkDir:
        """The private folder this run assembles ``args.output`` in (:class:`WorkDir`)."""
        return WorkDir(args.output, args.staging, cluster=on_cluster(spark), name=self.name)

    # ------------------------------------------------------------------ call
    def call(self, options: JobOptions, spark: Any = None) -> JobResult:
        """Run the job with ``options`` (an ``options_class``) and return its result.

        Fills ``input``/``output`` from ``date``/``root``, checks the input exists, holds the
        output's lease, starts a session unless ``spark`` is given (and stops only its own),
        runs :meth:`run`, and completes, logs and (``options.summary``) writes the summary.
        Raises :class:`UsageError` before anything runs when the paths are missing or the input
        does not exist; every later failure is a result that is not ok (``exit_code`` says which).
        """
        args = self.resolve_io(options)
        if self.checks_input and not storage.folder_exists(args.input):
            raise UsageError(f"{self.name}: input {args.input} does not exist (mistyped --root, --date or --input?)")
        own = spark is None
        self.steps = Steps()
        t0 = time.time()
        s3_before = s3.counters()
        held = None
        if self.checks_input:  # one run per output at a time: before Spark starts, so refusing is cheap
            try:
                held = lease.Lease(args.output, self.name, getattr(args, "wait_lock", 0.0)).acquire()
            except lease.Busy as e:
                log.error("%s: %s", self.name, e)
                print(f"{self.name}.py: {e}", file=sys.stderr)
                self.last_result = JobResult(
                    ok=False, summary={"job": self.name, "ok": False, "error": str(e), "busy": True}, code=EXIT_BUSY
                )
                if args.summary:
                    storage.write_bytes(args.summary, json.dumps(self.last_result.summary, indent=2).encode())
                return self.last_result
        if own:
            try:
                spark = self.session(args)
            except BaseException:
                if held is not None:
                    held.release()
                raise
        try:
            result = self.run(spark, args)
        except UsageError as e:  # an option problem found in run()
            print(f"{self.name}.py: error: {e}", file=sys.stderr)
            result = JobResult(ok=False, summary={"error": str(e)}, code=EXIT_USAGE)
        except lease.Busy as e:  # shared state (the URL database) held by another run past the wait
            log.error("%s: %s", self.name, e)
            print(f"{self.name}.py: {e}", file=sys.stderr)
            result = JobResult(ok=False, summary={"error": str(e), "busy": True}, code=EXIT_BUSY)
        except Exception as e:  # the summary must say why a run failed, then exit non-zero
            log.exception("%s failed", self.name)
            result = JobResult(ok=False, summary={"error": f"{type(e).__name__}: {e}"})
        finally:
            if held is not None:
                held.release()
            if own:
                localmode.stop(spark, self._archive)
        result.summary.setdefault("job", self.name)
        if held is not None and held.waited:
            result.summary["waited_for_lock_seconds"] = held.waited
        driver_s3 = s3.counters_since(s3_before)
        result.summary["s3"] = s3.add_counters(dict(driver_s3), result.summary.get("s3_executors"))
        result.summary["ok"] = result.ok
        result.summary["seconds"] = round(time.time() - t0, 3)
        result.summary.setdefault("output", args.output)
        text = json.dumps(result.summary, indent=2, sort_keys=True, default=str)
        print(f"== {self.name} summary ==\n{text}", file=sys.stderr)
        if args.summary:
            storage.write_bytes(args.summary, text.encode())
        self.last_result = result
        return result

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
