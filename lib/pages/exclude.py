"""A preprocessed day without its excluded records (:mod:`lib.pages.exclusions`).

:func:`filter_day` copies a local preprocessed day folder, dropping the page rows
(``language=*/``) and capture rows (``_captures/``) whose URL the exclusion list matches.
Files without a match are linked, not rewritten; files left without rows are not written,
as preprocess writes no file for a language a file has no page of; the host index
(``_hosts.parquet``) is written again when a page file changed. The index and catalogue
jobs read such a copy when a list is in force; the purge command publishes it in place of
the day. Plain pyarrow, no Spark.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import shutil
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.pages import hostindex
from lib.pages.exclusions import Exclusions
from lib.pages.schema import ROW_GROUP_ROWS
from lib.store import atomic, layout

#: what the audit keeps of each removed row (never the text)
REMOVED_COLUMNS = ("url", "record_id", "warc_file", "warc_offset")


def _place(src: str, dest: str, how: str) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if how == "symlink":
        os.symlink(os.path.abspath(src), dest)
        return
    try:
        os.link(src, dest)
    except OSError:  # another filesystem
        shutil.copy2(src, dest)


def filter_file(src: str, dest: str, exclusions: Exclusions, how: str = "link") -> dict[str, Any]:
    """One Parquet file (pages or captures) without its excluded rows; returns the counts and
    the removed rows' :data:`REMOVED_COLUMNS`."""
    urls = pq.read_table(src, columns=["url"]).column("url")
    mask = exclusions.mask(urls)
    hit = pc.sum(mask).as_py() or 0
    if not hit:
        _place(src, dest, how)
        return {"rows": len(urls), "excluded": 0, "removed": []}
    table = pq.read_table(src)
    removed = table.filter(mask).select([c for c in REMOVED_COLUMNS if c in table.column_names]).to_pylist()
    kept = table.filter(pc.invert(mask))
    if kept.num_rows:
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        tmp = dest + ".tmp"
        pq.write_table(kept, tmp, compression="zstd", row_group_size=ROW_GROUP_ROWS)
        os.replace(tmp, dest)
    return {"rows": len(urls), "excluded": hit, "removed": removed}


def _log_purged(src_file: str, dest_file: str, rows: int, excluded: int) -> None:
    """Add a ``purged`` line to the copy of a rewritten page file's log (lib.preprocess.filelogs),
    written anew beside ``dest_file`` (the source's log, perhaps linked to the copy, is left as it was)."""
    src_log, dest_log = layout.file_log_name(src_file), layout.file_log_name(dest_file)
    if not os.path.exists(src_log):
        return  # a day written before per-file logs
    with gzip.open(src_log, "rb") as f:
        text = f.read()
    line = {
        "event": "purged",
        "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
        "rows": rows,
        "excluded": excluded,
        "bytes": os.path.getsize(dest_file) if os.path.exists(dest_file) else 0,  # 0: no row left, no file
    }
    if os.path.lexists(dest_log):
        os.remove(dest_log)  # a link to the source's log: never write through it
    atomic.write_bytes(dest_log, gzip.compress(text + (json.dumps(line, sort_keys=True) + "\n").encode(), mtime=0))


def filter_day(
    src: str, dest: str, exclusions: Exclusions, how: str = "link", captures: bool = True, pages: bool = True
) -> dict[str, Any]:
    """Copy the local preprocessed day ``src`` to ``dest`` without its excluded rows (module
    doc), every file but ``_SUCCESS``, which the caller writes when it publishes. ``how``:
    ``link`` (hard link, else copy) or ``symlink`` for files kept as they are. Returns counts
    per kind (``pages``, ``captures``: rows, excluded, files rewritten) and the removed rows."""
    out: dict[str, Any] = {
        "pages": {"rows": 0, "excluded": 0, "files_changed": 0},
        "captures": {"rows": 0, "excluded": 0, "files_changed": 0},
        "removed": [],
    }
    for d, _, names in os.walk(src):
        rel_dir = os.path.relpath(d, src)
        top = rel_dir.split(os.sep, 1)[0]
        for n in sorted(names):
            path = os.path.join(d, n)
            rel = os.path.normpath(os.path.join(rel_dir, n))
            target = os.path.join(dest, rel)
            if rel == layout.SUCCESS or n.startswith(".") or (rel == layout.HOSTS and pages):
                continue  # the host index: placed below, once the page files are
            kind = "pages" if top.startswith(layout.LANG_PREFIX) else "captures" if top == layout.CAPTURES else None
            if kind and n.endswith(".parquet") and (pages if kind == "pages" else captures):
                r = filter_file(path, target, exclusions, how)
                c = out[kind]
                c["rows"] += r["rows"]
                c["excluded"] += r["excluded"]
                c["files_changed"] += bool(r["excluded"])
                if r["excluded"] and kind == "pages":
                    _log_purged(path, target, r["rows"] - r["excluded"], r["excluded"])
                out["removed"] += [dict(row, kind=kind) for row in r["removed"]]
            elif not (n.endswith(layout.FILE_LOG_SUFFIX) and os.path.lexists(target)):  # not one _log_purged wrote
                _place(path, target, how)
    if pages and os.path.exists(os.path.join(src, layout.HOSTS)):
        if out["pages"]["files_changed"]:  # rows left out: row groups and counts are not the indexed ones
            hostindex.write(dest)
        else:
            _place(os.path.join(src, layout.HOSTS), os.path.join(dest, layout.HOSTS), how)
    return out


def day_matches(src: str, exclusions: Exclusions) -> int:
    """How many page and capture rows of the local day ``src`` the list matches (reads the
    ``url`` columns only)."""
    n = 0
    for d, _, names in os.walk(src):
        top = os.path.relpath(d, src).split(os.sep, 1)[0]
        if not (top.startswith(layout.LANG_PREFIX) or top == layout.CAPTURES):
            continue
        for name in names:
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                urls = pq.read_table(os.path.join(d, name), columns=["url"]).column("url")
                n += pc.sum(exclusions.mask(urls)).as_py() or 0
    return n
