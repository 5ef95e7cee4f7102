"""The SWAP server's HTTP/1.1 API (aiohttp).

- ``GET|HEAD /get/<collection>/<path>``: the file's bytes when this server holds its slice
  (``web.FileResponse``: sendfile, ranges, conditional requests), else **302** to the server that
  does; 404 for a missing file or an unknown collection.
- ``PUT /put/<collection>/<path>``: stored on this server's slice, else **307** to the holder (so
  ``curl -L -T`` re-sends the body to it); 201 on success.
- ``GET /list/<collection>[/<prefix>]``: the files below a folder, the union over every slice
  (:mod:`lib.placement.net.listing`).
- management: ``POST /mgmt/collections`` (create), ``GET /mgmt/collections``,
  ``GET /mgmt/attr/<collection>/<path>`` (file attributes), ``DELETE /mgmt/data/<collection>/<path>``,
  ``POST /mgmt/rebalance/<collection>``, ``GET /mgmt/status`` and the status page ``/``.
- peers: ``/peer/hello``, ``/peer/collection``, ``/peer/check``, ``/peer/forget``, ``/peer/move``,
  ``PUT /peer/store/<collection>/<path>`` (a rebalance's copy).
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any
from urllib.parse import quote

from aiohttp import web

from lib.placement.net import listing, moves, peer_api, status
from lib.placement.net.common import NODE
from lib.placement.net.common import body_chunks as _body
from lib.placement.net.common import err as _err
from lib.placement.net.common import limit as _limit
from lib.placement.net.common import resolve as _resolve
from lib.placement.net.namespace import CollectionDef, CollectionError
from lib.placement.net.peers import PeerError
from lib.placement.net.sendfile import SendfileResponse, plain
from lib.placement.net.service import PutRefused, SwapNode

log = logging.getLogger("dailyslice.swap.http")


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
        if node.reload():  # a reader process behind a rebalance's new definition: look again
            return await get(request)
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
    except OSError as e:  # a full or failing disk: the temp file and new folders are gone already
        log.error("PUT %s/%s failed: %s", c.name, rel, e)
        return _err(507, f"{c.name}/{rel}: cannot be written here: {e.strerror or e}")
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
        except PeerError:  # an offline peer drops its cache when it comes back (hello)
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
        if not isinstance(spec, dict):
            raise ValueError("the body must be a JSON object")
        return web.json_response(await moves.rebalance(node, c, spec))
    except PeerError as e:  # a move failed: the rebalance stays in progress, the same call resumes it
        return _err(502, f"rebalance of {name!r} stopped (call again to resume): {e}")
    except (CollectionError, ValueError, TypeError) as e:
        return _err(400 if not isinstance(e, PutRefused) else e.status, f"cannot rebalance {name!r}: {e}")


async def status_json(request: web.Request) -> web.Response:
    return web.json_response(status.status(request.app[NODE]))


async def status_page(request: web.Request) -> web.Response:
    return web.Response(text=status.page(request.app[NODE]), content_type="text/html")


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
    r.add_get("/list/{tail:.+}", listing.list_files)
    r.add_post("/mgmt/collections", create_collection)
    r.add_get("/mgmt/collections", list_collections)
    r.add_get("/mgmt/attr/{tail:.+}", attr)
    r.add_delete("/mgmt/data/{tail:.+}", delete)
    r.add_post("/mgmt/rebalance/{name:.+}", rebalance)
    r.add_get("/mgmt/status", status_json)
    r.add_get("/", status_page)
    r.add_post("/peer/hello", peer_api.peer_hello)
    r.add_post("/peer/collection", peer_api.peer_collection)
    r.add_post("/peer/check", peer_api.peer_check)
    r.add_post("/peer/forget", peer_api.peer_forget)
    r.add_post("/peer/move", peer_api.peer_move)
    r.add_put("/peer/store/{tail:.+}", peer_api.peer_store)

    async def on_cleanup(app: web.Application) -> None:
        await node.peers.close()

    app.on_cleanup.append(on_cleanup)
    return app
