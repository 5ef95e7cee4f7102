"""Driver side of the extract job: splitting the list into tasks and assembling the output
folder (one manifest.tsv, one errors.tsv, ``_stats.json``) from the tasks' small results.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
from typing import Any, Callable, Iterable

from lib.extract.lines import ErrorRow, Item, tsv_escape
from lib.extract.task import PARTS_DIR
from lib.store import atomic, layout

MANIFEST = "manifest.tsv"
ERRORS = "errors.tsv"
MANIFEST_HEADER = "# url\tarchive_file\toffset\tlength\tsource_line\tsource_file\tsource_offset\n"
ERRORS_HEADER = "# line\treason\tinput line (verbatim, may contain tabs)\n"
#: every output format (compression x WARC/ARC); archives of failed task attempts are removed
ARCHIVE_SUFFIXES = tuple(k + c for k in (".warc", ".arc") for c in ("", ".gz", ".zst", ".lz4"))


def plan_tasks(items: list[Item], n_tasks: int) -> list[list[Item]]:
    """Cut the items, sorted by (file, offset), into at most ``n_tasks`` contiguous slices of
    about equal bytes, so each task reads its files front to back and adjacent ranges stay
    together (a file is split between two tasks only where a slice boundary falls in it)."""
    items = sorted(items, key=lambda it: (it.uri, it.offset, it.line_no))
    n_tasks = max(1, min(n_tasks, len(items)))
    total = sum(it.weight for it in items)
    slices: list[list[Item]] = [[]]
    acc = 0
    for it in items:
        if slices[-1] and acc >= total * len(slices) / n_tasks:
            slices.append([])
        slices[-1].append(it)
        acc += it.weight
    return [s for s in slices if s]


def assemble(
    out_dir: str,
    results: list[dict[str, Any]],
    parse_errors: Iterable[ErrorRow],
    lines: int,
    line_text: Callable[[set[int]], dict[int, str]],
) -> dict[str, Any]:
    """Write manifest.tsv, errors.tsv and _stats.json into ``out_dir`` from the task results;
    drop archives no successful task reported (left by a failed task attempt).
    ``line_text`` gives the input text of line numbers the tasks reported. Returns the summary."""
    results = sorted(results, key=lambda r: r["task"])
    reported = {f[0] for r in results for f in r["files"]}
    for name in os.listdir(out_dir):  # left by failed or speculative task attempts
        if (name.endswith(ARCHIVE_SUFFIXES) and name not in reported) or atomic.is_temp(name):
            os.remove(os.path.join(out_dir, name))
    with open(os.path.join(out_dir, MANIFEST), "wb") as out:
        out.write(MANIFEST_HEADER.encode())
        for r in results:
            if r["manifest"]:
                with open(r["manifest"], "rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    shutil.rmtree(os.path.join(out_dir, PARTS_DIR), ignore_errors=True)
    task_errors = [e for r in results for e in r["errors"]]
    text = line_text({no for no, _ in task_errors}) if task_errors else {}
    errors = sorted(list(parse_errors) + [(no, text.get(no, ""), reason) for no, reason in task_errors])
    write_errors(os.path.join(out_dir, ERRORS), errors)
    kinds = collections.Counter(reason.split(":", 1)[0] for _, _, reason in errors)
    files = sorted((f for r in results for f in r["files"]), key=lambda f: f[0])
    summary = {
        "lines": lines,
        "extracted": sum(r["records"] for r in results),
        "failed": len(errors),
        "failed_by_reason": dict(sorted(kinds.items())),
        "bytes": sum(r["bytes"] for r in results),
        "terminators_added": sum(r.get("terminators_added", 0) for r in results),
        "files": len(files),
        "file_bytes": sum(f[1] for f in files),
        "tasks": len(results),
    }
    with open(os.path.join(out_dir, layout.STATS), "w") as f:
        json.dump({**summary, "output_files": [{"name": n, "size": s, "records": c} for n, s, c in files]}, f, indent=1)
    return summary


def write_errors(path: str, errors: list[ErrorRow]) -> None:
    """errors.tsv: line number, reason, then the input line verbatim (``cut -f3-`` gives back
    the failed lines as a list to re-run)."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        f.write(ERRORS_HEADER)
        for no, line, reason in errors:
            f.write(f"{no}\t{tsv_escape(reason)}\t{line.replace(chr(13), ' ').replace(chr(10), ' ')}\n")
