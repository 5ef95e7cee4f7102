"""The main text of a page: visible text, boilerplate blocks left out, one block per line.

Two walks over the ``<body>`` subtree, both in document order:

1. **measure**: for every element, the visible characters under it (text nodes outside the
   invisible elements, whitespace not counted) and how many of them are inside an ``<a href>``;
2. **write**: the text of the content roots (the deepest element holding most of the paragraph
   text, and those of its siblings and its parent's siblings that have paragraph text of their
   own), of every element in them that no rule drops, a line break at each block element.

An element is dropped when

- it is never shown (:data:`INVISIBLE_TAGS`, or the ``hidden`` attribute): always;
- a boilerplate rule matches it (a boilerplate tag or ``role``, ``aria-hidden=true``, a
  boilerplate word among its class and id tokens, most of its text is link text, or it is the
  residue of boilerplate blocks: a heading left over a dropped list), **unless it
  is protected**: ``<body>``, ``<main>`` and ``<html>`` are, and so is every element that holds
  more than half of the body's visible characters. A layout word on a page wrapper
  (``<body class="one-sidebar sidebar-second">``, ``<div id="nav-below-header">``) or an
  ASP.NET ``<form>`` around the whole page therefore never takes the page's text with it.

This module is the reference (the pure-Python path); lib/html/native/lexwalk.c computes the same
text from the same tree in C (tests/html/test_native_walk.py holds them equal).
"""

from __future__ import annotations

from lib.html.headings import BOILER_HEADINGS, HEADING_KEY_MAX, heading_key
from lib.html.mainhtml import CONTEXT, HtmlWriter

SEP = "\x1e"  # a block boundary in the written text
PRE_BREAKS = SEP + "\n"  # inside <pre>, a line break is a block boundary too
SHY = "\xad"  # a soft hyphen: left out of the text

