"""Placement: SWAP slices, doubling rebalance, key-space partitions, consistent hashing.

- :mod:`lib.placement.swap`: ``locate(path, n) = MD5(path) mod n``, :class:`Collection`
  (put with the namespace-collision check, get, ls, verify, recover);
- :mod:`lib.placement.rebalance`: n -> m slices, plan then copy -> verify -> delete, resumable;
- :mod:`lib.placement.slice_publish`: ``publish_tree`` spreads a finished output folder over slices;
  :mod:`lib.placement.publish_http` the same into a SWAP collection through its servers;
- :mod:`lib.placement.net`: the SWAP servers (``dailyslice swap-server``, docs/swap.md);
- :mod:`lib.pages.keyspace`: k contiguous MD5 ranges (the index job's partitioner);
- :mod:`lib.placement.consistent`: a consistent-hash ring with virtual nodes;
- :mod:`lib.placement.backends` (a slice root: folder or S3 prefix), :mod:`lib.placement.config`
  (the slices config), :mod:`lib.placement.rebalance_plan` (the rebalance plan file),
  :mod:`lib.placement.errors`.

See docs/placement.md; CLI (``__main__``): ``python -m lib.placement --help``.
"""

import importlib
from typing import Any

_EXPORTS = {
    "locate": "lib.placement.swap",
    "Collection": "lib.placement.swap",
    "NamespaceError": "lib.placement.swap",
    "PlacementError": "lib.placement.swap",
    "publish_tree": "lib.placement.slice_publish",
    "partition_of": "lib.pages.keyspace",
    "ConsistentHashRing": "lib.placement.consistent",
}


def __getattr__(name: str) -> Any:
    # lazy, so that importing lib.pages.keyspace (Spark executors) loads nothing else
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'lib.placement' has no attribute {name!r}")
