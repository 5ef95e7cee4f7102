"""Serving published slices: list and download files by filter, export metadata, search a day or a
date range with exact global BM25, over HTTP (FastAPI) and from the command line.

Modules: ``slices`` (which published files match a filter, safe paths, ranged reads),
``export`` (filtered metadata as streamed Parquet), ``engine`` (the serving index built from the
published CIFF, global BM25 search, snippets), ``app`` (the HTTP service), ``client`` (the download
client).
"""
