"""Input lists in the formats users already hold: our TSV, CDXJ, CDX, Common Crawl's columnar
index (Parquet or CSV) and our own metadata store (Parquet with ``--where``).

Every format comes down to rows ``(url, archive_file, offset, length)`` numbered from 1: the
physical line number of a text file, or the row's position among the selected Parquet rows.
Readers stream (one line, or one Parquet batch, at a time) and can be read again to fetch
the text of the rows a task reported (:meth:`IndexInput.texts`), so no index is held whole.

- TSV: ``url<TAB>archive_file<TAB>offset<TAB>length`` (:mod:`lib.extract.lines`);
- CDXJ (pywb, cdxj-indexer): ``SURT timestamp {json}``, the JSON giving ``url``, ``offset``,
  ``length``, ``filename``; lines starting with ``!`` (pywb's meta lines) are skipped;
- CDX with its header line (`` CDX N b a m s k r M S V g``, or any other legend of the IA
  CDX letters): columns found by their letters, ``a`` url (else ``A``, ``N``), ``S``
  compressed length, ``V`` offset (else ``v``), ``g`` file name; a CDX without ``S`` (the
  9-field ``N b a m s k r V g``, the legend of Bui's Node.js document key store,
  ``A b e a m s c k r V v D d g M n``), or a line
  whose ``S`` is ``-``, gives no length: the task measures the record (lib.extract.record_length);
- CSV with a header naming Common Crawl's columns (``url``, ``warc_filename``,
  ``warc_record_offset``, ``warc_record_length``; others ignored);
- Parquet: :mod:`lib.extract.parquet_index`.

``--where`` selects CDX and CDXJ lines too (DuckDB SQL over CDXJ's field names,
:mod:`lib.extract.index_rows`), and Parquet rows.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import zlib
from typing import Callable, Iterator

from lib.errors import UsageError
from lib.extract import index_rows, parquet_index
from lib.extract.lines import ErrorRow, ExtractError, Item, Resolver, make_item, parse_lines
from lib.store import storage
from lib.warc.records import ARCHIVE_SUFFIXES

FORMATS = ("tsv", "cdxj", "cdx", "csv", "parquet")
WHERE_FORMATS = ("parquet", "cdx", "cdxj")
CC_COLUMNS = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
_CDXJ_LINE = re.compile(rb"^\S+ \d{1,14} \{")
_SNIFF_BYTES = 64 * 1024
_SUFFIX = {".cdxj": "cdxj", ".cdx": "cdx", ".csv": "csv", ".parquet": "parquet", ".tsv": "tsv"}

Fields = list[str | None]  # url, file, offset, length (None: the task measures it)


def _gunzipped_head(head: bytes) -> bytes:
    try:
        return gzip.GzipFile(fileobj=io.BytesIO(head)).read(_SNIFF_BYTES)
    except (EOFError, OSError):  # a head cut inside a member: take what decoded so far
        d = zlib.decompressobj(31)
        try:
            return d.decompress(head, _SNIFF_BYTES)
        except Exception:
            return b""


def is_folder(uri: str) -> bool:
    """A local folder, or an S3 prefix that is not itself an object."""
    if storage.is_s3(uri):
        return not storage.exists(uri) and storage.folder_exists(uri)
    return os.path.isdir(storage.local_path(uri))


def sniff_index(uri: str) -> str:
    """The format of the index at ``uri`` from its content (then its name): a folder is a
    Parquet dataset; ``PAR1`` starts a Parquet file; a text file (gzip-compressed or not) is
    CDX when its first line is a `` CDX`` header, CDXJ when its first line is
    ``key timestamp {``, CSV when its header names ``warc_filename``, TSV when it has four
    tab-separated fields with numbers third and fourth; else by name, TSV by default."""
    if is_folder(uri):
        return "parquet"
    head = storage.read_range(uri, 0, _SNIFF_BYTES)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head[:2] == b"\x1f\x8b":
        head = _gunzipped_head(head)
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.startswith((b"#", b"!"))), b"")
    if first.lstrip().startswith(b"CDX "):
        return "cdx"
    if _CDXJ_LINE.match(first):
        return "cdxj"
    if b"warc_filename" in first and b"," in first:
        return "csv"
    tabs = first.split(b"\t")
    if len(tabs) >= 4 and tabs[2].strip().isdigit() and tabs[3].strip().isdigit():
        return "tsv"
    name = uri.lower().removesuffix(".gz")
    return next((fmt for suffix, fmt in _SUFFIX.items() if name.endswith(suffix)), "tsv")


def iter_lines(uri: str) -> Iterator[str]:
    """Lines of a local or S3 text file (gzip-compressed or not), streamed, without line ends;
    undecodable bytes survive round trips."""
    with storage.open_stream(uri) as raw:
        f = gzip.GzipFile(fileobj=raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw
        for line in f:
            yield line.decode("utf-8", "surrogateescape").rstrip("\r\n")


# ------------------------------------------------------------------ one line of each text format
Parsed = tuple[Fields, Callable[[], dict]]  # the item's fields, and the line's row for --where


def cdxj_parse(line: str) -> Parsed | None:
    """``([url, filename, offset, length], row)`` of a CDXJ line (length None when its JSON has
    none: the task measures the record); None for a meta line (``!``)."""
    if line.startswith("!"):
        return None
    parts = line.split(" ", 2)
    if len(parts) < 3 or not parts[2].startswith("{"):
        raise ExtractError("bad-line", "not a CDXJ line (key timestamp {json})")
    try:
        obj = json.loads(parts[2])
    except ValueError as e:
        raise ExtractError("bad-line", f"CDXJ JSON does not parse: {e}") from None
    if not isinstance(obj, dict):
        raise ExtractError("bad-line", "CDXJ JSON is not an object")
    missing = [k for k in ("url", "filename", "offset") if k not in obj]
    if missing:
        raise ExtractError("bad-line", f"CDXJ JSON lacks {', '.join(missing)}")
    length = obj.get("length")
    fields = [str(obj["url"]), str(obj["filename"]), str(obj["offset"]), None if length is None else str(length)]
    return fields, lambda: index_rows.cdxj_row(parts[0], parts[1], obj)


def cdxj_fields(line: str) -> Fields | None:
    """``[url, filename, offset, length]`` of a CDXJ line; None for a meta line (``!``)."""
    parsed = cdxj_parse(line)
    return None if parsed is None else parsed[0]


class CdxColumns:
    """The column positions a CDX header line names (`` CDX N b a m s k r M S V g``, or any
    legend of the IA CDX letters)."""

    def __init__(self, header: str):
        letters = header.split()
        if not letters or letters[0] != "CDX":
            raise UsageError(f"CDX header line expected (' CDX N b a ...'), got {header[:80]!r}")
        self.letters = letters[1:]
        pos = {c: i for i, c in enumerate(self.letters)}
        need = {"url (a, A or N)": ("a", "A", "N"), "offset (V or v)": ("V", "v"), "file name (g)": ("g",)}
        found = {what: next((pos[c] for c in options if c in pos), None) for what, options in need.items()}
        missing = [what for what, i in found.items() if i is None]
        if missing:
            raise UsageError(f"CDX header {header.strip()!r} has no column for {', '.join(missing)}")
        self.url, self.offset, self.file = [i for i in found.values() if i is not None]
        self.length = pos.get("S")
        self.named = index_rows.cdx_positions(self.letters)  # --where columns

    def split(self, line: str) -> list[str]:
        parts = line.split(" ")
        if len(parts) != len(self.letters):
            raise ExtractError("bad-line", f"expected {len(self.letters)} space-separated CDX fields, got {len(parts)}")
        return parts

    def parse(self, line: str) -> Parsed:
        parts = self.split(line)
        length = parts[self.length] if self.length is not None and parts[self.length] != "-" else None
        fields = [parts[self.url], parts[self.file], parts[self.offset], length]
        return fields, lambda: {n: index_rows.value(n, parts[i]) for n, i in self.named.items()}

    def fields(self, line: str) -> Fields:
        """``[url, file, offset, length]`` (length None where the CDX gives none)."""
        return self.parse(line)[0]


def archive_name(name: str, resolver: Resolver) -> str:
    """A CDX file name without an archive suffix, as IA's CDX files write them
    (``DE_crawl6.20010424210458``): the first of ``name``, ``name.warc.gz``, ``name.warc``,
    ``name.arc.gz``, ... that exists; ``name`` when none does (the task then reports it missing)."""
    for candidate in (name, *(name + suffix for suffix in ARCHIVE_SUFFIXES)):
        try:
            if storage.exists(resolver.lookup(candidate)):
                return candidate
        except Exception:
            return name  # refused (escapes the root, ...) or unreachable: the line reports it
    return name


class CsvColumns:
    """The positions of Common Crawl's column names in a CSV header."""

    def __init__(self, header: str):
        names = next(csv.reader([header]))
        missing = [c for c in CC_COLUMNS if c not in names]
        if missing:
            raise UsageError(f"CSV header lacks Common Crawl's column(s) {', '.join(missing)}: {header[:200]!r}")
        self.pos = [names.index(c) for c in CC_COLUMNS]
        self.width = len(names)

    def fields(self, line: str) -> Fields:
        row = next(csv.reader([line]), [])
        if len(row) != self.width:
            raise ExtractError("bad-line", f"expected {self.width} CSV fields, got {len(row)}")
        return [row[i] for i in self.pos]


# ------------------------------------------------------------------ the inputs
class IndexInput:
    """An index of any format: :meth:`read` parses it into items and error rows,
    :meth:`texts` gives the input text of row numbers (read again, streamed)."""

    def __init__(self, uri: str, fmt: str = "auto", where: str | None = None):
        if not storage.folder_exists(uri):
            raise FileNotFoundError(f"--index {uri}: no such file or folder")
        self.uri = uri
        self.format = sniff_index(uri) if fmt == "auto" else fmt
        if self.format not in FORMATS:
            raise UsageError(f"--index-format {fmt!r} is not one of auto, {', '.join(FORMATS)}")
        if where and self.format not in WHERE_FORMATS:
            raise UsageError(
                f"--where needs a Parquet, CDX or CDXJ index (DuckDB SQL over its columns); {uri} is {self.format}"
            )
        self.where = where

    def read(self, resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
        """Items and error rows. With ``--where``, lines the condition leaves out are neither;
        a line that does not parse is an error row either way (it cannot be evaluated)."""
        if self.format == "tsv":
            return parse_lines(iter_lines(self.uri), resolver)
        if self.format == "parquet":
            return parquet_index.read_items(self.uri, self.where, resolver)
        items: list[Item] = []
        errors: list[ErrorRow] = []
        parse = self._line_parser()
        pending: dict[int, tuple[str, Fields]] = {}  # lines waiting for the filter's verdict
        filt: index_rows.RowFilter | None = None
        names: dict[str, str] = {}  # CDX file names without an archive suffix -> the one found

        def add(no: int, line: str, fields: Fields) -> None:
            try:
                if self.format == "cdx" and fields[1] and not fields[1].lower().endswith(ARCHIVE_SUFFIXES):
                    if fields[1] not in names:
                        names[fields[1]] = archive_name(fields[1], resolver)
                    fields[1] = names[fields[1]]
                items.append(make_item(no, fields, resolver))
            except ExtractError as e:
                errors.append((no, line, e.reason))

        def chosen(numbers: list[int]) -> None:
            for n in numbers:
                add(n, *pending[n])
            pending.clear()

        for no, line in enumerate(iter_lines(self.uri), 1):
            if not line.strip() or line.startswith("#"):
                continue
            try:
                parsed = parse(no, line)
            except ExtractError as e:
                errors.append((no, line, e.reason))
                continue
            if parsed is None:
                continue
            fields, row = parsed
            if not self.where:
                add(no, line, fields)
                continue
            if filt is None:
                filt = index_rows.RowFilter(self.where, self._where_columns(), self.uri)
            pending[no] = (line, fields)
            filt.add(no, row())
            if filt.full:
                chosen(filt.take())
        if filt is not None:
            chosen(filt.take())
        return items, errors

    def _where_columns(self) -> list[str]:
        if self.format == "cdxj":
            return list(index_rows.COLUMNS)
        return list(self._columns[0].named)

    def _line_parser(self) -> Callable[[int, str], Parsed | None]:
        """A parser of one numbered line; CDX and CSV take their header from their first line."""
        if self.format == "cdxj":
            return lambda no, line: cdxj_parse(line)
        self._columns: list = []
        make = CdxColumns if self.format == "cdx" else CsvColumns

        def parse(no: int, line: str) -> Parsed | None:
            if not self._columns:
                self._columns.append(make(line))  # the first line is the header (UsageError if not one)
                return None
            col = self._columns[0]
            return col.parse(line) if isinstance(col, CdxColumns) else (col.fields(line), dict)

        return parse

    def texts(self, numbers: set[int]) -> dict[int, str]:
        """The input text of the given row numbers."""
        if not numbers:
            return {}
        if self.format == "parquet":
            return parquet_index.row_texts(self.uri, self.where, numbers)
        found: dict[int, str] = {}
        last = max(numbers)
        for no, line in enumerate(iter_lines(self.uri), 1):
            if no in numbers:
                found[no] = line
            if no >= last:
                break
        return found
