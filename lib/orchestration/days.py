"""Which recent days are complete, changed, missing or empty: ``check-days``.

For each day of a window ending at ``--end`` (default yesterday), the day's input folder
(``ROOT/warc/YYYY-MM/DD``) is listed and compared with the input record the published
preprocessed day keeps (``_inputs.json``, :mod:`lib.preprocess.inputs`):

=============  ===============================================================  ===========
state          meaning                                                          needs a run
=============  ===============================================================  ===========
complete       published, and the folder holds exactly the recorded files        no
changed        published, but files were added, removed or rewritten since        yes
missing        archives present, no published day (a night that never ran)       yes
empty          no archives and no published day                                 no
unrecorded     published by a release that kept no input record                 no (reported)
=============  ===============================================================  ===========

    python -m lib.orchestration.days --root s3://crawl-dc1 [--output-root ROOT] [--end DAY] [--days 7] [--json]

Exit 0 when no day needs a run, 1 when one does (its name and reason are printed), 2 on usage.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from lib.core import layout, storage
from lib.preprocess.inputs import compare
from lib.warc.records import ARCHIVE_SUFFIXES

NEEDS_RUN = ("changed", "missing")


def day_state(root: str, output_root: str, day: dt.date) -> dict[str, Any]:
    """The state of ``day`` (module table) with what changed and the counts behind it."""
    inp = layout.day_path(root, layout.WARC, day)
    out = layout.day_path(output_root, layout.PREPROCESSED, day)
    files = storage.list_files(inp, ARCHIVE_SUFFIXES)
    published = storage.exists(storage.join(out, layout.SUCCESS))
    row: dict[str, Any] = {"day": day.isoformat(), "input": inp, "files": len(files),
                           "bytes": sum(f.size for f in files)}
    if not published:
        row["state"] = "missing" if files else "empty"
        return row
    rec_uri = storage.join(out, layout.INPUTS)
    if not storage.exists(rec_uri):
        row["state"] = "unrecorded"
        return row
    diff = compare(json.loads(storage.read_bytes(rec_uri)), inp, files)
    row.update(diff)
    row["state"] = "changed" if any(diff.values()) else "complete"
    return row


def check_days(root: str, output_root: str | None, end: dt.date, days: int) -> list[dict[str, Any]]:
    """:func:`day_state` of the ``days`` days ending at ``end``, oldest first."""
    return [day_state(root, output_root or root, end - dt.timedelta(days=i)) for i in range(days - 1, -1, -1)]


def describe(row: dict[str, Any]) -> str:
    """One line for a person: day, state, and what changed."""
    extra = ""
    if row["state"] == "changed":
        parts = [f"{k} {', '.join(row[k][:5])}{' …' if len(row[k]) > 5 else ''}" for k in ("added", "removed", "modified")
                 if row.get(k)]
        extra = " (" + "; ".join(parts) + ")"
    elif row["state"] == "missing":
        extra = f" ({row['files']} archives, {row['bytes']:,} bytes, no published day)"
    return f"{row['day']}  {row['state']:<10}{extra}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lib.orchestration.days", description=__doc__.split("\n")[0])
    p.add_argument("--root", required=True, help="bucket root holding warc/YYYY-MM/DD (local folder or s3://)")
    p.add_argument("--output-root", help="root of the published days (default: --root)")
    p.add_argument("--end", type=dt.date.fromisoformat, default=dt.date.today() - dt.timedelta(days=1),
                   help="last day of the window, YYYY-MM-DD (default: yesterday)")
    p.add_argument("--days", type=int, default=7, help="days in the window (default 7)")
    p.add_argument("--json", action="store_true", help="one JSON document instead of a table")
    a = p.parse_args(argv)
    if a.days < 1:
        p.error("--days must be at least 1")
    rows = check_days(a.root, a.output_root, a.end, a.days)
    todo = [r["day"] for r in rows if r["state"] in NEEDS_RUN]
    if a.json:
        print(json.dumps({"days": rows, "needs_run": todo}, indent=1))
    else:
        for r in rows:
            print(describe(r))
        print(f"{len(todo)} day(s) need a run" + (f": {', '.join(todo)}" if todo else ""))
    return 1 if todo else 0


if __name__ == "__main__":
    sys.exit(main())
