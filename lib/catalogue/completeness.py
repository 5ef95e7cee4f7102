"""How complete a page is in time (the design's "How temporally complete is a page? How close in
age are all the contents of a given page?"): for one page capture, each of its embedded resources
(the page columns of lib/html/embeds.py: images, videos, iframes, scripts, stylesheets) and that
resource's capture nearest in time, found in the capture index over every day (lib.catalogue.capindex:
one exact SURT look-up a resource, so the cost follows the page's resources, not the days).

An answer gives, per resource, its URL and kind, the nearest capture's timestamp, status and age
(``|resource capture time - page capture time|`` in seconds) and how many captures it has; and for
the page: how many resources, how many were captured on any day, those never captured (named), and
the spread of the ages (min, median, max). A resource URL the index cannot key (no SURT) counts as
never captured. A day preprocessed before the resources were kept has none to say: the answer
says so (``embeds_known`` false) instead of calling the page complete.

The daily report's section (:func:`day_summary`) answers the same for a seeded sample of the day's
pages with resources (:data:`SAMPLE` pages; the look-ups are about 0.3 ms each).
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import os
import statistics
from typing import Any, Iterable

import pyarrow.dataset as ds
import pyarrow.parquet as pq
from warcio.timeutils import timestamp_to_datetime

from lib.catalogue import capindex, cdxquery, recordstore
from lib.store import layout

#: the page columns of embedded resources, and each one's kind
KINDS = {
    "image_links": "image",
    "video_links": "video",
    "iframes": "iframe",
    "script_links": "script",
    "stylesheet_links": "stylesheet",
}
PAGE_COLUMNS = ["record_id", "url", "warc_date", *KINDS]
SAMPLE = 200  # pages of a day the report looks at
LISTED = 10  # least complete pages the report names


def resources(row: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, url)`` of each embedded resource of a page row, in column then document order."""
    out = []
    for col, kind in KINDS.items():
        for item in row.get(col) or ():
            url = item["src"] if isinstance(item, dict) else item
            if url:
                out.append((kind, url))
    return out


def _utc(when: dt.datetime) -> dt.datetime:
    return when.astimezone(dt.timezone.utc) if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)


def nearest(reader: capindex.Reader, url: str, when: dt.datetime | None) -> dict[str, Any] | None:
    """The capture of ``url`` (any day) nearest in time to ``when``: timestamp, status, age in
    seconds, and the number of captures of the URL; None when it has none (or no SURT key). A page
    without a capture time (``when`` None) gets the URL's first capture, its age None."""
    try:
        start, end = cdxquery.search_range(url, "exact")
    except cdxquery.CdxQueryError:
        return None
    at = _utc(when) if when is not None else None
    best: tuple[float, str, str] | None = None
    n = 0
    for line in reader.lines(start, end):
        _, ts, body = line.split(" ", 2)
        n += 1
        age = abs((_utc(timestamp_to_datetime(ts)) - at).total_seconds()) if at is not None else 0.0
        if best is None or age < best[0]:
            best = (age, ts, body)
    if best is None:
        return None
    age, ts, body = best
    status = json.loads(body).get("status")
    return {"timestamp": ts, "status": status, "age_seconds": age if at is not None else None, "captures": n}


def spread(ages: list[float]) -> dict[str, float | None]:
    """min, median and max of ``ages`` (None each without any)."""
    if not ages:
        return {"min": None, "median": None, "max": None}
    return {"min": min(ages), "median": statistics.median(ages), "max": max(ages)}


def of_page(reader: capindex.Reader, row: dict[str, Any]) -> dict[str, Any]:
    """The completeness answer for one page row (``url``, ``warc_date``, the :data:`KINDS` columns;
    ``embeds_known`` False in it when the day kept none)."""
    known = row.get("embeds_known", True)
    items: list[dict[str, Any]] = []
    for kind, url in resources(row) if known else []:
        hit = nearest(reader, url, row.get("warc_date"))
        items.append({"url": url, "kind": kind, "nearest": hit})
    ages = [it["nearest"]["age_seconds"] for it in items if it["nearest"] and it["nearest"]["age_seconds"] is not None]
    never = [it["url"] for it in items if not it["nearest"]]
    when = row.get("warc_date")
    return {
        "record_id": row.get("record_id"),
        "url": row.get("url"),
        "warc_date": _utc(when).isoformat() if when is not None else None,
        "embeds_known": known,
        "resources": len(items),
        "captured": len(items) - len(never),
        "never_captured": never,
        "age_seconds": spread(ages),
        "items": items,
    }