#: never shown, or (rt, rp) a ruby annotation: the reading printed over the characters it follows
#: (furigana, pinyin), which written inline would split their word; dropped wherever they are
# fmt: off
INVISIBLE_TAGS = frozenset({
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object", "embed", "button",
    "select", "textarea", "rt", "rp"
})
# fmt: on
#: page furniture: dropped unless protected
BOILER_TAGS = frozenset({"nav", "header", "footer", "aside", "form", "dialog", "menu", "figcaption"})
BOILER_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
#: never dropped by a boilerplate rule
PROTECTED_TAGS = frozenset({"html", "body", "main"})
#: exempt from the class/id rule (an <article class="post-nav"> is still the article)
CLASS_EXEMPT_TAGS = frozenset({"main", "article"})
# class/id words that mark boilerplate blocks. A token is boilerplate when it is one of them, or
# when one of its parts (split at '-' and '_') is (`cb-related-posts`, `rp4wp-related-posts`,
# `c-menu-print__list`), unless its first part says a state ("has-nav", "no-sidebar": classes of a
# page wrapper, not of a menu); a later part does not count after a part that says one
# ("and-w-sidebar", "page-with-sidebar": a layout, not a sidebar).
# fmt: off
BOILER_WORDS = frozenset({
    "nav", "navbar", "navigation", "menu", "menubar", "breadcrumb", "breadcrumbs", "footer", "sidebar",
    "cookie", "cookies", "consent", "banner", "share", "sharing", "social", "skip", "related", "comment",
    "comments", "commentlist", "disqus", "respond", "reply", "replies", "ad", "ads", "advert", "adverts",
    "advertisement", "promo", "newsletter", "subscribe", "subscription", "popup", "trending", "recommended",
    "recommendations", "byline", "tags", "pager", "toolbar", "masthead", "copyright", "signup", "login",
    "sponsored", "outbrain", "taboola", "caption", "meta", "credit", "credits", "author", "relatedposts",
    "sharedaddy", "addthis", "shariff", "likes", "rating", "ratings", "donation", "donate", "kommentar",
    "kommentare", "commentaires", "comentarios", "form", "legend", "disclaimer", "flyout", "cta", "authorbox"
})
# fmt: on
#: a block hidden when the page is printed is furniture: a token that is one of NOPRINT_WORDS, or
#: has a part "print" and a part of NOPRINT_PARTS (`hidden-print`, `d-print-none`, `u-hide-print`)
NOPRINT_WORDS = frozenset({"noprint", "dontprint", "notforprint", "nonprint"})
NOPRINT_PARTS = frozenset({"no", "not", "none", "hide", "hidden", "dont", "dn"})
STATE_PARTS = frozenset({"has", "no", "with", "w", "without", "is", "show", "hide", "js", "enable", "disable", "not"})
# fmt: off
BLOCK_TAGS = frozenset({
    "p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
    "h6", "br", "tr", "table", "caption", "blockquote", "pre", "figure", "figcaption", "hr", "address",
    "details", "summary", "center", "nav", "header", "footer", "aside", "form", "fieldset", "menu", "dialog"
})
# fmt: on
#: table cells: a space, not a line, between them (a table row is one line)
CELL_TAGS = frozenset({"td", "th"})
#: link density: an element is link furniture when more than LINK_NUM/LINK_DEN of its visible
#: characters are link text (lists of links: menus, related articles, tag clouds, pagers)
LINK_NUM, LINK_DEN = 3, 5
#: paragraph text (outside links) is what locates the content root
PARAGRAPH_TAGS = frozenset({"p", "pre", "blockquote"})
#: the content root holds ROOT_NUM/ROOT_DEN of the body's paragraph text, when it has ROOT_MIN characters
ROOT_NUM, ROOT_DEN, ROOT_MIN = 5, 6, 500
#: ... and at least CLEAN_NUM/CLEAN_DEN of its clean text (visible, outside links and boilerplate
#: blocks); else the paragraphs sit in a side block (the article's text is not in <p>) and the
#: root is located by the clean text instead
CLEAN_NUM, CLEAN_DEN = 1, 4
#: a sibling of the content root or of its parent is written too when it holds SIB_MIN paragraph
#: characters that are SIB_NUM/SIB_DEN of its visible text (a lead, the second half of an article
#: after an ad slot, a forum's next post)
SIB_MIN, SIB_NUM, SIB_DEN, SIB_LEVELS = 100, 1, 2, 2
#: ... and a sibling before them when it holds LEAD_MIN clean characters that are SIB_NUM/SIB_DEN of
#: its visible text, in <p> or not: a lead in a <div> or a heading of its own, a summary box; up
#: to LEAD_LEVELS levels (a lead in the article's header, beside the body's wrappers)
LEAD_MIN, LEAD_LEVELS = 150, 3
#: a block whose clean text is under RESIDUE_MAX characters and under 1/RESIDUE_DEN of its
#: visible text is what remains of a boilerplate block (a "Related articles" heading above a
#: link list the rules dropped): dropped too
RESIDUE_MAX, RESIDUE_DEN = 100, 3
#: a teaser list: an element with at least TEASER_N children that have text, each of them one of
#: TEASER_TAGS, under TEASER_MAX visible characters and at least 1/TEASER_DEN link text (a title
#: that links to another page, a line or two of its lead): related, latest, popular articles
TEASER_N, TEASER_MAX, TEASER_DEN = 3, 400, 5
TEASER_TAGS = frozenset({"li", "div", "article", "section"})
#: the rule sets of main_text's attempts: all rules; without the content root and link density;
#: invisible elements only
STRICT, LENIENT, BARE = 0, 1, 2
#: elements never judged by link density (the link itself, inline phrasing: inside a link, all of
#: its text is link text, as a <ruby> word that links to its glossary entry)
# fmt: off
LINK_EXEMPT_TAGS = frozenset({
    "a", "span", "b", "i", "em", "strong", "u", "small", "font", "abbr", "cite", "q", "sup", "sub", "code", "ruby",
    "rb", "rt", "rp", "rtc", "mark", "time", "s", "del", "ins", "kbd", "samp", "var", "dfn", "bdi", "bdo", "data",
    "tt", "big", "strike", "nobr", "label"
})
# fmt: on


def boiler_token(token: str) -> bool:
    """Whether one class or id token (lowercased) marks boilerplate (see BOILER_WORDS)."""
    if token in BOILER_WORDS or token in NOPRINT_WORDS:
        return True
    parts = token.replace("_", "-").split("-")
    if "print" in parts and not NOPRINT_PARTS.isdisjoint(parts):
        return True
    if len(parts) < 2 or parts[0] in STATE_PARTS:
        return False
    for part in parts:
        if part in BOILER_WORDS:
            return True
        if part in STATE_PARTS:
            return False
    return False


def is_boiler_class(attrs: dict) -> bool:
    """A class or id token of the element marks boilerplate."""
    return any(map(boiler_token, f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower().split()))


