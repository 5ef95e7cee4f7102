"""The copies replication asks for, compared: ``check-days --datacenters FILE``.

For every data center of the file (the producer), every kind of folder whose rule names two holders or
more (:mod:`lib.orchestration.replication`), and every day of the window (dated kinds) or once (the
undated ones), each holder's copy is listed in its staging target with each file's checksum (the
stagers' ``sha2:`` SHA-256: a target's own record where it keeps one, else the file hashed). A folder
that no holder has was not made (the days check reports that); otherwise the row is

===========  ==========================================================
consistent   every holder has the same files with the same checksums
missing      a holder has no copy, or lacks files the others have
differs      a file's checksum is not the same at every holder
===========  ==========================================================
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from typing import Any, Callable

from lib.orchestration.replication import DATED_KINDS, FOLDER_KINDS, holders
from lib.staging import Target, make_target
from lib.store import layout, storage

Opener = Callable[[dict[str, Any], str], Target]
PROBLEMS = ("missing", "differs")


def _hash(uri: str) -> str:
    h = hashlib.sha256()
    with storage.open_stream(uri) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return "sha2:" + base64.b64encode(h.digest()).decode()


def copy_sums(target: Target) -> dict[str, str]:
    """``{rel: checksum}`` of a copy (empty: no copy)."""
    out = {}
    for rel in sorted(target.list()):
        got = target.checksum(rel)
        out[rel] = got if got is not None else _hash(storage.join(target.describe(), rel))
    return out


def compare(copies: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The state of one folder from its holders' copies (module table), with what is missing or differs."""
    names = sorted({rel for sums in copies.values() for rel in sums})
    if not names:
        return {"state": "absent"}
    row: dict[str, Any] = {
        "holders": sorted(copies),
        "files": len(names),
        "missing_copies": sorted(dc for dc, sums in copies.items() if not sums),
        "missing_files": {
            dc: [r for r in names if r not in sums]
            for dc, sums in sorted(copies.items())
            if sums and set(sums) != set(names)
        },
        "differs": {
            r: {dc: sums[r] for dc, sums in sorted(copies.items()) if r in sums}
            for r in names
            if len({sums[r] for sums in copies.values() if r in sums}) > 1
        },
    }
    row["state"] = (
        "differs" if row["differs"] else "missing" if row["missing_copies"] or row["missing_files"] else "consistent"
    )
    return row


def check_replicas(
    cfgs: dict[str, dict[str, Any]], days: list[dt.date], open_target: Opener = make_target
) -> list[dict[str, Any]]:
    """One row per replicated folder that exists somewhere (module doc), by producer, kind, day."""
    out = []
    for producer, cfg in sorted(cfgs.items()):
        for kind in FOLDER_KINDS:
            copies_at = {h["dc"]: h["staging"] for h in (cfg.get("replication") or {}).get(kind, [])}
            if len(holders(cfg.get("replication_rules") or {}, kind, producer)) < 2:
                continue  # one copy: nothing to compare
            for day in days if kind in DATED_KINDS else [None]:
                sub = f"{kind}/{layout.day_suffix(day)}" if day else kind
                copies = {}
                for dc, spec in copies_at.items():
                    target = open_target(spec, sub)
                    try:
                        copies[dc] = copy_sums(target)
                    finally:
                        getattr(target, "close", lambda: None)()
                row = compare(copies)
                if row["state"] != "absent":
                    out.append({"producer": producer, "kind": kind, "day": day.isoformat() if day else None, **row})
    return out


def describe(row: dict[str, Any]) -> str:
    """One line for a person: the folder, its state, and which copies are missing or differ."""
    where = f"{row['producer']} {row['kind']}" + (f" {row['day']}" if row["day"] else "")
    extra = ""
    if row["missing_copies"]:
        extra += f"; no copy at {', '.join(row['missing_copies'])}"
    for dc, rels in row["missing_files"].items():
        extra += f"; {dc} lacks {', '.join(rels[:5])}{' …' if len(rels) > 5 else ''}"
    if row["differs"]:
        rels = list(row["differs"])
        extra += f"; checksums differ: {', '.join(rels[:5])}{' …' if len(rels) > 5 else ''}"
    return f"{where}  {row['state']} ({row['files']} files at {', '.join(row['holders'])}){extra}"
