"""On demand: a request folder in, a published sub-index out, from the published days' pages.

    dailyslice on-demand --request ROOT/on_demand/<id>
    python jobs/ondemand.py --request /data/bucket/on_demand/gov-de-30d [--allow-empty]

Reads ``config.json`` and ``url_patterns.txt`` of the request (lib/ondemand/request.py),
selects the pages of the requested days and languages from ``ROOT/preprocessed/`` (no WARC is
parsed again), indexes them with the index pipeline and publishes ``ROOT/public/<id>/``:
``LANG/index-{n}.ciff.gz`` + ``metadata-{n}.parquet``, optionally ``edges.parquet`` and
``warc/``, ``_manifest.json`` (sha256 of every file) and ``_SUCCESS`` last. The request's
``status.json`` says running, then done or failed with the reason and the counts. See
docs/ondemand.md.

Exit codes: 0 published; 1 failed, nothing published; 2 a bad request (config, language,
pattern, days not published), nothing published; 4 the request selects no page: nothing
published unless ``--allow-empty``; 5 another run of the same request holds its lease.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from jobs import extract
from lib.errors import ConfigError, UsageError
from lib.index import indexable
from lib.ondemand import side_outputs
from lib.ondemand.request import RequestError, check_days, read_request, split_folder
from lib.ondemand.subindex import NothingSelected, build
from lib.pages import exclusions
from lib.runtime.options import DayJobOptions, opt
from lib.runtime.result import EXIT_EMPTY, EXIT_USAGE, JobResult
from lib.runtime.sparkjob import SparkJob, resolved
from lib.store import storage, update_log


@dataclass(frozen=True)
class OnDemandOptions(DayJobOptions):
    """The on-demand job's options: the request folder (``input``); the output is ``ROOT/public/<id>``."""

    request: str | None = opt(None, "the request folder ROOT/on_demand/<id> (docs/ondemand.md)")
    honour_robots: bool = opt(
        True,
        "take every selected page, also those that say noindex or that their day's robots.txt disallows",
        flag="--ignore-robots",
        action="store_false",
    )


class OnDemandJob(SparkJob):
    name = "on-demand"
    description = "a request folder (ROOT/on_demand/<id>) -> a published sub-index (ROOT/public/<id>)"
    input_kind = "on_demand"
    output_kind = "public"
    light_driver = True
    checks_input = True  # a missing request folder: exit 2; the lease on ROOT/public/<id>
    options_class = OnDemandOptions

    def resolve_io(self, args: OnDemandOptions) -> OnDemandOptions:
        folder = args.request or args.input
        if not folder:
            raise UsageError(f"{self.name}: give --request ROOT/on_demand/<id>")
        try:
            root, rid = split_folder(folder)
        except RequestError as e:
            raise UsageError(str(e)) from None
        if storage.is_s3(root):  # the selection and the index read local files (docs/ondemand.md)
            raise UsageError(f"{self.name}: {folder}: local or cluster-filesystem roots only, not S3")
        return replace(args, input=folder, output=args.output or storage.join(root, "public", rid), root=root)

    def run(self, spark: Any, options: OnDemandOptions) -> JobResult:
        t0 = time.time()
        folder = resolved(options.input, "input")
        try:
            req = read_request(folder)
            days = list(zip(req.days, check_days(req)))
            excl = exclusions.for_job(req.root, options.exclusions)
        except ConfigError as e:  # a bad request, or an exclusion list that cannot be read
            side_outputs.write_status(folder, "failed", reason=str(e), output=None)
            return JobResult(ok=False, summary={"error": str(e)}, code=EXIT_USAGE)
        side_outputs.write_status(folder, "running", output=options.output)
        policy = indexable.Policy(options.honour_robots)
        try:
            with self.work_dir(spark, options) as wd:
                counts = build(
                    spark,
                    req,
                    days,
                    wd.path,
                    self.steps,
                    allow_empty=options.allow_empty,
                    policy=policy,
                    copy_records=_copy_records(req.days[-1]),
                    excl=excl,
                )
                wd.publish()
            # a new sub-index is one line of ROOT/shared/auxiliary/logs.csv (lib.store.update_log)
            out = resolved(options.output, "output")
            update_log.record(req.root, "subindex", out.rstrip("/").rsplit("/", 1)[-1], detail=out)
        except NothingSelected as e:
            side_outputs.write_status(folder, "failed", reason=str(e), output=None)
            return JobResult(ok=False, summary={"error": str(e), "empty": True}, code=EXIT_EMPTY)
        except Exception as e:
            side_outputs.write_status(folder, "failed", reason=f"{type(e).__name__}: {e}", output=None)
            raise
        seconds = dict(self.steps.seconds, total=round(time.time() - t0, 3))
        side_outputs.write_status(folder, "done", output=options.output, counts=counts, seconds=seconds)
        return JobResult(ok=True, summary={"counts": counts, "steps": seconds}, output=options.output)


class _RecordCopy(extract.ExtractJob):
    """The extract job with the archives' header time fixed (the day after the request's last
    day): the same request copies into the same bytes on every run."""

    def __init__(self, when: dt.datetime):
        super().__init__()
        self.when = when

    def started_at(self) -> dt.datetime:
        return self.when


def _copy_records(last_day: dt.date) -> Callable[[Any, str, str], JobResult]:
    """The selected pages' records copied by the extract job (byte-exact, docs/extract.md)."""
    when = dt.datetime.combine(last_day + dt.timedelta(days=1), dt.time(), dt.timezone.utc)
    return lambda spark, tsv, out: _RecordCopy(when).call(extract.ExtractOptions(tsv=tsv, output=out), spark)


def run(spark: Any, options: OnDemandOptions) -> JobResult:
    """The on-demand job as a function (:meth:`SparkJob.call`)."""
    return OnDemandJob().call(options, spark)


def main(argv: list[str] | None = None, spark: Any = None) -> int:
    return OnDemandJob().main(argv, spark=spark)


if __name__ == "__main__":
    sys.exit(main())
