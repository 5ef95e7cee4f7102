"""Listings made of links (issue 61): a forum's topic list, a blog's front page, a category or search page.

The rules of the main text drop link-heavy blocks (menus, related articles, pagers). A page whose
content *is* a list of links lost its items to them: a topic list's rows are a title link, an author
link, counts and a date, all link text or too short to count. This module recognises a **list of
items** in the per-element table of lib/html/measure_walk.py (:func:`is_item_list`): an element with LIST_N
children or more with text, all of one tag of LIST_TAGS (rows of the same structure), most of them
led by a link (their first text is link text: the item's title), whose link text is long enough to be
titles rather than a menu's labels (LIST_TITLE), none of them holding half of the list (a page's
layout blocks, its article among them, are no list), with some text beside the links
(LIST_CLEAN_DEN: counts, dates, teasers; a menu or a list of related links has none).

:func:`find` keeps such lists when the page may be a listing: its largest list holds 1/LISTING_DEN of
the body's visible characters and the paragraph text outside it is under ROOT_MIN characters or
1/LISTING_DEN of the list's own (no article beside it, at most a side box); the lists that hold a third
of the largest's characters or more are kept, none inside another. A list inside a block that a tag or
class word marks (a sidebar's widget, a footer) is none, nor one inside an ``<article>`` (it is that
article's: a post that is a digest of links); an inline moderation ``<form>`` around a topic list
(vBulletin, Simple Machines) does not count as such a block. lib/html/roots.py's ``with_lists`` then
decides, beside the content roots, whether the page is a listing and what its roots are; on a listing,
:func:`keep` keeps each item and the chain of elements down to its title whatever rule marks them
(KEEP_ITEM: link density, a ``<header>`` around a post's title), and beside that chain, at each level,
marks ITEM_META a block under ITEM_TEXT_MIN clean characters (a count, a date, an author, a "Read
more"), while a longer one (a teaser, a whole post on a blog's front page) is kept with its rules, and
so is an inline element beside the title (of its line: "via <a>source</a>"); a list of items inside
an item is kept the same way, with the elements down to it (a forum index: a list of categories,
each a list of forums).

The thresholds are lib/html/rules.py's; lib/html/native/lexwalk.c's ``listing_find``,
``listing_keep`` and ``with_lists`` take the same decisions (tests/html/test_listing.py and
tests/html/test_native_walk.py hold the two paths equal).
"""

from __future__ import annotations

from lib.html.rules import (
    BY_TAG,
    BY_WORD,
    ITEM_META,
    ITEM_TEXT_MIN,
    KEEP_ITEM,
    KEEP_LIST,
    LINK_EXEMPT_TAGS,
    LIST_CLEAN_DEN,
    LIST_LED_DEN,
    LIST_LED_NUM,
    LIST_N,
    LIST_TAGS,
    LIST_TITLE,
    LISTING_DEN,
    ROOT_MIN,
)
from lib.html.stat import Stat


def is_item_list(stats: list[Stat], i: int) -> bool:
    """Whether element ``i`` is a list of items: LIST_N children or more with text, all of one tag of
    LIST_TAGS, LIST_LED_NUM/LIST_LED_DEN of them led by a link, LIST_TITLE link characters a led one,
    none holding half of its text, 1/LIST_CLEAN_DEN of its text outside links."""
    j, end = i + 1, i + stats[i].size
    tag, n, led, links, most = "", 0, 0, 0, 0
    while j < end:
        t = stats[j]
        if t.chars:
            most = max(most, t.chars)
            if not tag:
                tag = t.tag
                if tag not in LIST_TAGS:
                    return False
            elif t.tag != tag:
                return False
            n += 1
            if t.lead:
                led += 1
                links += t.links
        j += t.size
    if n < LIST_N or led * LIST_LED_DEN < n * LIST_LED_NUM or links < led * LIST_TITLE:
        return False
    # items alike: none holds half of the list (a page's layout blocks, its article among them, are no list)
    return most * 2 < stats[i].chars and (stats[i].chars - stats[i].links) * LIST_CLEAN_DEN >= stats[i].chars


def _title_child(stats: list[Stat], i: int) -> int:
    """The child of element ``i`` that leads to its title: the first child with text that is led by a
    link of LIST_TITLE characters or more in all (not an avatar's initial), else the first led by a
    link (a short title); -1: none."""
    j, end, first = i + 1, i + stats[i].size, -1
    while j < end:
        t = stats[j]
        if t.chars and t.lead:
            if t.links >= LIST_TITLE:
                return j
            if first < 0:
                first = j
        j += t.size
    return first


