"""An input list of record ids (``--record-ids FILE``), each resolved through the record store
(lib.catalogue.recordstore: linear hashing, one bucket page a look-up) to its capture pointer
(archive file, offset, length): no day is scanned, however many days the store holds.

The file holds one WARC-Record-ID a line, as WARC headers write it (``<urn:uuid:...>``) or bare
(``urn:uuid:...``, as the metadata store and the CDX server give it); blank lines and ``#``
comments are skipped. An id the store does not hold is an error row of kind ``not-found``
(its line number, the line, and the store it was looked up in), as any other bad line: it is
counted in ``failed``, named in errors.tsv and in the summary's ``missing_record_ids``, and the
job exits 1.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from lib.catalogue import recordstore
from lib.catalogue.linhash import Corrupt, LinearHash
from lib.errors import UsageError
from lib.extract.lines import ErrorRow, ExtractError, Item, Resolver, iter_text_lines, make_item, tsv_escape
from lib.store import storage

NOT_FOUND = "not-found"
#: ids named in the run summary (errors.tsv names every one)
SUMMARY_IDS = 100


def store_of(record_store: str | None, root: str | None) -> str:
    """The record store's folder: ``--record-store``, else ``ROOT/recordstore``; a
    :class:`UsageError` when there is none to read (the store is a local folder)."""
    store = record_store or (storage.join(root, recordstore.FOLDER) if root else None)
    if store is None:
        raise UsageError("extract: --record-ids needs --record-store DIR or --root ROOT (ROOT/recordstore)")
    if storage.is_s3(store):
        raise UsageError(f"extract: the record store {store} is on S3; the store is a local folder")
    store = storage.local_path(store)
    if not os.path.exists(os.path.join(store, "header")):
        raise UsageError(f"extract: {store} is no record store (no header file; the catalogue job writes it)")
    return store


def record_id(line: str) -> str:
    """The id of a line: surrounding blanks and the angle brackets of a WARC header removed."""
    return line.strip().removeprefix("<").removesuffix(">").strip()


def id_lines(uri: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of the ids file (local or S3), blank lines and comments left out."""
    if not storage.exists(uri):
        raise FileNotFoundError(f"--record-ids {uri}: no such file")
    for no, raw in enumerate(iter_text_lines(uri), 1):
        line = raw.rstrip("\r\n")
        if line.strip() and not line.lstrip().startswith("#"):
            yield no, line


def read_items(uri: str, store: str, resolver: Resolver) -> tuple[list[Item], list[ErrorRow]]:
    """Items of the ids in ``uri`` found in the record store ``store``, and error rows for the
    others (``not-found``) and for pointers the resolver refuses. A torn store is a
    :class:`UsageError` (rebuild it: lib.catalogue.recordstore.rebuild)."""
    table = LinearHash(store)
    items: list[Item] = []
    errors: list[ErrorRow] = []
    for no, line in id_lines(uri):
        rid = record_id(line)
        try:
            value = table.get(rid.encode("utf-8", "surrogateescape"))
        except Corrupt as e:
            raise UsageError(f"extract: record store {store}: {e}; rebuild it from the published days") from None
        if value is None:
            errors.append((no, line, ExtractError(NOT_FOUND, f"{rid}: no such record id in {store}").reason))
            continue
        ptr = json.loads(value)
        fields = [
            tsv_escape(str(ptr.get("url") or "")),
            str(ptr.get("warc_file") or ""),
            str(ptr.get("warc_offset")),
            None if ptr.get("warc_length") is None else str(ptr["warc_length"]),
        ]
        try:
            items.append(make_item(no, fields, resolver))
        except ExtractError as e:
            errors.append((no, line, e.reason))
    return items, errors


def missing(errors: list[ErrorRow]) -> list[str]:
    """The ids of the ``not-found`` error rows, in line order."""
    return [record_id(line) for _, line, reason in sorted(errors) if reason.startswith(NOT_FOUND + ":")]


def line_texts(uri: str, numbers: set[int]) -> dict[int, str]:
    """The text of the given line numbers, with the pointer each resolved to left out (a line
    is its id: the list to re-run)."""
    if not numbers:
        return {}
    return {no: line for no, line in id_lines(uri) if no in numbers}
