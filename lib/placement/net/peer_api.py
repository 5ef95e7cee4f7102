"""The endpoints servers call on each other: ``/peer/hello`` (partitions and collections, both
ways), ``/peer/collection`` (a new or changed definition), ``/peer/check`` (the collision check),
``/peer/forget`` (drop cached answers after a delete), ``/peer/move`` and ``PUT /peer/store/...``
(a rebalance's moves). Every body is checked before it is used: a bad one is a 400, nothing kept.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from aiohttp import web

from lib.placement.net import moves
from lib.placement.net.common import NODE
from lib.placement.net.common import body_chunks as _body
from lib.placement.net.common import err as _err
from lib.placement.net.common import limit as _limit
from lib.placement.net.common import resolve as _resolve
from lib.placement.net.namespace import CollectionDef, CollectionError
from lib.placement.swap import check_path

log = logging.getLogger("dailyslice.swap.peers")


async def _json(request: web.Request) -> dict[str, Any]:
    try:
        d = await request.json()
    except ValueError:
        raise web.HTTPBadRequest(text='{"error": "body is not JSON"}', content_type="application/json") from None
    if not isinstance(d, dict):
        raise web.HTTPBadRequest(text='{"error": "body is not a JSON object"}', content_type="application/json")
    return d


async def peer_hello(request: web.Request) -> web.Response:
    node = request.app[NODE]
    d = await _json(request)
    url = d.get("url")
    if not isinstance(url, str) or not url.startswith("http"):
        return _err(400, "hello without a server url")
    peer = node.peers.state.get(url)
    if peer is not None:
        try:
            node.take_info(peer, d)
        except CollectionError as e:
            return _err(400, f"bad hello: {e}")
        if not peer.online:
            peer.online, peer.error, peer.last_seen = True, None, time.time()
            log.info("peer %s is back", url)
    return web.json_response(node.info())


async def peer_collection(request: web.Request) -> web.Response:
    node = request.app[NODE]
    try:
        c = CollectionDef.from_json(await _json(request))
        return web.json_response({"changed": node.merge(c)})
    except CollectionError as e:
        return _err(400, str(e))


async def peer_check(request: web.Request) -> web.Response:
    node = request.app[NODE]
    d = await _json(request)
    try:
        file = d.get("file")
        if file is not None:
            check_path(file)
        dirs = frozenset(check_path(x) for x in d.get("dirs", []))
        return web.json_response(node.answer_check(str(d["collection"]), file, dirs, d["token"]))
    except (KeyError, ValueError, TypeError, IndexError) as e:
        return _err(400, f"bad check: {e}")


async def peer_forget(request: web.Request) -> web.Response:
    d = await _json(request)
    request.app[NODE].claims.forget(str(d.get("collection")))
    return web.json_response({"ok": True})


async def peer_store(request: web.Request) -> web.StreamResponse:
    """A rebalance's copy: written to this server's slice of the *current* layout, no redirect."""
    node = request.app[NODE]
    c, rel = _resolve(node, request.match_info["tail"])
    h = c.layout.holder(rel)
    if h.server != node.url:
        return _err(409, f"{c.name}/{rel} belongs on {h.server}, not here")
    top = node.partitions[h.partition].slice_dir(c.name)
    size = await node.write(top, rel, _body(request), _limit(node, c))
    return web.json_response({"bytes": size, "md5": moves.md5_file(os.path.join(top, *rel.split("/")))})


async def peer_move(request: web.Request) -> web.Response:
    node = request.app[NODE]
    d = await _json(request)
    c = node.registry.colls.get(str(d.get("collection")))
    if c is None:
        return _err(404, f"{d.get('collection')!r}: no collection of this name")
    limit = d.get("limit")
    if c.previous is None or (limit is not None and not isinstance(limit, int)):
        return _err(409 if c.previous is None else 400, f"{c.name}: no rebalance in progress or a bad limit")
    return web.json_response(await moves.move_out(node, c, limit))
