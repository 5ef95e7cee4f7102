"""Remove excluded URLs from the URL database (:mod:`lib.catalogue.urldb`).

Every Parquet file of the database holds URL rows: the kept table versions
(``vNNNNNN/part=P/``) and the stored day edits (``days/date=D/part=P/``), which a later
out-of-order merge replays. Each file with a match is rewritten without it under a
temporary name and renamed over the old one, so a reader sees the old file or the new one,
and a second run finds nothing left; the old file's Hadoop checksum (``.NAME.crc``) goes
with it. The caller holds the database's lease (:func:`lib.catalogue.urldb.lock`): no merge
reads or writes the files meanwhile. Files are rewritten with their own Arrow schema
(timestamps stay UTC micros), so Spark reads them as before.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.pages.exclusions import Exclusions

#: the purge records' folder under the database (lib.catalogue.delta reads it)
PURGED = "purged"
PURGED_SCHEMA = pa.schema([("id", pa.string())])


def purge_urldb(db: str, exclusions: Exclusions) -> dict[str, Any]:
    """Drop the rows of excluded URLs from every file under ``db``; returns the rows removed
    (``rows``), the files rewritten and the distinct URLs. The removed URLs' ids (not the URLs)
    are also written to ``db/purged/p-TIME-PID.arrow``, for the next daily delta to list as gone
    (lib.catalogue.delta)."""
    out: dict[str, Any] = {"urldb": db, "rows": 0, "files": 0, "urls": []}
    if not os.path.isdir(db):
        return out
    urls: set[str] = set()
    ids: set[str] = set()
    for d, dirs, names in sorted(os.walk(db)):
        if d == db:
            dirs[:] = [x for x in dirs if x != PURGED]  # the purge records are not the database's rows
        for n in sorted(names):
            if not n.endswith(".parquet") or n.startswith("."):
                continue
            path = os.path.join(d, n)
            col = pq.read_table(path, columns=["url"]).column("url")
            mask = exclusions.mask(col)
            hit = pc.sum(mask).as_py() or 0
            if not hit:
                continue
            f = pq.ParquetFile(path)
            table = f.read()
            gone = table.filter(mask)
            urls.update(u for u in gone.column("url").to_pylist() if u)
            if "id" in gone.column_names:
                ids.update(i for i in gone.column("id").to_pylist() if i)
            tmp = os.path.join(d, "." + n + ".purge")
            pq.write_table(
                table.filter(pc.invert(mask)),
                tmp,
                compression=f.metadata.row_group(0).column(0).compression.lower()
                if f.metadata.num_row_groups
                else "snappy",
            )
            os.replace(tmp, path)
            # Hadoop's local filesystem checks a file against its ".NAME.crc" when one exists: the
            # old file's would fail the next merge's read of the new one (a ChecksumException)
            crc = os.path.join(d, f".{n}.crc")
            if os.path.exists(crc):
                os.remove(crc)
            out["rows"] += hit
            out["files"] += 1
    out["urls"] = sorted(urls)
    if ids:  # ids only: the URL itself leaves every file of the database (a take-down)
        record = os.path.join(db, PURGED, f"p-{time.time_ns():020d}-{os.getpid()}.arrow")
        os.makedirs(os.path.dirname(record), exist_ok=True)
        with pa.OSFile(record + ".tmp", "wb") as sink, pa.ipc.new_file(sink, PURGED_SCHEMA) as w:
            w.write(pa.table({"id": sorted(ids)}, schema=PURGED_SCHEMA))
        os.replace(record + ".tmp", record)
    return out
