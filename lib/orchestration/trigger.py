"""Wait for a Slurm job in the triggerer, holding no worker slot.

The trigger polls ``scontrol show job`` every ``poll_seconds``. Once the job is in a
terminal state, or Slurm has forgotten it (``MinJobAge`` passed while nobody looked), the
marker files decide: ``MARKER`` (success, written by ``dailyslice day`` only when all its
steps succeeded, :mod:`lib.orchestration.marker`) or ``MARKER.failed.json``; both carry the
job id, so a marker of an earlier run of the same day never vouches for this one.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

from airflow.triggers.base import BaseTrigger, TriggerEvent

from lib.orchestration.marker import failed_path
from lib.orchestration.slurm import TERMINAL, Runner, SlurmError, aread_text, job_state, read_marker

#: consecutive scontrol failures (e.g. slurmctld restarting) tolerated before giving up
MAX_ERRORS = 10


def failed_marker_path(marker: str) -> str:
    """``MARKER.failed.json`` beside ``MARKER`` (:func:`lib.orchestration.marker.failed_path`)."""
    return failed_path(marker)


class SlurmJobTrigger(BaseTrigger):
    def __init__(self, job_id: str, marker_file: str, runner: dict[str, Any], poll_seconds: float = 60):
        super().__init__()
        self.job_id = str(job_id)
        self.marker_file = marker_file
        self.runner = runner
        self.poll_seconds = float(poll_seconds)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            "lib.orchestration.trigger.SlurmJobTrigger",
            {
                "job_id": self.job_id,
                "marker_file": self.marker_file,
                "runner": self.runner,
                "poll_seconds": self.poll_seconds,
            },
        )

    async def _markers(self, runner: Runner) -> tuple[dict | None, dict | None]:
        ok = read_marker(await aread_text(runner, self.marker_file), self.job_id)
        failed = read_marker(await aread_text(runner, failed_marker_path(self.marker_file)), self.job_id)
        return ok, failed

    async def run(self) -> AsyncIterator[TriggerEvent]:
        runner = Runner(**self.runner)
        errors = 0
        while True:
            try:
                st = await job_state(runner, self.job_id)
                errors = 0
            except SlurmError as e:
                errors += 1
                self.log.warning("job %s: %s (%d/%d)", self.job_id, e, errors, MAX_ERRORS)
                if errors >= MAX_ERRORS:
                    yield TriggerEvent({"job_id": self.job_id, "state": "UNKNOWN", "error": str(e), "marker_ok": False})
                    return
                await asyncio.sleep(self.poll_seconds)
                continue
            if st is None or st["state"] in TERMINAL:
                ok, failed = await self._markers(runner)
                event = {
                    "job_id": self.job_id,
                    "state": st["state"] if st else "GONE",
                    "exit_code": st["exit_code"] if st else None,
                    "reason": st["reason"] if st else None,
                    "marker_ok": bool(ok and ok.get("ok")),
                    "failed_marker": failed,
                }
                self.log.info("job %s finished: %s", self.job_id, event)
                yield TriggerEvent(event)
                return
            self.log.info("job %s is %s (%s)", self.job_id, st["state"], st["reason"])
            await asyncio.sleep(self.poll_seconds)
