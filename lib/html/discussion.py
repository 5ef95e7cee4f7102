"""Recognise a discussion page (a forum thread or a Q&A page) and where its posts are (issue 46,
point 1, first part): from the markup of the common forum engines, from schema.org microdata
(``DiscussionForumPosting``, ``Question``/``Answer``) and from JSON-LD types (``DiscussionForumPosting``,
``QAPage``).

``recognise`` says what a page is and which elements are its post bodies; lib.html.content takes
the main text of a page whose bodies it finds from those bodies (docs/maintext.md, "Discussion
pages"). A ``Comment`` alone does not make a page a discussion: articles carry their comment
sections so, and those stay to the article rules.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser


@dataclass(frozen=True)
class Discussion:
    """What ``recognise`` found: ``kind`` "forum" or "qa"; ``engine`` (an engine's name, or
    "schema.org"); ``evidence`` ("markup", "microdata" or "json-ld"); ``posts``, the CSS selector
    of the post bodies ("" when only JSON-LD names the page); ``count``, the bodies with text."""

    kind: str
    engine: str
    evidence: str
    posts: str
    count: int


# (engine, kind, the post bodies' selector): the selector must find a body with text.
# Checked on the kinds set (docs/benchmarks.md): every engine but NodeBB, Flarum and MyBB, whose
# rows follow their templates' documented class names.
ENGINES: tuple[tuple[str, str, str], ...] = (
    ("StackExchange", "qa", ".question .s-prose, .answer .s-prose"),
    ("StackExchange", "qa", ".question .post-text, .answer .post-text"),
    ("Discourse", "forum", ".crawler-post [itemprop='articleBody'], .crawler-post [itemprop='text']"),
    ("Discourse", "forum", ".topic-post .cooked, .topic-body .cooked"),
    ("XenForo", "forum", ".message-body .bbWrapper"),
    ("XenForo", "forum", "li.message .messageText"),
    ("Invision", "forum", "[data-role='commentContent']"),
    ("phpBB", "forum", ".post .postbody .content, .postbody > .content"),
    ("vBulletin", "forum", "blockquote.postcontent"),
    ("vBulletin", "forum", "div[id^='post_message_']"),
    ("bbPress", "forum", ".bbp-topic-content, .bbp-reply-content"),
    ("Simple Machines", "forum", "#forumposts .post .inner, #forumposts div.post"),
    ("Simple Machines", "forum", ".windowbg .post .inner, .windowbg2 .post .inner"),
    ("Simple Machines", "forum", "td.windowbg div.post, td.windowbg2 div.post"),
    ("MyBB", "forum", "#posts .post_body"),
    ("Vanilla", "forum", ".Discussion .Message.userContent, .Comment .Message.userContent"),
    ("Vanilla", "forum", ".MessageList .Message"),
    ("FluxBB", "forum", ".blockpost .postmsg"),
    ("reddit", "forum", "[data-test-id='post-content'] .RichTextJSON-root, [data-test-id='comment']"),
    ("NodeBB", "forum", "[component='post/content']"),
    ("Flarum", "forum", ".PostStream .Post-body"),
)
# schema.org microdata: (kind, the post bodies' selector)
MICRODATA: tuple[tuple[str, str], ...] = (
    (
        "qa",
        "[itemtype$='schema.org/Question'] [itemprop='text'], [itemtype$='schema.org/Answer'] [itemprop='text']",
    ),
    (
        "forum",
        "[itemtype$='schema.org/DiscussionForumPosting'] [itemprop='articleBody'],"
        " [itemtype$='schema.org/DiscussionForumPosting'] [itemprop='text']",
    ),
)
# every selector above in one query: one pass of lexbor's selector engine over the document tells
# the pages that can be none of them (most pages) at C speed
ANY_POSTS = ", ".join([posts for _, _, posts in ENGINES] + [posts for _, posts in MICRODATA])
_LD_TYPES = {"DiscussionForumPosting": "forum", "QAPage": "qa"}
_LD_TYPE = re.compile(r'"@type"\s*:\s*"(DiscussionForumPosting|QAPage)"')


def bodies(tree: LexborHTMLParser, posts: str) -> list:
    """The post bodies ``posts`` selects, in document order, each once (lexbor returns a node
    once per selector of a list that matches it), those without text left out."""
    seen: set[int] = set()
    out = []
    for node in tree.css(posts):
        if node.mem_id not in seen and node.text(deep=True).strip():
            seen.add(node.mem_id)
            out.append(node)
    return out


def _ld_kind(tree: LexborHTMLParser) -> str | None:
    """ "forum" or "qa" when a JSON-LD block names the page a DiscussionForumPosting or a QAPage."""
    for node in tree.css('script[type="application/ld+json"]'):
        script = node.text(deep=True) or ""
        match = _LD_TYPE.search(script)
        if match is None:
            continue
        try:
            data = json.loads(script, strict=False)
        except ValueError:
            return _LD_TYPES[match.group(1)]  # the type is named; the block's syntax is its own business
        items = data if isinstance(data, list) else [data]
        for item in items:
            kind = _LD_TYPES.get(item.get("@type", "")) if isinstance(item, dict) else None
            if kind:
                return kind
    return None


def with_bodies(tree: LexborHTMLParser) -> Discussion | None:
    """The page as a discussion whose post bodies are known, or None: an engine's post markup with
    at least one body of text first, then schema.org microdata (what the main text needs: a
    JSON-LD type names no bodies, and looking for one costs a query of its own)."""
    if tree.css_first(ANY_POSTS) is None:
        return None
    for engine, kind, posts in ENGINES:
        count = len(bodies(tree, posts))
        if count:
            return Discussion(kind, engine, "markup", posts, count)
    for kind, posts in MICRODATA:
        count = len(bodies(tree, posts))
        if count:
            return Discussion(kind, "schema.org", "microdata", posts, count)
    return None


def recognise(tree: LexborHTMLParser) -> Discussion | None:
    """The page as a discussion, or None: :func:`with_bodies`, then a JSON-LD type."""
    found = with_bodies(tree)
    if found is not None:
        return found
    kind = _ld_kind(tree)
    return Discussion(kind, "schema.org", "json-ld", "", 0) if kind else None