def _invisible(tag: str, attrs: dict) -> bool:
    return tag in INVISIBLE_TAGS or "hidden" in attrs


#: what marks an element as boilerplate: no rule, its tag (or role, aria-hidden), a class or id
#: word, its links (link density, or a residue of boilerplate blocks)
NO_RULE, BY_TAG, BY_WORD, BY_LINKS = 0, 1, 2, 3
#: a heading that only dropped blocks follow in its parent: the title of a boilerplate block
TRAILING = 4
#: a teaser list (TEASER_N): judged as link text is
TEASERS = 5
#: a heading whose whole text is one of BOILER_HEADINGS
HEADED = 6
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: a heading under HEADING_KEY_MAX characters whose text is one of BOILER_HEADINGS (lib/html/headings.py)
#: is HEADED; and what follows such a heading in its parent, up to the next heading, goes with it unless it
#: holds HEADED_MAX clean characters or more
HEADED_MAX = 800


def _boilerplate(tag: str, attrs: dict, chars: int, links: int, par: int = 0) -> int:
    """Which boilerplate rule matches (protection aside): NO_RULE, BY_TAG, BY_WORD or BY_LINKS
    (``chars``, ``links``: the element's own visible and link characters, outside the blocks inside it
    that a rule marks, so that a related-articles list dropped inside an article's container does
    not make the container link-heavy; ``par``: its paragraph characters, those in boilerplate
    blocks included)."""
    if (tag in BOILER_TAGS or attrs.get("role") in BOILER_ROLES or attrs.get("aria-hidden") == "true") and not (
        tag == "header" and par >= SIB_MIN and par * SIB_DEN >= chars * SIB_NUM
    ):  # a <header> with paragraph text of its own (as a sibling root needs) is an article's lead
        return BY_TAG
    if tag not in CLASS_EXEMPT_TAGS and is_boiler_class(attrs):
        return BY_WORD
    return BY_LINKS if tag not in LINK_EXEMPT_TAGS and chars > 0 and links * LINK_DEN > chars * LINK_NUM else NO_RULE


def _residue(tag: str, s: list[int]) -> int:
    """BY_LINKS when the block of ``s`` is what remains of boilerplate blocks (RESIDUE_MAX) or a
    teaser list (:func:`_teasers` marked it), TRAILING when :func:`_trailing` marked it."""
    if s[4] == TRAILING or s[4] == HEADED:
        return s[4]
    if s[4] == TEASERS:
        return BY_LINKS
    return BY_LINKS if tag in BLOCK_TAGS and s[6] < RESIDUE_MAX and s[6] * RESIDUE_DEN < s[1] else NO_RULE


def _protected(s: list[int], rule: int, total: int, rtotal: int) -> bool:
    """Whether no boilerplate rule drops the element of ``s``: it holds more than half of the
    body's visible characters, or a class or id word or its links are all that mark it and it
    holds more than half of the page's paragraph text (``<div class="entry share">`` around the
    article, an article container with its share buttons and teaser lists inside)."""
    return s[1] * 2 > total or (rule >= BY_WORD and rtotal >= ROOT_MIN and s[5] * 2 > rtotal)


def _teasers(stats: list[list[int]], i: int) -> bool:
    """Whether the element ``i`` is a teaser list (TEASER_N): its children with text are at least
    TEASER_N, all of TEASER_TAGS, each short and partly link text."""
    j, end, n = i + 1, i + stats[i][0], 0
    while j < end:
        t = stats[j]
        if t[1]:
            if not (t[8] and t[1] < TEASER_MAX and t[2] * TEASER_DEN >= t[1]):
                return False
            n += 1
        j += t[0]
    return n >= TEASER_N


