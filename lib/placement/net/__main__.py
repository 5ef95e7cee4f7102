"""``dailyslice swap-server --config FILE``: one SWAP server (one per node), see docs/swap.md.

Prints ``swap-server URL`` once it listens, then serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys

from aiohttp import web

try:  # uvloop (with uvicorn[standard]): faster redirects, but no sendfile
    import uvloop
except ImportError:  # pragma: no cover
    uvloop = None  # type: ignore[assignment]

from lib.errors import ConfigError
from lib.placement.net.http import make_app
from lib.placement.net.node import load_node
from lib.placement.net.service import SwapNode


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


async def _serve(node: SwapNode, sock: socket.socket, access_log: bool) -> None:
    runner = web.AppRunner(make_app(node), access_log=logging.getLogger("aiohttp.access") if access_log else None)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    node.peers.start(node.hello)
    print(f"swap-server {node.url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        cfg = load_node(args.config)
        node = SwapNode(cfg)
        sock = _socket(cfg.listen_host, cfg.listen_port)
    except (ConfigError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        (uvloop.run if args.loop == "uvloop" else asyncio.run)(_serve(node, sock, args.access_log))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
