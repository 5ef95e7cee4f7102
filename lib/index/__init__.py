"""The index of a preprocessed day (docs/index.md), as jobs/index.py runs it (``pipeline``).

``page_files`` (what the job reads), ``indexable`` (which pages it takes), ``shards`` (which shard a
page goes to), ``invert`` (map: partial inverted lists), ``write`` (reduce: CIFF and metadata per
shard), ``owi`` (the metadata store's schema; its near-duplicate columns come from lib.neardup), ``graph`` and
``graph_tasks`` (the web graph), ``graph_exchange`` (links across data centers), ``anchors`` (the
anchor-text CIFFs), ``shard_digests`` (content digests of a day's shards), ``run_stats`` (the job's
statistics and summary as typed records), ``mirror_updates``, ``update_shards`` and ``mirror_apply`` (index updates
for mirrors in ``public/_updates/`` and a local copy that applies them: docs/mirror.md).
"""
