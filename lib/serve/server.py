"""Run the service under uvicorn on a socket bound before start, so port 0 (any free port) has a
known URL: in the foreground for ``python -m lib.serve``, in a thread for tests and benchmarks."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


def bind(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: the kernel picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port`` of a bound socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def make_server(app, log_level: str = "warning", access_log: bool = False) -> uvicorn.Server:
    """A uvicorn server for ``app`` (an ASGI application); start it with :func:`run`."""
    return uvicorn.Server(
        uvicorn.Config(app, log_level=log_level, access_log=access_log, lifespan="on", timeout_keep_alive=30)
    )


def run(server: uvicorn.Server, sock: socket.socket) -> None:
    """Serve on ``sock`` until the server is told to exit (Ctrl-C in the foreground)."""
    server.run(sockets=[sock])


class ServerThread:
    """The service in a daemon thread on a loopback port: ``.url``, then ``.stop()``."""

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0, timeout: float = 60.0) -> None:
        self.sock = bind(host, port)
        self.url = url_of(self.sock)
        self.server = make_server(app)
        self.thread = threading.Thread(target=run, args=(self.server, self.sock), daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the service did not start on {self.url}")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()

    def __enter__(self) -> "ServerThread":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
