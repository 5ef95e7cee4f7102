"""CIFF (Common Index File Format, osirrc/ciff): streaming writer, reader, validator and BM25 search.

See docs/ciff.md. ``python -m lib.ciff validate|dump|search ...`` is the command line.
"""

from lib.ciff.errors import CiffError
from lib.ciff.messages import DocRecord, Header, PostingsList
from lib.ciff.reader import CiffReader
from lib.ciff.validate import Report, validate_file
from lib.ciff.writer import CiffWriter

__all__ = ["CiffError", "CiffReader", "CiffWriter", "DocRecord", "Header", "PostingsList", "Report", "validate_file"]