def _measure(body) -> tuple[list[list[int]], int, int, int, int]:
    """Per element under ``body`` in document order: [size, chars, link chars, paragraph chars,
    boilerplate rule, all paragraph chars, clean chars, a heading, one of TEASER_TAGS, own link
    chars, own chars] (size: the element and its indexed descendants; paragraph chars: visible
    characters outside links inside PARAGRAPH_TAGS, not counting those of elements a boilerplate
    rule matches; all paragraph chars: counting those too; clean chars: visible characters outside
    links, not counting those of elements a boilerplate rule matches; own (link) chars: visible
    (link) characters, not counting those of elements a boilerplate rule matches, which
    _boilerplate judges); and the body's visible, paragraph, all paragraph and clean characters."""
    stats: list[list[int]] = []
    stack: list[tuple[int, int]] = []  # (index, 1 for a link + 2 for a paragraph) of the open elements
    total = ptotal = rtotal = ctotal = 0
    in_link = in_par = 0
    node = body.child
    while node is not None:
        descend = False
        tag = node.tag
        if tag == "-text":
            n = len("".join((node.text_content or "").split()))
            if n:
                if stack:
                    top = stats[stack[-1][0]]
                    top[1] += n
                    top[10] += n
                    if in_link:
                        top[2] += n
                        top[9] += n
                    else:
                        top[6] += n
                        if in_par:
                            top[3] += n
                            top[5] += n
                else:
                    total += n
                    ctotal += n
        elif node.is_element_node:
            i = len(stats)
            stats.append([1, 0, 0, 0, NO_RULE, 0, 0, tag in HEADING_TAGS, tag in TEASER_TAGS, 0, 0])
            attrs = node.attributes
            if not _invisible(tag, attrs) and node.child is not None:
                kind = (tag == "a" and "href" in attrs) + 2 * (tag in PARAGRAPH_TAGS)
                stack.append((i, kind))
                in_link += kind & 1
                in_par += kind >> 1
                descend = True
        if descend:
            node = node.child
            continue
        while node.next is None:
            node = node.parent
            if node is None or node.mem_id == body.mem_id:
                return stats, total, ptotal, rtotal, ctotal
            i, kind = stack.pop()
            s = stats[i]
            s[0] = len(stats) - i
            in_link -= kind & 1
            in_par -= kind >> 1
            if node.tag not in PROTECTED_TAGS:
                s[4] = _boilerplate(node.tag, node.attributes, s[10], s[9], s[5]) or _residue(node.tag, s)
                if not s[4] and s[7] and s[1] < HEADING_KEY_MAX and heading_key(node.text()) in BOILER_HEADINGS:
                    s[4] = HEADED
                if not s[4] and _teasers(stats, i):
                    s[4] = TEASERS
            par, clean = (0, 0) if s[4] else (s[3], s[6])
            if stack:
                parent = stats[stack[-1][0]]
                parent[1] += s[1]
                parent[2] += s[2]
                if not s[4]:
                    parent[9] += s[9]
                    parent[10] += s[10]
                parent[3] += par
                parent[5] += s[5]
                parent[6] += clean
            else:
                total += s[1]
                ptotal += par
                rtotal += s[5]
                ctotal += clean
        node = node.next
    return stats, total, ptotal, rtotal, ctotal


def _ancestors(stats: list[list[int]], i: int) -> list[int]:
    """The indexes of element ``i``'s ancestors in ``stats`` (document order, each entry's first
    field its subtree's size), the outermost first: down the chain, skipping siblings whole."""
    chain = []
    k = 0
    while k < i:
        if k + stats[k][0] > i:
            chain.append(k)
            k += 1
        else:
            k += stats[k][0]
    return chain


def _headed(stats: list[list[int]], ptotal: int, ctotal: int) -> tuple[int, int]:
    """Mark HEADED what follows a HEADED heading in its parent up to the next heading (the block it
    titles), unless that holds HEADED_MAX clean characters or more (the article goes on after a
    teaser box titled inside it), and take its paragraph and clean text out of the ancestors that
    counted it: up to the innermost one that a rule marks (which counts its own text but passes
    none up), else all of them and the body's; the body's paragraph and clean characters after."""
    for h, s in enumerate(stats):
        if s[4] != HEADED or not s[7]:
            continue
        chain = _ancestors(stats, h)
        end = chain[-1] + stats[chain[-1]][0] if chain else len(stats)
        follow, j = [], h + s[0]
        while j < end and not stats[j][7]:
            if not stats[j][4]:
                follow.append(j)
            j += stats[j][0]
        if sum(stats[j][6] for j in follow) >= HEADED_MAX:
            continue
        for j in follow:
            t = stats[j]
            t[4] = HEADED
            for a in reversed(chain):
                stats[a][3] -= t[3]
                stats[a][6] -= t[6]
                if stats[a][4]:
                    break
            else:
                ptotal -= t[3]
                ctotal -= t[6]
    return ptotal, ctotal


