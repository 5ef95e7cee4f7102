"""Which elements the main text leaves out, and which it keeps whatever marks them.

The per-element decisions that both walks of lib/html/maintext.py take with them
(:func:`is_invisible`, :func:`is_boilerplate`, :func:`is_residue`, :func:`is_protected`,
:func:`is_teasers`; the last three read the per-element table of lib/html/measure_walk.py).
lib/html/headings.py holds the titles of boilerplate blocks.

The sets, lists and thresholds are lib/html/rules.py's, from which lib/html/native/lexwalk.c's
tables are generated; lexwalk.c (production) takes the same decisions as these functions (the
reference; tests/html/test_native_walk.py holds the two equal).
"""

from __future__ import annotations

from lib.html.rules import (
    BLOCK_TAGS,
    BOILER_ROLES,
    BOILER_TAGS,
    BOILER_WORDS,
    BY_LINKS,
    BY_TAG,
    BY_WORD,
    CLASS_EXEMPT_TAGS,
    HEADED,
    INVISIBLE_TAGS,
    ITEM_META,
    LINK_DEN,
    LINK_EXEMPT_TAGS,
    LINK_NUM,
    NO_RULE,
    NOPRINT_PARTS,
    NOPRINT_WORDS,
    RESIDUE_DEN,
    RESIDUE_MAX,
    ROOT_MIN,
    SIB_DEN,
    SIB_MIN,
    SIB_NUM,
    STATE_PARTS,
    TEASER_DEN,
    TEASER_MAX,
    TEASER_N,
    TEASERS,
    TRAILING,
)
from lib.html.stat import Stat


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


def is_invisible(tag: str, attrs: dict) -> bool:
    """Never shown (INVISIBLE_TAGS, or the ``hidden`` attribute): left out by every rule set."""
    return tag in INVISIBLE_TAGS or "hidden" in attrs


def is_boilerplate(tag: str, attrs: dict, chars: int, links: int, par: int = 0) -> int:
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


def is_residue(tag: str, s: Stat) -> int:
    """BY_LINKS when the block of ``s`` is what remains of boilerplate blocks (RESIDUE_MAX) or a
    teaser list (:func:`is_teasers` marked it), TRAILING or HEADED when lib/html/measure_walk.py's
    passes marked it, ITEM_META when lib/html/link_listings.py did."""
    if s.boiler == TRAILING or s.boiler == HEADED or s.boiler == ITEM_META:
        return s.boiler
    if s.boiler == TEASERS:
        return BY_LINKS
    return BY_LINKS if tag in BLOCK_TAGS and s.clean < RESIDUE_MAX and s.clean * RESIDUE_DEN < s.chars else NO_RULE


def is_protected(s: Stat, rule: int, total: int, rtotal: int) -> bool:
    """Whether no boilerplate rule drops the element of ``s``: it holds more than half of the
    body's visible characters, or a class or id word or its links are all that mark it and it
    holds more than half of the page's paragraph text (``<div class="entry share">`` around the
    article, an article container with its share buttons and teaser lists inside), or
    lib/html/link_listings.py keeps it (an item of a listing, the chain down to its title)."""
    return s.keep > 0 or s.chars * 2 > total or (rule >= BY_WORD and rtotal >= ROOT_MIN and s.rawpar * 2 > rtotal)


def is_teasers(stats: list[Stat], i: int) -> bool:
    """Whether the element ``i`` is a teaser list (TEASER_N): its children with text are at least
    TEASER_N, all of TEASER_TAGS, each short and partly link text."""
    j, end, n = i + 1, i + stats[i].size, 0
    while j < end:
        t = stats[j]
        if t.chars:
            if not (t.item and t.chars < TEASER_MAX and t.links * TEASER_DEN >= t.chars):
                return False
            n += 1
        j += t.size
    return n >= TEASER_N
