"""The ``microdata`` enrichment plugin: OpenWebSearch.eu's ``microdata`` column (schema 0.1.0).

Resilipipe fills it with ``str(extruct.extract(html, syntaxes=['microdata'])['microdata'])``: the
page's HTML Microdata items (W3C Microdata JSON form) as a Python list's ``str``, null when the
page has none or extruct fails on it. This plugin writes the same. Opt-in (``--enrich
microdata``): extruct parses the page again with lxml, which costs time (docs/benchmarks.md).
"""

from __future__ import annotations

import extruct
import pyarrow as pa
from extruct.w3cmicrodata import MicrodataExtractor  # this module is imported only by runs that ask for it

from lib.preprocess.enrich import PageInput, enricher


@enricher(microdata=pa.string())
def microdata(page: PageInput) -> dict:
    """The page's Microdata items as Resilipipe stores them (a ``str`` of the list), None without any."""
    if "itemscope" not in page.html.lower():
        return {"microdata": None}  # no item can exist: skip the second parse
    items = MicrodataExtractor().extract(page.html)
    return {"microdata": str(items) if items else None}


#: its expected outputs on the benchmark pages (lib.preprocess.gate), written from :func:`resilipipe` by
#: ``dailyslice plugin expected microdata --reference lib.preprocess.microdata:resilipipe --out ...``
vars(microdata)["enrich_expected"] = "microdata_expected.jsonl.gz"


def resilipipe(html: str) -> dict:
    """Resilipipe's own expression, the reference the gate holds the plugin to: ``extruct.extract``
    over every syntax it is asked for, null without items or when extruct fails."""
    try:  # the whole library's entry point, not the one extractor the plugin calls
        v = extruct.extract(html, syntaxes=["microdata"])["microdata"]
    except Exception:  # Resilipipe's apply_extruct_extractors leaves the column null then
        return {"microdata": None}
    return {"microdata": str(v) if len(v) > 0 else None}
