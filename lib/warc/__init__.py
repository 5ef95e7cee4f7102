"""Reading web archives (WARC 0.17-1.1, ARC; gzip, zstd, LZ4 or none) with exact record offsets.

``streams`` (compressed members and where each starts), ``parse`` (one record), ``records`` (a
file's records), ``http`` (the HTTP response inside a record), ``split`` (where a byte range of a
gzip WARC begins), ``sample`` (a small synthetic crawl for the demo and tests).
"""
