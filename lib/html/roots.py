"""Where a page's main text is: the content roots, located in the per-element table of
lib/html/measure_walk.py.

The content root is the deepest element outside boilerplate blocks holding most of the body's
paragraph text (or, when the paragraphs do not say where the text is, most of its clean text);
those of its siblings and its parent's siblings that hold paragraph text of their own, and a lead
before it, are written with it (lib/html/maintext.py). Two of the rules use these thresholds too
(lib/html/boilerplate.py): a ``<header>`` with as much paragraph text as a sibling root needs is
an article's lead, and an element holding more than half of the page's paragraph text is
protected when the page has enough of it to locate a root.

The thresholds are lib/html/rules.py's (ROOT_*, CLEAN_*, SIB_*, LEAD_*: the comments there say
what each means). lib/html/native/lexwalk.c's content_root and content_roots locate the same roots.
"""

from __future__ import annotations

from lib.html.rules import (
    CLEAN_DEN,
    CLEAN_NUM,
    LEAD_LEVELS,
    LEAD_MIN,
    LISTING_DEN,
    ROOT_DEN,
    ROOT_MIN,
    ROOT_NUM,
    SIB_DEN,
    SIB_LEVELS,
    SIB_MIN,
    SIB_NUM,
)
from lib.html.stat import Stat


def ancestors(stats: list[Stat], i: int) -> list[int]:
    """The indexes of element ``i``'s ancestors in ``stats`` (document order, each entry's first
    field its subtree's size), the outermost first: down the chain, skipping siblings whole."""
    chain = []
    k = 0
    while k < i:
        if k + stats[k].size > i:
            chain.append(k)
            k += 1
        else:
            k += stats[k].size
    return chain


def content_root(stats: list[Stat], ptotal: int, clean: bool = False) -> int:
    """Index of the deepest element holding ROOT_NUM/ROOT_DEN of the body's paragraph text (-1:
    none, the body is the root): the article's container, whatever its markup calls it. With
    ``clean`` and the clean characters as ``ptotal``: of the body's clean text."""
    if ptotal < ROOT_MIN:
        return -1
    root = -1
    i = 0
    while i < len(stats):  # those that qualify form a chain: the last is the deepest
        s = stats[i]
        if s.boiler:  # nothing inside a boilerplate block is the root
            i += s.size
            continue
        if (s.clean if clean else s.par) * ROOT_DEN >= ptotal * ROOT_NUM:
            root = i
        i += 1
    return root


def content_roots(stats: list[Stat], ptotal: int, ctotal: int) -> list[int]:
    """The content root (:func:`content_root`) and, in document order with it, those of its
    siblings and of its parent's siblings (SIB_LEVELS) outside boilerplate blocks that carry
    paragraph text of their own (SIB_MIN), or before it, clean text (LEAD_MIN, LEAD_LEVELS); when the
    body has less than ROOT_MIN paragraph characters or their root holds less than
    CLEAN_NUM/CLEAN_DEN of the body's clean text, the root that the clean text locates, alone
    (paragraphs do not say what the page's text is); ``[-1]``: the body is the root."""
    if ptotal < ROOT_MIN:  # too few paragraphs to say where the text is
        return [content_root(stats, ctotal, clean=True)]
    root = content_root(stats, ptotal)
    if root < 0:
        return [root]
    if stats[root].clean * CLEAN_DEN < ctotal * CLEAN_NUM:
        return [content_root(stats, ctotal, clean=True)]
    chain = ancestors(stats, root)  # the innermost last
    roots = [root]
    inner = root
    for level in range(max(SIB_LEVELS, LEAD_LEVELS)):
        parent = chain.pop() if chain else -1
        j, end = (parent + 1, parent + stats[parent].size) if parent >= 0 else (0, len(stats))
        while j < end:
            s = stats[j]
            if (
                j != inner
                and not s.boiler
                and (
                    level < SIB_LEVELS
                    and s.par >= SIB_MIN
                    and s.par * SIB_DEN >= s.chars * SIB_NUM
                    or level < LEAD_LEVELS
                    and j < inner
                    and s.clean >= LEAD_MIN
                    and s.clean * SIB_DEN >= s.chars * SIB_NUM
                )
            ):
                roots.append(j)
            j += s.size
        if parent < 0:
            break
        inner = parent
    return sorted(roots)


def with_lists(stats: list[Stat], roots: list[int], lists: list[int], ctotal: int) -> tuple[list[int], list[int]]:
    """The content roots of a page whose lists of items are ``lists`` (lib/html/link_listings.py's ``find``),
    and the lists that make it a listing (``[]``: none; lib/html/link_listings.py's ``keep`` keeps them).

    A root that holds more clean text outside the lists than they hold characters (a thread and its
    related questions, an article and its teasers) makes the page no listing: ``roots``, ``[]``. Else
    the roots are the lists and, of ``roots`` (:func:`content_roots`), those that hold a list (the
    lists inside them are written with them) or clean text of 1/LISTING_DEN of the lists' characters
    (a collection's description, a category page's introduction; a forum's notice box is shorter, and
    goes). ``[-1]`` (the body: the page had too little text for a root) gives way to the lists when
    the clean text outside them (``ctotal``: the body's) is under ROOT_MIN characters and 1/LISTING_DEN
    of theirs (a topic list and its notices), and stays otherwise, the lists in it (a collection's
    description and its forum's latest posts)."""
    if not lists:
        return roots, []
    chars = sum(stats[i].chars for i in lists)
    if roots == [-1]:
        outside = max(0, ctotal - sum(stats[i].clean for i in lists))  # a list in a marked block: ctotal lacks it
        return (lists if outside < ROOT_MIN and outside * LISTING_DEN < chars else roots), lists
    for r in roots:
        inner = sum(stats[i].clean for i in lists if r < i < r + stats[r].size)
        if stats[r].clean - inner >= chars:
            return roots, []
    out = []
    for r in roots:
        if any(r < i < r + stats[r].size for i in lists):
            out.append(r)
        elif not any(i <= r < i + stats[i].size for i in lists) and stats[r].clean * LISTING_DEN >= chars:
            out.append(r)
    out += [i for i in lists if not any(r < i < r + stats[r].size for r in out)]
    return sorted(out), lists
