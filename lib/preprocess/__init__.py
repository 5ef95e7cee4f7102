"""Preprocessing a day's crawl into page rows (docs/preprocess.md), as jobs/preprocess.py runs it.

``plan`` (archives grouped into tasks by bytes), ``tasks`` (one Spark task), ``archive_pages`` (one
archive file -> rows, counters, errors), ``langid`` (language identification), ``enrich`` and
``microdata`` (enrichment plugins), ``plugin`` and ``gate`` (the plugin gate: a candidate evaluated on
benchmark pages, approved by thresholds), ``filelogs`` (the gzipped log beside each page file),
``health`` (did the day lose pages?), ``input_manifest`` (the input files a day was made from), ``batches``
(a day's batches: the archives no published batch names), ``consolidate`` (a closed day's batches made
into its slice),
``tasktime`` (where the tasks' time went), ``file_counters`` (the counters as typed records). The
"minhash" column is lib.neardup.page_column's.
"""
