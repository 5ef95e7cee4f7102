"""Reading files over HTTP(S), as from a SWAP server (``http://server/get/COLLECTION/PATH``): any
server answers, by bytes or by a redirect to the holder, which the standard library follows for
GET and HEAD. Ranged reads ask for exactly the bytes wanted (``Range``); a server that ignores the
header (200 instead of 206) is refused rather than read from the wrong offset.
"""

from __future__ import annotations

import io
import urllib.error
import urllib.request

TIMEOUT = 60.0


def is_http(uri: str) -> bool:
    return uri.startswith(("http://", "https://"))


def _open(uri: str, method: str = "GET", start: int = 0, end: int | None = None) -> io.BufferedIOBase:
    headers = {}
    if start or end is not None:
        headers["Range"] = f"bytes={start}-" + ("" if end is None else str(end))
    req = urllib.request.Request(uri, method=method, headers=headers)
    try:
        resp = urllib.request.urlopen(req, timeout=TIMEOUT)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise FileNotFoundError(f"{uri}: HTTP 404") from None
        if e.code == 416:
            return io.BytesIO(b"")
        raise OSError(f"{uri}: HTTP {e.code} {e.reason}") from None
    if headers and resp.status != 206:
        resp.close()
        raise OSError(f"{uri}: the server ignored the byte range (HTTP {resp.status})")
    return resp


def size(uri: str) -> int:
    with _open(uri, "HEAD") as resp:
        length = resp.headers.get("Content-Length")  # type: ignore[attr-defined]
    if length is None:
        raise OSError(f"{uri}: no Content-Length")
    return int(length)


def exists(uri: str) -> bool:
    try:
        size(uri)
        return True
    except FileNotFoundError:
        return False


def read_range(uri: str, offset: int, length: int) -> bytes:
    with _open(uri, start=offset, end=offset + length - 1) as resp:
        return resp.read()


def open_raw(uri: str, start: int = 0) -> io.BufferedIOBase:
    """A forward stream of ``uri`` from byte ``start`` (one GET)."""
    return _open(uri, start=start)
