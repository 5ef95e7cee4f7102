"""The purge's audit log and the days it walks.

``ROOT/_purge/audit.jsonl``: one JSON line per change, appended and synced before the purge
goes on: a day's removal (when, rules, folders, counts, the removed records' URL, record id,
archive and offset), a staging update, a URL database cleanup.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import Any

from lib.store import layout

AUDIT = "audit.jsonl"


def audit_path(root: str) -> str:
    return os.path.join(root, layout.PURGE, AUDIT)


def append_audit(root: str, entry: dict[str, Any]) -> None:
    """One line of the audit log, appended and flushed to disk."""
    path = audit_path(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


def day_folders(root: str) -> list[dt.date]:
    """Every ``ROOT/preprocessed/YYYY-MM/DD`` folder (published or not), oldest first."""
    base = os.path.join(root, layout.PREPROCESSED)
    out = []
    for month in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        for d in sorted(os.listdir(os.path.join(base, month))):
            day = layout.day_of(f"{month}/{d}")
            if day is not None and os.path.isdir(os.path.join(base, month, d)):
                out.append(day)
    return out
