"""The measure walk of the main text and the passes that complete its marks.

:func:`measure` gives one entry of counts per element under ``<body>`` and the boilerplate rule
that marks it (lib/html/boilerplate.py); then, before the content roots are located
(lib/html/roots.py), :func:`headed` marks what a boilerplate heading titles, :func:`unprotect`
clears the marks of the elements the write walk never drops and :func:`trailing` marks the
headings left over dropped blocks. The entries are in document order and each one's first field
is its subtree's size: a subtree is a slice of the table, and a sibling is found by skipping the
subtree before it whole.

lib/html/native/lexwalk.c's measure, headed, unprotect and trailing compute the same table.
"""

from __future__ import annotations

from lib.html.boilerplate import (
    HEADED,
    HEADED_MAX,
    HEADING_TAGS,
    NO_RULE,
    PROTECTED_TAGS,
    RESIDUE_MAX,
    TEASER_TAGS,
    TEASERS,
    TRAILING,
    is_boilerplate,
    is_invisible,
    is_protected,
    is_residue,
    is_teasers,
)
from lib.html.headings import BOILER_HEADINGS, HEADING_KEY_MAX, heading_key
from lib.html.roots import ancestors

#: paragraph text (outside links) is what locates the content root
PARAGRAPH_TAGS = frozenset({"p", "pre", "blockquote"})


def measure(body) -> tuple[list[list[int]], int, int, int, int]:
    """Per element under ``body`` in document order: [size, chars, link chars, paragraph chars,
    boilerplate rule, all paragraph chars, clean chars, a heading, one of TEASER_TAGS, own link
    chars, own chars] (size: the element and its indexed descendants; paragraph chars: visible
    characters outside links inside PARAGRAPH_TAGS, not counting those of elements a boilerplate
    rule matches; all paragraph chars: counting those too; clean chars: visible characters outside
    links, not counting those of elements a boilerplate rule matches; own (link) chars: visible
    (link) characters, not counting those of elements a boilerplate rule matches, which
    is_boilerplate judges); and the body's visible, paragraph, all paragraph and clean characters."""
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
            if not is_invisible(tag, attrs) and node.child is not None:
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
                s[4] = is_boilerplate(node.tag, node.attributes, s[10], s[9], s[5]) or is_residue(node.tag, s)
                if not s[4] and s[7] and s[1] < HEADING_KEY_MAX and heading_key(node.text()) in BOILER_HEADINGS:
                    s[4] = HEADED
                if not s[4] and is_teasers(stats, i):
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


def headed(stats: list[list[int]], ptotal: int, ctotal: int) -> tuple[int, int]:
    """Mark HEADED what follows a HEADED heading in its parent up to the next heading (the block it
    titles), unless that holds HEADED_MAX clean characters or more (the article goes on after a
    teaser box titled inside it), and take its paragraph and clean text out of the ancestors that
    counted it: up to the innermost one that a rule marks (which counts its own text but passes
    none up), else all of them and the body's; the body's paragraph and clean characters after."""
    for h, s in enumerate(stats):
        if s[4] != HEADED or not s[7]:
            continue
        chain = ancestors(stats, h)
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


def unprotect(stats: list[list[int]], total: int, ptotal: int, rtotal: int, ctotal: int) -> tuple[int, int]:
    """Clear the boilerplate mark of the elements that the write walk never drops (:func:`is_protected`:
    a link-heavy page wrapper, a layout class, an article container with a stray class word) and
    count their paragraph and clean text in their ancestors again; the body's paragraph and clean
    characters after.
    Such elements form a chain per criterion, each holding the next, so they are taken from the
    top down: an ancestor of one is protected too, unless its tag marks it."""
    for i, s in enumerate(stats):
        if s[4] and is_protected(s, s[4], total, rtotal):
            s[4] = NO_RULE
            for k in ancestors(stats, i):
                stats[k][3] += s[3]
                stats[k][6] += s[6]
            ptotal += s[3]
            ctotal += s[6]
    return ptotal, ctotal


def trailing(stats: list[list[int]], ctotal: int) -> None:
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
