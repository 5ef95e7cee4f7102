"""Extract what the index needs from an HTML page with selectolax (lexbor backend).

Title, meta description, ``<html lang>``, canonical URL, outgoing links with anchor
texts, and the main plain text (lib/html/maintext.py: the content root's text without
boilerplate blocks, one block per line).

Per page this costs a handful of passes of lexbor's C selector engine and Python only for the
nodes that need it: the head fields looked up in ``<head>`` (the whole document only for what
it lacks and holds elsewhere), one query for the links (each distinct href resolved once,
root-relative and network-path ones without ``urljoin``), and the main text in two walks of the
compiled walker. The fields other than the main text are those of the former implementation,
which resolved every link with ``urljoin`` (tests/html/test_preprocess_equivalence.py holds them
equal).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import jstyleson
from selectolax.lexbor import LexborHTMLParser

from lib.html import discussion, maintext, roots, walk
from lib.html.embeds import COLUMNS as EMBED_COLUMNS
from lib.html.embeds import MAX_EACH as EMBEDS_EACH
from lib.html.embeds import embeds
from lib.pages.directives import DEFAULT_AGENTS, TDM_META, link_rel

# what keeps a root-relative href from being origin + href (fragment cut) after urljoin +
# urldefrag: '//' (urljoin drops empty segments), a dot segment, ';' (path parameters),
# tab/CR/LF (urlsplit deletes them), backslash; and an empty query ('/p?': the '?' is dropped)
_NOT_PLAIN = re.compile(r"//|/\.|[;\\\t\n\r]")
# a network-path reference ('//host/path?q') that urljoin + urldefrag only prefix with the base's
# scheme: an ASCII host without brackets (urlsplit checks those), and after it no ';' (path
# parameters), backslash, tab, CR or LF; an empty query ('?' last) is excluded as above
_NET_PATH = re.compile(r"//[A-Za-z0-9.\-_~%!$&'()*+,=:@]+(?:[/?][^;\\\t\n\r]*)?")
_MISSING: Any = object()  # a sentinel a memo or map holds no value for
_DESCRIPTION = ("meta[name=description]", "meta[name=Description]", "meta[property='og:description']")
# the head fields: selector -> the one tag it can match
_FIELDS = {
    "title": "title",
    **{sel: "meta" for sel in _DESCRIPTION},
    "base[href]": "base",
    "link[rel=canonical][href]": "link",
}
_IN_HEAD = ",".join(_FIELDS)
# the head fields' tags as the compiled links walk reports them outside <head> (lexwalk.c's links_walk)
_STRAY_BIT = {"title": 1, "meta": 2, "base": 4, "link": 8}
# what the compiled links walk also says: some element has what a discussion's post selectors need
# (lexwalk.c's post_markup); unknown (the Python path): as if some had
_POST_MARKUP = 16
JSON_LD_TYPE = "application/ld+json"
_JSON_LD_SELECTOR = f'script[type="{JSON_LD_TYPE}"]'
# extruct drops a leading comment line when a block does not parse as it is
_COMMENT_LINE = re.compile(r"^\s*(//.*|<!--.*-->)")
MAX_LINKS = 10000
# the <iframe> tags in a <noscript> block
_IFRAME_TAG = re.compile(r"(?i)</?iframe\b[^>]*>")
#: the metas a page's signals are read from (lib.pages.directives) when the caller names no others
META_NAMES = frozenset((*DEFAULT_AGENTS, *TDM_META))


@dataclass
class Page:
    title: str = ""
    description: str = ""
    html_lang: str = ""
    canonical_url: str | None = None
    text: str = ""
    # visible characters in <body> (in its post bodies on a thread): an empty text with some means the page lost it
    body_chars: int = 0
    links: list[tuple[str, str, str | None]] = field(default_factory=list)  # (url, anchor text, rel)
    metas: list[tuple[str, str]] = field(default_factory=list)  # (name lowercased, content) of META_NAMES
    json_ld: str | None = None
    main_html: str | None = None  # the main content with structural tags only, when asked (lib/html/mainhtml.py)
    # embedded resources (lib/html/embeds.py): image_links, video_links, iframes, script_links, stylesheet_links
    embeds: dict[str, list | None] = field(default_factory=dict)


def _clean(s: str | None) -> str:
    """Whitespace runs -> one space, ends stripped (str.split's whitespace is re's \\s)."""
    return " ".join(s.split()) if s else ""


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


class LinkResolver:
    """``absolute_link(base, href)`` for the many hrefs of one page, with the same results:
    each distinct href is resolved once, and root-relative ones ('/path?q') are joined to the
    base's scheme and host without urljoin."""

    __slots__ = ("base", "origin", "scheme", "memo")

    def __init__(self, base: str):
        self.base = base
        self.memo: dict[str, str | None] = {}
        self.origin = self.scheme = None
        try:
            p = urlsplit(base)
        except ValueError:
            return
        if p.scheme in ("http", "https") and p.netloc:
            self.origin = f"{p.scheme}://{p.netloc}"
            self.scheme = p.scheme

    def __call__(self, href: str) -> str | None:
        url = self.memo.get(href, _MISSING)
        if url is not _MISSING:
            return url
        h = href.strip()
        path = h.split("#", 1)[0]
        if path[:1] == "/" and self.origin is not None and path[-1] != "?" and not _NOT_PLAIN.search(path):
            url = self.origin + path
        elif path[:2] == "//" and self.scheme is not None and path[-1] != "?" and _NET_PATH.fullmatch(path):
            url = f"{self.scheme}:{path}"
        else:
            url = absolute_link(self.base, href)
        self.memo[href] = url
        return url


