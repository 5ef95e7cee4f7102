"""CDX and CDXJ lines as rows with CDXJ's field names, and ``--where`` over them.

A CDXJ line's JSON names its fields (pywb's and cdxj-indexer's: ``url``, ``mime``,
``status``, ``digest``, ``length``, ``offset``, ``filename``), its key and timestamp come
first. A CDX line's fields are named by the letters of its header (the IA CDX legend); the
letters that carry one of those fields are mapped to the same names, so one ``--where``
works for both. ``--where`` is DuckDB SQL run on batches of rows, as for a Parquet index.

| column | CDXJ | CDX letter |
|---|---|---|
| ``urlkey`` | the key | ``N`` massaged url, else ``A`` canonized url |
| ``timestamp`` | the timestamp | ``b`` date |
| ``url`` | ``url`` | ``a`` original url |
| ``mime`` | ``mime`` | ``m`` mime type |
| ``status`` (integer) | ``status`` | ``s`` response code |
| ``digest`` | ``digest`` | ``k`` new-style checksum, else ``c`` old-style checksum |
| ``length`` (integer) | ``length`` | ``S`` compressed record size |
| ``offset`` (integer) | ``offset`` | ``V`` compressed arc file offset, else ``v`` uncompressed |
| ``filename`` | ``filename`` | ``g`` file name |

A CDX has only the columns its legend names; ``-`` (no value) is NULL. A CDXJ has all nine,
NULL where a line's JSON lacks the field.
"""

from __future__ import annotations

from typing import Any, Sequence

import duckdb
import pyarrow as pa

from lib.errors import UsageError

#: column -> the CDX letters that carry it, the first present wins
CDX_LETTERS: dict[str, tuple[str, ...]] = {
    "urlkey": ("N", "A"),
    "timestamp": ("b",),
    "url": ("a",),
    "mime": ("m",),
    "status": ("s",),
    "digest": ("k", "c"),
    "length": ("S",),
    "offset": ("V", "v"),
    "filename": ("g",),
}
COLUMNS = tuple(CDX_LETTERS)
INTEGER = {"status": pa.int32(), "length": pa.int64(), "offset": pa.int64()}
BATCH_ROWS = 64 * 1024
_NO = "__line"


def cdx_positions(letters: Sequence[str]) -> dict[str, int]:
    """Column name -> field position, for the columns the CDX legend ``letters`` names."""
    pos = {c: i for i, c in enumerate(letters)}
    found = {}
    for name, options in CDX_LETTERS.items():
        hit = next((pos[c] for c in options if c in pos), None)
        if hit is not None:
            found[name] = hit
    return found


def value(name: str, v: Any) -> Any:
    if v is None or v == "-" or v == "":
        return None
    if name in INTEGER:
        try:
            return int(v)
        except (TypeError, ValueError):
            return None  # not a number: no value to compare (the line itself is checked elsewhere)
    return str(v)


def cdxj_row(key: str, timestamp: str, obj: dict) -> dict[str, Any]:
    """The row of a CDXJ line (all nine columns)."""
    row = {n: value(n, obj.get(n)) for n in COLUMNS}
    row["urlkey"], row["timestamp"] = key, timestamp
    return row


class RowFilter:
    """``--where`` over the rows of a text index, batch by batch: :meth:`add` rows with their
    line numbers, :meth:`take` the line numbers selected so far (in order)."""

    def __init__(self, where: str, columns: Sequence[str], uri: str):
        self.where, self.uri = where, uri
        self.columns = list(columns)
        self.con = duckdb.connect(config={"threads": 1})
        self.rows: list[tuple[int, dict[str, Any]]] = []

    def add(self, no: int, row: dict[str, Any]) -> None:
        """Queue one row (:meth:`take` the batch when :attr:`full`)."""
        self.rows.append((no, row))

    @property
    def full(self) -> bool:
        return len(self.rows) >= BATCH_ROWS

    def take(self) -> list[int]:
        """The selected line numbers of the queued rows (the queue is emptied)."""
        if not self.rows:
            return []
        arrays = {c: pa.array([r.get(c) for _, r in self.rows], INTEGER.get(c, pa.string())) for c in self.columns}
        arrays[_NO] = pa.array([no for no, _ in self.rows], pa.int64())
        self.rows = []
        self.con.register("index_rows", pa.table(arrays))
        try:
            got = self.con.sql(f'SELECT "{_NO}" FROM index_rows WHERE {self.where} ORDER BY "{_NO}"').fetchall()
        except duckdb.Error as e:
            raise UsageError(
                f"--where {self.where!r} on {self.uri}: {e} (columns here: {', '.join(self.columns)})"
            ) from None
        return [n for (n,) in got]
