"""Byte-copy extraction of archive records (seed 002), record-level logic without Spark.

``lines``   parse the input list (TSV or Parquet rows), resolve archive paths, refuse escapes
``sources`` read byte ranges from local files or S3 (adjacent ranges in one request)
``archive`` output archives: warcinfo / ARC ``filedesc://`` headers, rolling, naming
``verify``  optional check that a range is one whole gzip member holding the expected record
``task``    one Spark task: copy its ranges, write its manifest part, return its errors
``driver``  driver side: tasks from the list; the single manifest.tsv, errors.tsv and summary
"""

from lib.extract.lines import ExtractError, Item

__all__ = ["ExtractError", "Item"]
