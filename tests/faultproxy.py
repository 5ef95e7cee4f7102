"""A fault-injecting HTTP proxy on loopback, between the jobs and an S3 server.

The jobs' ``AWS_ENDPOINT_URL`` points at the proxy; each request is forwarded to the server
as sent (headers unchanged, so signatures hold) unless a fault applies:

- ``cut_response_after``: send the first N bytes of a response body, then close the
  connection (a GET cut mid-object: the reader must resume with a ranged GET);
- ``cut_request_after``: read N bytes of a request body, then close without answering (an
  upload cut mid-way: the client must retry the part or object);
- ``error_share``: answer that share of requests with ``503 SlowDown`` or ``500
  InternalError`` (S3's XML error bodies) without forwarding them;
- ``latency``: seconds added before each answer;
- ``stall``: send half a response body, then hold the connection ``stall_seconds`` and close.

Faults with a ``*_count`` budget fire that many times; ``methods`` limits a fault to some
HTTP methods. Everything is bounded: request heads (64 KiB), bodies (256 MiB, held in
memory: test objects are small), connections (``max_connections``); ``stats`` counts the
connections, the requests and every fault injected. Settings can change while the proxy runs (``set``).
"""

from __future__ import annotations

import http.client
import random
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Any

MAX_HEAD = 64 << 10
MAX_BODY = 256 << 20
_ERRORS = {
    503: ("Service Unavailable", "SlowDown", "Please reduce your request rate."),
    500: ("Internal Server Error", "InternalError", "We encountered an internal error. Please try again."),
}


@dataclass
class Faults:
    """What the proxy does to requests (module doc); all off by default."""

    cut_response_after: int | None = None
    cut_response_count: int = 0
    cut_response_methods: tuple[str, ...] = ("GET",)
    cut_request_after: int | None = None
    cut_request_count: int = 0
    cut_request_methods: tuple[str, ...] = ("PUT", "POST")
    error_share: float = 0.0
    error_statuses: tuple[int, ...] = (503, 500)
    error_methods: tuple[str, ...] = ("GET", "PUT", "POST", "HEAD", "DELETE")
    latency: float = 0.0
    stall_count: int = 0
    stall_seconds: float = 0.0
    stall_methods: tuple[str, ...] = ("GET",)
    stats: dict[str, int] = field(
        default_factory=lambda: {
            "connections": 0,
            "requests": 0,
            "forwarded": 0,
            "errors": 0,
            "cut_responses": 0,
            "cut_requests": 0,
            "stalls": 0,
            "upstream_failures": 0,
            "in_flight": 0,
            "max_in_flight": 0,
        }
    )


