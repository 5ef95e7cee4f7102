"""``dailyslice swap-server --config FILE``: one SWAP server (one per node), see docs/swap.md.

Prints ``swap-server URL`` once it listens, then serves until SIGTERM or Ctrl-C.

With ``workers = N`` (N > 1) in the config, N - 1 reader processes are forked after the listening
socket is bound and share it: they answer ``GET``/``HEAD /get/...`` (bytes or redirects) from the
collections in the state file (re-read when it changes) and send every other request (PUT,
management, peers) with a 307 to the primary process on its own port, which alone holds the
claims of the collision check and talks to the peers.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import logging
import os
import signal
import socket
import sys
from urllib.parse import urlsplit

from aiohttp import web

try:  # uvloop (with uvicorn[standard]): faster redirects, but no sendfile
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None  # type: ignore[assignment]

from lib.errors import ConfigError
from lib.placement.net.node import load_node
from lib.placement.net.routes import make_app
from lib.placement.net.service import SwapNode

#: how often a reader process looks for a changed state file
RELOAD_SECONDS = 0.2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dailyslice swap-server", description=__doc__.split("\n")[0])
    p.add_argument("--config", required=True, help="the server's config (TOML or JSON; docs/swap.md)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="event loop (default asyncio: its sendfile is the kernel's; uvloop has none, files are copied)",
    )
    p.add_argument("--access-log", action="store_true", help="log every request")
    return p


def _socket(host: str, port: int) -> socket.socket:
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(1024)
    s.setblocking(False)
    return s


async def _serve(node: SwapNode, socks: list[socket.socket], access_log: bool, children: list[int]) -> None:
    """The primary: every request, on the shared socket and on its own (the readers' 307s)."""
    runner = web.AppRunner(make_app(node), access_log=logging.getLogger("aiohttp.access") if access_log else None)
    await runner.setup()
    for sock in socks:
        await web.SockSite(runner, sock).start()
    node.peers.start(node.hello)
    print(f"swap-server {node.url}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        for pid in children:
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)


async def _serve_reads(node: SwapNode, sock: socket.socket, primary: str) -> None:
    """A reader process: reads here, everything else to the primary."""
    runner = web.AppRunner(make_app(node, primary=primary), access_log=None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    while True:  # the primary rewrites the state file on every change of a collection
        await asyncio.sleep(RELOAD_SECONDS)
        node.reload()


def _die_with_parent() -> None:
    """Ask Linux to end this process when its parent ends (a killed primary leaves no reader)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the primary's SIGTERM handler still ends them
        pass


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        cfg = load_node(args.config)
        node = SwapNode(cfg)
        sock = _socket(cfg.listen_host, cfg.listen_port)
        socks = [sock]
        if cfg.workers > 1:
            own = _socket(cfg.listen_host, 0)
            socks.append(own)
            primary = f"{urlsplit(cfg.url).scheme}://{urlsplit(cfg.url).hostname}:{own.getsockname()[1]}"
    except (ConfigError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    run = uvloop.run if args.loop == "uvloop" else asyncio.run
    children = []
    for _ in range(cfg.workers - 1):
        pid = os.fork()
        if pid == 0:
            _die_with_parent()
            socks[1].close()
            node.reader = True
            try:
                run(_serve_reads(node, sock, primary))
            finally:
                os._exit(0)
        children.append(pid)
    try:
        run(_serve(node, socks, args.access_log, children))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
