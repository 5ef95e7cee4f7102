"""A preprocessed day's health: did it lose pages? Plain Python, no Spark.

Four shares from the day's ``_stats.json`` counters, each against a threshold:

* ``failed``: failed records / records read (damage: gzip, WARC/ARC or HTTP headers, parser
  crashes); breached above ``max_failed_share``;
* ``kept``: pages kept / ``html_seen`` (parsed 2xx HTML responses with a payload, i.e. what the
  day should keep; the rest were binary, too large or crashed the parser); breached below
  ``min_kept_share``; a day without HTML has nothing to lose (share None, never breached);
* ``empty_text`` (a warning, not a breach): kept pages whose main text is empty although their
  ``<body>`` has visible text / pages kept; warned above ``max_empty_text_share``;
* ``unreadable_files``: files with a file-level failure (:data:`FILE_LEVEL_REASONS`: could not
  be opened or read, or are not archives at all) / input files; breached above
  ``max_unreadable_share``.

:func:`assess` returns the ``health`` block the preprocess job puts in its summary and in
``_stats.json``; :func:`describe` turns it into the text the nightly run's logs and the Airflow
``check`` task show.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from lib.html import walk

#: failure reasons that lose a whole file (or the rest of it), not one record
FILE_LEVEL_REASONS = ("read_error", "not_an_archive", "not_gzip")
#: skip reasons of html_seen pages that were not kept (they lower the kept share)
LOST_HTML_REASONS = ("binary_payload", "too_large")
TOP_REASONS = 5
SAMPLES = 3


@dataclass(frozen=True)
class Thresholds:
    max_failed_share: float = 0.01
    min_kept_share: float = 0.99
    max_unreadable_share: float = 0.01
    #: a warning (the pages are kept, but no word of theirs can find them), not a breach
    max_empty_text_share: float = 0.02


def _share(num: int, den: int) -> float | None:
    return round(num / den, 6) if den else None


def unreadable_files(per_file: Iterable[dict[str, Any]]) -> int:
    """Input files with at least one file-level failure."""
    return sum(1 for f in per_file if any(f.get("failed_by_reason", {}).get(r) for r in FILE_LEVEL_REASONS))


def top_reasons(totals: dict[str, Any], n: int = TOP_REASONS) -> list[dict[str, Any]]:
    """The most frequent ways records were lost: failure reasons, and the skip reasons that
    drop HTML pages (binary payload, too large), most frequent first."""
    rows = [{"reason": r, "kind": "failed", "count": c} for r, c in totals.get("failed_by_reason", {}).items() if c]
    rows += [
        {"reason": r, "kind": "skipped", "count": c}
        for r, c in totals.get("skipped_by_reason", {}).items()
        if r in LOST_HTML_REASONS and c
    ]
    rows.sort(key=lambda x: (-x["count"], x["reason"]))
    return rows[:n]


def sample_errors(lines: Iterable[str], reason: str, n: int = SAMPLES) -> list[dict[str, Any]]:
    """The first ``n`` reports of ``reason`` in ``_errors.jsonl`` lines: file, offset, reason, detail."""
    out = []
    for line in lines:
        if f'"{reason}"' not in line:  # cheap pre-filter: most lines are other reasons
            continue
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("reason") == reason and e.get("kind") in ("failed", "skipped"):
            out.append({k: e.get(k) for k in ("file", "offset", "reason", "detail")})
            if len(out) >= n:
                break
    return out


def assess(
    totals: dict[str, Any],
    per_file: Iterable[dict[str, Any]],
    thresholds: Thresholds = Thresholds(),
    error_lines: Iterable[str] = (),
) -> dict[str, Any]:
    """The ``health`` block of a day from its totals and per-file counters (``_stats.json``)
    and its error report lines (for samples of the top reason)."""
    t = thresholds
    unreadable = unreadable_files(per_file)
    shares = {
        "failed": _share(totals.get("failed", 0), totals.get("read", 0)),
        "kept": _share(totals.get("kept", 0), totals.get("html_seen", 0)),
        "unreadable_files": _share(unreadable, totals.get("files", 0)),
        "empty_text": _share(totals.get("empty_text", 0), totals.get("kept", 0)),
    }
    breached = []
    if shares["failed"] is not None and shares["failed"] > t.max_failed_share:
        breached.append("max_failed_share")
    if shares["kept"] is not None and shares["kept"] < t.min_kept_share:
        breached.append("min_kept_share")
    if shares["unreadable_files"] is not None and shares["unreadable_files"] > t.max_unreadable_share:
        breached.append("max_unreadable_share")
    top = top_reasons(totals)
    warnings = [
        f"HTML extraction ran on the slow path on some executors: {line} (the same output several times "
        "slower than the compiled walker; DAILYSLICE_NATIVE_HTML=off is the way to choose it)"
        for line in totals.get("html_extraction", [])
        if walk.slow_by_accident(line)
    ]
    if shares["empty_text"] is not None and shares["empty_text"] > t.max_empty_text_share:
        warnings.append(
            f"{totals.get('empty_text', 0)} of {totals.get('kept', 0)} kept pages "
            f"({100 * shares['empty_text']:.2f}%, max {100 * t.max_empty_text_share:.2f}%) have an empty "
            "main text although their <body> has text: no word of theirs can find them"
        )
    return {
        "ok": not breached,
        "breached": breached,
        "warnings": warnings,
        "shares": shares,
        "thresholds": asdict(t),
        "counts": {
            "read": totals.get("read", 0),
            "failed": totals.get("failed", 0),
            "kept": totals.get("kept", 0),
            "html_seen": totals.get("html_seen", 0),
            "empty_text": totals.get("empty_text", 0),
            "files": totals.get("files", 0),
            "unreadable_files": unreadable,
        },
        "top_reasons": top,
        "samples": sample_errors(error_lines, top[0]["reason"]) if top and breached else [],
    }


_LIMITS = {  # threshold -> (share, comparison shown when breached)
    "max_failed_share": ("failed", ">"),
    "min_kept_share": ("kept", "<"),
    "max_unreadable_share": ("unreadable_files", ">"),
}


def describe(health: dict[str, Any]) -> str:
    """Human-readable lines: verdict, shares against thresholds, top reasons, sample offsets."""
    sh, th, c = health.get("shares", {}), health.get("thresholds", {}), health.get("counts", {})
    breached = health.get("breached", [])

    def pct(x):
        return "n/a" if x is None else f"{100 * x:.2f}%"

    lines = [
        "day is healthy"
        if health.get("ok")
        else "day is UNHEALTHY (output published, but it lost pages): breached "
        + ", ".join(
            f"{name} ({pct(sh.get(_LIMITS[name][0]))} {_LIMITS[name][1]} {pct(th.get(name))})"
            for name in breached
            if name in _LIMITS
        )
    ]
    lines.append(
        f"failed records {c.get('failed', 0)}/{c.get('read', 0)} = {pct(sh.get('failed'))} "
        f"(max {pct(th.get('max_failed_share'))}); kept pages {c.get('kept', 0)}/{c.get('html_seen', 0)} HTML = "
        f"{pct(sh.get('kept'))} (min {pct(th.get('min_kept_share'))}); unreadable files "
        f"{c.get('unreadable_files', 0)}/{c.get('files', 0)} = {pct(sh.get('unreadable_files'))} "
        f"(max {pct(th.get('max_unreadable_share'))})"
    )
    lines += [f"WARNING: {w}" for w in health.get("warnings", [])]
    if health.get("top_reasons"):
        lines.append("top reasons: " + ", ".join(f"{r['reason']} {r['count']}" for r in health["top_reasons"]))
    for s in health.get("samples", []):
        lines.append(f"sample: {s.get('file')} offset {s.get('offset')}: {s.get('reason')}: {s.get('detail')}")
    return "\n".join(lines)