def _unprotect(stats: list[list[int]], total: int, ptotal: int, rtotal: int, ctotal: int) -> tuple[int, int]:
    """Clear the boilerplate mark of the elements that the write walk never drops (:func:`_protected`:
    a link-heavy page wrapper, a layout class, an article container with a stray class word) and
    count their paragraph and clean text in their ancestors again; the body's paragraph and clean
    characters after.
    Such elements form a chain per criterion, each holding the next, so they are taken from the
    top down: an ancestor of one is protected too, unless its tag marks it."""
    for i, s in enumerate(stats):
        if s[4] and _protected(s, s[4], total, rtotal):
            s[4] = NO_RULE
            for k in _ancestors(stats, i):
                stats[k][3] += s[3]
                stats[k][6] += s[6]
            ptotal += s[3]
            ctotal += s[6]
    return ptotal, ctotal


def _trailing(stats: list[list[int]], ctotal: int) -> None:
    """Mark TRAILING the headings (under RESIDUE_MAX clean characters) that only blocks a rule
    drops follow in their parent, one of them with text at least: the title of a related-articles,
    comments or sharing block whose body the rules dropped. A parent with text of its own (not
    in an element) is left alone: where that text sits is not measured."""
    for p in range(-1, len(stats)):
        if p < 0:
            j, end, direct = 0, len(stats), ctotal
        else:
            s = stats[p]
            if s[0] == 1 or s[4]:
                continue
            j, end, direct = p + 1, p + s[0], s[6]
        kids = []
        while j < end:
            kids.append(j)
            if not stats[j][4]:
                direct -= stats[j][6]
            j += stats[j][0]
        if direct:
            continue
        dropped = False
        for k in reversed(kids):
            t = stats[k]
            if t[4]:
                dropped = dropped or t[1] > 0
            elif t[6]:
                if not (dropped and t[7] and t[6] < RESIDUE_MAX):
                    break
                t[4] = TRAILING


def content_root(stats: list[list[int]], ptotal: int, f: int = 3) -> int:
    """Index of the deepest element holding ROOT_NUM/ROOT_DEN of the body's paragraph text (-1:
    none, the body is the root): the article's container, whatever its markup calls it. With
    ``f`` 6 and the clean characters as ``ptotal``: of the body's clean text."""
    if ptotal < ROOT_MIN:
        return -1
    root = -1
    i = 0
    while i < len(stats):  # those that qualify form a chain: the last is the deepest
        s = stats[i]
        if s[4]:  # nothing inside a boilerplate block is the root
            i += s[0]
            continue
        if s[f] * ROOT_DEN >= ptotal * ROOT_NUM:
            root = i
        i += 1
    return root


def content_roots(stats: list[list[int]], ptotal: int, ctotal: int) -> list[int]:
    """The content root (:func:`content_root`) and, in document order with it, those of its
    siblings and of its parent's siblings (SIB_LEVELS) outside boilerplate blocks that carry
    paragraph text of their own (SIB_MIN), or before it, clean text (LEAD_MIN, LEAD_LEVELS); when the
    body has less than ROOT_MIN paragraph characters or their root holds less than
    CLEAN_NUM/CLEAN_DEN of the body's clean text, the root that the clean text locates, alone
    (paragraphs do not say what the page's text is); ``[-1]``: the body is the root."""
    if ptotal < ROOT_MIN:  # too few paragraphs to say where the text is
        return [content_root(stats, ctotal, 6)]
    root = content_root(stats, ptotal)
    if root < 0:
        return [root]
    if stats[root][6] * CLEAN_DEN < ctotal * CLEAN_NUM:
        return [content_root(stats, ctotal, 6)]
    chain = _ancestors(stats, root)  # the innermost last
    roots = [root]
    inner = root
    for level in range(max(SIB_LEVELS, LEAD_LEVELS)):
        parent = chain.pop() if chain else -1
        j, end = (parent + 1, parent + stats[parent][0]) if parent >= 0 else (0, len(stats))
        while j < end:
            s = stats[j]
            if (
                j != inner
                and not s[4]
                and (
                    level < SIB_LEVELS
                    and s[3] >= SIB_MIN
                    and s[3] * SIB_DEN >= s[1] * SIB_NUM
                    or level < LEAD_LEVELS
                    and j < inner
                    and s[6] >= LEAD_MIN
                    and s[6] * SIB_DEN >= s[1] * SIB_NUM
                )
            ):
                roots.append(j)
            j += s[0]
        if parent < 0:
            break
        inner = parent
    return sorted(roots)