def extract(
    html: str, url: str, utf8: bytes | None = None, main_html: bool = False, meta_names: frozenset[str] = META_NAMES
) -> Page:
    """Parse ``html`` (already decoded) fetched from ``url``. ``utf8``, when given, is the
    same document as UTF-8 bytes (``html.encode()``, e.g. the body of a page that decoded as
    UTF-8): lexbor parses those bytes directly instead of encoding ``html`` again.
    ``main_html``: also write :attr:`Page.main_html` (in the walk that writes the text);
    ``meta_names``: the ``<meta name>`` values (lowercase) collected into :attr:`Page.metas`."""
    tree = LexborHTMLParser(html if utf8 is None else utf8)
    page = Page()
    first, resolve, raw_links, strays, embedded = _fields_and_links(tree, url)
    page.metas = _metas(tree, meta_names, bool(strays & _STRAY_BIT["meta"]))
    title = first.get("title")
    page.title = _clean(title.text()) if title is not None else ""
    for sel in _DESCRIPTION:  # the first node of each selector in turn, until one has content
        node = first.get(sel)
        if node is not None:
            page.description = _clean(node.attributes.get("content"))
            if page.description:
                break
    root = tree.root
    if root is None or root.tag != "html":
        root = tree.css_first("html")
    page.html_lang = _clean(root.attributes.get("lang")) if root is not None else ""
    canonical = first.get("link[rel=canonical][href]")
    if canonical is not None:
        page.canonical_url = resolve(canonical.attributes.get("href") or "")

    if JSON_LD_TYPE in html:  # a substring test first: most pages have no JSON-LD
        page.json_ld = json_ld(tree)

    seen: dict[tuple[str, str], int] = {}  # (url, anchor) -> its place in links
    links = page.links
    memo = resolve.memo
    rels: dict[str | None, str | None] = {None: None}  # raw rel -> kept rel: pages repeat a few values
    for href, a, target, raw_rel in raw_links:
        if len(links) >= MAX_LINKS:
            break
        if target is None:
            href = href or ""
            target = memo.get(href, _MISSING)
            if target is _MISSING:
                target = resolve(href)
            if target is None:
                continue
        rel = rels.get(raw_rel, _MISSING)
        if rel is _MISSING:
            rel = rels[raw_rel] = link_rel(raw_rel)
        key = (target, a if isinstance(a, str) else anchor_text(a))
        at = seen.get(key)
        if at is None:
            seen[key] = len(links)
            links.append((*key, rel))
        elif rel is None and links[at][2] is not None:  # followed somewhere on the page: followed
            links[at] = (*key, None)

    # the compiled links walk collected them; else one query of their own, resolved as the links are
    page.embeds = dict(zip(EMBED_COLUMNS, embedded)) if embedded is not None else embeds(tree, resolve)

    posts = bool(strays & _POST_MARKUP)
    if main_html:
        page.text, page.body_chars, page.main_html = main_text_and_size(tree, resolve, posts)
    else:
        page.text, page.body_chars = main_text_and_size(tree, None, posts)
    if len(page.text) < roots.ROOT_MIN and (fixed := unswallowed(html)) is not None:
        return extract(fixed, url, None, main_html, meta_names)  # fixed has no such <noscript> left
    return page


