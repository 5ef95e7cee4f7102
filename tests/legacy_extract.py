"""FROZEN copy of lib/html/extract.py as of commit c5ded4b (before the one-pass extraction), the oracle of
tests/html/test_preprocess_equivalence.py: the new extraction must give the same rows. Do not edit
or "fix" this file; it is the old behaviour on purpose."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin

from selectolax.lexbor import LexborHTMLParser

# Elements whose content is never main text.
# fmt: off
DROP_TAGS = [
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed", "nav",
    "header", "footer", "aside", "form", "button", "select", "textarea", "dialog", "menu"
]
# fmt: on
DROP_SELECTORS = (
    "[role=navigation],[role=banner],[role=contentinfo],[role=complementary],[role=search],[aria-hidden=true],[hidden]"
)
# class/id tokens that mark boilerplate blocks (whole tokens or these prefixes only: a
# page wrapper called "has-nav" must not take the page with it)
# fmt: off
_BOILER_TOKENS = {
    "nav", "navbar", "navigation", "menu", "breadcrumb", "breadcrumbs", "footer", "sidebar", "cookie",
    "cookies", "consent", "banner", "share", "social", "skip-link", "related"
}
# fmt: on
_BOILER_PREFIXES = ("nav-", "navbar-", "menu-", "footer-", "sidebar-", "cookie-", "breadcrumb", "social-", "share-")
BLOCK_TAGS = (
    "p,div,section,article,main,li,ul,ol,dl,dt,dd,h1,h2,h3,h4,h5,h6,br,tr,td,th,table,blockquote,pre,"
    "figure,figcaption,hr,address,details,summary,center"
)
_WS = re.compile(r"\s+")
SEP = "\x1e"
MAX_LINKS = 10000


@dataclass
class Page:
    title: str = ""
    description: str = ""
    html_lang: str = ""
    canonical_url: str | None = None
    text: str = ""
    links: list[tuple[str, str]] = field(default_factory=list)


def _clean(s: str | None) -> str:
    return _WS.sub(" ", s or "").strip()


def absolute_link(base: str, href: str) -> str | None:
    """Absolute http(s) URL of ``href`` against ``base``, fragment removed; None otherwise."""
    href = href.strip()
    if not href or href[0] == "#":
        return None
    low = href[:8].lower()
    if low.startswith(("http://", "https://")) and "\\" not in href and "/." not in href and "[" not in href:
        url = href.split("#", 1)[0]  # already absolute: urljoin would only cost time
        return url if len(url) > len(low.split(":")[0]) + 3 else None
    if low.startswith(("javascript", "mailto:", "tel:", "data:")):
        return None
    try:
        url = urldefrag(urljoin(base, href))[0]
    except ValueError:
        return None
    if not url.startswith(("http://", "https://")):
        return None
    return url


def _meta(tree: LexborHTMLParser, *selectors: str) -> str:
    for sel in selectors:
        node = tree.css_first(sel)
        if node is not None:
            v = _clean(node.attributes.get("content"))
            if v:
                return v
    return ""


def extract(html: str, url: str) -> Page:
    """Parse ``html`` (already decoded) fetched from ``url``."""
    tree = LexborHTMLParser(html)
    page = Page()
    t = tree.css_first("title")
    page.title = _clean(t.text()) if t is not None else ""
    page.description = _meta(
        tree, "meta[name=description]", "meta[name=Description]", "meta[property='og:description']"
    )
    root = tree.css_first("html")
    page.html_lang = _clean(root.attributes.get("lang")) if root is not None else ""
    base = url
    b = tree.css_first("base[href]")
    if b is not None and b.attributes.get("href"):
        base = urljoin(url, b.attributes["href"].strip())
    c = tree.css_first("link[rel=canonical][href]")
    if c is not None:
        page.canonical_url = absolute_link(base, c.attributes.get("href") or "")

    seen: set[tuple[str, str]] = set()
    for a in tree.css("a[href]"):
        if len(page.links) >= MAX_LINKS:
            break
        target = absolute_link(base, a.attributes.get("href") or "")
        if target is None:
            continue
        anchor = _clean(a.text(deep=True, separator=" "))
        if not anchor:
            img = a.css_first("img[alt]")
            anchor = _clean(img.attributes.get("alt")) if img is not None else ""
        key = (target, anchor)
        if key not in seen:
            seen.add(key)
            page.links.append(key)

    page.text = main_text(tree)
    return page


def _is_boilerplate(attrs: dict) -> bool:
    tokens = f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower().split()
    return any(t in _BOILER_TOKENS or t.startswith(_BOILER_PREFIXES) for t in tokens)


def main_text(tree: LexborHTMLParser) -> str:
    """Visible main text, boilerplate removed, one block per line."""
    body = tree.body
    if body is None:
        return ""
    tree.strip_tags(DROP_TAGS)
    # reverse document order: children go before their parents, so no freed node is touched
    for node in reversed(body.css(DROP_SELECTORS)):
        node.decompose()
    for node in reversed(body.css("[class],[id]")):
        if node.tag not in ("main", "article") and _is_boilerplate(node.attributes):
            node.decompose()
    for node in body.css(BLOCK_TAGS):
        node.insert_before(SEP)
    raw = body.text(separator="", strip=False)
    lines = (_clean(part) for part in raw.split(SEP))
    return "\n".join(line for line in lines if line)
