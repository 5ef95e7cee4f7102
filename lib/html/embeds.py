"""A page's embedded resources: what a browser fetches to show the page, beside its links.

OpenWebSearch.eu's ``links`` module columns, with their type (a list of ``{src, width, height}``,
the attributes as the page writes them, null where absent):

- ``image_links``: ``<img src>``;
- ``video_links``: ``<video src>`` and the ``<source src>`` of a ``<video>`` (width and height
  those of the ``<video>``);
- ``iframes``: ``<iframe src>``;

and ours: ``script_links`` (``<script src>``) and ``stylesheet_links`` (``<link href>`` whose
``rel`` holds the token ``stylesheet``), lists of URLs.

Every URL is made absolute as the page's links are: against the page's ``<base href>`` (the
page's own link resolver, lib.html.content.LinkResolver), http(s) only, fragment removed
(``data:`` images, ``javascript:`` and the like are left out). Each list keeps document order
and a URL once (its first occurrence), at most :data:`MAX_EACH` entries; an empty list is null,
as Resilipipe writes the module columns. One CSS query over the document finds them all
(:data:`SELECTOR`, in document order): this is the reference, the pure-Python path's. In
production the compiled links walk (lib/html/native/lexwalk.c, ``embed_of``) collects the same
columns in the pass it makes over every element anyway (tests/html/test_embeds.py and
test_native_walk.py hold the two equal).
"""

from __future__ import annotations

from typing import Any, Callable

#: every tag one query collects (lexbor returns a selector list's matches in document order)
SELECTOR = "img[src],video[src],video source[src],iframe[src],script[src],link[rel][href]"
#: entries kept per list: a page of ten thousand thumbnails keeps its first ones
MAX_EACH = 1000
#: the page columns, in this order
COLUMNS = ("image_links", "video_links", "iframes", "script_links", "stylesheet_links")

Media = dict[str, "str | None"]


def embeds(tree: Any, resolve: Callable[[str], str | None]) -> dict[str, list | None]:
    """The :data:`COLUMNS` of the parsed page ``tree`` (selectolax's Lexbor parser), URLs made
    absolute with ``resolve`` (the page's link resolver)."""
    out: dict[str, list] = {c: [] for c in COLUMNS}
    seen: dict[str, set[str]] = {c: set() for c in COLUMNS}
    for node in tree.css(SELECTOR):
        tag = node.tag
        attrs = node.attributes
        if tag == "link":
            if "stylesheet" not in (attrs.get("rel") or "").lower().split():
                continue
            col, raw, sized = "stylesheet_links", attrs.get("href"), None
        elif tag == "script":
            col, raw, sized = "script_links", attrs.get("src"), None
        elif tag == "img":
            col, raw, sized = "image_links", attrs.get("src"), attrs
        elif tag == "iframe":
            col, raw, sized = "iframes", attrs.get("src"), attrs
        elif tag == "video":
            col, raw, sized = "video_links", attrs.get("src"), attrs
        else:  # <source> inside a <video>: the video's size
            video = node.parent
            while video is not None and video.tag != "video":
                video = video.parent
            col, raw, sized = "video_links", attrs.get("src"), video.attributes if video is not None else {}
        url = resolve(raw) if raw else None
        if url is None or url in seen[col] or len(out[col]) >= MAX_EACH:
            continue
        seen[col].add(url)
        if sized is None:
            out[col].append(url)
        else:
            out[col].append({"src": url, "width": sized.get("width"), "height": sized.get("height")})
    return {c: (v or None) for c, v in out.items()}
