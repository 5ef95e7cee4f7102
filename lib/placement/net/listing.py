"""``GET /list/<collection>[/<prefix>]``: the files of a collection below a folder, answered by any
server as the union over every slice of the collection (the design's servers offer no listing; the
service and the download client need one to read published days out of a collection).

The server asks each other holder of the collection for its own part (``?local=1``, the same
endpoint), merges the parts by path and answers one page: ``{"collection", "prefix", "entries":
[{"path", "size", "mtime", "etag"}...], "next"}``, entries sorted by path, ``path`` relative to
the collection. ``?after=PATH`` starts after that path, ``?limit=N`` (at most :data:`MAX_LIMIT`)
bounds the page; ``next`` is the ``after`` of the following page, or null on the last one.
``etag`` is the one a ``GET``/``HEAD`` of the file answers (``"mtime_ns-size"`` in hex), so a
reader can tell the listed version of a file from a later one without reading it.

A holder that cannot be asked makes the listing fail (503, naming it): a listing with a slice
missing would look like a day with files missing. An unknown collection is a 404, a prefix that
escapes the collection a 400, a prefix with no file below it an empty page.
"""

from __future__ import annotations

import bisect
import json
import os
from typing import Any
from urllib.parse import quote, urlencode

from aiohttp import web

from lib.placement.net.common import NODE
from lib.placement.net.common import err as _err
from lib.placement.net.namespace import CollectionDef
from lib.placement.net.peers import PeerError
from lib.placement.net.service import SwapNode
from lib.placement.swap import check_path

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10000


def _bad(text: str) -> web.HTTPBadRequest:
    return web.HTTPBadRequest(text=json.dumps({"error": text}), content_type="application/json")


def split(node: SwapNode, tail: str) -> tuple[CollectionDef, str]:
    """``<collection>[/<prefix>]`` -> (collection, prefix or ""); 400 for a path that escapes, 404
    for no collection of that name."""
    try:
        check_path(tail)
    except ValueError as e:
        raise _bad(str(e)) from e
    for _ in range(2):  # a reader process may not have seen a new collection yet: look once more
        c = node.registry.colls.get(tail)
        if c is not None:
            return c, ""
        try:
            return node.registry.split(tail)
        except KeyError:
            if not node.reload():
                break
    raise web.HTTPNotFound(
        text=json.dumps({"error": f"{tail!r}: no collection of this name"}), content_type="application/json"
    )


def local_entries(node: SwapNode, c: CollectionDef, prefix: str) -> list[dict[str, Any]]:
    """The files of ``c`` below ``prefix`` on this server's slices, sorted by path (hidden names,
    a write's temp files among them, are left out)."""
    found: dict[str, dict[str, Any]] = {}
    for top in node.slice_dirs(c):
        base = os.path.join(top, *prefix.split("/")) if prefix else top
        if os.path.isfile(base):
            walk: Any = [(os.path.dirname(base), [], [os.path.basename(base)])]
        else:
            walk = os.walk(base)
        for dirpath, dirnames, names in walk:
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for n in names:
                if n.startswith("."):
                    continue
                p = os.path.join(dirpath, n)
                try:
                    st = os.stat(p)
                except FileNotFoundError:  # removed meanwhile (a delete, a rebalance's move)
                    continue
                rel = os.path.relpath(p, top).replace(os.sep, "/")
                old = found.get(rel)
                if old is None or st.st_mtime_ns > old["_ns"]:  # during a rebalance: the newer copy
                    found[rel] = {
                        "path": rel,
                        "size": st.st_size,
                        "mtime": st.st_mtime,
                        "etag": f'"{st.st_mtime_ns:x}-{st.st_size:x}"',
                        "_ns": st.st_mtime_ns,
                    }
    out = sorted(found.values(), key=lambda e: e["path"])
    for e in out:
        del e["_ns"]
    return out


def page(entries: list[dict[str, Any]], after: str, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """The first ``limit`` of sorted ``entries`` after path ``after``; True if more follow."""
    keys = [e["path"] for e in entries]
    i = bisect.bisect_right(keys, after) if after else 0
    return entries[i : i + limit], len(entries) > i + limit


def _params(request: web.Request) -> tuple[str, int]:
    after = request.query.get("after", "")
    if after:
        try:
            check_path(after)
        except ValueError as e:
            raise _bad(f"after: {e}") from e
    raw = request.query.get("limit", str(DEFAULT_LIMIT))
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise _bad(f"limit must be an integer in 1..{MAX_LIMIT}, got {raw!r}")
    return after, int(raw)


async def list_files(request: web.Request) -> web.Response:
    """One page of the collection's files below the prefix: the union over every holder (module doc)."""
    node = request.app[NODE]
    c, prefix = split(node, request.match_info["tail"])
    after, limit = _params(request)
    mine, more = page(local_entries(node, c, prefix), after, limit)
    if request.query.get("local") == "1":  # a peer's question: this server's slices only
        return web.json_response({"entries": mine, "more": more})
    merged = {e["path"]: e for e in mine}
    others = sorted({h.server for h in c.holders() if h.server != node.url})
    query = urlencode({"local": "1", "after": after, "limit": str(limit)})
    path = f"/list/{quote(c.name)}" + (f"/{quote(prefix)}" if prefix else "") + f"?{query}"
    for url in others:
        try:
            got = await node.peers.call(url, "GET", path)
            part = got["entries"]
            if not isinstance(part, list) or not all(
                isinstance(e, dict) and isinstance(e.get("path"), str) for e in part
            ):
                raise PeerError(f"listing: bad entries {str(part)[:80]}")
        except (PeerError, KeyError) as why:
            return _err(503, f"{c.name}/{prefix}: cannot be listed, holder {url} did not answer ({why})")
        more = more or bool(got.get("more"))
        for e in part:
            old = merged.get(e["path"])
            if old is None or float(e.get("mtime", 0)) > float(old.get("mtime", 0)):
                merged[e["path"]] = e
    entries, cut = page(sorted(merged.values(), key=lambda e: e["path"]), "", limit)
    more = more or cut
    nxt = entries[-1]["path"] if more and entries else None
    return web.json_response({"collection": c.name, "prefix": prefix, "entries": entries, "next": nxt})
