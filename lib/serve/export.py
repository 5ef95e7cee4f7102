"""Filtered metadata export: the rows of the matching days' index metadata, streamed as Parquet.

Files are chosen with :meth:`SliceStore.list_files` (part ``metadata``, the day range, ``lang`` and
``tld`` folders), then rows are filtered one record batch at a time:

* ``host``: ``url_host`` equals one of the given hosts (case-insensitive);
* ``domain``: suffix match on label boundaries: ``url_host`` equals the domain or ends with
  ``"." + domain``. ``example.de`` gives ``example.de`` and ``www.example.de``, never
  ``myexample.de``. A registered domain works, so does any public suffix (``ac.at``);
* ``tld``: the ``{TLD}`` folders, plus the rows of the ``other/`` folder (groups too small that day
  for a folder of their own) whose host ends in ``.tld``;
* ``lang``: the ``{LANG}`` folders (every row of a shard has its language).

Every column of the files is exported, so columns added to the metadata later come along. Files of
different schemas are unified (a column missing from a file is null there; a column whose type
differs between files is exported as string). Memory stays bounded: one record batch is read,
filtered, written as a row group and handed to the caller before the next is read.
"""

from __future__ import annotations

import io
import os
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.serve.errors import NotFound, QueryError
from lib.serve.published import FileEntry, SliceStore, split_values
from lib.store.locations import is_s3

BATCH_ROWS = 32_768
MEDIA_TYPE = "application/vnd.apache.parquet"


class _RangeFile(io.RawIOBase):
    """A seekable read-only file over a store file (pyarrow reads a Parquet footer, then row groups)."""

    def __init__(self, store: SliceStore, entry: FileEntry):
        self.store, self.entry, self.pos = store, entry, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.entry.size + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, b) -> int:
        data = b"".join(self.store.read(self.entry, self.pos, self.pos + len(b)))
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


class _Sink:
    """A write-only file collecting what ParquetWriter writes, drained after every row group."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.written = 0
        self.closed = False

    def write(self, data) -> int:
        b = bytes(data)
        self.parts.append(b)
        self.written += len(b)
        return len(b)

    def tell(self) -> int:
        return self.written

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def drain(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


def _open(store: SliceStore, entry: FileEntry) -> pq.ParquetFile:
    uri = store.uri(entry)
    return pq.ParquetFile(io.BufferedReader(_RangeFile(store, entry), 1 << 20) if is_s3(uri) else uri)


def _norm_hosts(values: Iterable[str] | None, name: str) -> list[str] | None:
    got = split_values(values)
    if got is None:
        return None
    out = []
    for v in got:
        v = v.lower().strip(".")
        if not v or len(v) > 253 or any(c in v for c in "/:@ ?#\\"):
            raise QueryError(f"{name} must be a host name, got {v!r}")
        out.append(v)
    return out


def unified_schema(files: list[pq.ParquetFile]) -> pa.Schema:
    """One schema for every file: fields in first-seen order, a type conflict becomes string."""
    fields: dict[str, pa.DataType] = {}
    for f in files:
        for field in f.schema_arrow:
            if field.name not in fields:
                fields[field.name] = field.type
            elif fields[field.name] != field.type:
                fields[field.name] = pa.string()
    return pa.schema([pa.field(n, t) for n, t in fields.items()])


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    cols = []
    for field in schema:
        i = batch.schema.get_field_index(field.name)
        col = batch.column(i) if i >= 0 else pa.nulls(batch.num_rows, field.type)
        cols.append(col if col.type == field.type else pc.cast(col, field.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def row_mask(
    batch: pa.RecordBatch, hosts: list[str] | None, domains: list[str] | None, tld_rows: list[str] | None
) -> pa.Array | None:
    """Rows of ``batch`` matching the host/domain filters (and the TLD for rows of ``other/``);
    None when every row matches."""
    if not (hosts or domains or tld_rows):
        return None
    if "url_host" not in batch.schema.names:
        raise QueryError("metadata has no url_host column: host/domain filters cannot apply")
    host = pc.utf8_lower(batch.column("url_host").cast(pa.string()))
    mask = None

    def both(a, b):
        return b if a is None else pc.and_kleene(a, b)

    if hosts:
        mask = both(mask, pc.is_in(host, value_set=pa.array(hosts)))
    if domains:
        m = None
        for d in domains:
            one = pc.or_(pc.equal(host, d), pc.ends_with(host, "." + d))
            m = one if m is None else pc.or_(m, one)
        mask = both(mask, m)
    if tld_rows:
        m = None
        for t in tld_rows:
            one = pc.ends_with(host, "." + t)
            m = one if m is None else pc.or_(m, one)
        mask = both(mask, m)
    return pc.fill_null(mask, False)


def export(
    store: SliceStore,
    day_from: str,
    day_to: str | None = None,
    dc: str | None = None,
    langs=None,
    tlds=None,
    hosts=None,
    domains=None,
) -> Iterator[bytes]:
    """Parquet bytes of the matching rows, in pieces (one or more row groups each). Filters are
    checked and files chosen before the first piece, so errors come before any byte."""
    hosts_l, domains_l = _norm_hosts(hosts, "host"), _norm_hosts(domains, "domain")
    tlds_l = split_values(tlds)
    entries = store.list_files(day_from, day_to, dc=dc, langs=langs, parts=["metadata"])
    if tlds_l:
        store.validate(None, tlds_l, None)
        entries = [e for e in entries if e.tld in tlds_l or e.tld == "other"]
    if not entries:
        raise NotFound("no metadata file matches (no shard of these days has these languages/TLDs)")
    files = [_open(store, e) for e in entries]
    schema = unified_schema(files)
    return _stream(entries, files, schema, hosts_l, domains_l, tlds_l)


def _stream(entries, files, schema, hosts, domains, tlds) -> Iterator[bytes]:
    sink = _Sink()
    writer = pq.ParquetWriter(sink, schema, compression="zstd")
    try:
        for entry, f in zip(entries, files):
            tld_rows = tlds if (tlds and entry.tld == "other" and "other" not in tlds) else None
            for batch in f.iter_batches(batch_size=BATCH_ROWS):
                mask = row_mask(batch, hosts, domains, tld_rows)
                if mask is not None:
                    batch = batch.filter(mask)
                if batch.num_rows:
                    writer.write_batch(_conform(batch, schema))
                    yield sink.drain()
    finally:
        writer.close()
    yield sink.drain()


def export_to_file(store: SliceStore, dest: str, *args, **kwargs) -> int:
    """Write an export to a local file (the CLI and tests); returns its size."""
    with open(dest + ".tmp", "wb") as out:
        for piece in export(store, *args, **kwargs):
            out.write(piece)
    os.replace(dest + ".tmp", dest)
    return os.path.getsize(dest)
