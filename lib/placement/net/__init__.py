"""SWAP as a running system: a server per node that serves its slices and redirects to the others.

- :mod:`~lib.placement.net.node`: the server config and its partitions (metadata file, unique id);
- :mod:`~lib.placement.net.namespace`: collections, their layouts (md5-mod or consistent) and registry;
- :mod:`~lib.placement.net.claims`: the collision check between servers;
- :mod:`~lib.placement.net.peers`: the peer connection, its errors and retries;
- :mod:`~lib.placement.net.service`: one server's state and operations;
- :mod:`~lib.placement.net.moves`: rebalancing while serving;
- :mod:`~lib.placement.net.http`, :mod:`~lib.placement.net.status`: the HTTP API and status page;
- :mod:`~lib.placement.net.client`: a small synchronous client (publish, read, manage);
- ``__main__``: ``dailyslice swap-server --config FILE``.

See docs/swap.md.
"""
