"""Collections of the SWAP network: their names in one namespace, their slices, and where a path goes.

A collection is named by a namespace path (``chronopolis/umiacs/code``); a request path
``<namespace>/<file path>`` is split at the longest collection name that prefixes it. Its
definition lists the slices in order, each held by one partition of one server, and a placement:

- ``md5-mod``: ``MD5(path) mod n`` (:func:`lib.placement.swap.locate`), doubled and halved by
  the rebalance;
- ``consistent``: a ring with ``vnodes`` virtual nodes per slice, keyed by the slice's partition
  id, so adding or removing a slice moves only the keys of the arcs it gains or loses.

During a rebalance the definition keeps the placement it replaces (``previous``): a file is then
on its new slice or still on its old one, and readers look at both.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from lib.placement.consistent import ConsistentHashRing
from lib.placement.errors import PlacementError
from lib.placement.swap import check_path, locate
from lib.store import atomic

PLACEMENTS = ("md5-mod", "consistent")


class CollectionError(PlacementError, ValueError):
    """A collection definition or name that cannot be used (the text says why)."""


@dataclass(frozen=True)
class Holder:
    """One slice: the server that holds it and the partition it lives on."""

    server: str
    partition: str


@dataclass
class Layout:
    """How paths map to slices: the placement and the holders of slices 0..n-1."""

    placement: str
    slices: list[Holder]
    vnodes: int = 64
    _ring: ConsistentHashRing | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.placement not in PLACEMENTS:
            raise CollectionError(f"placement {self.placement!r}: must be one of {', '.join(PLACEMENTS)}")
        if not self.slices:
            raise CollectionError("a collection needs at least one slice")
        parts = [h.partition for h in self.slices]
        if len(set(parts)) != len(parts):
            raise CollectionError("a partition may hold at most one slice of a collection")
        if self.vnodes < 1:
            raise CollectionError(f"vnodes must be >= 1, got {self.vnodes}")

    def slice_of(self, rel: str) -> int:
        """The slice (index into ``slices``) that holds collection path ``rel``."""
        if self.placement == "md5-mod":
            return locate(rel, len(self.slices))
        if self._ring is None:
            self._ring = ConsistentHashRing([h.partition for h in self.slices], vnodes=self.vnodes)
        owner = self._ring.lookup(rel)
        return next(i for i, h in enumerate(self.slices) if h.partition == owner)

    def holder(self, rel: str) -> Holder:
        return self.slices[self.slice_of(rel)]

    def to_json(self) -> dict[str, Any]:
        return {"placement": self.placement, "vnodes": self.vnodes, "slices": [asdict(h) for h in self.slices]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Layout":
        try:
            slices = [Holder(str(h["server"]), str(h["partition"])) for h in d["slices"]]
            return cls(str(d.get("placement", "md5-mod")), slices, int(d.get("vnodes", 64)))
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, CollectionError):
                raise
            raise CollectionError(f"bad collection layout {d!r}: {e}") from e


@dataclass
class CollectionDef:
    """A collection: its name, its layout, a version (the highest wins between peers) and, while a
    rebalance runs, the layout it replaces."""

    name: str
    layout: Layout
    version: int = 1
    previous: Layout | None = None
    max_put_bytes: int | None = None

    def candidates(self, rel: str) -> list[Holder]:
        """Where ``rel`` may be: its slice, then (during a rebalance) its old slice."""
        out = [self.layout.holder(rel)]
        if self.previous is not None:
            old = self.previous.holder(rel)
            if old != out[0]:
                out.append(old)
        return out

    def holders(self) -> list[Holder]:
        """Every holder of the current and (during a rebalance) previous layout."""
        seen = list(self.layout.slices)
        for h in self.previous.slices if self.previous else []:
            if h not in seen:
                seen.append(h)
        return seen

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "layout": self.layout.to_json(),
            "previous": self.previous.to_json() if self.previous else None,
            "max_put_bytes": self.max_put_bytes,
        }

    @classmethod
    def from_json(cls, d: Any) -> "CollectionDef":
        if not isinstance(d, dict):
            raise CollectionError(f"a collection definition is an object, got {type(d).__name__}")
        try:
            name = check_name(str(d["name"]))
            prev = d.get("previous")
            limit = d.get("max_put_bytes")
            return cls(
                name,
                Layout.from_json(d["layout"]),
                int(d.get("version", 1)),
                Layout.from_json(prev) if prev else None,
                int(limit) if limit is not None else None,
            )
        except (KeyError, TypeError) as e:
            raise CollectionError(f"bad collection definition: missing or wrong {e}") from e


def check_name(name: str) -> str:
    """A collection name: a relative path whose components do not start with '.' (those are the
    partitions' own files)."""
    try:
        check_path(name)
    except ValueError as e:
        raise CollectionError(f"collection name {e}") from e
    if any(p.startswith(".") for p in name.split("/")):
        raise CollectionError(f"collection name {name!r}: components may not start with '.'")
    return name


class Registry:
    """The collections this server knows, saved to a state file (atomically) on every change."""

    def __init__(self, state_path: str):
        self.state_path = state_path
        self.colls: dict[str, CollectionDef] = {}
        if os.path.exists(state_path):
            with open(state_path, encoding="utf-8") as f:
                raw = json.load(f)
            for d in raw.get("collections", []):
                c = CollectionDef.from_json(d)
                self.colls[c.name] = c

    def save(self) -> None:
        data = {"collections": [c.to_json() for c in sorted(self.colls.values(), key=lambda c: c.name)]}
        os.makedirs(os.path.dirname(self.state_path) or ".", exist_ok=True)
        with atomic.atomic_file(self.state_path, fsync=True) as f:
            f.write(json.dumps(data, indent=1).encode("utf-8"))

    def check_new_name(self, name: str) -> None:
        """Refuse a name that equals, contains or lies inside another collection's name: a request
        path must split into collection and file path one way only."""
        for other in self.colls:
            if other == name:
                continue
            if name.startswith(other + "/") or other.startswith(name + "/"):
                raise CollectionError(f"collection {name!r} would nest with collection {other!r}")

    def merge(self, c: CollectionDef) -> bool:
        """Take ``c`` if it is new or newer than ours; True when something changed."""
        mine = self.colls.get(c.name)
        if mine is not None and mine.version >= c.version:
            return False
        if mine is None:
            self.check_new_name(c.name)
        self.colls[c.name] = c
        return True

    def split(self, path: str) -> tuple[CollectionDef, str]:
        """``<collection>/<file path>`` -> (collection, file path); KeyError if no collection matches."""
        best: CollectionDef | None = None
        for name, c in self.colls.items():
            if path.startswith(name + "/") and (best is None or len(name) > len(best.name)):
                best = c
        if best is None:
            raise KeyError(path)
        return best, path[len(best.name) + 1 :]
