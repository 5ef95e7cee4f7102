"""Read-only HTTP API over the catalogue queries (the seed's REST API), stdlib only.

    GET /days                          completed days
    GET /captures?url=URL              captures of a URL with duplicate markers
    GET /search?prefix=P&contains=S    URLs of the URL database (&limit=N)
    GET /files?day=YYYY-MM-DD          archive files of a day and their record counts
    GET /records?file=NAME[&day=D]     records of one archive file
    GET /stats?day=YYYY-MM-DD          per-day statistics

Answers are JSON; bad arguments give 400, unknown paths or days 404, both with
``{"error": "..."}``. Only GET and HEAD are served.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

from lib.catalogue import query


def to_json(obj: Any) -> bytes:
    """JSON of query results: dates/times as ISO 8601, decimals as numbers."""
    def default(o: Any) -> Any:
        if isinstance(o, (dt.datetime, dt.date)):
            return o.isoformat()
        if isinstance(o, decimal.Decimal):
            return float(o)
        if isinstance(o, (set, tuple)):
            return list(o)
        raise TypeError(f"not JSON serializable: {type(o).__name__}")

    return json.dumps(obj, default=default, ensure_ascii=False).encode("utf-8")


def _one(q: dict[str, list[str]], name: str, required: bool = True) -> str | None:
    v = q.get(name)
    if not v or not v[0]:
        if required:
            raise query.QueryError(f"missing query parameter {name!r}")
        return None
    return v[0]


def routes(root: str) -> dict[str, Callable[[dict[str, list[str]]], Any]]:
    """Path -> handler(query params) for a catalogue ROOT."""
    return {
        "/days": lambda q: [d.isoformat() for d in query.list_days(root)],
        "/captures": lambda q: query.captures(root, _one(q, "url")),
        "/search": lambda q: query.search(root, _one(q, "prefix", False), _one(q, "contains", False),
                                          int(_one(q, "limit", False) or 100)),
        "/files": lambda q: query.files(root, _one(q, "day")),
        "/records": lambda q: query.records(root, _one(q, "file"), _one(q, "day", False)),
        "/stats": lambda q: query.stats(root, _one(q, "day")),
    }


def make_server(root: str, host: str = "127.0.0.1", port: int = 8080) -> ThreadingHTTPServer:
    """A threaded HTTP server answering the catalogue queries of ``root`` (port 0: any free)."""
    table = routes(root)

    class Handler(BaseHTTPRequestHandler):
        server_version = "catalogue/1"

        def _send(self, status: int, body: bytes, head: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def do_GET(self, head: bool = False) -> None:  # noqa: N802 (http.server naming)
            parts = urlsplit(self.path)
            handler = table.get(parts.path.rstrip("/") or "/")
            if parts.path in ("", "/"):
                self._send(200, to_json({"endpoints": sorted(table)}), head)
                return
            if handler is None:
                self._send(404, to_json({"error": f"unknown path {parts.path!r}", "endpoints": sorted(table)}), head)
                return
            try:
                result = handler(parse_qs(parts.query))
            except query.NotFound as e:
                self._send(HTTPStatus.NOT_FOUND, to_json({"error": str(e)}), head)
                return
            except ValueError as e:  # QueryError and bad numbers
                self._send(400, to_json({"error": str(e)}), head)
                return
            self._send(200, to_json(result), head)

        def do_HEAD(self) -> None:  # noqa: N802
            self.do_GET(head=True)

        def log_message(self, fmt: str, *args: Any) -> None:  # quiet: one line per request is noise in tests
            pass

    return ThreadingHTTPServer((host, port), Handler)


def serve_in_thread(root: str, host: str = "127.0.0.1", port: int = 0) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Start the API in a daemon thread; returns (server, thread). Stop with ``server.shutdown()``."""
    srv = make_server(root, host, port)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv, t