class FaultProxy:
    """``with FaultProxy(upstream_host, upstream_port) as p:`` serves on ``p.endpoint``."""

    def __init__(self, upstream_host: str, upstream_port: int, seed: int = 26, max_connections: int = 64):
        self.upstream = (upstream_host, upstream_port)
        self.faults = Faults()
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(max_connections)
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                if not proxy.slots.acquire(timeout=30):
                    return
                try:
                    proxy._serve(self.request)
                finally:
                    proxy.slots.release()

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="fault-proxy", daemon=True)

    # ------------------------------------------------------------------ control
    def start(self) -> "FaultProxy":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def set(self, **settings: Any) -> None:
        """Change fault settings (names of :class:`Faults`) while running."""
        with self.lock:
            for k, v in settings.items():
                if not hasattr(self.faults, k) or k == "stats":
                    raise AttributeError(f"no fault setting {k!r}")
                setattr(self.faults, k, v)

    def clear(self) -> None:
        """Every fault off (the counters stay)."""
        with self.lock:
            stats = self.faults.stats
            self.faults = Faults(stats=stats)

    @property
    def stats(self) -> dict[str, int]:
        with self.lock:
            return dict(self.faults.stats)

    def _count(self, key: str) -> None:
        with self.lock:
            self.faults.stats[key] += 1

    def _take(self, method: str, budget: str, methods: str) -> bool:
        """Whether a counted fault fires for this request (and spend one of its budget)."""
        with self.lock:
            f = self.faults
            if getattr(f, budget) > 0 and method in getattr(f, methods):
                setattr(f, budget, getattr(f, budget) - 1)
                return True
            return False

    # ------------------------------------------------------------------ serving
    def _flight(self, delta: int) -> None:
        with self.lock:
            st = self.faults.stats
            st["in_flight"] += delta
            st["max_in_flight"] = max(st["max_in_flight"], st["in_flight"])

    def _serve(self, sock: socket.socket) -> None:
        sock.settimeout(120)
        reader = sock.makefile("rb")
        box: list[http.client.HTTPConnection | None] = [None]  # this connection's upstream connection
        self._count("connections")
        try:
            while True:
                head = self._read_head(reader)
                if head is None:
                    return
                self._count("requests")
                self._flight(+1)
                try:
                    keep = self._one(sock, reader, *head, box)
                finally:
                    self._flight(-1)
                if not keep:
                    return
        except (OSError, ValueError):
            return
        finally:
            if box[0] is not None:
                box[0].close()
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _one(
        self, sock: socket.socket, reader: Any, method: str, target: str, headers: dict[str, Any], box: list
    ) -> bool:
        """Serve one request; False when the connection is to be closed."""
        with self.lock:
            f = self.faults
            error = method in f.error_methods and f.error_share > 0 and self.rng.random() < f.error_share
            status = self.rng.choice(f.error_statuses) if error else 0
            latency = f.latency
            cut_req = f.cut_request_after
        if latency:
            time.sleep(latency)
        if headers.get("expect", "").lower() == "100-continue":
            sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if cut_req is not None and self._take(method, "cut_request_count", "cut_request_methods"):
            reader.read(min(cut_req, int(headers.get("content-length", "0") or 0)))
            self._count("cut_requests")
            return False  # close without an answer: the upload was cut
        body = self._read_body(reader, headers)
        if error:
            self._count("errors")
            self._send_error(sock, status, target)
            return True
        if box[0] is None:
            box[0] = http.client.HTTPConnection(*self.upstream, timeout=120)
        try:
            resp_head, resp_body = self._forward(box[0], method, target, headers, body)
        except (OSError, http.client.HTTPException):
            box[0].close()
            box[0] = None
            self._count("upstream_failures")
            return False  # the server is gone (restarted): the client sees a dropped connection
        self._count("forwarded")
        if self._take(method, "cut_response_count", "cut_response_methods"):
            n = min(self.faults.cut_response_after or 0, max(len(resp_body) - 1, 0))
            sock.sendall(resp_head + resp_body[:n])
            self._count("cut_responses")
            return False
        if self._take(method, "stall_count", "stall_methods"):
            sock.sendall(resp_head + resp_body[: len(resp_body) // 2])
            self._count("stalls")
            time.sleep(self.faults.stall_seconds)
            return False
        sock.sendall(resp_head + resp_body)
        return True

    @staticmethod
    def _read_head(reader: Any) -> tuple[str, str, dict[str, str]] | None:
        line = reader.readline(MAX_HEAD)
        while line in (b"\r\n", b"\n"):
            line = reader.readline(MAX_HEAD)
        if not line:
            return None
        parts = line.decode("latin-1").split()
        if len(parts) != 3:
            raise ValueError(f"bad request line {line[:80]!r}")
        headers: dict[str, str] = {}
        raw: list[tuple[str, str]] = []
        size = len(line)
        while True:
            h = reader.readline(MAX_HEAD)
            size += len(h)
            if size > MAX_HEAD:
                raise ValueError("request head too large")
            if h in (b"\r\n", b"\n", b""):
                break
            k, _, v = h.decode("latin-1").partition(":")
            raw.append((k.strip(), v.strip()))
            headers[k.strip().lower()] = v.strip()
        headers["__raw__"] = raw  # type: ignore[assignment]
        return parts[0], parts[1], headers

    @staticmethod
    def _read_body(reader: Any, headers: dict[str, Any]) -> bytes:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(reader.readline(1024).split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while reader.readline(MAX_HEAD) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                if len(out) + size > MAX_BODY:
                    raise ValueError("request body too large")
                out += reader.read(size)
                reader.readline(16)
        n = int(headers.get("content-length", "0") or 0)
        if n > MAX_BODY:
            raise ValueError("request body too large")
        return reader.read(n) if n else b""

    @staticmethod
    def _forward(
        conn: http.client.HTTPConnection, method: str, target: str, headers: dict[str, Any], body: bytes
    ) -> tuple[bytes, bytes]:
        conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        for k, v in headers["__raw__"]:
            if k.lower() in ("expect", "transfer-encoding", "content-length", "connection"):
                continue
            conn.putheader(k, v)
        if body or method in ("PUT", "POST"):
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body or None)
        resp = conn.getresponse()
        data = resp.read(MAX_BODY + 1)
        if len(data) > MAX_BODY:
            raise ValueError("response body too large")
        lines = [f"HTTP/1.1 {resp.status} {resp.reason}"]
        for k, v in resp.getheaders():
            if k.lower() in ("transfer-encoding", "connection", "keep-alive") or (
                k.lower() == "content-length" and method != "HEAD"
            ):
                continue
            lines.append(f"{k}: {v}")
        if method != "HEAD":
            lines.append(f"Content-Length: {len(data)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"), data

    @staticmethod
    def _send_error(sock: socket.socket, status: int, target: str) -> None:
        reason, code, message = _ERRORS.get(status, ("Error", "InternalError", "error"))
        body = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            f"<Resource>{target}</Resource><RequestId>fault-proxy</RequestId></Error>"
        ).encode()
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        sock.sendall(head + body)
