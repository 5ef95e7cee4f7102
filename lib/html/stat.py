"""One element's entry in the main text's per-element table (lib/html/measure_walk.py builds it).

:class:`Stat` has the fields of lib/html/native/lexwalk.c's ``stat_t``, by the same names, so that
the reference (Python) and the production walker (C) read alike.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Stat:
    """The counts of one element under ``<body>``, in characters (whitespace not counted)."""

    #: the element and its indexed descendants: the next sibling is this many entries on
    size: int = 1
    #: visible characters
    chars: int = 0
    #: of them, inside an ``<a href>``
    links: int = 0
    #: paragraph characters: outside links inside PARAGRAPH_TAGS, not those in blocks a rule marks
    par: int = 0
    #: the rule that marks it (lib.html.rules.NO_RULE: none)
    boiler: int = 0
    #: all paragraph characters: those in blocks a rule marks too
    rawpar: int = 0
    #: clean characters: outside links, not those in blocks a rule marks
    clean: int = 0
    #: one of HEADING_TAGS
    heading: bool = False
    #: one of TEASER_TAGS (an item of a teaser list)
    item: bool = False
    #: link characters outside blocks a rule marks (what is_boilerplate judges)
    ownlinks: int = 0
    #: visible characters outside blocks a rule marks (what is_boilerplate judges)
    own: int = 0
    #: its tag (an item of a list of items has its siblings' tag: lib/html/link_listings.py)
    tag: str = ""
    #: its first visible text is link text (an item led by a link, a title)
    lead: bool = False
    #: lib/html/link_listings.py keeps it whatever rule marks it (KEEP_ITEM: an item of a listing, or the
    #: chain down to its title) or it is the listing (KEEP_LIST)
    keep: int = 0