def page_files(day_dir: str) -> list[str]:
    """The page files of a local preprocessed day (``language=*/*.parquet``)."""
    return sorted(glob.glob(os.path.join(day_dir, "language=*", "*.parquet")))


def page_rows(day_dir: str, record_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The page rows of a day (those of ``record_ids`` only, when given) with :data:`PAGE_COLUMNS`;
    ``embeds_known`` False on rows of files written before the columns existed."""
    out: list[dict[str, Any]] = []
    wanted = None if record_ids is None else list(record_ids)
    for f in page_files(day_dir):
        names = set(pq.read_schema(f).names)
        cols = [c for c in PAGE_COLUMNS if c in names]
        data = ds.dataset(f, format="parquet")
        flt = ds.field("record_id").isin(wanted) if wanted is not None else None
        for r in data.to_table(columns=cols, filter=flt).to_pylist():
            r["embeds_known"] = all(c in names for c in KINDS)
            out.append(r)
    return out


def for_record(root: str, record_id: str, reader: capindex.Reader | None = None) -> dict[str, Any] | None:
    """The completeness answer for the published page ``record_id`` of the local ``root`` (its day
    from the record store, its row from that day's pages); None when no page has that id."""
    ptr = recordstore.get(os.path.join(root, recordstore.FOLDER), record_id)
    if ptr is None:
        return None
    day_dir = layout.day_path(root, layout.PREPROCESSED, dt.date.fromisoformat(ptr["day"]))
    rows = page_rows(day_dir, [record_id])
    if not rows:
        return None
    reader = reader or capindex.Reader(os.path.join(root, capindex.FOLDER))
    return dict(of_page(reader, rows[0]), day=ptr["day"])


def _seeded(record_id: str) -> str:
    return hashlib.sha1(record_id.encode("utf-8")).hexdigest()


def day_summary(day_dir: str, index: str, sample: int = SAMPLE) -> dict[str, Any] | None:
    """The report's block for a local preprocessed day: over a seeded sample of its pages with
    resources (the first ``sample`` by a hash of the record id), the resources and their share
    captured on some day, the spread of the ages, and the :data:`LISTED` least complete pages.
    None without a capture index or without resource columns."""
    if not capindex_exists(index):
        return None
    rows = page_rows(day_dir)
    known = [r for r in rows if r["embeds_known"]]
    if not known:
        return None
    with_res = [r for r in known if resources(r)]
    chosen = sorted(with_res, key=lambda r: _seeded(r.get("record_id") or ""))[:sample]
    reader = capindex.Reader(index)
    answers = [of_page(reader, r) for r in chosen]
    total = sum(a["resources"] for a in answers)
    captured = sum(a["captured"] for a in answers)
    ages = [
        it["nearest"]["age_seconds"]
        for a in answers
        for it in a["items"]
        if it["nearest"] and it["nearest"]["age_seconds"] is not None
    ]
    by_kind: dict[str, list[int]] = {}
    for a in answers:
        for it in a["items"]:
            k = by_kind.setdefault(it["kind"], [0, 0])
            k[0] += 1
            k[1] += it["nearest"] is not None
    least = sorted(answers, key=lambda a: (a["captured"] / a["resources"], -a["resources"]))[:LISTED]
    return {
        "pages": len(rows),
        "pages_with_resources": len(with_res),
        "sampled": len(answers),
        "resources": total,
        "captured": captured,
        "same_day": sum(1 for a in ages if a <= 86400),
        "age_seconds": spread(ages),
        "by_kind": {k: {"resources": v[0], "captured": v[1]} for k, v in sorted(by_kind.items())},
        "least_complete": [
            {"url": a["url"], "resources": a["resources"], "captured": a["captured"], "age_seconds": a["age_seconds"]}
            for a in least
        ],
    }


def capindex_exists(index: str) -> bool:
    """Whether a capture index has been committed at ``index``."""
    state = capindex.read_state(index)  # empty before the first commit
    return bool(state.get("days") or state.get("runs"))
