"""Placement: SWAP slices, doubling rebalance, key-space partitions, consistent hashing.

- :mod:`lib.placement.slices`: ``locate(path, n) = MD5(path) mod n``, :class:`Collection`
  (put with the namespace-collision check, get, ls, verify, recover);
- :mod:`lib.placement.rebalance`: n -> m slices, plan then copy -> verify -> delete, resumable;
- :mod:`lib.placement.publish`: ``publish_tree`` spreads a finished output folder over slices;
- :mod:`lib.core.keyspace`: k contiguous MD5 ranges (the index job's partitioner);
- :mod:`lib.placement.consistent`: a consistent-hash ring with virtual nodes.

See docs/placement.md; CLI: ``python -m lib.placement --help``.
"""

import importlib
from typing import Any

_EXPORTS = {
    "locate": "lib.placement.slices",
    "Collection": "lib.placement.slices",
    "NamespaceError": "lib.placement.slices",
    "PlacementError": "lib.placement.slices",
    "publish_tree": "lib.placement.publish",
    "partition_of": "lib.core.keyspace",
    "ConsistentHashRing": "lib.placement.consistent",
}


def __getattr__(name: str) -> Any:
    # lazy, so that importing lib.core.keyspace (Spark executors) loads nothing else
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lib.placement' has no attribute {name!r}")
