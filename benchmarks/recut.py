"""A preprocessed day re-cut into few large or many small Parquet files, optionally scaled.

    python -m benchmarks.recut DAY OUT [--scale N] [--rows-per-file R]

The index, graph and catalogue jobs read a preprocessed day; a real day can come in one file
per page (a collection of small archives preprocessed by an older version, or by another
producer). This writes the same pages and captures as ``DAY`` into ``OUT/large`` (one file per
language, one captures file) and ``OUT/small`` (``--rows-per-file`` rows a file), in the same
row order, so the two cuts index to the same docids.

``--scale N`` repeats the day N times; copy K (K > 0) renames every host ``h`` to ``kK-h``
in page URLs, link targets and captures alike, and suffixes record ids, so each copy links
within itself and the share of distinct link targets stays the source day's (a real day's
0.3-0.4, not the 0.004 of a day of copied pages).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

#: scheme://[userinfo@] before the host, as lib.index.graph_tasks.HOST_RE reads it
_BEFORE_HOST = r"^([A-Za-z][A-Za-z0-9+.\-]*://(?:[^@/?#]*@)?)"


def _host_prefixed(urls: pa.Array, k: int) -> pa.Array:
    return pc.replace_substring_regex(urls, _BEFORE_HOST, rf"\1k{k}-")


def _links(links: pa.Array, k: int) -> pa.Array:
    links = links.combine_chunks() if isinstance(links, pa.ChunkedArray) else links
    flat = pc.list_flatten(links)
    renamed = pa.StructArray.from_arrays(
        [_host_prefixed(flat.field("url"), k), flat.field("anchor_text")], fields=list(flat.type)
    )
    offsets = pc.subtract(links.offsets, links.offsets[0])
    return pa.ListArray.from_arrays(offsets, renamed, type=links.type, mask=links.is_null())


def copy_of(table: pa.Table, k: int) -> pa.Table:
    """Copy ``k`` of a pages or captures table: hosts renamed ``kK-``, record ids suffixed."""
    if k == 0:
        return table
    cols = {}
    for name in table.column_names:
        col = table[name].combine_chunks()
        if name in ("url", "canonical_url"):
            col = _host_prefixed(col, k)
        elif name in ("url_host", "url_subdomain"):
            col = pc.if_else(pc.is_null(col), col, pc.binary_join_element_wise(f"k{k}", col, "-"))
        elif name in ("record_id", "id"):
            col = pc.binary_join_element_wise(col, f"k{k}", "-")
        elif name == "outgoing_links":
            col = _links(col, k)
        cols[name] = col
    return pa.table(cols, schema=table.schema)


def _write(table: pa.Table, folder: pathlib.Path, rows_per_file: int, stem: str) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    step = rows_per_file or max(1, table.num_rows)
    n = 0
    for i, a in enumerate(range(0, max(table.num_rows, 1), step)):
        pq.write_table(table.slice(a, step), folder / f"part-{stem}-{i:06d}.parquet", compression="zstd")
        n += 1
    return n


def recut(day: pathlib.Path, out: pathlib.Path, scale: int = 1, rows_per_file: int = 2) -> dict[str, int]:
    """Write ``out/large`` and ``out/small`` (module doc); returns the files of each cut."""
    shutil.rmtree(out, ignore_errors=True)
    files = {"large": 0, "small": 0}
    tables = {}
    for folder in sorted(p for p in day.iterdir() if p.is_dir()):
        parts = sorted(f for f in folder.glob("*.parquet") if not f.name.startswith((".", "_")))
        if parts and (folder.name.startswith("language=") or folder.name == "_captures"):
            src = pa.concat_tables([pq.read_table(f, partitioning=None) for f in parts], promote_options="default")
            tables[folder.name] = pa.concat_tables([copy_of(src, k) for k in range(scale)])
    pages = sum(t.num_rows for n, t in tables.items() if n != "_captures")
    for name, whole in tables.items():
        # captures cut into as many files as the pages: an archive holds both
        per = rows_per_file if name != "_captures" else -(-whole.num_rows * rows_per_file // max(1, pages))
        files["large"] += _write(whole, out / "large" / name, 0, "all")
        files["small"] += _write(whole, out / "small" / name, per, "s")
    for cut in ("large", "small"):
        (out / cut / "_SUCCESS").touch()
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("day", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--rows-per-file", type=int, default=2)
    a = ap.parse_args()
    print(recut(a.day, a.out, a.scale, a.rows_per_file))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
