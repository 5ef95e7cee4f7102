"""SWAP as a running system: a server per node that serves its slices and redirects to the others.

- ``node``: the server config and its partitions (metadata file, unique id);
- ``namespace``: collections, their layouts (md5-mod or consistent) and the registry;
- ``claims``: the collision check between servers;
- ``peers``: the peer connection, its errors and retries;
- ``service``: one server's state and operations;
- ``moves``: rebalancing while serving;
- ``routes`` (the HTTP API), ``peer_api`` (the endpoints servers call on each other), ``common``
  (what both share), ``sendfile`` (whole files by the kernel's sendfile), ``status`` (the status page);
- ``swap_client``: a small synchronous client (tests, benchmark);
- ``__main__``: ``dailyslice swap-server --config FILE``, the primary and its reader processes.

Publishing a day into a SWAP collection needs none of this package's extra: it is
:mod:`lib.placement.publish_http` (standard library only). See docs/swap.md.
"""

from lib.errors import require_extra

require_extra("the SWAP servers (lib.placement.net)", "swap", "aiohttp", "httpx")
