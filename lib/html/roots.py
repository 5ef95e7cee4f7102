"""Where a page's main text is: the content roots, located in the per-element table of
lib/html/measure.py.

The content root is the deepest element outside boilerplate blocks holding most of the body's
paragraph text (or, when the paragraphs do not say where the text is, most of its clean text);
those of its siblings and its parent's siblings that hold paragraph text of their own, and a lead
before it, are written with it (lib/html/maintext.py). Two of the rules use these thresholds too
(lib/html/boilerplate.py): a ``<header>`` with as much paragraph text as a sibling root needs is
an article's lead, and an element holding more than half of the page's paragraph text is
protected when the page has enough of it to locate a root.

lib/html/native/lexwalk.c's content_root and content_roots locate the same roots
(tests/html/test_walker_tables.py holds the thresholds equal).
"""

from __future__ import annotations

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


def ancestors(stats: list[list[int]], i: int) -> list[int]:
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
    chain = ancestors(stats, root)  # the innermost last
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