def unswallowed(html: str) -> str | None:
    """``html`` with the ``<iframe>`` tags taken out of every ``<noscript>`` that opens an iframe it
    does not close; None when no ``<noscript>`` does.

    lexbor parses a ``<noscript>``'s content as markup, as a browser without scripts does, and an
    iframe's content as raw text: ``<noscript><iframe src="…"/></noscript>`` (a tag manager's
    fallback; the slash closes nothing in HTML) makes the rest of the page the iframe's invisible
    text, where a browser running scripts reads the ``<noscript>`` as text and shows the page.
    :func:`extract` parses the page again without those tags when its main text is short (a
    search of the whole page costs about as much as the walk; only pages that lost their text pay it)."""
    parts, at = [], 0
    for opening in ("<noscript", "<NOSCRIPT"):  # str.find: a regex over the page costs ten times more
        start = html.find(opening)
        while start >= 0:
            ends = [e for e in (html.find("</noscript", start), html.find("</NOSCRIPT", start)) if e >= 0]
            end = min(ends, default=len(html))
            block = html[start:end].lower()
            if block.count("<iframe") > block.count("</iframe"):
                parts.append((start, end))
            start = html.find(opening, end)
    if not parts:
        return None
    out = []
    for start, end in sorted(parts):
        out += [html[at:start], _IFRAME_TAG.sub(" ", html[start:end])]
        at = end
    return "".join(out) + html[at:]


def json_ld(tree: LexborHTMLParser) -> str | None:
    """The page's JSON-LD as Resilipipe stores it (its extruct call): the items of every
    ``<script type="application/ld+json">`` parsed as extruct parses them (a list's elements
    each, an object itself, empty ones dropped), the Python list written with ``str``; None
    without items, or when a block does not parse (extruct fails the page then)."""
    items: list = []
    for node in tree.css(_JSON_LD_SELECTOR):
        script = node.text(deep=True) or ""
        try:
            data = json.loads(script, strict=False)
        except ValueError:
            try:  # extruct's fallback: a leading comment line dropped, JS comments and trailing commas allowed
                data = jstyleson.loads(_COMMENT_LINE.sub("", script), strict=False)
            except ValueError:
                return None
        if isinstance(data, list):
            items.extend(x for x in data if x)
        elif isinstance(data, dict) and data:
            items.append(data)
    return str(items) if items else None


def _links(tree: LexborHTMLParser, origin: str | None):
    """(href, anchor text or the <a> node to take it from, URL or None, rel or None) of the
    ``a[href]`` of the document in order. The compiled walker resolves what needs no ``urljoin`` itself (the
    LinkResolver's fast paths) and leaves out what is no link; None leaves the href to
    :class:`LinkResolver`, which the Python path does for every one."""
    if walk.WALK is not None:
        root = tree.root
        return walk.WALK.links(root.mem_id, origin) if root is not None else []
    return ((a.attrs.get("href"), a, None, a.attrs.get("rel") or None) for a in tree.css("a[href]"))


def _metas(tree: LexborHTMLParser, names: frozenset[str], outside_head: bool) -> list[tuple[str, str]]:
    """(name lowercased, content) of the document's ``<meta name>`` in ``names``, in order: those
    of <head>, or of the whole document when some <meta> stands outside it (or nobody knows)."""
    head = tree.head
    scope = tree if outside_head or head is None else head
    out = []
    for node in scope.css("meta[name]"):
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        if name in names:
            out.append((name, attrs.get("content") or ""))
    return out


def anchor_text(a) -> str:
    """The words of an <a>'s text nodes; without any, the alt text of its first img[alt]."""
    anchor = " ".join(a.text(deep=True, separator=" ").split())
    if not anchor:
        img = a.css_first("img[alt]")
        anchor = _clean(img.attributes.get("alt")) if img is not None else ""
    return anchor


def _fields_and_links(tree: LexborHTMLParser, url: str) -> tuple[dict, LinkResolver, Any, int, tuple | None]:
    """The first node each selector of _FIELDS matches in document order (what css_first
    returns), the page's link resolver (against ``<base href>`` when there is one), its
    ``a[href]`` (:func:`_links`), what may be on the page: bits of _STRAY_BIT (a ``<meta>``
    outside ``<head>``...) and _POST_MARKUP, and the embed columns the compiled walk collected
    (lib.html.embeds.COLUMNS' lists in that order; None: left to :func:`lib.html.embeds.embeds`).

    <head> precedes every element of the document but <html>, so a match inside it is the
    first: the whole document is searched only for what it lacks. That search visits every
    node (~0.13 ms of a heavy page); the compiled walk that lists the links visits them anyway
    and says which of the fields' tags occur outside <head>, so only those are searched for."""
    first: dict = {}
    head, root = tree.head, tree.root
    if head is not None:
        _take_first(head.css(_IN_HEAD), _FIELDS, first)
    missing = {sel: tag for sel, tag in _FIELDS.items() if sel not in first}
    links = embedded = None
    strays = _STRAY_BIT["meta"] | _POST_MARKUP  # unknown: as if some <meta> stood outside <head>
    if walk.WALK is not None and head is not None and root is not None:
        resolve = _resolver(url, first)
        links, strays, embedded = walk.WALK.links(root.mem_id, resolve.origin, head.mem_id, resolve, EMBEDS_EACH)
        missing = {sel: tag for sel, tag in missing.items() if strays & _STRAY_BIT[tag]}
    if missing:
        _take_first(tree.css(",".join(missing)), missing, first)
    if links is None or ("base[href]" in missing and "base[href]" in first):  # (again) against that <base>
        resolve = _resolver(url, first)
        if walk.WALK is not None and root is not None:
            links, _, embedded = walk.WALK.links(root.mem_id, resolve.origin, None, resolve, EMBEDS_EACH)
        else:
            links, embedded = _links(tree, resolve.origin), None
    return first, resolve, links, strays, embedded


