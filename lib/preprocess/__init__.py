"""Preprocessing a day's crawl into page rows (docs/preprocess.md), as jobs/preprocess.py runs it.

``plan`` (archives grouped into tasks by bytes), ``tasks`` (one Spark task), ``pages`` (one archive
file -> rows, counters, errors), ``langid`` (language identification), ``signatures`` (the minhash
column), ``enrich`` and ``microdata`` (enrichment plugins), ``health`` (did the day lose pages?),
``input_manifest`` (the input files a day was made from), ``tasktime`` (where the tasks' time went),
``results`` (the counters as typed records).
"""
