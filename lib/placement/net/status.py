"""The server's status: as JSON (``/mgmt/status``) and as a small HTML page (``/``)."""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lib.placement.net.service import SwapNode


def status(node: "SwapNode") -> dict[str, Any]:
    """Partitions, collections, peers and counters of one server."""
    info = node.info()
    info["uptime_seconds"] = round(time.time() - node.started, 1)
    info["peers"] = [p.to_json() for p in node.peers.state.values()]
    info["counters"] = dict(node.counters)
    info["claims_in_flight"] = len(node.claims.claims)
    return info


def page(node: "SwapNode") -> str:
    """The status page: one table each for partitions, collections and peers."""
    s = status(node)
    e = html.escape
    parts = "".join(
        f"<tr><td><code>{e(p['id'])}</code></td><td>{e(p['path'])}</td><td>{p['free_bytes'] >> 20} MiB</td>"
        f"<td>{e(', '.join(f'{k}: slice {v}' for k, v in p['slices'].items()))}</td></tr>"
        for p in s["partitions"]
    )
    colls = "".join(
        f"<tr><td>{e(c['name'])}</td><td>{e(c['layout']['placement'])}</td><td>{len(c['layout']['slices'])}</td>"
        f"<td>{c['version']}</td><td>{'rebalancing' if c['previous'] else 'serving'}</td></tr>"
        for c in s["collections"]
    )
    peers = "".join(
        f"<tr><td>{e(p['url'])}</td><td>{'online' if p['online'] else 'offline'}</td>"
        f"<td>{e(p['error'] or '')}</td><td>{p['errors']}</td></tr>"
        for p in s["peers"]
    )
    counters = ", ".join(f"{k}: {v}" for k, v in s["counters"].items())
    return (
        f"<!doctype html><meta charset=utf-8><title>SWAP server {e(node.url)}</title>"
        f"<h1>SWAP server {e(node.url)}</h1><p>up {s['uptime_seconds']} s; {e(counters)}</p>"
        "<h2>Partitions</h2><table><tr><th>id<th>folder<th>free<th>slices</tr>"
        f"{parts}</table><h2>Collections</h2><table><tr><th>name<th>placement<th>slices<th>version<th>state</tr>"
        f"{colls}</table><h2>Peers</h2><table><tr><th>server<th>state<th>last error<th>errors</tr>{peers}</table>"
    )
