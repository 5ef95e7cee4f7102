"""The main text's rules as data: every tag set, word list and threshold, in one place.

Two implementations take their decisions from these values:

- **production**: the compiled walker ``lib/html/native/lexwalk.c``, which preprocess runs (lib/html/walk.py);
  its tables are not written by hand but generated from this module into
  ``lib/html/native/lexwalk_rules.h`` (``scripts/gen_lexwalk_rules.py``, which ``setup.py build_ext`` runs);
- **reference**: the pure-Python path (lib/html/maintext.py and the modules it names), which reads this
  module; slower, used where the walker cannot be (``DAILYSLICE_NATIVE_HTML=off``) and to hold the walker
  to (tests/html/test_native_walk.py).

The titles of boilerplate blocks are lib/html/headings.py's (the walker reads them from there when it is
imported). This module imports nothing: the generator loads it by path, before anything is built.
A change here needs a rebuild; until then lib/html/walk.py does not use a walker built from other rules
(:func:`digest`, the ``RULES`` of the built module).
"""

from __future__ import annotations

import hashlib

# ---------------------------------------------------------------- tag sets (lib/html/boilerplate.py)
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
#: never dropped by a boilerplate rule
PROTECTED_TAGS = frozenset({"html", "body", "main"})
#: exempt from the class/id rule (an <article class="post-nav"> is still the article)
CLASS_EXEMPT_TAGS = frozenset({"main", "article"})
#: a line break at their start and end in the written text
# fmt: off
BLOCK_TAGS = frozenset({
    "p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
    "h6", "br", "tr", "table", "caption", "blockquote", "pre", "figure", "figcaption", "hr", "address",
    "details", "summary", "center", "nav", "header", "footer", "aside", "form", "fieldset", "menu", "dialog"
})
# fmt: on
#: table cells: a space, not a line, between them (a table row is one line)
CELL_TAGS = frozenset({"td", "th"})
#: paragraph text (outside links) is what locates the content root
PARAGRAPH_TAGS = frozenset({"p", "pre", "blockquote"})
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: the items of a teaser list (TEASER_N)
TEASER_TAGS = frozenset({"li", "div", "article", "section"})
#: the items of a list of items (LIST_N, lib/html/link_listings.py): a forum's topic rows, a blog's posts, the
#: results of a search (bbPress writes each topic as a <ul>, phpBB as a <dl> in an <li>)
LIST_TAGS = frozenset({"li", "tr", "div", "article", "section", "ul", "dl"})
#: elements never judged by link density (the link itself, inline phrasing: inside a link, all of
#: its text is link text, as a <ruby> word that links to its glossary entry)
# fmt: off
LINK_EXEMPT_TAGS = frozenset({
    "a", "span", "b", "i", "em", "strong", "u", "small", "font", "abbr", "cite", "q", "sup", "sub", "code", "ruby",
    "rb", "rt", "rp", "rtc", "mark", "time", "s", "del", "ins", "kbd", "samp", "var", "dfn", "bdi", "bdo", "data",
    "tt", "big", "strike", "nobr", "label"
})
# fmt: on

# ---------------------------------------------------------------- word lists (lib/html/boilerplate.py)
#: ``role`` values of page furniture
BOILER_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search"})
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

# ---------------------------------------------------------------- thresholds
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
#: a list of items (lib/html/link_listings.py): an element with LIST_N children or more with text, all of one
#: tag of LIST_TAGS, LIST_LED_NUM/LIST_LED_DEN of them led by a link (their first text is link text)
#: whose link text is LIST_TITLE characters a led item on average (titles, not a menu's labels), none
#: holding half of the list's text (items alike, not a page's layout blocks with its article); a
#: page is a listing when such a list holds 1/LISTING_DEN of the body's visible characters and the
#: paragraph text outside it is under ROOT_MIN characters or 1/LISTING_DEN of the list's own (no
#: article beside it, at most a side box); a page too short for
#: a content root has its lists for roots when the clean text outside them is under ROOT_MIN characters
#: and 1/LISTING_DEN of theirs (else the body stays the root, the lists in it). In an item, the parts
#: beside its title under ITEM_TEXT_MIN clean characters (counts, dates, authors) are ITEM_META
LIST_N, LIST_LED_NUM, LIST_LED_DEN, LIST_TITLE, LISTING_DEN, ITEM_TEXT_MIN = 4, 4, 5, 15, 4, 60
#: ... and whose text is 1/LIST_CLEAN_DEN outside links at least: a topic's counts and dates, a post's teaser
#: (a menu or a list of related links is links alone)
LIST_CLEAN_DEN = 10
#: what lib/html/link_listings.py keeps whatever rule marks it: an item or the chain down to its title, a listing
KEEP_ITEM, KEEP_LIST = 1, 2
#: headings of HEADING_KEY_MAX visible characters or more are titles of content, not of a block
#: (lib/html/headings.py); what follows a boilerplate heading in its parent, up to the next heading,
#: goes with it unless it holds HEADED_MAX clean characters or more
HEADING_KEY_MAX, HEADED_MAX = 64, 800
#: the content root holds ROOT_NUM/ROOT_DEN of the body's paragraph text, when it has ROOT_MIN characters
#: (lib/html/roots.py)
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

