"""Publishing a finished output folder into a SWAP collection over HTTP (standard library only, so
the pipeline's nodes need no extra): :func:`lib.placement.slice_publish.publish_tree` for servers.

Every file goes to ``PUT /put/PREFIX/RELPATH`` on the given server, which stores it or answers
307 to the holder (followed here, the body sent again). Data files first, markers
(``_SUCCESS``) last, so a reader never sees a day as complete before its data is there. A refused
file stops the publish with the server's reason; re-publishing overwrites in place.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote, urljoin

from lib.placement.errors import PlacementError
from lib.placement.slice_publish import is_marker, local_files
from lib.placement.swap import check_path
from lib.store import layout

MAX_REDIRECTS = 3


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 307 reaches put_file, which re-sends the body itself


_OPENER = urllib.request.build_opener(_NoRedirect)


def put_file(server: str, path: str, src: str, timeout: float = 600.0) -> dict[str, Any]:
    """PUT the local file ``src`` at ``collection/path`` through ``server``; the holder's answer."""
    url = f"{server.rstrip('/')}/put/{quote(check_path(path))}"
    size = os.path.getsize(src)
    for _ in range(MAX_REDIRECTS + 1):
        with open(src, "rb") as f:
            req = urllib.request.Request(url, data=f, method="PUT", headers={"Content-Length": str(size)})
            try:
                with _OPENER.open(req, timeout=timeout) as resp:
                    return dict(json.loads(resp.read()))
            except urllib.error.HTTPError as e:
                if e.code in (301, 302, 303, 307, 308) and e.headers.get("Location"):
                    url = urljoin(url, e.headers["Location"])
                    continue
                raise PlacementError(f"PUT {url}: HTTP {e.code}: {e.read()[:300].decode('utf-8', 'replace')}") from None
            except (urllib.error.URLError, OSError) as e:
                raise PlacementError(f"PUT {url}: {e}") from e
    raise PlacementError(f"PUT {path}: more than {MAX_REDIRECTS} redirects")


def publish_http(local_dir: str, server: str, prefix: str) -> dict[str, Any]:
    """Publish the finished folder ``local_dir`` under ``prefix`` (``collection/path``) through any
    SWAP server. Returns ``{"prefix", "files", "bytes", "per_server": {url: files}}``."""
    if not os.path.isfile(os.path.join(local_dir, layout.SUCCESS)):
        raise PlacementError(f"{local_dir}: no {layout.SUCCESS}, not a finished output folder; refusing to publish")
    prefix = check_path(prefix.strip("/"))
    files = local_files(local_dir)
    total = 0
    held: dict[str, int] = {}
    for r in [f for f in files if not is_marker(f)] + [f for f in files if is_marker(f)]:
        got = put_file(server, f"{prefix}/{r}", os.path.join(local_dir, *r.split("/")))
        total += int(got["bytes"])
        held[got["server"]] = held.get(got["server"], 0) + 1
    return {"prefix": prefix, "files": len(files), "bytes": total, "per_server": dict(sorted(held.items()))}
