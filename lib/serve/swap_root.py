"""A published root held by a SWAP collection: ``http://ANY-SERVER/get/COLLECTION/PREFIX``.

The service reads such a root as it reads a local or ``s3://`` one: folders through the servers'
listing (``/list/``: the union of every slice, :mod:`lib.placement.net.listing`), a file's size
and version by ``HEAD`` and its bytes by ranged ``GET``, each answered by the holder after the
redirect (:mod:`lib.store.httpread` follows them). A file's version is the ETag both the listing
and the holder's answers carry, so the sha256 cache keys agree whichever way a file was found.

A server or holder that cannot be reached is :class:`Unreachable` (503 naming the file), never a
"not found": a day whose ``_SUCCESS`` sits on a stopped server is not an unpublished day.
"""

from __future__ import annotations

import io
import urllib.error
import urllib.request
from typing import Iterator

from lib.serve.errors import NotFound, ServeError
from lib.store import httpread

CHUNK = 256 * 1024


class Unreachable(ServeError):
    """A file of a SWAP root whose server (or the holder it redirects to) does not answer (503)."""

    status = 503


def is_swap(root: str) -> bool:
    return httpread.is_http(root)


def children(root: str, rel: str) -> list[str]:
    """The names directly below ``root/rel`` (folders and files), sorted."""
    base = f"{root}/{rel}"
    names = {f.uri[len(base) + 1 :].split("/", 1)[0] for f in listed(base)}
    return sorted(n for n in names if n)


def listed(uri: str) -> list[httpread.Listed]:
    """Every file below ``uri`` (an empty list for a folder with no file)."""
    try:
        return httpread.list_files(uri)
    except FileNotFoundError as e:
        raise NotFound(f"SWAP root {uri}: {e}") from None
    except OSError as e:
        raise Unreachable(f"{uri}: {e}") from None


def head(uri: str) -> tuple[int, str] | None:
    """(size, ETag) of the file at ``uri``, None if there is none; Unreachable when no server answers."""
    req = urllib.request.Request(uri, method="HEAD")
    try:
        with urllib.request.urlopen(req, timeout=httpread.TIMEOUT) as resp:
            return int(resp.headers["Content-Length"]), str(resp.headers.get("ETag") or "")
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise Unreachable(f"{uri}: HTTP {e.code} {e.reason}") from None
    except (OSError, KeyError, ValueError) as e:  # refused, reset, timed out; no length
        raise Unreachable(f"{uri}: unreachable ({e})") from None


def exists(uri: str) -> bool:
    return head(uri) is not None


def read_range(uri: str, start: int, end: int) -> Iterator[bytes]:
    """Bytes ``[start, end)`` of ``uri`` in chunks, by one GET from ``start`` (the holder's, after the
    redirect). The request is made before the first chunk is asked for, so an unreachable holder
    is an error the caller can still answer with a status."""
    try:
        resp = httpread.open_raw(uri, start)
    except FileNotFoundError:
        raise NotFound(f"{uri}: gone") from None
    except OSError as e:
        raise Unreachable(f"{uri}: unreachable ({e})") from None
    return _chunks(uri, resp, end - start)


def _chunks(uri: str, resp: io.BufferedIOBase, left: int) -> Iterator[bytes]:
    with resp:
        while left > 0:
            b = resp.read(min(CHUNK, left))
            if not b:
                raise Unreachable(f"{uri}: the answer ended {left} bytes early")
            left -= len(b)
            yield b
