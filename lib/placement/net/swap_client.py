"""A synchronous client of the SWAP servers (httpx): any server is an entry point, redirects are
followed (302 for reads, 307 for writes, so a PUT's body goes to the holder). The tests and the
benchmark use it; publishing (:mod:`lib.placement.publish_http`) needs only the standard library.
"""

from __future__ import annotations

from typing import Any, BinaryIO
from urllib.parse import quote

import httpx

from lib.placement.errors import PlacementError
from lib.placement.swap import check_path


class SwapHTTPError(PlacementError):
    """A SWAP server refused a request; the text holds its status and answer."""

    def __init__(self, method: str, url: str, status: int, text: str):
        super().__init__(f"{method} {url}: HTTP {status}: {text[:300]}")
        self.status = status


class SwapClient:
    """Requests to one SWAP server (any of the network)."""

    def __init__(self, server: str, timeout: float = 60.0):
        self.server = server.rstrip("/")
        self.http = httpx.Client(follow_redirects=True, timeout=httpx.Timeout(timeout, connect=10.0))

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "SwapClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, verb: str, path: str) -> str:
        return f"{self.server}/{verb}/{quote(check_path(path))}"

    def _ok(self, r: httpx.Response, *ok: int) -> httpx.Response:
        if r.status_code not in (ok or (200,)):
            raise SwapHTTPError(r.request.method, str(r.request.url), r.status_code, r.text)
        return r

    def put(self, path: str, data: bytes | BinaryIO) -> dict[str, Any]:
        """Store ``collection/path``; the answer names the server that holds it."""
        body = data if isinstance(data, bytes) else data.read()  # httpx re-sends only bytes on a 307
        return dict(self._ok(self.http.put(self.url("put", path), content=body), 201).json())

    def get(self, path: str, start: int | None = None, length: int | None = None) -> bytes:
        """The bytes of ``collection/path`` (or ``length`` bytes from ``start``)."""
        headers = {}
        if start is not None:
            headers["Range"] = f"bytes={start}-" + (str(start + length - 1) if length is not None else "")
        r = self.http.get(self.url("get", path), headers=headers)
        return self._ok(r, 200, 206).content

    def head(self, path: str) -> int:
        """The size of ``collection/path``."""
        return int(self._ok(self.http.head(self.url("get", path))).headers["content-length"])

    def attr(self, path: str) -> dict[str, Any]:
        return dict(self._ok(self.http.get(self.url("mgmt/attr", path))).json())

    def delete(self, path: str) -> None:
        self._ok(self.http.delete(self.url("mgmt/data", path)))

    def create(self, name: str, slices: int | list[dict[str, str]] = 1, **spec: Any) -> dict[str, Any]:
        r = self.http.post(f"{self.server}/mgmt/collections", json={"name": name, "slices": slices, **spec})
        return dict(self._ok(r, 201).json())

    def collections(self) -> list[dict[str, Any]]:
        return list(self._ok(self.http.get(f"{self.server}/mgmt/collections")).json())

    def status(self) -> dict[str, Any]:
        return dict(self._ok(self.http.get(f"{self.server}/mgmt/status")).json())

    def rebalance(self, name: str, to: int, **steps: Any) -> dict[str, Any]:
        """Rebalance to ``to`` slices (``pause="plan"`` or ``limit=k`` to go step by step)."""
        body = {"to": to, **steps}
        r = self.http.post(f"{self.server}/mgmt/rebalance/{quote(name)}", json=body, timeout=3600)
        return dict(self._ok(r).json())