def _resolver(url: str, first: dict) -> LinkResolver:
    """The link resolver of a page fetched from ``url``, against its first ``<base href>``."""
    base = first.get("base[href]")
    if base is not None and base.attributes.get("href"):
        return LinkResolver(urljoin(url, base.attributes["href"].strip()))
    return LinkResolver(url)


def _take_first(nodes: list, selectors: dict, first: dict) -> None:
    """Record, for each of ``selectors``, the first of ``nodes`` (document order, each
    matched by one of them) that it matches."""
    for node in nodes:
        tag = node.tag
        for sel, t in selectors.items():
            if t == tag and sel not in first and (t != "meta" or node.css_matches(sel)):
                first[sel] = node


def main_text_and_size(tree: LexborHTMLParser, resolve: LinkResolver | None = None, posts: bool = True) -> tuple:
    """Visible main text, boilerplate removed, one block per line (lib.html.maintext's rules;
    the compiled walker computes the same in C), and the body's visible characters; with
    ``resolve`` (the page's links' resolver), the main content as HTML third (main_html).

    A forum thread or a Q&A page whose post bodies lib.html.discussion finds is the text of those
    bodies, each walked alone with the same rules: the chrome around the posts (menus, thread
    tools, author boxes, pagination) is not the page's content, and the rules that clean an
    article (comment and reply words, link-dense author lines, repeated short blocks) would drop the
    posts themselves. The size is then the bodies' visible characters. ``posts`` False: the page
    has no discussion markup (the compiled links walk saw none), the bodies are not looked for."""
    body = tree.body
    if body is None:
        return ("", 0) if resolve is None else ("", 0, "")
    bodies = _posts(tree) if posts else []
    if bodies:
        return _posts_text(bodies, resolve)
    out = _main_text(body, resolve)
    if len(out[0]) < roots.ROOT_MIN:
        # Little text: the page may be in a <noscript>, ROOT_MIN characters or more and more than
        # the body shows: a copy for readers without scripts of what a script writes (a blog
        # whose posts are script templates), or the page itself, taken in by a tag left open in a
        # <noscript> (``<noscript><div id="nojs"></noscript>``): lexbor parses as a browser
        # without scripts does, where a browser running them reads raw text and shows the page.
        # Such a <noscript> is read as part of the page then.
        least = max(roots.ROOT_MIN, out[1] + 1)
        fallback = [n for n in body.css("noscript") if len("".join(n.text().split())) >= least]
        if fallback:
            for n in fallback:
                n.unwrap()
            out = _main_text(body, resolve)
    return out


def _posts(tree: LexborHTMLParser) -> list:
    """The post bodies of a forum thread or a Q&A page (lib.html.discussion), in page order, none
    inside another; [] for any other page."""
    found = discussion.with_bodies(tree)
    if found is None:
        return []
    nodes = discussion.bodies(tree, found.posts)
    inside = {n.mem_id for n in nodes}
    return [n for n in nodes if not any(a.mem_id in inside for a in _above(n))]


def _above(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _posts_text(posts: list, resolve: LinkResolver | None) -> tuple:
    """main_text_and_size of a discussion page: each post body's main text (the walk of the body
    alone, its rules inside the post), the posts one after the other; the size is the posts'."""
    outs = [_main_text(node, resolve) for node in posts]
    text = "\n".join(o[0] for o in outs if o[0])
    size = sum(o[1] for o in outs)
    if resolve is None:
        return text, size
    return text, size, "".join(o[2] for o in outs)


def _main_text(body, resolve: LinkResolver | None) -> tuple:
    """main_text_and_size's walk of ``body``: the compiled one when built."""
    if walk.WALK is not None:
        if resolve is None:
            return walk.WALK.main_text(body.mem_id)
        return walk.WALK.main_text(body.mem_id, resolve, resolve.origin)
    return maintext.main_text(body, resolve)


def main_text(tree: LexborHTMLParser) -> str:
    """The main text of the page (:func:`main_text_and_size` without the size)."""
    return main_text_and_size(tree)[0]
