"""Placement: SWAP slices, doubling rebalance, key-space partitions, consistent hashing.

- :mod:`lib.placement.slices`: ``locate(path, n) = MD5(path) mod n``, :class:`Collection`
  (put with the namespace-collision check, get, ls, verify, recover);
- :mod:`lib.placement.rebalance`: n -> m slices, plan then copy -> verify -> delete, resumable;
- :mod:`lib.placement.publish`: ``publish_tree`` spreads a finished output folder over slices;
- :mod:`lib.placement.keyspace`: k contiguous MD5 ranges (the index job's partitioner);
- :mod:`lib.placement.consistent`: a consistent-hash ring with virtual nodes.

See docs/placement.md; CLI: ``python -m lib.placement --help``.
"""
