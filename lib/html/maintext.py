"""The main text of a page: visible text, boilerplate blocks left out, one block per line.

Two walks over the ``<body>`` subtree, both in document order:

1. **measure**: for every element, the visible characters under it (text nodes outside the
   invisible elements, whitespace not counted) and how many of them are inside an ``<a href>``;
2. **write**: the text of the content roots (the deepest element holding most of the paragraph
   text, and those of its siblings and its parent's siblings that have paragraph text of their
   own), of every element in them that no rule drops, a line break at each block element.

An element is dropped when

- it is never shown (:data:`~lib.html.rules.INVISIBLE_TAGS`, or the ``hidden`` attribute): always;
- a boilerplate rule matches it (a boilerplate tag or ``role``, ``aria-hidden=true``, a
  boilerplate word among its class and id tokens, most of its text is link text, or it is the
  residue of boilerplate blocks: a heading left over a dropped list), **unless it
  is protected**: ``<body>``, ``<main>`` and ``<html>`` are, and so is every element that holds
  more than half of the body's visible characters. A layout word on a page wrapper
  (``<body class="one-sidebar sidebar-second">``, ``<div id="nav-below-header">``) or an
  ASP.NET ``<form>`` around the whole page therefore never takes the page's text with it.

This module runs the two walks and writes the text (:func:`main_text`; the rule sets of its
attempts, the block and cell boundaries); the rules that classify an element are in
lib/html/boilerplate.py (the titles of boilerplate blocks in lib/html/headings.py), the measure
walk and the passes that complete its marks in lib/html/measure_walk.py, the choice of the content
roots in lib/html/roots.py; the tag sets, word lists and thresholds they read in lib/html/rules.py.
Together they are the reference (the pure-Python path, run with ``DAILYSLICE_NATIVE_HTML=off``).
Production is lib/html/native/lexwalk.c, which computes the same text from the same tree in C
with tables generated from lib/html/rules.py (tests/html/test_native_walk.py holds the two equal
on real and generated pages).
"""

from __future__ import annotations

from lib.html import link_listings
from lib.html.boilerplate import is_boilerplate, is_invisible, is_protected, is_residue
from lib.html.mainhtml import CONTEXT, HtmlWriter
from lib.html.measure_walk import headed, measure, trailing, unprotect
from lib.html.roots import ancestors, content_roots, with_lists
from lib.html.rules import BLOCK_TAGS, CELL_TAGS, PROTECTED_TAGS, SEP
from lib.html.stat import Stat

PRE_BREAKS = SEP + "\n"  # inside <pre>, a line break is a block boundary too
SHY = "\xad"  # a soft hyphen: left out of the text

#: the rule sets of main_text's attempts: all rules; without the content root and link density;
#: invisible elements only
STRICT, LENIENT, BARE = 0, 1, 2


def main_text(body, resolve=None) -> tuple[str, int] | tuple[str, int, str]:
    """The main text under ``body`` (a selectolax node), blocks on lines of their own, and the
    body's visible characters (a page whose text is empty although its body has some lost it);
    with ``resolve`` (href -> absolute URL or None), the main content as HTML third
    (lib/html/mainhtml.py), written in the same walk.

    When the rules leave nothing of a body that has text (a page of links: a listing, a shop's
    page, a directory), the text is written again with fewer rules: without the content root
    and link density (STRICT, LENIENT), and at last with only the invisible elements left out
    (BARE), so that no page loses all its words to a rule."""
    stats, total, ptotal, rtotal, ctotal = measure(body)
    ptotal, ctotal = headed(stats, ptotal, ctotal)
    ptotal, ctotal = unprotect(stats, total, ptotal, rtotal, ctotal)
    trailing(stats, ctotal)
    roots, lists = with_lists(
        stats, content_roots(stats, ptotal, ctotal), link_listings.find(stats, total, rtotal), ctotal
    )
    link_listings.keep(stats, lists)
    html = None if resolve is None else HtmlWriter(resolve)
    text = _write(body, stats, (total, rtotal), roots, STRICT, html)
    for level in (LENIENT, BARE):
        if text or not total:
            break
        html = None if resolve is None else HtmlWriter(resolve)
        text = _write(body, stats, (total, rtotal), [-1], level, html)
    return (text, total) if html is None else (text, total, html.finish())


def _write(
    body, stats: list[Stat], totals: tuple[int, int], roots: list[int], level: int, html: HtmlWriter | None = None
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
        above.update(ancestors(stats, root))
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
            attrs = node.attributes
            if is_invisible(tag, attrs):
                i += s.size
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
                    i += s.size
            elif (
                level != BARE
                and tag not in PROTECTED_TAGS
                and (
                    rule := is_boilerplate(tag, attrs, s.own, s.ownlinks if level == STRICT else 0, s.rawpar)
                    or (level == STRICT and is_residue(tag, s))
                )
                and not is_protected(s, rule, *totals)
            ):
                i += s.size
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
