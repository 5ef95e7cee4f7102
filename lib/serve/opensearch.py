"""OpenSearch 1.1: the description document (so a browser or SearXNG can add the engine) and
search results as an Atom feed with the OpenSearch response elements."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from typing import Any
from urllib.parse import urlencode

OS_NS = "http://a9.com/-/spec/opensearch/1.1/"
ATOM_NS = "http://www.w3.org/2005/Atom"
RELEVANCE_NS = "http://a9.com/-/opensearch/extensions/relevance/1.0/"
SHORT_NAME = "Daily slice"

ET.register_namespace("", ATOM_NS)
ET.register_namespace("opensearch", OS_NS)
ET.register_namespace("relevance", RELEVANCE_NS)


def _xml(root: ET.Element) -> bytes:
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def description(base: str) -> bytes:
    """The OpenSearch 1.1 description document of the service at ``base`` (``http://host:port``)."""
    root = ET.Element(f"{{{OS_NS}}}OpenSearchDescription")
    ET.SubElement(root, f"{{{OS_NS}}}ShortName").text = SHORT_NAME
    ET.SubElement(
        root, f"{{{OS_NS}}}Description"
    ).text = "Full-text search (BM25) over the pages of the published daily index slices"
    ET.SubElement(root, f"{{{OS_NS}}}Tags").text = "web index slice bm25"
    ET.SubElement(root, f"{{{OS_NS}}}InputEncoding").text = "UTF-8"
    ET.SubElement(root, f"{{{OS_NS}}}OutputEncoding").text = "UTF-8"
    for kind, path in (("text/html", "/"), ("application/atom+xml", "/searchxml"), ("application/json", "/search")):
        ET.SubElement(
            root, f"{{{OS_NS}}}Url", type=kind, method="get", template=f"{base}{path}?q={{searchTerms}}&k={{count?}}"
        )
    ET.SubElement(
        root,
        f"{{{OS_NS}}}Url",
        type="application/opensearchdescription+xml",
        rel="self",
        template=f"{base}/opensearch.xml",
    )
    ET.SubElement(root, f"{{{OS_NS}}}Query", role="example", searchTerms="library budget")
    ET.SubElement(root, f"{{{OS_NS}}}SyndicationRight").text = "open"
    return _xml(root)


def atom(
    base: str,
    self_url: str,
    query: str,
    day_from: dt.date,
    day_to: dt.date,
    langs: list[str] | None,
    k: int,
    total: int,
    hits: list[dict[str, Any]],
) -> bytes:
    """Atom feed of search results with opensearch:totalResults/startIndex/itemsPerPage and Query."""
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    span = f"{day_from}" + (f"..{day_to}" if day_to != day_from else "")
    ET.SubElement(feed, f"{{{ATOM_NS}}}title").text = f"{SHORT_NAME}: {query} ({span})"
    ET.SubElement(feed, f"{{{ATOM_NS}}}id").text = self_url
    ET.SubElement(feed, f"{{{ATOM_NS}}}updated").text = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    ET.SubElement(ET.SubElement(feed, f"{{{ATOM_NS}}}author"), f"{{{ATOM_NS}}}name").text = SHORT_NAME
    ET.SubElement(feed, f"{{{ATOM_NS}}}link", rel="self", href=self_url, type="application/atom+xml")
    ET.SubElement(
        feed,
        f"{{{ATOM_NS}}}link",
        rel="search",
        href=f"{base}/opensearch.xml",
        type="application/opensearchdescription+xml",
    )
    ET.SubElement(feed, f"{{{OS_NS}}}totalResults").text = str(total)
    ET.SubElement(feed, f"{{{OS_NS}}}startIndex").text = "1"
    ET.SubElement(feed, f"{{{OS_NS}}}itemsPerPage").text = str(k)
    ET.SubElement(feed, f"{{{OS_NS}}}Query", role="request", searchTerms=query, startIndex="1", count=str(k))
    for h in hits:
        e = ET.SubElement(feed, f"{{{ATOM_NS}}}entry")
        ET.SubElement(e, f"{{{ATOM_NS}}}title").text = h.get("title") or h.get("url")
        ET.SubElement(e, f"{{{ATOM_NS}}}link", href=h["url"])
        ET.SubElement(e, f"{{{ATOM_NS}}}id").text = str(h.get("record_id") or h["url"])
        ET.SubElement(e, f"{{{ATOM_NS}}}updated").text = str(h.get("warc_date") or h.get("day") or "")
        # the snippet is already HTML (escaped text, <em> around the query terms): Atom's type="html" says so
        ET.SubElement(e, f"{{{ATOM_NS}}}summary", type="html").text = h.get("snippet") or ""
        if h.get("language"):
            ET.SubElement(e, f"{{{ATOM_NS}}}category", term=str(h["language"]), label="language")
        capture = f"{base}/catalogue/captures?" + urlencode({"url": h["url"]})
        ET.SubElement(
            e,
            f"{{{ATOM_NS}}}link",
            rel="related",
            href=capture,
            type="application/json",
            title=f"{h.get('warc_file')} offset {h.get('warc_offset')} length {h.get('warc_length')}",
        )
        ET.SubElement(e, f"{{{RELEVANCE_NS}}}score").text = f"{h['score']:.6f}"
    return _xml(feed)
