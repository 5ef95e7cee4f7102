"""Serving published slices: list and download files by filter, export metadata, search a day or a
date range with exact global BM25, over HTTP (FastAPI) and from the command line.

Files: ``published`` (which published files match a filter, their sha256, ranged reads),
``export`` (filtered metadata as streamed Parquet), ``client`` (the download client;
``transfer``: its resumed, verified transfers; ``swap_download``: days straight from a SWAP network),
``day_manifest`` (which shards a day holds and which cannot be served), ``mirror_command``
(``dailyslice mirror``:
index updates published, fetched and applied to a local copy).
Search: ``serving_index`` (one day's serving index, built once from its CIFF), ``engine`` (a day or a
date range with exact global BM25), ``snippets``, ``prewarm`` (serving indexes built ahead),
``prior`` (a web graph's ranks as a static prior beside BM25), ``search_command`` (``dailyslice search``).
HTTP: ``app`` (the FastAPI service), its routers ``files_api``, ``capture_api`` (one capture or its
payload), ``catalogue_api`` (the catalogue's queries), ``cdx_api`` (the CDX Server API and archive
files), ``register_api`` (archive files registered over HTTP), ``browse_api`` and ``browse_pages``
(a collection's files, records, URLs and URL search, as JSON and as pages), ``subindex_api``
(on-demand sub-indices), ``updates_api`` (index updates), ``community_api`` (community uploads),
``feed_api`` (``logs.csv`` as a feed), ``swap_root`` (a published root in a SWAP collection),
``opensearch`` (the description document), ``errors`` and ``http_errors`` (errors and their HTTP
answers), ``server`` (uvicorn on a bound socket), ``__main__`` (``python -m lib.serve``, ``dailyslice serve``).
"""

from lib.errors import require_extra

# the service is an extra: a cluster node running only the pipeline does not install FastAPI
require_extra("lib.serve (the HTTP service and the download client)", "serve", "fastapi", "uvicorn", "httpx")
