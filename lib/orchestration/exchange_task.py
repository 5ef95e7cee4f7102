"""The nightly DAG's ``exchange`` task: merge partner data centers' links into the day's index.

Runs on the Airflow worker after ``check`` and before ``stage`` (so the staged day carries the
merged in-links, the outbound links partners read and the anchor CIFFs), on the job's index
output (the marker's ``outputs["index"]``, on the cluster filesystem the ``stage`` task reads
too). Settings: ``exchange`` of the data center's config (docs/orchestration.md).
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from lib.index.graph_exchange import exchange_day

log = logging.getLogger("dailyslice.exchange")


def exchange_outputs(spec: dict[str, Any], outputs: dict[str, str], day: str,
                     exclusions: str | None = None) -> dict[str, Any]:
    """Run the exchange on the day's index output; ``{"status": "disabled"}`` when the data
    center's ``exchange.enabled`` is false. Partners that have no day are recorded, never
    waited for (the merge takes what exists). ``exclusions``: the data center's take-down list
    (default: the index root's ``_exclusions.jsonl`` when it exists)."""
    if not spec.get("enabled"):
        return {"status": "disabled"}
    if "index" not in outputs:
        raise ValueError(f"exchange: the day's outputs have no index folder: {sorted(outputs)}")
    record = exchange_day(outputs["index"], dt.date.fromisoformat(day), dict(spec.get("partners") or {}),
                          int(spec.get("lookback_days", 7)), spec.get("work_dir"), exclusions_uri=exclusions)
    missing = sorted(k for k, v in record["partners"].items() if v["status"] == "missing")
    log.info("exchange %s: %s; missing partners: %s", day, "merged" if record["changed"] else "unchanged", missing or "none")
    return record
