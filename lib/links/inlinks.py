"""What links point to a URL, over a window of days (the link database, lib.links.linkdb).

A window is the last N merged days up to a day (default: the newest merged day), or all time.
The default, :data:`DEFAULT_WINDOW` days, is what Common Crawl's host graphs span (about three
months of crawls): long enough that a page linked last month keeps its in-links, short enough
that links gone for a season drop out. A window longer than the history is not an error: the
answer says so (``window.note``) and uses the whole history.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

import duckdb

from lib.errors import DailysliceError, UsageError
from lib.links import entries, linkdb
from lib.links.urls import checked, key

DEFAULT_WINDOW = 90
MAX_ROWS = 1000


class BadInput(UsageError, ValueError):
    """A request the link database cannot answer as asked (a malformed window or day)."""


class NoLinks(DailysliceError, LookupError):
    """No link database (or one that holds no day yet) where one was asked for."""


def parse_window(text: str | int | None) -> int | None:
    """A window as given (``None``: the default, ``all``: all time, else a positive number of days)."""
    if text is None or text == "":
        return DEFAULT_WINDOW
    if isinstance(text, str) and text.strip().lower() == "all":
        return None
    try:
        n = int(text)
    except (TypeError, ValueError):
        raise BadInput(f"window must be a number of days or 'all', got {text!r}") from None
    if n < 1:
        raise BadInput(f"window must be at least 1 day, got {n}")
    return n


def parse_day(text: str | None) -> dt.date | None:
    """A day ``YYYY-MM-DD`` (None: not given)."""
    if not text:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise BadInput(f"day must be YYYY-MM-DD, got {text!r}") from None


def window(state: dict[str, Any], days: int | None, until: dt.date | None = None) -> dict[str, Any]:
    """The window's ``first`` (None: all time) and ``last`` day, and what the answer says about it:
    the history it was cut from, and a ``note`` when it is longer than that history."""
    history = linkdb.merged_days(state)
    if not history:
        raise NoLinks("the link database holds no day yet")
    oldest, newest = dt.date.fromisoformat(history[0]), dt.date.fromisoformat(history[-1])
    last = until or newest
    if last < oldest:
        raise BadInput(f"until {last} is before the link database's first day {oldest}")
    first = last - dt.timedelta(days=days - 1) if days else None
    out: dict[str, Any] = {
        "days": days,
        "first": first,
        "last": last,
        "history": {"first": oldest, "last": newest, "days_merged": len(history)},
    }
    if days and first is not None and first < oldest:
        span = (last - oldest).days + 1
        out["note"] = (
            f"the window of {days} days is longer than the history before {last} ({span} days from {oldest}, "
            f"{len(history)} merged): all of it is used"
        )
    return out


def open_db(db: str) -> dict[str, Any]:
    """The link database's state; :class:`NoLinks` when there is none at ``db``."""
    if not os.path.isdir(db) or not os.path.exists(os.path.join(db, linkdb.versioned.POINTER)):
        raise NoLinks(f"no link database at {db} (the catalogue job merges one with --links)")
    return linkdb.read_state(db)


def inlinks(
    db: str, url: str, days: int | None = DEFAULT_WINDOW, until: dt.date | None = None, limit: int = MAX_ROWS
) -> dict[str, Any]:
    """The links pointing to ``url`` over the window: one row per source with ``first_seen``,
    ``last_seen``, ``days_seen`` and its latest day's ``rel`` and ``anchors``, latest first; the
    anchor texts of the followed ones with how many sources give each; the totals."""
    nurl = checked(url)
    for attempt in (0, 1):  # a state two merges old may have had its runs swept: read again
        state = open_db(db)
        win = window(state, days, until)
        uid, q = key(nurl, state["parts"])
        sql = entries.window_sql(linkdb.files(db, state, q), win["first"], win["last"], f"dst_id = '{uid}'")
        con = entries.connect(1, "256MB")
        try:
            rows = con.sql(f"SELECT * FROM ({sql}) ORDER BY last_seen DESC, src_url").to_arrow_table().to_pylist()
            break
        except duckdb.IOException:
            if attempt:
                raise
        finally:
            con.close()
    followed = [r for r in rows if r["rel"] is None]
    anchors: dict[str, int] = {}
    for r in followed:
        for a in r["anchors"]:
            anchors[a] = anchors.get(a, 0) + 1
    return {
        "url": url,
        "normalized": nurl,
        "id": uid,
        "window": win,
        "totals": {
            "links": len(rows),
            "followed": len(followed),
            "source_hosts": len({r["src_host"] for r in followed}),
        },
        "anchors": [{"text": a, "sources": n} for a, n in sorted(anchors.items(), key=lambda x: (-x[1], x[0]))],
        "inlinks": [
            {k: r[k] for k in ("src_url", "src_host", "first_seen", "last_seen", "days_seen", "rel", "anchors")}
            for r in rows[:limit]
        ],
    }


def db_of(root: str) -> str:
    """The link database of a bucket root (``ROOT/linkdb``)."""
    return os.path.join(root, linkdb.FOLDER)


def request(root: str, url: str | None, window: str | int | None, until: str | None, limit: int = MAX_ROWS) -> dict:
    """:func:`inlinks` for the catalogue's CLI and service, from their arguments as given:
    :class:`BadInput` or :class:`lib.links.urls.BadUrl` (400, exit 2) for what cannot be asked,
    :class:`NoLinks` (404) where there is no database."""
    if not url:
        raise BadInput("missing URL")
    if limit < 1:
        raise BadInput(f"limit must be at least 1, got {limit}")
    return inlinks(db_of(root), url, parse_window(window), parse_day(until), limit)
