"""One SWAP server's state and what it does with it, apart from HTTP: its partitions, the collections
it knows, the peer exchange, creating collections, the collision check and writing a file.

The HTTP handlers (:mod:`lib.placement.net.routes`) call these; everything runs on one event loop,
so the claim table and the registry need no locks.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import time
from typing import Any, AsyncIterator

from lib.placement.net.claims import Claim, ClaimTable, local_conflict, local_dirs
from lib.placement.net.namespace import CollectionDef, CollectionError, Holder, Layout, Registry, check_name
from lib.placement.net.node import NodeConfig, Partition
from lib.placement.net.peers import PeerError, Peers, PeerState
from lib.placement.swap import ancestors
from lib.store import atomic

log = logging.getLogger("dailyslice.swap")

CHUNK = 1 << 18


class PutRefused(CollectionError):
    """A PUT that cannot be written; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


class SwapNode:
    """A server: config, partitions (by id), collections, claims and peers."""

    def __init__(self, cfg: NodeConfig):
        self.cfg = cfg
        self.url = cfg.url
        self.partitions = {p.id: p for p in map(Partition.open, cfg.partitions)}
        self.registry = Registry(cfg.state)
        self.claims = ClaimTable()
        self.peers = Peers([u for u in cfg.peers if u != self.url], cfg.peer_timeout_seconds, cfg.peer_retry_seconds)
        self.started = time.time()
        self.counters = {"peer_checks": 0, "puts": 0, "redirects": 0, "refused": 0}
        self._state_mtime: int | None = None
        #: a reader process (workers > 1): its collections come from the primary's state file
        self.reader = False
        for c in self.registry.colls.values():
            self._adopt(c)

    def reload(self) -> bool:
        """Re-read the state file if the primary process changed it (reader processes); True if it
        did. A reader calls it every 0.2 s and before any "not found", so an answer never rests on
        an older definition than the primary's: the primary saves a definition before it answers
        the push, and a rebalance moves nothing before every holder answered."""
        if not self.reader:
            return False
        try:
            mtime = os.stat(self.cfg.state).st_mtime_ns
        except FileNotFoundError:
            return False
        if mtime == self._state_mtime:
            return False
        self._state_mtime = mtime
        self.registry = Registry(self.cfg.state)
        return True

    # -- what this server tells its peers ---------------------------------------------------
    def info(self) -> dict[str, Any]:
        parts = []
        for p in self.partitions.values():
            du = shutil.disk_usage(p.path)
            parts.append({"id": p.id, "path": p.path, "free_bytes": du.free, "slices": p.slices})
        return {
            "url": self.url,
            "partitions": parts,
            "collections": [c.to_json() for c in self.registry.colls.values()],
        }

    async def hello(self, peer: PeerState) -> None:
        """Exchange partitions and collections with one peer (at start and when it comes back)."""
        try:
            data = await self.peers.call(peer.url, "POST", "/peer/hello", self.info())
            self.take_info(peer, data)
        except PeerError:
            pass  # logged and marked offline by the call
        except CollectionError as e:
            self.peers.failed(peer, f"hello: {e}")

    def take_info(self, peer: PeerState, data: dict[str, Any]) -> None:
        """Use a peer's info: check it whole first, so a bad answer changes nothing."""
        if data.get("url") != peer.url or not isinstance(data.get("partitions"), list):
            raise CollectionError(f"peer {peer.url} answered an info for {data.get('url')!r}")
        colls = [CollectionDef.from_json(d) for d in data.get("collections", [])]
        peer.info = data
        self.claims.known_dirs.clear()  # a peer that was away may have missed a delete's "forget"
        for c in colls:
            self.merge(c)

    def merge(self, c: CollectionDef) -> bool:
        """Take a collection definition if newer; record the slices it gives this server's partitions."""
        changed = self.registry.merge(c)
        if changed:
            self._adopt(c)
            self.registry.save()
            self.claims.forget(c.name)
        return changed

    def _adopt(self, c: CollectionDef) -> None:
        """Write into each partition's metadata which slice of ``c`` it holds (or that it holds none)."""
        mine = {h.partition: i for i, h in enumerate(c.layout.slices) if h.server == self.url}
        during = {h.partition for h in c.holders() if h.server == self.url}
        for p in self.partitions.values():
            want = mine.get(p.id)
            if want is not None:
                os.makedirs(p.slice_dir(c.name), exist_ok=True)
            if p.slices.get(c.name) != want and (want is not None or p.id not in during):
                if want is None:
                    p.slices.pop(c.name, None)
                else:
                    p.slices[c.name] = want
                p.save()

    # -- collections ----------------------------------------------------------------------
    def free_partitions(self) -> list[Holder]:
        """Every partition of this server and of the online peers, interleaved by server."""
        per_server = [[Holder(self.url, p.id) for p in self.partitions.values()]]
        for peer in self.peers.state.values():
            if peer.online:
                per_server.append([Holder(peer.url, str(p["id"])) for p in peer.info.get("partitions", [])])
        out: list[Holder] = []
        for i in range(max(map(len, per_server))):
            out += [s[i] for s in per_server if i < len(s)]
        return out

    async def create(self, spec: dict[str, Any]) -> CollectionDef:
        """Create a collection from ``{"name", "slices": n | [holders], "placement", "vnodes"}`` and
        tell every peer."""
        name = check_name(str(spec.get("name", "")))
        if name in self.registry.colls:
            raise PutRefused(409, f"collection {name!r} exists")
        self.registry.check_new_name(name)
        want = spec.get("slices", 1)
        if isinstance(want, list):
            holders = [Holder(str(h["server"]), str(h["partition"])) for h in want]
        else:
            free = self.free_partitions()
            if not isinstance(want, int) or not 1 <= want <= len(free):
                raise PutRefused(400, f"slices={want!r}: between 1 and {len(free)} partitions are online")
            holders = free[:want]
        layout = Layout(str(spec.get("placement", "md5-mod")), holders, int(spec.get("vnodes", 64)))
        limit = spec.get("max_put_bytes")
        c = CollectionDef(name, layout, 1, None, int(limit) if limit is not None else None)
        self.merge(c)
        await self.push(c)
        return c

    async def push(self, c: CollectionDef) -> None:
        """Send a definition to every peer; the offline ones get it when they come back."""

        async def one(url: str) -> None:
            try:
                await self.peers.call(url, "POST", "/peer/collection", c.to_json())
            except PeerError:
                pass

        await asyncio.gather(*(one(u) for u in self.peers.state))

    def slice_dirs(self, c: CollectionDef) -> list[str]:
        """This server's folders of collection ``c`` (current and, in a rebalance, previous slices)."""
        out = []
        for h in c.holders():
            if h.server == self.url and h.partition in self.partitions:
                out.append(self.partitions[h.partition].slice_dir(c.name))
        return out

    def local_file(self, c: CollectionDef, rel: str, holders: list[Holder]) -> str | None:
        """The local file of ``rel`` on one of ``holders`` held here, if it exists."""
        for h in holders:
            if h.server == self.url and h.partition in self.partitions:
                p = self.partitions[h.partition].file_path(c.name, rel)
                if os.path.isfile(p):
                    return p
        return None

    # -- the collision check ---------------------------------------------------------------
    def answer_check(self, collection: str, file: str | None, dirs: frozenset[str], token: Any) -> dict[str, Any]:
        """A peer's check: conflicts on the slices held here or with a claim in flight here."""
        c = self.registry.colls.get(collection)
        if c is None:
            return {"ok": True, "dirs": []}
        tok = (int(token[0]), str(token[1]))
        reason = local_conflict(self.slice_dirs(c), file, dirs) or self.claims.answer(collection, file, dirs, tok)
        return {"ok": reason is None, "reason": reason, "dirs": local_dirs(self.slice_dirs(c), dirs)}

    async def check_put(self, c: CollectionDef, rel: str, top: str) -> Claim | None:
        """Check ``rel`` (to be written under slice folder ``top``) here and with every other holder.
        Returns the claim to commit (None when nothing new is created); PutRefused says why not."""
        for a in ancestors(rel):
            if os.path.isfile(os.path.join(top, *a.split("/"))):
                raise PutRefused(409, f"cannot put {rel!r}: {a!r} is a file")
        target = os.path.join(top, *rel.split("/"))
        if os.path.isdir(target):
            raise PutRefused(409, f"cannot put {rel!r}: it is a directory")
        known = self.claims.known_dirs.setdefault(c.name, set())
        new_dirs = frozenset(
            a for a in ancestors(rel) if a not in known and not os.path.isdir(os.path.join(top, *a.split("/")))
        )
        new_file = None if os.path.isfile(target) else rel
        if new_file is None and not new_dirs:
            return None
        claim = Claim(c.name, new_file, new_dirs, (time.time_ns(), self.url))
        reason = self.claims.add(claim)
        if reason is not None:
            raise PutRefused(409, f"cannot put {rel!r}: {reason}")
        others = sorted({h.server for h in c.holders() if h.server != self.url})
        body = {"collection": c.name, "file": new_file, "dirs": sorted(new_dirs), "token": list(claim.token)}
        self.counters["peer_checks"] += len(others)
        answers = await asyncio.gather(
            *(self.peers.call(u, "POST", "/peer/check", body) for u in others), return_exceptions=True
        )
        for u, ans in zip(others, answers):
            if isinstance(ans, BaseException) or not isinstance(ans.get("ok"), bool):
                self.claims.release(claim)
                why = ans if isinstance(ans, BaseException) else f"bad answer {ans!r}"
                raise PutRefused(503, f"cannot put {rel!r}: peer {u} could not be checked ({why})")
            if not ans["ok"]:
                self.claims.release(claim)
                raise PutRefused(409, f"cannot put {rel!r}: {ans.get('reason')} (server {u})")
            known.update(d for d in ans.get("dirs", []) if isinstance(d, str) and d in new_dirs)
        if not self.claims.commit(claim):
            self.claims.release(claim)
            raise PutRefused(409, f"cannot put {rel!r}: a colliding path was claimed first on another server")
        return claim

    # -- writing -------------------------------------------------------------------------
    async def write(self, top: str, rel: str, chunks: AsyncIterator[bytes], limit: int) -> int:
        """Stream ``chunks`` into ``top/rel`` atomically (hidden temp name, fsync, rename); over
        ``limit`` bytes the write is dropped. Folders it made are removed again on failure."""
        target = os.path.join(top, *rel.split("/"))
        folder = os.path.dirname(target)
        made = []
        d = folder
        while not os.path.isdir(d):
            made.append(d)
            d = os.path.dirname(d)
        os.makedirs(folder, exist_ok=True)
        tmp = atomic.temp_path(target)
        size = 0
        try:
            with open(tmp, "wb") as out:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > limit:
                        raise PutRefused(413, f"{rel!r}: body over the limit of {limit} bytes")
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                os.remove(tmp)
            except FileNotFoundError:
                pass
            for m in made:  # deepest first
                try:
                    os.rmdir(m)
                except OSError:
                    break
            raise
        self.counters["puts"] += 1
        return size
