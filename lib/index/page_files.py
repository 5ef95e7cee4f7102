"""What the index job reads: a preprocessed day's page files, in docid order.

The day is a folder of ``language=xxx/`` partitions (:mod:`lib.store.layout`) on a local or
cluster filesystem; a day on S3 is first copied to a local folder (:func:`local_copy`),
since Spark has no S3 connector here.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import pyarrow as pa

from lib.index.invert import READ_COLUMNS
from lib.pages.schema import PAGE_SCHEMA, spark_schema
from lib.runtime import packing
from lib.store import layout, storage

GRAPH_COLUMNS = ["url", "url_host", "outgoing_links"]
#: columns every preprocessed file must have (checked on the driver before anything runs)
PAGE_COLUMNS = sorted(set(READ_COLUMNS) | set(GRAPH_COLUMNS))
#: the partition folder Spark writes for rows whose language is null
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def local_copy(uri: str, local: str) -> str:
    """Copy the preprocessed day's pages and captures (and its ``_SUCCESS``) from S3 to ``local``, a folder
    Spark can read (in production the index reads the cluster filesystem copy); returns it."""
    for f in storage.list_files(uri):
        rel = f.uri[len(uri.rstrip("/")) + 1 :]
        # the captures too: the day's robots.txt rules are among them (lib.index.indexable)
        if not (rel.startswith((layout.LANG_PREFIX, layout.CAPTURES + "/")) or rel == layout.SUCCESS):
            continue
        dest = os.path.join(local, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with storage.open_stream(f.uri) as src, open(dest, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    return local


def page_files(uri: str) -> list[str]:
    """The page files (``language=*/part-*.parquet``, local or S3) of a preprocessed day: none
    means the day holds no pages. Hidden leftovers of killed tasks do not count."""
    base = storage.normalize(uri).rstrip("/")
    out = []
    for f in storage.list_files(uri, [".parquet"]):
        rel = f.uri[len(base) + 1 :]
        if rel.startswith(layout.LANG_PREFIX) and not rel.rsplit("/", 1)[-1].startswith((".", "_")):
            out.append(f.uri)
    return out


def language_dirs(root: str) -> list[str]:
    """The ``language=*`` folders of a preprocessed day (a local folder), sorted."""
    return sorted(
        d for d in os.listdir(root) if layout.language_of(d) is not None and os.path.isdir(os.path.join(root, d))
    )


def input_files(inp: str) -> list[tuple[str, str, int]]:
    """(path, language, bytes) of the day's page files, sorted by path: the docid order."""
    root = storage.local_path(inp)
    out = []
    for d in language_dirs(root):
        lang = layout.language_of(d) or ""  # never None: language_dirs keeps language=* folders
        lang = "" if lang == _NULL_PARTITION else lang
        for name in sorted(os.listdir(os.path.join(root, d))):
            if name.endswith(".parquet") and not name.startswith((".", "_")):
                path = os.path.join(root, d, name)
                out.append((path, lang, os.path.getsize(path)))
    return out


def read_links(spark: Any, inp: str) -> Any:
    """The day's pages' ``url``, ``url_host`` and ``outgoing_links`` (all ``language=*``
    folders), read with the known schema: no schema-inference job, only these columns."""
    packing.plan_spark_reads_by_bytes(spark)
    schema = spark_schema(pa.schema([PAGE_SCHEMA.field(c) for c in GRAPH_COLUMNS]))
    root = storage.local_path(inp)
    dirs = language_dirs(root)
    if not dirs:
        return spark.createDataFrame([], schema)
    base = storage.normalize(root)
    return spark.read.schema(schema).option("basePath", base).parquet(*[f"{base}/{d}" for d in dirs])
