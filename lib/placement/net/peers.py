"""The peer connection: servers tell each other their partitions and collections when they start and
when a peer comes back; a background task retries the peers that are offline.

Every answer of a peer is checked before it is used: one that is not the JSON expected (a
garbage answer, a wrong status, a timeout) is logged as a peer error, counted, and the peer is
marked offline until a retry succeeds. Nothing a bad answer carries is written.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

import aiohttp

from lib.placement.errors import PlacementError

log = logging.getLogger("dailyslice.swap.peers")

#: every how many retry rounds the online peers are greeted too
HEARTBEAT = 10


class PeerError(PlacementError):
    """A peer could not be reached or answered something unusable (the peer is then marked offline)."""


@dataclass
class PeerState:
    url: str
    online: bool = False
    error: str | None = None
    last_seen: float | None = None
    errors: int = 0
    info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "online": self.online,
            "error": self.error,
            "last_seen": self.last_seen,
            "errors": self.errors,
            "partitions": self.info.get("partitions", []),
        }


class Peers:
    """The peers of one server: their state, calls to them, and the retry loop."""

    def __init__(self, urls: list[str], timeout: float, retry: float):
        self.state = {u: PeerState(u) for u in urls}
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.retry = retry
        self.session: aiohttp.ClientSession | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self, hello: Callable[[PeerState], Awaitable[None]]) -> None:
        """Greet every peer and then keep retrying the offline ones, in the background (a server
        answers requests while its peers are still starting)."""
        self.session = aiohttp.ClientSession(timeout=self.timeout)
        self._task = asyncio.create_task(self._retry_loop(hello))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self.session is not None:
            await self.session.close()

    async def _retry_loop(self, hello: Callable[[PeerState], Awaitable[None]]) -> None:
        await asyncio.gather(*(hello(p) for p in list(self.state.values())), return_exceptions=True)
        rounds = 0
        while True:
            await asyncio.sleep(self.retry)
            rounds += 1
            # offline peers every round; every tenth round the online ones too, so that a peer that
            # went away while nobody called it is noticed
            due = [p for p in self.state.values() if not p.online or rounds % HEARTBEAT == 0]
            await asyncio.gather(*(hello(p) for p in due), return_exceptions=True)

    def failed(self, peer: PeerState, why: str) -> None:
        if peer.online or peer.error != why:
            log.warning("peer %s: %s", peer.url, why)
        peer.online, peer.error = False, why
        peer.errors += 1

    async def call(
        self, url: str, method: str, path: str, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """One JSON call to a peer; PeerError (peer marked offline) on any failure or garbage."""
        peer = self.state.get(url) or self.state.setdefault(url, PeerState(url))
        assert self.session is not None
        try:
            t = aiohttp.ClientTimeout(total=timeout) if timeout else self.timeout
            async with self.session.request(method, url + path, json=body, timeout=t) as resp:
                raw = await resp.read()
                if resp.status != 200:
                    raise PeerError(f"{method} {path}: HTTP {resp.status}: {raw[:200]!r}")
                try:
                    data = json.loads(raw)
                except ValueError:
                    raise PeerError(f"{method} {path}: answer is not JSON: {raw[:80]!r}") from None
                if not isinstance(data, dict):
                    raise PeerError(f"{method} {path}: answer is not a JSON object: {raw[:80]!r}")
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as e:
            self.failed(peer, f"{method} {path}: {type(e).__name__}: {e}")
            raise PeerError(peer.error or "") from e
        except PeerError as e:
            self.failed(peer, str(e))
            raise
        if not peer.online:
            log.info("peer %s is online", url)
        peer.online, peer.error, peer.last_seen = True, None, time.time()
        return data
