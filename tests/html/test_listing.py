"""Listings made of links (issue 61, lib/html/link_listings.py): a forum's topic list keeps its topics' titles,
a blog's front page its posts, on both paths (the compiled walker and the pure-Python reference)."""

from __future__ import annotations

import pytest

from lib.html import content, walk

NATIVE = walk.WALK
NOTICE = "<div class=notice><p>You are not logged in. Log in or register to post.</p></div>"
MENU = "<nav><ul>" + "".join(f"<li><a href=/f{i}>Forum {i}</a></li>" for i in range(8)) + "</ul></nav>"


def both(html: str, monkeypatch) -> dict:
    """extract's fields from the compiled walker, asserted equal to the pure-Python path's."""
    native = vars(content.extract(html, "http://h/", None, True))
    monkeypatch.setattr(walk, "WALK", None)
    python = vars(content.extract(html, "http://h/", None, True))
    monkeypatch.setattr(walk, "WALK", NATIVE)
    assert native == python
    return native


TITLES = [f"How do I configure the widget number {i} on a new install" for i in range(12)]


def topic_rows(row: str) -> str:
    return "".join(row.format(i=i, title=t) for i, t in enumerate(TITLES))


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
@pytest.mark.parametrize(
    "rows",
    [
        # a table of topics (vBulletin 3, FluxBB, SMF 2.0): title cell, poster, replies, views, last post
        "<table><tr><th>Topic</th><th>Replies</th><th>Views</th></tr>"
        + topic_rows(
            "<tr><td><a href=/t{i}>{title}</a><div class=smallfont><a href=/u{i}>user{i}</a></div></td>"
            "<td><a href=/u{i}>user{i}</a></td><td>{i}</td><td>1{i}3</td>"
            "<td>March {i}, 2021 by <a href=/u>x</a></td></tr>"
        )
        + "</table>",
        # a list of rows (phpBB's prosilver): the title and its poster in a <dt>, counts in <dd>s
        "<ul class='topiclist topics'>"
        + topic_rows(
            "<li class=row><dl><dt><a href=/t{i} class=topictitle>{title}</a><br>by <a href=/u{i}>user{i}</a></dt>"
            "<dd class=posts>{i} <dfn>Replies</dfn></dd><dd class=views>4{i} <dfn>Views</dfn></dd>"
            "<dd class=lastpost><a href=/u>someone</a> <a href=/p{i}>Mon Jan {i}, 2020</a></dd></dl></li>"
        )
        + "</ul>",
        # XenForo 2: an avatar's initial first, then the title cell, then the counts
        "<div class=structItemContainer>"
        + topic_rows(
            "<div class=structItem><div class=icon><a href=/m{i}><span>U</span></a></div>"
            "<div class=main><div class=title><a href=/t{i}>{title}</a></div>"
            "<div class=minor><a href=/m{i}>user{i}</a> <a href=/t{i}><time>Mar 3, 2021</time></a></div></div>"
            "<div class=meta><dl><dt>Replies</dt><dd>{i}</dd></dl></div></div>"
        )
        + "</div>",
    ],
    ids=["table", "phpbb", "xenforo"],
)
def test_a_topic_list_keeps_its_titles_not_its_counts(rows, monkeypatch):
    got = both(
        f"<body>{MENU}{NOTICE}<div class=forum>{rows}</div><footer>Powered by an engine</footer></body>", monkeypatch
    )
    lines = got["text"].split("\n")
    for title in TITLES:
        assert any(title in line for line in lines), title
    words = got["text"].split()
    assert "Views" not in words and "Powered" not in words and "Forum 3" not in got["text"]
    assert "logged" not in words  # the notice box is shorter than the list: not written beside it
    assert sum(len(t.split()) for t in TITLES) >= 0.8 * len(words), got["text"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_blog_front_keeps_each_posts_title_and_body(monkeypatch):
    body = "The post goes on about the release and what changed in it, at some length. " * 3
    posts = "".join(
        f"<article class=post><header><h2><a href=/p{i}>Release notes for version {i}.0 are out</a></h2>"
        f"<div class=meta>Posted on May {i} by <a href=/a>admin</a></div></header>"
        f"<div class=entry><p>{body}</p></div><footer><a href=/p{i}#c>3 comments</a></footer></article>"
        for i in range(6)
    )
    got = both(
        f"<body>{MENU}<aside><p>Subscribe to our newsletter today.</p></aside><main>{posts}</main></body>", monkeypatch
    )
    for i in range(6):
        assert f"Release notes for version {i}.0 are out" in got["text"]
    assert got["text"].count(body.strip()) == 6
    assert "comments" not in got["text"] and "Posted on" not in got["text"] and "newsletter" not in got["text"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_an_articles_related_links_do_not_make_it_a_listing(monkeypatch):
    story = "<p>" + "The council met on Tuesday to vote on the budget for the next year. " * 12 + "</p>"
    related = "<ul>" + "".join(f"<li><a href=/r{i}>{t}</a></li>" for i, t in enumerate(TITLES[:6])) + "</ul>"
    got = both(f"<body><div class=story>{story}</div><div>{related}</div></body>", monkeypatch)
    assert "council" in got["text"] and TITLES[0] not in got["text"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_forum_index_keeps_each_categorys_forums(monkeypatch):
    """A forum index is a list of categories, each led by its name and each a list of forums: the
    forums' names are kept with the categories', not dropped with the category's body for its links."""
    forums = [[f"Forum about the topic {c}{i} and its questions" for i in range(5)] for c in "ABCD"]
    cats = "".join(
        f"<div class=block><h2 class=block-header><a href=/c{c}>Category {c} of the board</a></h2>"
        "<div class=block-body>"
        + "".join(
            f"<div class=node><h3 class=node-title><a href=/f{c}{i}>{name}</a></h3>"
            f"<div class=node-stats><dl><dt>Threads</dt><dd>{i}9</dd></dl><dl><dt>Messages</dt><dd>2{i}1</dd></dl>"
            f"</div><div class=node-extra><a href=/t{c}{i}>Latest thread {c}{i}</a> <time>Jul 21</time></div></div>"
            for i, name in enumerate(forums[n])
        )
        + "</div></div>"
        for n, c in enumerate("ABCD")
    )
    got = both(
        f"<body>{MENU}{NOTICE}<div class=p-body>{cats}</div><footer>Powered by an engine</footer></body>", monkeypatch
    )
    for name in [f for fs in forums for f in fs]:
        assert name in got["text"], (name, got["text"])
    assert "Powered" not in got["text"] and "Forum 3" not in got["text"]
