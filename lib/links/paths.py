"""The shortest path over followed links from one URL to another within a window (docs/links.md).

A breadth-first search backwards from the target: each level looks up the in-links of the pages
found so far (the link database is sorted by target, so a level reads the row groups that bracket
their ids), keeping the links whose latest day in the window followed them. It stops at the source,
at ``max_hops`` levels, or at ``timeout`` seconds (checked between look-ups), and says which. Of
several shortest paths it gives, hop by hop from the source, the link to the smallest target URL.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import deque
from typing import Any

import pyarrow as pa

from lib.errors import DailysliceError
from lib.links import entries, hostgraph, inlinks, linkdb
from lib.links.inlinks import BadInput
from lib.links.urls import checked, key

DEFAULT_HOPS = 4
MAX_HOPS = 8
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 60.0


class NoRoute(DailysliceError, LookupError):
    """No path within the bounds: the message says which bound stopped the search."""


def check_bounds(max_hops: int, timeout: float) -> None:
    """:class:`BadInput` for hops or a timeout outside what the service allows."""
    if not 1 <= max_hops <= MAX_HOPS:
        raise BadInput(f"max_hops must be between 1 and {MAX_HOPS}, got {max_hops}")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise BadInput(f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds, got {timeout:g}")


def _inlinks_of(
    db: str, state: dict[str, Any], by_part: dict[int, list[str]], first: dt.date | None, last: dt.date, deadline: float
) -> list[dict[str, Any]] | None:
    """The followed in-links (over the window) of pages by target partition; None when the deadline passed."""
    rows: list[dict[str, Any]] = []
    con = entries.connect(1, "512MB")
    try:
        for q, part_ids in sorted(by_part.items()):
            if time.monotonic() > deadline:
                return None
            con.register("f", pa.table({"id": part_ids}))
            sql = entries.window_sql(linkdb.files(db, state, q), first, last, "dst_id IN (SELECT id FROM f)")
            rows += (
                con.sql(
                    f"SELECT src_id, dst_id, src_url, dst_url, first_seen, last_seen, anchors FROM ({sql}) "
                    "WHERE rel IS NULL"
                )
                .to_arrow_table()
                .to_pylist()
            )
            con.unregister("f")
    finally:
        con.close()
    return rows


def shortest_path(
    db: str,
    source: str,
    target: str,
    days: int | None = inlinks.DEFAULT_WINDOW,
    until: dt.date | None = None,
    max_hops: int = DEFAULT_HOPS,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """The hops of a shortest path of followed links from ``source`` to ``target`` over the window,
    each with the link's first and last day seen in it and its latest anchors; :class:`NoRoute`
    when there is none within ``max_hops`` (or none found before ``timeout`` seconds)."""
    check_bounds(max_hops, timeout)
    src, dst = checked(source), checked(target)
    state = inlinks.open_db(db)
    win = inlinks.window(state, days, until)
    deadline = time.monotonic() + timeout
    (sid, _), (tid, tq) = key(src, state["parts"]), key(dst, state["parts"])
    answer: dict[str, Any] = {"from": src, "to": dst, "window": win, "max_hops": max_hops}
    if sid == tid:
        return dict(answer, hops=[])
    parts = {tid: tq}  # page -> its partition (from its URL, known when the page is found)
    nxt: dict[str, dict[str, Any]] = {}  # page -> its link one hop nearer the target
    frontier, seen = [tid], {tid}
    for level in range(1, max_hops + 1):
        by_part: dict[int, list[str]] = {}
        for i in frontier:
            by_part.setdefault(parts[i], []).append(i)
        rows = _inlinks_of(db, state, by_part, win["first"], win["last"], deadline)
        if rows is None:
            raise NoRoute(
                f"no path from {src} to {dst} found within {timeout:g} s (searched {len(seen)} pages, "
                f"{level - 1} hops back from the target)"
            )
        found: list[str] = []
        for r in sorted(rows, key=lambda r: (r["src_id"], r["dst_url"])):
            if r["src_id"] not in seen:
                seen.add(r["src_id"])
                nxt[r["src_id"]] = r
                found.append(r["src_id"])
                parts[r["src_id"]] = key(r["src_url"], state["parts"])[1]
        if sid in nxt:
            hops, at = [], sid
            while at != tid:
                r = nxt[at]
                hops.append({k: r[k] for k in ("src_url", "dst_url", "first_seen", "last_seen", "anchors")})
                at = r["dst_id"]
            return dict(answer, hops=hops)
        if not found:
            break
        frontier = found
    raise NoRoute(
        f"no path from {src} to {dst} of at most {max_hops} followed links in the window "
        f"({win['first'] or 'all time'} to {win['last']}; {len(seen)} pages lead to the target within it)"
    )


def host_of(text: str) -> str:
    """A host as given (``example.com``) or the host of a URL, lowercased; BadUrl when neither."""
    url = text.strip() if "://" in text else f"http://{text.strip()}/"
    return checked(url).split("/")[2].split(":")[0].split("@")[-1]


def host_path(
    db: str,
    source: str,
    target: str,
    days: int | None = inlinks.DEFAULT_WINDOW,
    until: dt.date | None = None,
    max_hops: int = DEFAULT_HOPS,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """The hops of a shortest path in the window's host graph (lib.links.hostgraph: followed links
    between hosts), each with the first and last day of such a link in the window and how many
    links give it; of several, the one through the smallest host at each hop. One scan of the
    window's links, then a breadth-first search from the source."""
    check_bounds(max_hops, timeout)
    src, dst = host_of(source), host_of(target)
    state = inlinks.open_db(db)
    win = inlinks.window(state, days, until)
    deadline = time.monotonic() + timeout
    answer: dict[str, Any] = {"from": src, "to": dst, "level": "host", "window": win, "max_hops": max_hops}
    if src == dst:
        return dict(answer, hops=[])
    pairs = hostgraph.host_pairs(db, state, win["first"], win["last"]).to_pylist()
    out: dict[str, list[dict[str, Any]]] = {}
    for p in pairs:  # sorted by (src, dst): each host's targets in name order
        if p["src"] != p["dst"]:
            out.setdefault(p["src"], []).append(p)
    came: dict[str, dict[str, Any]] = {}
    todo, depth = deque([src]), {src: 0}
    while todo and dst not in depth:
        if time.monotonic() > deadline:
            raise NoRoute(f"no path from host {src} to host {dst} found within {timeout:g} s")
        h = todo.popleft()
        if depth[h] == max_hops:
            continue
        for p in out.get(h, []):
            if p["dst"] not in depth:
                depth[p["dst"]] = depth[h] + 1
                came[p["dst"]] = p
                todo.append(p["dst"])
    if dst not in depth:
        raise NoRoute(
            f"no path from host {src} to host {dst} of at most {max_hops} followed links in the window "
            f"({win['first'] or 'all time'} to {win['last']}; {len(depth)} hosts reached from the source)"
        )
    hops, at = [], dst
    while at != src:
        p = came[at]
        hops.append(
            {"src_host": p["src"], "dst_host": p["dst"], **{k: p[k] for k in ("first_seen", "last_seen", "links")}}
        )
        at = p["src"]
    return dict(answer, hops=hops[::-1])


def request(
    root: str,
    source: str | None,
    target: str | None,
    window: str | int | None,
    until: str | None,
    max_hops: int = DEFAULT_HOPS,
    timeout: float = DEFAULT_TIMEOUT,
    level: str = "url",
) -> dict[str, Any]:
    """:func:`shortest_path` (``level`` ``url``) or :func:`host_path` (``host``) for the catalogue's
    CLI and service, from their arguments as given."""
    if not source or not target:
        raise BadInput("give both URLs (or hosts): from and to")
    if level not in ("url", "host"):
        raise BadInput(f"level must be url or host, got {level!r}")
    find = shortest_path if level == "url" else host_path
    return find(
        inlinks.db_of(root), source, target, inlinks.parse_window(window), inlinks.parse_day(until), max_hops, timeout
    )
