"""Catalogue of the crawl (what SWAP's WarcManager and CDX tools offer) over the
preprocess output. See docs/catalogue.md.

``day_captures`` (one day's captures and CDXJ, as jobs/catalogue.py builds it), ``cdxj`` and ``cdx`` (the
day's CDXJ and CDX files), ``keys`` (SURT keys, timestamps, digests), ``urldb`` (the URL database
across days), ``capindex`` and ``capruns`` (the capture index over every day: log-structured
sorted runs of CDXJ lines in compressed blocks), ``cdxquery`` (the CDX Server API's query
semantics, pywb's), ``cdxlines`` (CDX and CDXJ lines posted to it, checked), ``linhash`` and
``recordstore`` (record id -> capture pointer, linear hashing), ``digeststore`` (payload digest ->
captures, linear hashing), ``register`` (one archive file registered between nights), ``browse``
(a collection's files, a file's records, a URL's versions) and ``urlsearch`` (ranked free-text search
over URLs), ``payload_table``
(captures by payload digest: the URL database's table), ``delta`` (what changed with a day),
``textroots`` (each capture's near-duplicate class, for the delta),
``noindex`` (published pages that now say noindex), ``completeness`` (how complete a page is in
time: its embedded resources' nearest captures over every day), ``query`` (DuckDB queries), ``report`` (the
daily HTML report), ``__main__`` (``python -m lib.catalogue``). The read-only HTTP API over
``query`` is :mod:`lib.serve.catalogue_api`.
"""