def _keep_item(stats: list[Stat], i: int) -> None:
    """Keep item ``i`` and the chain down to its title; beside that chain, mark ITEM_META the parts
    under ITEM_TEXT_MIN clean characters."""
    while True:
        stats[i].keep = KEEP_ITEM
        title = _title_child(stats, i)
        if title < 0 or stats[title].tag in LINK_EXEMPT_TAGS:
            if title >= 0:
                stats[title].keep = KEEP_ITEM
            return
        j, end = i + 1, i + stats[i].size
        while j < end:
            t = stats[j]
            # an inline element beside the title is of its line ("via <a>source</a>", "(<a>3 pages</a>)")
            if j != title and t.chars and t.clean < ITEM_TEXT_MIN and not t.boiler and t.tag not in LINK_EXEMPT_TAGS:
                t.boiler = ITEM_META
            j += t.size
        i = title


def find(stats: list[Stat], total: int, rtotal: int) -> list[int]:
    """The lists of items of a page that may be a listing, in document order, none inside another ([]:
    the page is no listing; lib/html/roots.py's ``with_lists`` decides beside its content roots).
    ``total``, ``rtotal``: the body's visible and all paragraph characters."""
    lists, i = [], 0
    while i < len(stats):
        t = stats[i]
        if _marked(t):
            # a sidebar's widget, a footer's links: no listing in there; but engines put their topic
            # lists in an inline moderation <form> (vBulletin, Simple Machines); a list in an <article>
            # is the article's (a post that is a digest of links), written by its rules
            i += t.size
            continue
        if t.size > LIST_N and is_item_list(stats, i):
            lists.append(i)
        i += 1
    if not lists:
        return []
    big = max(lists, key=lambda i: stats[i].chars)  # the first of the largest: an outer one
    s = stats[big]
    outside = rtotal - s.rawpar  # paragraph text outside the list: an article beside it, or a side box
    if s.chars * LISTING_DEN < total or outside >= ROOT_MIN and outside * LISTING_DEN >= s.rawpar:
        return []
    chosen: list[int] = []
    for i in lists:
        if stats[i].chars * 3 < s.chars or (chosen and i < chosen[-1] + stats[chosen[-1]].size):
            continue  # small, or inside a list already chosen
        chosen.append(i)
    return chosen


def _marked(t: Stat) -> bool:
    """A block a tag or class word marks (a sidebar's widget, a footer), not an inline moderation
    ``<form>``, or an ``<article>``: no list of the listing in there (:func:`find`)."""
    return (t.boiler == BY_TAG or t.boiler == BY_WORD) and t.tag != "form" or t.tag == "article"


def _keep_list(stats: list[Stat], i: int) -> None:
    """Keep list ``i``, its items and the chain down to each item's title, and the lists of items
    inside its items (:func:`_nested`)."""
    stats[i].keep = KEEP_LIST
    j, end = i + 1, i + stats[i].size
    while j < end:
        t = stats[j]
        if t.chars and t.lead:
            _keep_item(stats, j)
            _nested(stats, j)
        elif t.chars and t.clean < ITEM_TEXT_MIN and not t.boiler:  # a header row: "Topic Replies Views"
            t.boiler = ITEM_META
        j += stats[j].size


def _nested(stats: list[Stat], i: int) -> bool:
    """Keep the lists of items inside element ``i`` and the elements down to them (a forum index: a
    list of categories, each led by its name, each a list of forums; the category's list would
    otherwise go with its rules, for its links); whether there was one."""
    found = False
    j, end = i + 1, i + stats[i].size
    while j < end:
        t = stats[j]
        if _marked(t):
            pass
        elif t.size > LIST_N and is_item_list(stats, j):
            _keep_list(stats, j)
            found = True
        elif t.size > 1 and _nested(stats, j):
            t.keep = t.keep or KEEP_ITEM
            found = True
        j += t.size
    return found


def keep(stats: list[Stat], lists: list[int]) -> None:
    """Keep the lists of a listing, their items and the chain down to each item's title, and the
    lists of items inside the items; mark ITEM_META the items' meta parts and the lists' short rows
    not led by a link (a header row)."""
    for i in lists:
        _keep_list(stats, i)
