"""What a job's run ends in: its :class:`JobResult` and the process exit codes.

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

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

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


class DayArgs(Protocol):
    """What :func:`empty_input` reads of a job's options (a ``DayJobOptions``)."""

    @property
    def allow_empty(self) -> bool: ...

    @property
    def input(self) -> str | None: ...

    @property
    def output(self) -> str | None: ...


def empty_input(job: str, args: DayArgs, what: str) -> JobResult | None:
    """The result of a run whose input day holds nothing (``what``: "no archives", ...):
    None when ``--allow-empty`` asks for an empty output, else a failed result with
    :data:`EXIT_EMPTY` and a clear line, logged now; the caller publishes nothing."""
    if args.allow_empty:
        log.warning("%s: %s in %s: publishing an empty output (--allow-empty)", job, what, args.input)
        return None
    line = f"{job}: {what} in {args.input}: nothing published (--allow-empty publishes an empty day)"
    log.error("%s", line)
    return JobResult(ok=False, summary={"error": line, "empty": True}, output=args.output, code=EXIT_EMPTY)
