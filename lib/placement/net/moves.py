"""Rebalancing a collection while its servers keep serving: doubling or halving md5-mod slices, adding
or removing consistent-hash slices.

1. The coordinator (any server) publishes a new definition whose ``previous`` is the old layout:
   writes pause (503), reads look on the new slice and then the old one.
2. Every server holding an old slice moves out the files whose holder changed: copy to the new
   holder (``PUT /peer/store``), compare the MD5 it answers with the local one, then delete the
   local file. A file is on its old or its new slice (or both) at every moment.
3. The coordinator publishes the final definition (``previous`` dropped).

Only the files whose holder changed move: for md5-mod doubling those going from slice i to i + n,
for a consistent ring the keys of the arcs the new slice took.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import aiohttp

from lib.placement.net.namespace import CollectionDef, Holder, Layout
from lib.placement.net.peers import PeerError
from lib.store import atomic

if TYPE_CHECKING:  # the service imports nothing from here at run time
    from lib.placement.net.service import SwapNode

MOVE_TIMEOUT = 3600.0


def md5_file(path: str) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def remove(top: str, rel: str) -> bool:
    """Delete ``top/rel`` and the folders it leaves empty (they would read as directories)."""
    p = os.path.join(top, *rel.split("/"))
    try:
        os.remove(p)
    except FileNotFoundError:
        return False
    d = os.path.dirname(p)
    while d != top and d.startswith(top + os.sep):
        try:
            os.rmdir(d)
        except OSError:
            break
        d = os.path.dirname(d)
    return True


def walk(top: str) -> list[str]:
    """Collection paths of the files in a slice folder (temp files of unfinished writes skipped)."""
    out = []
    for dirpath, _, names in os.walk(top):
        rel_dir = os.path.relpath(dirpath, top).replace(os.sep, "/")
        out += [n if rel_dir == "." else f"{rel_dir}/{n}" for n in names if not atomic.is_temp(n)]
    return sorted(out)


def new_layout(node: "SwapNode", c: CollectionDef, to: int) -> Layout:
    """The layout with ``to`` slices: the first ``to`` of the old ones, plus free partitions."""
    old = c.layout.slices
    if to < 1:
        raise ValueError(f"to={to}: a collection needs at least one slice")
    if c.layout.placement == "md5-mod" and to not in (len(old), 2 * len(old)) and to * 2 != len(old):
        raise ValueError(f"md5-mod collections double or halve: {len(old)} -> {to} would move most files")
    used = {h.partition for h in old}
    spare = [h for h in node.free_partitions() if h.partition not in used]
    if to > len(old) + len(spare):
        raise ValueError(f"to={to}: only {len(old) + len(spare)} partitions are online")
    return Layout(c.layout.placement, (old + spare)[:to], c.layout.vnodes)


async def rebalance(node: "SwapNode", c: CollectionDef, spec: dict[str, Any]) -> dict[str, Any]:
    """Rebalance ``c`` to ``spec["to"]`` slices with every holder online; returns the counts.

    ``spec["pause"] = "plan"`` stops after publishing the moving layout, ``spec["limit"] = k`` after
    each holder moved at most k files (an operator's or a test's steps); calling again with the
    same ``to`` resumes a rebalance in progress."""
    to = spec.get("to")
    if not isinstance(to, int) or isinstance(to, bool):
        raise ValueError(f"'to' must be an integer, got {to!r}")
    limit = spec.get("limit")
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise ValueError(f"'limit' must be a count of files, got {limit!r}")
    if c.previous is not None:
        if len(c.layout.slices) != to:
            raise ValueError(f"a rebalance to {len(c.layout.slices)} slices is in progress: finish it first")
        moving, old = c, c.previous
    else:
        moving, old = CollectionDef(c.name, new_layout(node, c, to), c.version + 1, c.layout, c.max_put_bytes), c.layout
    servers = sorted({h.server for h in [*old.slices, *moving.layout.slices]})
    peers = node.peers.state
    offline = [u for u in servers if u != node.url and not (u in peers and peers[u].online)]
    if offline:
        raise ValueError(f"holders offline: {', '.join(offline)}")
    if moving is not c:
        node.merge(moving)
        await node.push(moving)
    counts = {"moved": 0, "kept": 0}
    if spec.get("pause") != "plan":
        done_counts = await asyncio.gather(
            *(_move_on(node, u, c.name, limit) for u in sorted({h.server for h in old.slices}))
        )
        counts = {k: sum(d[k] for d in done_counts) for k in counts}
    finished = spec.get("pause") != "plan" and limit is None
    if finished:
        done = CollectionDef(c.name, moving.layout, moving.version + 1, None, c.max_put_bytes)
        node.merge(done)
        await node.push(done)
    return {"collection": c.name, "from": len(old.slices), "to": to, "finished": finished, **counts}


async def _move_on(node: "SwapNode", server: str, name: str, limit: int | None) -> dict[str, int]:
    if server == node.url:
        return await move_out(node, node.registry.colls[name], limit)
    body = {"collection": name, "limit": limit}
    data = await node.peers.call(server, "POST", "/peer/move", body, timeout=MOVE_TIMEOUT)
    return {"moved": int(data["moved"]), "kept": int(data["kept"])}


async def move_out(node: "SwapNode", c: CollectionDef, limit: int | None = None) -> dict[str, int]:
    """Move the files of this server's old slices whose holder changed (at most ``limit``): copy,
    compare, delete."""
    moved = kept = 0
    olds = [h for h in (c.previous or c.layout).slices if h.server == node.url and h.partition in node.partitions]
    for old in olds:
        top = node.partitions[old.partition].slice_dir(c.name)
        for rel in walk(top):
            new = c.layout.holder(rel)
            if new == old:
                kept += 1
                continue
            if limit is not None and moved >= limit:
                continue
            src = os.path.join(top, *rel.split("/"))
            want = md5_file(src)
            got = await _copy(node, c, rel, src, new)
            if got != want:
                raise PeerError(f"copy of {c.name}/{rel} to {new.server} has MD5 {got}, not {want}")
            remove(top, rel)
            moved += 1
    return {"moved": moved, "kept": kept}


async def _copy(node: "SwapNode", c: CollectionDef, rel: str, src: str, to: Holder) -> str:
    if to.server == node.url:
        top = node.partitions[to.partition].slice_dir(c.name)

        async def chunks() -> Any:
            with open(src, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    yield chunk

        await node.write(top, rel, chunks(), 1 << 62)
        return md5_file(os.path.join(top, *rel.split("/")))
    assert node.peers.session is not None
    url = f"{to.server}/peer/store/{quote(c.name)}/{quote(rel)}"
    try:
        with open(src, "rb") as f:
            async with node.peers.session.put(url, data=f, timeout=aiohttp.ClientTimeout(total=MOVE_TIMEOUT)) as r:
                if r.status != 200:
                    raise PeerError(f"copy of {c.name}/{rel} to {to.server}: HTTP {r.status}: {await r.text()}")
                return str((await r.json())["md5"])
    except (aiohttp.ClientError, asyncio.TimeoutError, ValueError, KeyError) as e:
        raise PeerError(f"copy of {c.name}/{rel} to {to.server}: {e}") from e