# ---------------------------------------------------------------- codes
#: what marks an element as boilerplate: no rule, its tag (or role, aria-hidden), a class or id
#: word, its links (link density, or a residue of boilerplate blocks); TRAILING: a heading that only
#: dropped blocks follow in its parent; TEASERS: a teaser list; HEADED: a heading whose whole text
#: is one of BOILER_HEADINGS, or what it titles; ITEM_META: what an item of a listing shows beside its
#: title and teaser (counts, dates, authors: lib/html/link_listings.py)
NO_RULE, BY_TAG, BY_WORD, BY_LINKS, TRAILING, TEASERS, HEADED, ITEM_META = range(8)
#: a block boundary in the written text
SEP = "\x1e"

# ---------------------------------------------------------------- main_html (lib/html/mainhtml.py)
#: structural tags kept, by how they break the text: a line (block), a cell (td, th), nothing
HTML_BLOCK, HTML_CELL, HTML_INLINE = 1, 2, 3
HTML_TAGS = {
    **dict.fromkeys(
        ("p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "table", "caption", "tr", "pre", "blockquote"),
        HTML_BLOCK,
    ),
    "td": HTML_CELL,
    "th": HTML_CELL,
    "code": HTML_INLINE,
    "a": HTML_INLINE,
}
#: what a content root needs around it to be where its tag may stand (a <tr> outside a table
#: is dropped by an HTML parser)
HTML_CONTEXT = {
    "tr": ("table",),
    "td": ("table", "tr"),
    "th": ("table", "tr"),
    "li": ("ul",),
    "thead": ("table",),
    "tbody": ("table",),
    "tfoot": ("table",),
    "caption": ("table",),
}

#: the names of the tables above, as the generator writes them into C (and :func:`digest` hashes them)
TAG_SETS = (
    "INVISIBLE_TAGS",
    "BOILER_TAGS",
    "PROTECTED_TAGS",
    "CLASS_EXEMPT_TAGS",
    "BLOCK_TAGS",
    "CELL_TAGS",
    "PARAGRAPH_TAGS",
    "HEADING_TAGS",
    "TEASER_TAGS",
    "LIST_TAGS",
    "LINK_EXEMPT_TAGS",
)
WORD_LISTS = ("BOILER_ROLES", "BOILER_WORDS", "NOPRINT_WORDS", "NOPRINT_PARTS", "STATE_PARTS")
THRESHOLDS = (
    "LINK_NUM",
    "LINK_DEN",
    "RESIDUE_MAX",
    "RESIDUE_DEN",
    "TEASER_N",
    "TEASER_MAX",
    "TEASER_DEN",
    "LIST_N",
    "LIST_LED_NUM",
    "LIST_LED_DEN",
    "LIST_TITLE",
    "LISTING_DEN",
    "ITEM_TEXT_MIN",
    "LIST_CLEAN_DEN",
    "KEEP_ITEM",
    "KEEP_LIST",
    "HEADING_KEY_MAX",
    "HEADED_MAX",
    "ROOT_NUM",
    "ROOT_DEN",
    "ROOT_MIN",
    "CLEAN_NUM",
    "CLEAN_DEN",
    "SIB_MIN",
    "SIB_NUM",
    "SIB_DEN",
    "SIB_LEVELS",
    "LEAD_MIN",
    "LEAD_LEVELS",
)
CODES = ("NO_RULE", "BY_TAG", "BY_WORD", "BY_LINKS", "TRAILING", "TEASERS", "HEADED", "ITEM_META")


def digest() -> str:
    """A short hash of every rule above: the walker built from them carries it (``RULES``), so that
    one built from other rules is told apart from a current one."""
    g = globals()
    parts = [f"{name}={sorted(g[name])}" for name in TAG_SETS + WORD_LISTS]
    parts += [f"{name}={g[name]}" for name in THRESHOLDS + CODES]
    parts += [f"SEP={ord(SEP)}", f"HTML_TAGS={sorted(HTML_TAGS.items())}"]
    parts.append(f"HTML_CONTEXT={sorted(HTML_CONTEXT.items())}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
