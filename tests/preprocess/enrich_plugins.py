"""Enrichment plugins for the tests (registered through a real entry point by test_enrich.py)."""

from __future__ import annotations

import contextlib
import pathlib
import sys
from typing import Iterator

import pyarrow as pa

from lib.preprocess.enrich import PageInput, enricher


@contextlib.contextmanager
def installed(site: pathlib.Path, dist: str, version: str, plugins: dict[str, str]) -> Iterator[pathlib.Path]:
    """A distribution ``dist`` registering ``plugins`` (name -> module:function) under
    dailyslice.enrichers in folder ``site``, on sys.path while the block runs, as pip would install it."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in plugins.items())
    (info / "entry_points.txt").write_text(f"[dailyslice.enrichers]\n{lines}")
    sys.path.insert(0, str(site))
    try:
        yield site
    finally:
        sys.path.remove(str(site))


@enricher(title_chars=pa.int32(), h1=pa.list_(pa.string()))
def flaky(page: PageInput) -> dict:
    """Uses the parsed tree; raises on every page whose main text has a length divisible by 3."""
    if len(page.text) % 3 == 0:
        raise ValueError("text length divisible by 3")
    return {
        "title_chars": len(page.tree.css_first("title").text()) if page.tree.css_first("title") else 0,
        "h1": [n.text(strip=True) for n in page.tree.css("h1")],
    }


@enricher(server=pa.int64())
def wrong_type(page: PageInput) -> dict:
    """Declares an integer but returns the Server header (a string) when there is one."""
    return {"server": page.headers.get("server")}


@enricher(microdata=pa.string())
def half_microdata(page: PageInput) -> dict:
    """The microdata plugin's values on pages whose URL has an even length, none elsewhere: it
    ships microdata's expected outputs, so the gate's recall must catch what it leaves out."""
    from lib.preprocess.microdata import microdata

    v = microdata(page)["microdata"] if len(page.url) % 2 == 0 else None
    return {"microdata": v}


vars(half_microdata)["enrich_expected"] = "../../lib/preprocess/microdata_expected.jsonl.gz"
