"""Byte-copy extraction of archive records, record-level logic without Spark: a record's bytes
copied by offset and length, never decompressed (as Krokhin's ARC page extractor for the
Cornell Web Lab does).

``lines``    parse the input list (TSV or Parquet rows), resolve archive paths, refuse escapes
``record_ids`` record ids as an input list, each found through the record store in one step
``indexes``  the indexes users hold (CDXJ, CDX in any legend, CSV, Parquet) as input lists
``parquet_index`` Common Crawl's columnar index and our metadata store as input lists, ``--where`` in DuckDB
``index_rows`` CDX/CDXJ lines as rows with CDXJ's field names, ``--where`` over them
``record_length``  the length of a record an index gives no length for (one member decompressed)
``sources``  read byte ranges from local files or S3 (adjacent ranges in one request)
``formats``  an archive's format from its first bytes (gzip/zstd+dictionary/LZ4/none, WARC/ARC)
``archive``  output archives: warcinfo / ARC ``filedesc://`` headers, rolling, naming
``verify``   optional check that a range is one whole member holding the expected record
``terminator`` plain (uncompressed) records come out whole, their terminator included
``arc2warc`` ARC records as WARC records (``--output-format warc``)
``task``     one Spark task: copy its ranges, write its manifest part, return its errors
``driver``   driver side: tasks from the list; the single manifest.tsv, errors.tsv and summary
``record_list``  the records of whole archives as an input list
``capture``  one capture by (file, offset, length), as stored or its payload (for the service)
"""

from lib.extract.lines import ExtractError, Item

__all__ = ["ExtractError", "Item"]
