"""The nightly DAG's ``exchange`` task: merge partner data centers' links into the day's index.

Runs on the Airflow worker after ``check`` and before ``stage`` (so the staged day carries the
merged in-links, the outbound links partners read and the anchor CIFFs), on the job's index
output (the marker's ``outputs["index"]``, on the cluster filesystem the ``stage`` task reads
too). Settings: ``exchange`` of the data center's config (docs/orchestration.md). The day is
changed under its lease (:func:`day_lock`; ``exchange.wait_lock``
seconds, default an hour, then the task fails with the holder named and Airflow retries it).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from lib.index.graph_exchange import exchange_day
from lib.store import lease

log = logging.getLogger("dailyslice.exchange")


def day_lock(day_uri: str, job: str = "exchange", wait: float = 3600.0) -> lease.Lease:
    """The index day's lease (the one the index job holds while it publishes the day), not yet
    acquired: an exchange changes the day, so it never meets another exchange or a re-index."""
    return lease.Lease(day_uri, job, wait, busy="another run is changing this index day; nothing was merged")


def exchange_outputs(
    spec: dict[str, Any], outputs: dict[str, str], day: str, exclusions: str | None = None
) -> dict[str, Any]:
    """Run the exchange on the day's index output; ``{"status": "disabled"}`` when the data
    center's ``exchange.enabled`` is false. Partners that have no day are recorded, never
    waited for (the merge takes what exists). ``exclusions``: the data center's take-down list
    (default: the index root's ``_exclusions.jsonl`` when it exists)."""
    if not spec.get("enabled"):
        return {"status": "disabled"}
    if "index" not in outputs:
        raise ValueError(f"exchange: the day's outputs have no index folder: {sorted(outputs)}")
    with day_lock(outputs["index"], wait=float(spec.get("wait_lock", 3600))):  # Busy: the task fails, retries
        record = exchange_day(
            outputs["index"],
            dt.date.fromisoformat(day),
            dict(spec.get("partners") or {}),
            int(spec.get("lookback_days", 7)),
            spec.get("work_dir"),
            exclusions_uri=exclusions,
        )
    missing = sorted(k for k, v in record["partners"].items() if v["status"] == "missing")
    log.info(
        "exchange %s: %s; missing partners: %s", day, "merged" if record["changed"] else "unchanged", missing or "none"
    )
    return record
