"""Which elements the main text leaves out, and which it keeps whatever marks them.

The vocabularies that classify an element (invisible, boilerplate, protected and exempt tags,
``role`` values, class and id words, block, heading and teaser tags), the thresholds of link
density, residues, teaser lists and boilerplate headings, the codes of the rule that marks an
element, and the per-element decisions that both walks of lib/html/maintext.py take with them
(:func:`is_invisible`, :func:`is_boilerplate`, :func:`is_residue`, :func:`is_protected`,
:func:`is_teasers`; the last three read the per-element table of lib/html/measure.py).
lib/html/headings.py holds the titles of boilerplate blocks.

lib/html/native/lexwalk.c holds the same sets, lists and thresholds
(tests/html/test_walker_tables.py holds them equal) and takes the same decisions.
"""

from __future__ import annotations

from lib.html.roots import ROOT_MIN, SIB_DEN, SIB_MIN, SIB_NUM

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
#: link density: an element is link furniture when more than LINK_NUM/LINK_DEN of its visible
#: characters are link text (lists of links: menus, related articles, tag clouds, pagers)
LINK_NUM, LINK_DEN = 3, 5
#: a block whose clean text is under RESIDUE_MAX characters and under 1/RESIDUE_DEN of its
#: visible text is what remains of a boilerplate block (a "Related articles" heading above a
#: link list the rules dropped): dropped too
RESIDUE_MAX, RESIDUE_DEN = 100, 3
#: a teaser list: an element with at least TEASER_N children that have text, each of them one of
#: TEASER_TAGS, under TEASER_MAX visible characters and at least 1/TEASER_DEN link text (a title
#: that links to another page, a line or two of its lead): related, latest, popular articles
TEASER_N, TEASER_MAX, TEASER_DEN = 3, 400, 5
TEASER_TAGS = frozenset({"li", "div", "article", "section"})
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


def is_invisible(tag: str, attrs: dict) -> bool:
    """Never shown (INVISIBLE_TAGS, or the ``hidden`` attribute): left out by every rule set."""
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


def is_residue(tag: str, s: list[int]) -> int:
    """BY_LINKS when the block of ``s`` is what remains of boilerplate blocks (RESIDUE_MAX) or a
    teaser list (:func:`is_teasers` marked it), TRAILING or HEADED when lib/html/measure.py's
    passes marked it."""
    if s[4] == TRAILING or s[4] == HEADED:
        return s[4]
    if s[4] == TEASERS:
        return BY_LINKS
    return BY_LINKS if tag in BLOCK_TAGS and s[6] < RESIDUE_MAX and s[6] * RESIDUE_DEN < s[1] else NO_RULE


def is_protected(s: list[int], rule: int, total: int, rtotal: int) -> bool:
    """Whether no boilerplate rule drops the element of ``s``: it holds more than half of the
    body's visible characters, or a class or id word or its links are all that mark it and it
    holds more than half of the page's paragraph text (``<div class="entry share">`` around the
    article, an article container with its share buttons and teaser lists inside)."""
    return s[1] * 2 > total or (rule >= BY_WORD and rtotal >= ROOT_MIN and s[5] * 2 > rtotal)


def is_teasers(stats: list[list[int]], i: int) -> bool:
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
