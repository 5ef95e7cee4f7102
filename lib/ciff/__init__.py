"""CIFF (Common Index File Format, osirrc/ciff): streaming writer, reader, validator and BM25 search.

See docs/ciff.md. ``python -m lib.ciff validate|dump|search ...`` is the command line (``__main__``).

``messages`` (the three CIFF messages), ``varint`` (varints and postings encoding), ``stream``
(length-delimited framing), ``output`` (where a writer's bytes go), ``writer``, ``batch`` (many
postings lists encoded at once), ``reader``, ``postings`` (decoding and checking postings lists),
``validate`` (whole-file validation), ``search`` (BM25 over one shard), ``errors``.
"""

from lib.ciff.errors import CiffError
from lib.ciff.messages import DocRecord, Header, PostingsList
from lib.ciff.reader import CiffReader
from lib.ciff.validate import Report, validate_file
from lib.ciff.writer import CiffWriter

__all__ = ["CiffError", "CiffReader", "CiffWriter", "DocRecord", "Header", "PostingsList", "Report", "validate_file"]