def main_text(body, resolve=None) -> tuple[str, int] | tuple[str, int, str]:
    """The main text under ``body`` (a selectolax node), blocks on lines of their own, and the
    body's visible characters (a page whose text is empty although its body has some lost it);
    with ``resolve`` (href -> absolute URL or None), the main content as HTML third
    (lib/html/mainhtml.py), written in the same walk.

    When the rules leave nothing of a body that has text (a page of links: a listing, a shop's
    page, a directory), the text is written again with fewer rules: without the content root
    and link density (STRICT, LENIENT), and at last with only the invisible elements left out
    (BARE), so that no page loses all its words to a rule."""
    stats, total, ptotal, rtotal, ctotal = _measure(body)
    ptotal, ctotal = _headed(stats, ptotal, ctotal)
    ptotal, ctotal = _unprotect(stats, total, ptotal, rtotal, ctotal)
    _trailing(stats, ctotal)
    html = None if resolve is None else HtmlWriter(resolve)
    text = _write(body, stats, (total, rtotal), content_roots(stats, ptotal, ctotal), STRICT, html)
    for level in (LENIENT, BARE):
        if text or not total:
            break
        html = None if resolve is None else HtmlWriter(resolve)
        text = _write(body, stats, (total, rtotal), [-1], level, html)
    return (text, total) if html is None else (text, total, html.finish())


def _write(
    body, stats: list[list[int]], totals: tuple[int, int], roots: list[int], level: int, html: HtmlWriter | None = None
) -> str:
    """The text under the content roots (``roots``, in document order, none inside another; ``[-1]``: the
    body) that the rules of ``level`` keep (``totals``: the body's visible and all paragraph
    characters); ``html``, when given, is told what the text is told (lib/html/mainhtml.py)."""
    parts: list[str] = []
    i = 0
    inside = roots[0] < 0  # within a content root: text is written
    pre = 0  # <pre> elements entered: their line breaks are the text's
    root_id = None  # the content root entered: its end ends the writing until the next one
    above = set()  # the ancestors of the roots
    for root in roots:
        above.update(_ancestors(stats, root))
    node = body.child
    while node is not None:
        descend = False
        tag = node.tag
        if tag == "-text":
            if inside:
                t = node.text_content or ""
                parts.append(t.replace("\n", SEP) if pre else t)
                if html is not None:
                    html.text(t, PRE_BREAKS if pre else SEP)
        elif node.is_element_node:
            s = stats[i]
            size, chars, links = s[:3]
            attrs = node.attributes
            if _invisible(tag, attrs):
                i += size
            elif not inside:
                if i in roots:
                    descend = node.child is not None
                    if descend:
                        inside, root_id = True, node.mem_id
                        _enter(tag, parts, html)
                        if html is not None:
                            html.push(tag, attrs, root=True)
                    i += 1
                elif i in above:
                    descend = True
                    i += 1
                else:
                    i += size
            elif (
                level != BARE
                and tag not in PROTECTED_TAGS
                and (
                    rule := _boilerplate(tag, attrs, s[10], s[9] if level == STRICT else 0, s[5])
                    or (level == STRICT and _residue(tag, s))
                )
                and not _protected(s, rule, *totals)
            ):
                i += size
            else:
                i += 1
                _enter(tag, parts, html)
                descend = node.child is not None
                if descend and html is not None:
                    html.push(tag, attrs)
        if descend:
            pre += tag == "pre"
            node = node.child
            continue
        while node.next is None:
            node = node.parent
            if node is None or node.mem_id == body.mem_id:
                node = None
                break
            pre -= node.tag == "pre"
            if inside:  # a block's end ends its line too
                _enter(node.tag, parts, html)
                if html is not None:
                    html.pop()
                if node.mem_id == root_id:  # a content root ends
                    inside = False
                    parts.append(SEP)
                    if html is not None:
                        html.brk()
                        for _ in CONTEXT.get(node.tag, ()):
                            html.pop()
        if node is not None:
            node = node.next
    # a soft hyphen (U+00AD) only says where a word may break: written, it would split the word
    lines = (" ".join(part.split()) for part in "".join(parts).replace(SHY, "").split(SEP))
    return "\n".join(line for line in lines if line)


def _enter(tag: str, parts: list[str], html: HtmlWriter | None) -> None:
    """The boundary an element's start or end makes: a line for a block, a space for a cell."""
    if tag in BLOCK_TAGS:
        parts.append(SEP)
        if html is not None:
            html.brk()
    elif tag in CELL_TAGS:
        parts.append(" ")
        if html is not None:
            html.space()
