"""Parquet indexes: Common Crawl's columnar index and our own metadata store (or preprocessed
pages), local or on S3, read one batch at a time.

A file gives ``(url, archive_file, offset, length)`` from Common Crawl's names (``url``,
``warc_filename``, ``warc_record_offset``, ``warc_record_length``) or ours (``url``,
``warc_file``, ``warc_offset``, ``warc_length``); other columns are not read unless ``--where``
names them. ``--where`` is DuckDB SQL run on each batch (so it must be a row condition: no
aggregates); Hive partition folders (``crawl=CC-MAIN-2024-10/subset=warc/``,
``language=eng/``) are columns for it too. Rows are numbered from 1 over the selected rows of
the files in name order; reading again gives the same numbers.
"""

from __future__ import annotations

import io
import os
import re
from typing import Iterator

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from lib.errors import UsageError
from lib.extract.lines import ErrorRow, ExtractError, Item, Resolver, make_item, row_line, tsv_escape
from lib.store import storage

CC_NAMES = ("url", "warc_filename", "warc_record_offset", "warc_record_length")
OUR_NAMES = ("url", "warc_file", "warc_offset", "warc_length")
BATCH_ROWS = 64 * 1024
_ROW = "__row"  # the row's position in its file, carried through the filter


class S3File(io.RawIOBase):
    """A seekable read-only view of an S3 object: each read is one ranged GET (pyarrow reads
    the footer, then the column chunks it needs)."""

    def __init__(self, uri: str):
        super().__init__()
        self.uri, self.pos, self.size = uri, 0, storage.size(uri)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, b) -> int:
        data = storage.read_range(self.uri, self.pos, min(len(b), max(0, self.size - self.pos)))
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


def parquet_files(uri: str) -> list[str]:
    """The Parquet files of ``uri``: the file itself, or every ``*.parquet`` below a folder but
    those named ``_*`` or ``.*`` (side tables such as an index day's ``_left_out.parquet``, as
    Spark and Hive leave them out)."""
    if storage.exists(uri) if storage.is_s3(uri) else os.path.isfile(storage.local_path(uri)):
        return [uri]
    files = [
        f.uri
        for f in storage.list_files(uri, [".parquet"])
        if not f.uri.rstrip("/").rsplit("/", 1)[-1].startswith(("_", "."))
    ]
    if not files:
        raise FileNotFoundError(f"--index {uri}: no .parquet file in it")
    return files


def partition_values(file_uri: str, base: str) -> dict[str, str]:
    """Hive partition values (``k=v`` folders) between ``base`` and ``file_uri``."""
    rel = storage.normalize(file_uri)[len(storage.normalize(base).rstrip("/")) :]
    return dict(p.split("=", 1) for p in rel.split("/")[:-1] if "=" in p)


def _mentioned(name: str, where: str) -> bool:
    """Whether ``where`` may use column ``name`` (a superset is harmless: one more column read)."""
    if re.fullmatch(r"\w+", name):
        return re.search(rf"\b{re.escape(name)}\b", where, re.IGNORECASE) is not None
    return name in where


def _open(uri: str) -> pq.ParquetFile:
    return pq.ParquetFile(S3File(uri) if storage.is_s3(uri) else storage.local_path(uri))


def iter_rows(uri: str, where: str | None) -> Iterator[tuple[int, str, int, tuple]]:
    """``(number, file, row in file, (url, archive_file, offset, length))`` of each selected
    row, in file order then row order."""
    con = duckdb.connect(config={"threads": 1}) if where else None
    no = 0
    for f in parquet_files(uri):
        pf = _open(f)
        names = pf.schema_arrow.names
        cols = next((c for c in (CC_NAMES, OUR_NAMES) if all(n in names for n in c)), None)
        if cols is None:
            raise UsageError(
                f"{f}: neither Common Crawl's columns ({', '.join(CC_NAMES)}) nor ours "
                f"({', '.join(OUR_NAMES)}); it has {', '.join(names[:20])}"
            )
        read = list(cols)
        parts: dict[str, str] = {}
        if where:
            read += [n for n in names if n not in cols and _mentioned(n, where)]
            parts = {k: v for k, v in partition_values(f, uri).items() if k not in names}
        start = 0
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=read):
            n = batch.num_rows
            t = pa.Table.from_batches([batch]).append_column(_ROW, pa.array(range(start, start + n), pa.int64()))
            start += n
            if con is not None:
                for k, v in parts.items():
                    t = t.append_column(k, pa.array([v] * n, pa.string()))
                con.register("index_rows", t)
                select = ", ".join(f'"{c}"' for c in (*cols, _ROW))
                try:
                    t = con.sql(f"SELECT {select} FROM index_rows WHERE {where} ORDER BY {_ROW}").to_arrow_table()
                except duckdb.Error as e:
                    raise UsageError(f"--where {where!r} on {f}: {e}") from None
            columns = [t.column(c).to_pylist() for c in (*cols, _ROW)]
            for url, file, off, length, row in zip(*columns):
                no += 1
                yield no, f, row, (url, file, off, length)


def read_items(uri: str, where: str | None, resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
    """Items and error rows (named by file and row) of a Parquet index."""
    items: list[Item] = []
    errors: list[ErrorRow] = []
    lookup = resolver.lookup
    for no, f, row, values in iter_rows(uri, where):
        url, name, off, length = values
        # fast path for well-formed rows (millions of them); anything odd goes the slow way
        if (
            url
            and name
            and type(off) is int
            and type(length) is int
            and off >= 0
            and length >= 1
            and "\t" not in url
            and "\n" not in url
            and "\r" not in url
        ):
            try:
                items.append(Item(no, url, lookup(name), off, length))
                continue
            except ExtractError:
                pass
        fields = [tsv_escape("" if v is None else str(v)) for v in values]
        try:
            items.append(make_item(no, fields, resolver))
        except ExtractError as e:
            errors.append((no, row_line(values), ExtractError(e.kind, f"{e.detail} ({f} row {row + 1})").reason))
    return items, errors


def row_texts(uri: str, where: str | None, numbers: set[int]) -> dict[int, str]:
    """The TSV form of the given row numbers (the index read again)."""
    found: dict[int, str] = {}
    last = max(numbers)
    for no, _, _, values in iter_rows(uri, where):
        if no in numbers:
            found[no] = row_line(values)
        if no >= last:
            break
    return found
