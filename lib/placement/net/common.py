"""What the server's and the peers' handlers share: the application key of the node, error
answers, splitting a request path into collection and file path, the request body as chunks and
a collection's PUT limit."""

from __future__ import annotations

import json
from typing import AsyncIterator

from aiohttp import web

from lib.placement.net.namespace import CollectionDef
from lib.placement.net.service import SwapNode
from lib.placement.swap import check_path

NODE = web.AppKey("node", SwapNode)


def err(status_: int, text: str) -> web.Response:
    """A JSON error answer."""
    return web.json_response({"error": text}, status=status_)


def resolve(node: SwapNode, tail: str) -> tuple[CollectionDef, str]:
    """``<collection>/<path>`` -> (collection, checked path); HTTPException on bad input."""
    try:
        check_path(tail)
    except ValueError as e:
        raise web.HTTPBadRequest(text=json.dumps({"error": str(e)}), content_type="application/json") from e
    try:
        c, rel = node.registry.split(tail)
    except KeyError:
        if node.reload():  # a reader process that has not seen a new collection yet
            return resolve(node, tail)
        raise web.HTTPNotFound(
            text=json.dumps({"error": f"{tail!r}: no collection of this name"}), content_type="application/json"
        ) from None
    return c, rel


async def body_chunks(request: web.Request) -> AsyncIterator[bytes]:
    """The request body in chunks of 256 KiB, as it arrives."""
    async for chunk in request.content.iter_chunked(1 << 18):
        yield chunk


def limit(node: SwapNode, c: CollectionDef) -> int:
    """The largest PUT body of collection ``c`` on this server."""
    return min(node.cfg.max_put_bytes, c.max_put_bytes or node.cfg.max_put_bytes)
