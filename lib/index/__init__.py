"""The index of a preprocessed day (docs/index.md), as jobs/index.py runs it (``pipeline``).

``page_files`` (what the job reads), ``indexable`` (which pages it takes), ``shards`` (which shard a
page goes to), ``build`` (map: partial inverted lists), ``write`` (reduce: CIFF and metadata per
shard), ``owi`` (the metadata store's schema), ``dedup`` (near-duplicate clusters), ``sigstore`` and
``crossday`` (the signature store of the last days, dup_of), ``graph`` and
``graph_tasks`` (the web graph), ``graph_exchange`` (links across data centers), ``anchors`` (the
anchor-text CIFFs), ``digest`` (content digests of a day's shards), ``results`` (the job's
statistics and summary as typed records), ``updates``, ``update_shards`` and ``mirror`` (index updates
for mirrors in ``public/_updates/`` and a local copy that applies them: docs/mirror.md).
"""
