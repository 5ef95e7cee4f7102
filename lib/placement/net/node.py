"""One SWAP server's configuration and partitions.

The server config (TOML, or JSON when the name ends ``.json``)::

    listen = "127.0.0.1:8100"                 # host:port to bind
    url = "http://node0.example:8100"         # how peers and clients reach it (default http://LISTEN)
    partitions = ["/srv/disk0/swap", "/srv/disk1/swap"]
    peers = ["http://node1.example:8100"]
    state = "node0.state.json"                # the collections it knows (default CONFIG.state.json)
    max_put_bytes = 4294967296                # the largest PUT body (default 4 GiB)
    peer_retry_seconds = 10                   # how often offline peers are tried again
    peer_timeout_seconds = 5
    workers = 1                               # processes: 1 primary + N - 1 readers (GET/HEAD only)

A partition is a folder. Its metadata file ``.swap-partition.json`` names the partition's unique
id (made on first start, never changed) and the one slice of each collection it holds; the slice
of collection ``NS`` is the folder ``PARTITION/NS``, with files at their collection paths, so
copying every slice's folder into one folder gives the collection back.
"""

from __future__ import annotations

import json
import os
import tomllib
import uuid
from dataclasses import dataclass, field
from typing import Any

from lib.errors import ConfigError
from lib.store import atomic

META = ".swap-partition.json"
META_FORMAT = "swap-partition/1"


@dataclass
class Partition:
    """A folder holding at most one slice of each collection; ``id`` is unique across the network."""

    path: str
    id: str
    slices: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, path: str) -> "Partition":
        """Read the partition's metadata file, creating the folder and a new id on first use."""
        path = os.path.abspath(path)
        meta = os.path.join(path, META)
        if os.path.exists(meta):
            try:
                with open(meta, encoding="utf-8") as f:
                    d = json.load(f)
                if d.get("format") != META_FORMAT or not isinstance(d.get("id"), str):
                    raise ValueError(f"not a {META_FORMAT} file")
                return cls(path, d["id"], {str(k): int(v) for k, v in d.get("slices", {}).items()})
            except (OSError, ValueError, AttributeError) as e:
                raise ConfigError(f"{meta}: cannot read partition metadata: {e}") from e
        os.makedirs(path, exist_ok=True)
        p = cls(path, str(uuid.uuid4()))
        p.save()
        return p

    def save(self) -> None:
        d = {"format": META_FORMAT, "id": self.id, "slices": dict(sorted(self.slices.items()))}
        with atomic.atomic_file(os.path.join(self.path, META), fsync=True) as f:
            f.write((json.dumps(d, indent=1) + "\n").encode("utf-8"))

    def slice_dir(self, collection: str) -> str:
        return os.path.join(self.path, *collection.split("/"))

    def file_path(self, collection: str, rel: str) -> str:
        """The local file of collection path ``rel`` (both already checked: relative, no '..')."""
        return os.path.join(self.path, *collection.split("/"), *rel.split("/"))


@dataclass
class NodeConfig:
    path: str
    listen_host: str
    listen_port: int
    url: str
    partitions: list[str]
    peers: list[str]
    state: str
    max_put_bytes: int = 4 << 30
    peer_retry_seconds: float = 10.0
    peer_timeout_seconds: float = 5.0
    workers: int = 1


def _get(d: dict[str, Any], key: str, kind: type, default: Any, path: str) -> Any:
    v = d.get(key, default)
    if kind is float and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise ConfigError(f"{path}: {key!r} must be {kind.__name__}, got {v!r}")
    return v


def load_node(path: str) -> NodeConfig:
    """Read a server config; errors name the file and the setting."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
        d = json.loads(raw) if path.endswith(".json") else tomllib.loads(raw.decode("utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read server config: {e.strerror}") from e
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid {'JSON' if path.endswith('.json') else 'TOML'}: {e}") from e
    listen = _get(d, "listen", str, "127.0.0.1:8100", path)
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"{path}: 'listen' must be HOST:PORT, got {listen!r}")
    base = os.path.dirname(os.path.abspath(path))
    parts = _get(d, "partitions", list, None, path) if "partitions" in d else None
    if not parts or not all(isinstance(p, str) and p for p in parts):
        raise ConfigError(f"{path}: 'partitions' must list at least one folder")
    peers = _get(d, "peers", list, [], path)
    if not all(isinstance(p, str) and p.startswith(("http://", "https://")) for p in peers):
        raise ConfigError(f"{path}: every peer must be an http:// or https:// URL")
    state = _get(d, "state", str, os.path.abspath(path) + ".state.json", path)
    return NodeConfig(
        path=os.path.abspath(path),
        listen_host=host,
        listen_port=int(port),
        url=_get(d, "url", str, f"http://{listen}", path).rstrip("/"),
        partitions=[p if os.path.isabs(p) else os.path.join(base, p) for p in parts],
        peers=[p.rstrip("/") for p in peers],
        state=state if os.path.isabs(state) else os.path.join(base, state),
        max_put_bytes=_get(d, "max_put_bytes", int, 4 << 30, path),
        peer_retry_seconds=_get(d, "peer_retry_seconds", float, 10.0, path),
        peer_timeout_seconds=_get(d, "peer_timeout_seconds", float, 5.0, path),
        workers=_workers(_get(d, "workers", int, 1, path), path),
    )


def _workers(n: int, path: str) -> int:
    if not 1 <= n <= 64:
        raise ConfigError(f"{path}: 'workers' must be between 1 and 64, got {n}")
    return n
