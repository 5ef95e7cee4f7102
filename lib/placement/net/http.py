"""The SWAP server's HTTP/1.1 API (aiohttp).

- ``GET|HEAD /get/<collection>/<path>``: the file's bytes when this server holds its slice
  (``web.FileResponse``: sendfile, ranges, conditional requests), else **302** to the server that
  does; 404 for a missing file or an unknown collection.
- ``PUT /put/<collection>/<path>``: stored on this server's slice, else **307** to the holder (so
  ``curl -L -T`` re-sends the body to it); 201 on success.
- management: ``POST /mgmt/collections`` (create), ``GET /mgmt/collections``,
  ``GET /mgmt/attr/<collection>/<path>`` (file attributes), ``DELETE /mgmt/data/<collection>/<path>``,
  ``POST /mgmt/rebalance/<collection>``, ``GET /mgmt/status`` and the status page ``/``.
- peers: ``/peer/hello``, ``/peer/collection``, ``/peer/check``, ``/peer/forget``, ``/peer/move``,
  ``PUT /peer/store/<collection>/<path>`` (a rebalance's copy).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from typing import Any, AsyncIterator
from urllib.parse import quote

from aiohttp import web

from lib.placement.net import moves, status
from lib.placement.net.namespace import CollectionDef, CollectionError
from lib.placement.net.sendfile import SendfileResponse, plain
from lib.placement.net.service import PutRefused, SwapNode
from lib.placement.swap import check_path

log = logging.getLogger("dailyslice.swap.http")

NODE = web.AppKey("node", SwapNode)


def _err(status_: int, text: str) -> web.Response:
    return web.json_response({"error": text}, status=status_)


def _resolve(node: SwapNode, tail: str) -> tuple[CollectionDef, str]:
    """``<collection>/<path>`` -> (collection, checked path); HTTPException on bad input."""
    try:
        check_path(tail)
    except ValueError as e:
        raise web.HTTPBadRequest(text=json.dumps({"error": str(e)}), content_type="application/json") from e
    try:
        c, rel = node.registry.split(tail)
    except KeyError:
        raise web.HTTPNotFound(
            text=json.dumps({"error": f"{tail!r}: no collection of this name"}), content_type="application/json"
        ) from None
    return c, rel


def _url(server: str, verb: str, c: CollectionDef, rel: str, hop: int = 0) -> str:
    u = f"{server}/{verb}/{quote(c.name)}/{quote(rel)}"
    return f"{u}?swap-hop={hop}" if hop else u


async def get(request: web.Request) -> web.StreamResponse:
    """Serve, redirect to the holder, or 404 (see :func:`_next_hop` for a rebalance's reads)."""
    node = request.app[NODE]
    c, rel = _resolve(node, request.match_info["tail"])
    cands = c.candidates(rel)
    local = node.local_file(c, rel, cands)
    if local is not None:
        return SendfileResponse(local) if plain(request) else web.FileResponse(local, chunk_size=1 << 20)
    nxt = _next_hop(node, cands, _hop(request))
    if nxt is None:
        return _err(404, f"{c.name}/{rel}: not found")
    node.counters["redirects"] += 1
    # a plain response, not web.HTTPFound: raising costs a third of a redirect's time
    return web.Response(status=302, headers={"Location": _url(nxt[0], "get", c, rel, nxt[1])})


def _hop(request: web.Request) -> int:
    """The ``swap-hop`` count of a read passed on during a rebalance (0 for a client's request)."""
    v = request.query.get("swap-hop", "0")
    return int(v) if v in ("0", "1", "2") else 2


def _next_hop(node: SwapNode, cands: list[Any], hop: int) -> tuple[str, int] | None:
    """Where to send a read this server cannot answer. Outside a rebalance: the holder. During one,
    the new holder sends a miss to the old holder (hop 1), which sends a miss back (hop 2): a
    move copies before it deletes, so one of them has the file; hops stop at 2."""
    first = cands[0]
    if first.server != node.url and hop == 0:
        return first.server, 0
    others = [h for h in cands if h.server != node.url]
    if hop == 0 and others:
        return others[0].server, 1
    if hop == 1 and first.server != node.url:
        return first.server, 2
    return None


async def _body(request: web.Request) -> AsyncIterator[bytes]:
    async for chunk in request.content.iter_chunked(1 << 18):
        yield chunk


def _limit(node: SwapNode, c: CollectionDef) -> int:
    return min(node.cfg.max_put_bytes, c.max_put_bytes or node.cfg.max_put_bytes)


def _precheck(request: web.Request) -> tuple[CollectionDef, str, str | None] | web.StreamResponse:
    """What a PUT will do before its body is read: (collection, path, local slice folder) or the
    answer (redirect, refusal)."""
    node = request.app[NODE]
    c, rel = _resolve(node, request.match_info["tail"])
    if c.previous is not None:
        return _err(503, f"{c.name}: a rebalance is in progress, writes wait until it ends")
    h = c.layout.holder(rel)
    if h.server != node.url:
        node.counters["redirects"] += 1
        return web.Response(status=307, headers={"Location": _url(h.server, "put", c, rel)})
    length = request.content_length
    if length is not None and length > _limit(node, c):
        return _err(413, f"{c.name}/{rel}: {length} bytes is over the limit of {_limit(node, c)}")
    return c, rel, node.partitions[h.partition].slice_dir(c.name)


async def expect(request: web.Request) -> web.StreamResponse | None:
    """``Expect: 100-continue``: redirect or refuse before the client sends the body."""
    try:
        pre = _precheck(request)
    except web.HTTPException as e:
        return e
    if isinstance(pre, web.StreamResponse):
        return pre
    if request.version >= (1, 1) and request.headers.get("EXPECT", "").lower() == "100-continue":
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    return None


async def put(request: web.Request) -> web.StreamResponse:
    node = request.app[NODE]
    pre = _precheck(request)
    if isinstance(pre, web.StreamResponse):
        return pre
    c, rel, top = pre
    assert top is not None
    return await _store(node, c, rel, top, request)


async def _store(node: SwapNode, c: CollectionDef, rel: str, top: str, request: web.Request) -> web.Response:
    try:
        claim = await node.check_put(c, rel, top)
        try:
            size = await node.write(top, rel, _body(request), _limit(node, c))
        finally:
            if claim is not None:
                node.claims.release(claim)
    except PutRefused as e:
        node.counters["refused"] += 1
        log.info("refused PUT %s/%s: %s", c.name, rel, e)
        return _err(e.status, str(e))
    return web.json_response({"collection": c.name, "path": rel, "bytes": size, "server": node.url}, status=201)


# -- management -----------------------------------------------------------------------------
async def create_collection(request: web.Request) -> web.Response:
    node = request.app[NODE]
    try:
        spec = await request.json()
        if not isinstance(spec, dict):
            raise CollectionError("the body must be a JSON object")
        c = await node.create(spec)
    except PutRefused as e:
        return _err(e.status, str(e))
    except (CollectionError, ValueError, KeyError, TypeError) as e:
        return _err(400, f"cannot create collection: {e}")
    return web.json_response(c.to_json(), status=201)


async def list_collections(request: web.Request) -> web.Response:
    return web.json_response([c.to_json() for c in request.app[NODE].registry.colls.values()])


async def attr(request: web.Request) -> web.Response:
    """Attributes of a file: size, mtime, MD5, slice and holder; redirected like a read."""
    node = request.app[NODE]
    c, rel = _resolve(node, request.match_info["tail"])
    cands = c.candidates(rel)
    local = node.local_file(c, rel, cands)
    if local is None:
        nxt = _next_hop(node, cands, _hop(request))
        if nxt is None:
            return _err(404, f"{c.name}/{rel}: not found")
        raise web.HTTPFound(_url(nxt[0], "mgmt/attr", c, rel, nxt[1]))
    st = os.stat(local)
    h = hashlib.md5()
    with open(local, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return web.json_response(
        {
            "collection": c.name,
            "path": rel,
            "size": st.st_size,
            "mtime": st.st_mtime,
            "md5": h.hexdigest(),
            "slice": c.layout.slice_of(rel),
            "server": node.url,
        }
    )


async def delete(request: web.Request) -> web.Response:
    """Remove a file from its slice (redirected to the holder) and tell peers to drop cached answers."""
    node = request.app[NODE]
    c, rel = _resolve(node, request.match_info["tail"])
    h = c.layout.holder(rel)
    if c.previous is not None:
        return _err(503, f"{c.name}: a rebalance is in progress")
    if h.server != node.url:
        return web.Response(status=307, headers={"Location": _url(h.server, "mgmt/data", c, rel)})
    top = node.partitions[h.partition].slice_dir(c.name)
    found = moves.remove(top, rel)
    node.claims.forget(c.name)
    for u in node.peers.state:
        try:
            await node.peers.call(u, "POST", "/peer/forget", {"collection": c.name})
        except Exception:  # an offline peer drops its cache when it comes back (hello merges)
            pass
    if not found:
        return _err(404, f"{c.name}/{rel}: not found")
    return web.json_response({"deleted": f"{c.name}/{rel}"})


async def rebalance(request: web.Request) -> web.Response:
    node = request.app[NODE]
    name = request.match_info["name"]
    c = node.registry.colls.get(name)
    if c is None:
        return _err(404, f"{name!r}: no collection of this name")
    try:
        spec = await request.json()
        return web.json_response(await moves.rebalance(node, c, spec))
    except (CollectionError, ValueError, TypeError) as e:
        return _err(400 if not isinstance(e, PutRefused) else e.status, f"cannot rebalance {name!r}: {e}")


async def status_json(request: web.Request) -> web.Response:
    return web.json_response(status.status(request.app[NODE]))


async def status_page(request: web.Request) -> web.Response:
    return web.Response(text=status.page(request.app[NODE]), content_type="text/html")


# -- peers ----------------------------------------------------------------------------------
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


def _to_primary(primary: str) -> Any:
    """A reader process's middleware: reads of files here, every other request to the primary."""

    @web.middleware
    async def mw(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method in ("GET", "HEAD") and request.path.startswith("/get/"):
            return await handler(request)
        return web.Response(status=307, headers={"Location": primary + request.raw_path})

    return mw


def make_app(node: SwapNode, primary: str | None = None) -> web.Application:
    """The aiohttp application of one server (the caller greets the peers once it listens); with
    ``primary``, of a reader process that sends all but reads to the primary at that URL."""
    app = web.Application(client_max_size=1 << 20, middlewares=[_to_primary(primary)] if primary else [])
    app[NODE] = node
    r = app.router
    r.add_get("/get/{tail:.+}", get)  # also answers HEAD
    r.add_put("/put/{tail:.+}", put, expect_handler=expect)
    r.add_post("/mgmt/collections", create_collection)
    r.add_get("/mgmt/collections", list_collections)
    r.add_get("/mgmt/attr/{tail:.+}", attr)
    r.add_delete("/mgmt/data/{tail:.+}", delete)
    r.add_post("/mgmt/rebalance/{name:.+}", rebalance)
    r.add_get("/mgmt/status", status_json)
    r.add_get("/", status_page)
    r.add_post("/peer/hello", peer_hello)
    r.add_post("/peer/collection", peer_collection)
    r.add_post("/peer/check", peer_check)
    r.add_post("/peer/forget", peer_forget)
    r.add_post("/peer/move", peer_move)
    r.add_put("/peer/store/{tail:.+}", peer_store)

    async def on_cleanup(app: web.Application) -> None:
        await node.peers.close()

    app.on_cleanup.append(on_cleanup)
    return app
