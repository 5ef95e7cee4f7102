"""Reading files over HTTP(S), as from a SWAP server (``http://server/get/COLLECTION/PATH``): any
server answers, by bytes or by a redirect to the holder, which the standard library follows for
GET and HEAD. Ranged reads ask for exactly the bytes wanted (``Range``); a server that ignores the
header (200 instead of 206) is refused rather than read from the wrong offset.

A folder is listed through the SWAP server's listing (``/get/C/P`` -> ``/list/C/P``, every slice's
files, paged by ``after``): :func:`list_files`. Other HTTP servers offer no listing; reading a
file from them works, listing them is refused.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

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


def read_bytes(uri: str) -> bytes:
    """The whole (small) file at ``uri``."""
    with _open(uri) as resp:
        return resp.read()


@dataclass(frozen=True)
class Listed:
    """A file of a SWAP listing: its ``/get/`` URI, size, mtime and the ETag a GET answers."""

    uri: str
    size: int
    mtime: float
    etag: str


def listing_url(uri: str) -> str:
    """The listing URL of a SWAP ``/get/COLLECTION/PREFIX`` URI; ValueError for any other URL (no
    listing to ask)."""
    p = urllib.parse.urlsplit(uri)
    if not p.path.startswith("/get/") or p.query or p.fragment:
        raise ValueError(f"{uri}: not a SWAP server's /get/COLLECTION/PATH URL, which is the only HTTP listing")
    return urllib.parse.urlunsplit((p.scheme, p.netloc, "/list/" + p.path[5:].strip("/"), "", ""))


def list_files(uri: str, page_size: int = 5000) -> list[Listed]:
    """Every file below the SWAP folder ``uri`` (``http://SERVER/get/COLLECTION/PREFIX``), sorted
    by URI; a folder with no file is an empty list. FileNotFoundError for an unknown collection,
    OSError when a server or a holder behind it cannot answer (the listing would be partial)."""
    url = listing_url(uri)
    p = urllib.parse.urlsplit(uri)
    base = f"{p.scheme}://{p.netloc}/get/"
    out: list[Listed] = []
    after = ""
    while True:
        q = urllib.parse.urlencode({"limit": str(page_size), **({"after": after} if after else {})})
        try:
            with urllib.request.urlopen(f"{url}?{q}", timeout=TIMEOUT) as resp:
                doc = json.loads(resp.read())
        except urllib.error.HTTPError as err:
            why = _error_text(err)
            if err.code == 404:
                raise FileNotFoundError(f"{uri}: {why}") from None
            raise OSError(f"{uri}: cannot be listed: HTTP {err.code}: {why}") from None
        except ValueError as err:
            raise OSError(f"{uri}: the listing is not JSON: {err}") from None
        coll = doc["collection"]
        for e in doc["entries"]:
            path = urllib.parse.quote(f"{coll}/{e['path']}", safe="/=+")
            out.append(Listed(base + path, int(e["size"]), float(e["mtime"]), str(e["etag"])))
        after = doc.get("next") or ""
        if not after:
            return sorted(out, key=lambda f: f.uri)


def _error_text(e: urllib.error.HTTPError) -> str:
    """The ``error`` of a JSON error answer, else the start of the body."""
    raw = e.read()[:500]
    try:
        return str(json.loads(raw)["error"])
    except (ValueError, KeyError, TypeError):
        return raw.decode("utf-8", "replace") or str(e.reason)
