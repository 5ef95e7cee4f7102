"""The measure walk of the main text and the passes that complete its marks.

:func:`measure` gives one entry of counts per element under ``<body>`` and the boilerplate rule
that marks it (lib/html/boilerplate.py); then, before the content roots are located
(lib/html/roots.py), :func:`headed` marks what a boilerplate heading titles, :func:`unprotect`
clears the marks of the elements the write walk never drops and :func:`trailing` marks the
headings left over dropped blocks. The entries (lib/html/stat.py's :class:`~lib.html.stat.Stat`) are
in document order and each one's ``size`` is its subtree's: a subtree is a slice of the table, and a
sibling is found by skipping the subtree before it whole.

This is the reference; lib/html/native/lexwalk.c's measure, headed, unprotect and trailing (the
production path) compute the same table, in a ``stat_t`` with the same field names.
"""

from __future__ import annotations

from lib.html.boilerplate import is_boilerplate, is_invisible, is_protected, is_residue, is_teasers
from lib.html.headings import BOILER_HEADINGS, heading_key
from lib.html.roots import ancestors
from lib.html.rules import (
    HEADED,
    HEADED_MAX,
    HEADING_KEY_MAX,
    HEADING_TAGS,
    NO_RULE,
    PARAGRAPH_TAGS,
    PROTECTED_TAGS,
    RESIDUE_MAX,
    TEASER_TAGS,
    TEASERS,
    TRAILING,
)
from lib.html.stat import Stat


def measure(body) -> tuple[list[Stat], int, int, int, int]:
    """A :class:`~lib.html.stat.Stat` per element under ``body`` in document order (its fields say
    what each count is), the rule that marks it set; and the body's visible, paragraph, all
    paragraph and clean characters."""
    stats: list[Stat] = []
    stack: list[tuple[int, int]] = []  # (index, 1 for a link + 2 for a paragraph) of the open elements
    total = ptotal = rtotal = ctotal = 0
    in_link = in_par = 0
    fresh = 0  # the open elements from this depth on have seen no text yet: the next text leads them
    node = body.child
    while node is not None:
        descend = False
        tag = node.tag
        if tag == "-text":
            n = len("".join((node.text_content or "").split()))
            if n:
                for k in range(fresh, len(stack)):
                    stats[stack[k][0]].lead = in_link > 0
                fresh = len(stack)
                if stack:
                    top = stats[stack[-1][0]]
                    top.chars += n
                    top.own += n
                    if in_link:
                        top.links += n
                        top.ownlinks += n
                    else:
                        top.clean += n
                        if in_par:
                            top.par += n
                            top.rawpar += n
                else:
                    total += n
                    ctotal += n
        elif node.is_element_node:
            i = len(stats)
            stats.append(Stat(heading=tag in HEADING_TAGS, item=tag in TEASER_TAGS, tag=tag))
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
            fresh = min(fresh, len(stack))
            s = stats[i]
            s.size = len(stats) - i
            in_link -= kind & 1
            in_par -= kind >> 1
            closed = node.tag
            if closed not in PROTECTED_TAGS:
                s.boiler = is_boilerplate(closed, node.attributes, s.own, s.ownlinks, s.rawpar) or is_residue(closed, s)
                if not s.boiler and s.heading and s.chars < HEADING_KEY_MAX:
                    s.boiler = HEADED if heading_key(node.text()) in BOILER_HEADINGS else NO_RULE
                if not s.boiler and is_teasers(stats, i):
                    s.boiler = TEASERS
            par, clean = (0, 0) if s.boiler else (s.par, s.clean)
            if stack:
                parent = stats[stack[-1][0]]
                parent.chars += s.chars
                parent.links += s.links
                if not s.boiler:
                    parent.ownlinks += s.ownlinks
                    parent.own += s.own
                parent.par += par
                parent.rawpar += s.rawpar
                parent.clean += clean
            else:
                total += s.chars
                ptotal += par
                rtotal += s.rawpar
                ctotal += clean
        node = node.next
    return stats, total, ptotal, rtotal, ctotal


def headed(stats: list[Stat], ptotal: int, ctotal: int) -> tuple[int, int]:
    """Mark HEADED what follows a HEADED heading in its parent up to the next heading (the block it
    titles), unless that holds HEADED_MAX clean characters or more (the article goes on after a
    teaser box titled inside it), and take its paragraph and clean text out of the ancestors that
    counted it: up to the innermost one that a rule marks (which counts its own text but passes
    none up), else all of them and the body's; the body's paragraph and clean characters after."""
    for h, s in enumerate(stats):
        if s.boiler != HEADED or not s.heading:
            continue
        chain = ancestors(stats, h)
        end = chain[-1] + stats[chain[-1]].size if chain else len(stats)
        follow, j = [], h + s.size
        while j < end and not stats[j].heading:
            if not stats[j].boiler:
                follow.append(j)
            j += stats[j].size
        if sum(stats[j].clean for j in follow) >= HEADED_MAX:
            continue
        for j in follow:
            t = stats[j]
            t.boiler = HEADED
            for a in reversed(chain):
                stats[a].par -= t.par
                stats[a].clean -= t.clean
                if stats[a].boiler:
                    break
            else:
                ptotal -= t.par
                ctotal -= t.clean
    return ptotal, ctotal


def unprotect(stats: list[Stat], total: int, ptotal: int, rtotal: int, ctotal: int) -> tuple[int, int]:
    """Clear the boilerplate mark of the elements that the write walk never drops (:func:`is_protected`:
    a link-heavy page wrapper, a layout class, an article container with a stray class word) and
    count their paragraph and clean text in their ancestors again; the body's paragraph and clean
    characters after.
    Such elements form a chain per criterion, each holding the next, so they are taken from the
    top down: an ancestor of one is protected too, unless its tag marks it."""
    for i, s in enumerate(stats):
        if s.boiler and is_protected(s, s.boiler, total, rtotal):
            s.boiler = NO_RULE
            for k in ancestors(stats, i):
                stats[k].par += s.par
                stats[k].clean += s.clean
            ptotal += s.par
            ctotal += s.clean
    return ptotal, ctotal


def trailing(stats: list[Stat], ctotal: int) -> None:
    """Mark TRAILING the headings (under RESIDUE_MAX clean characters) that only blocks a rule
    drops follow in their parent, one of them with text at least: the title of a related-articles,
    comments or sharing block whose body the rules dropped. A parent with text of its own (not
    in an element) is left alone: where that text sits is not measured."""
    for p in range(-1, len(stats)):
        if p < 0:
            j, end, direct = 0, len(stats), ctotal
        else:
            s = stats[p]
            if s.size == 1 or s.boiler:
                continue
            j, end, direct = p + 1, p + s.size, s.clean
        kids = []
        while j < end:
            kids.append(j)
            if not stats[j].boiler:
                direct -= stats[j].clean
            j += stats[j].size
        if direct:
            continue
        dropped = False
        for k in reversed(kids):
            t = stats[k]
            if t.boiler:
                dropped = dropped or t.chars > 0
            elif t.clean:
                if not (dropped and t.heading and t.clean < RESIDUE_MAX):
                    break
                t.boiler = TRAILING
