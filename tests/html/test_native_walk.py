"""The compiled DOM walker (lib/html/native/lexwalk.c, production) gives what the pure-Python path
(the reference) gives.

The Python path is held to the frozen old extraction by test_preprocess_equivalence.py; here
the two paths of today's ``extract`` are held to each other: on real pages (the heavy pages of
the peer benchmark, every HTML record of the shared samples and the ScrapingHub pages of
../shared/extraction), on generated documents full of what the rules look at (every tag, word
and role of lib/html/rules.py, drop tags and attributes, boilerplate tokens in any case and
with Unicode whitespace, block tags, nested and SVG links, img alt, SEP and other control
characters in text), and on a deeply nested one.
"""

from __future__ import annotations

import importlib
import itertools
import random
import runpy

import pytest
import selectolax
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from lib.html import content, headings, rules, walk
from tests.conftest import ROOT, SHARED

NATIVE = walk.WALK


@pytest.fixture
def python_path(monkeypatch):
    """Run extract's pure-Python path inside the test."""

    def run(*args):
        monkeypatch.setattr(walk, "WALK", None)
        try:
            return vars(content.extract(*args))
        finally:
            monkeypatch.setattr(walk, "WALK", NATIVE)

    return run


def test_the_walker_is_built_and_used():
    # pip install -e . compiles it; a silent fallback would leave the fast path untested
    assert NATIVE is not None, walk.status()
    assert walk.status().startswith("compiled walker")


def both(html: str, url: str, python_path, main_html: bool = False) -> tuple[dict, dict]:
    return vars(content.extract(html, url, None, main_html)), python_path(html, url, None, main_html)


#: the real pages that scripts/asan_walk.py runs the instrumented walker over (make asan)
real_pages = runpy.run_path(str(ROOT / "scripts" / "asan_walk.py"), run_name="asan_walk")["real_pages"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built (test_the_walker_is_built_and_used fails)")
def test_identical_on_real_pages(corpus, python_path):
    docs = real_pages(SHARED)  # the heavy pages, the corpus's HTML records, the ScrapingHub pages
    assert len(docs) > 400
    links = anchors = 0
    for url, html in docs:  # main_html too: the text the walk writes with it is the text without it
        got, want = both(html, url, python_path, main_html=True)
        assert got == want, url
        assert got["text"] == content.extract(html, url).text, url
        links += len(got["links"])
        anchors += got["main_html"].count("<a href=")
    assert links > 15000  # the comparison saw real link lists, not empty ones
    assert anchors > 1000  # and main_html with links in it


# ---------------------------------------------------------------- generated documents
WORDS = [
    "nav",
    "NAV",
    "Navbar",
    "navigation",
    "menu",
    "menu-top",
    "breadcrumbs",
    "breadcrumbX",
    "footer-x",
    "sidebar",
    "cookie",
    "S\u212aIP-LINK",
    "cookies",
    "consent",
    "banner",
    "share-it",
    "social",
    "skip-link",
    "related",
    "xnav",
    "has-nav",
    "main",
    "wrap",
    "N\u0130V",
    "nav\u0130",
    "navé",
    "post-comments",
    "comment_list",
    "no-sidebar",
    "x-ad",
    "ad-",
    "-Tags",
    "is-menu",
    "and-w-sidebar",
    "page-with-nav",
    "nav-is-open",
    "w-menu",
    "a-b-c-nav",
    "sidebar-" + "x" * 300,
    "y" * 300 + "_nav",
    "k\u212aad",
]
SPACES = [" ", "\t", "\n", "\xa0", "\u2003", "\u3000", "\x1c", "\u200b", "  "]
# fmt: off
ATTRS = [
    "role=navigation", "role=dialog role=banner", "role=dialog aria-hidden=true", "role=Navigation",
    "role=banner", "role=search", "role=main", "ROLE=contentinfo", "role=complementary", "aria-hidden=true",
    "aria-hidden=TRUE", "aria-hidden=false", "hidden", "HIDDEN=no", "href='/x'", "href='http://h/y#f'",
    "href='javascript:x'", "href=''", "href", "href=' /s p '", "xlink:href='/svg'", "alt='alt  text'", "alt",
    "lang=de", "class", "id=''"
]
# fmt: on
# fmt: off
TAGS = [
    "div", "p", "span", "a", "b", "img", "br", "li", "ul", "td", "tr", "table", "h2", "pre", "section",
    "article", "th", "caption", "code", "ol", "h1", "blockquote", "tbody", "main", "nav", "header", "footer",
    "aside", "form", "script", "style", "noscript", "template", "svg", "math", "iframe", "button", "select",
    "textarea", "dialog", "menu", "center", "summary", "x-custom", "title", "body", "html", "head", "meta",
    "object", "canvas", "q", "ruby", "rt", "mark"
]
# fmt: on
TEXTS = [
    "word",
    "Wörter",
    "x",
    "\x1e",
    "a\nb",
    "\r\n",
    "' \" & >",
    "&#x1e;",
    "&nbsp;",
    "&amp;",
    "<!-- c -->",
    "<![CDATA[cd]]>",
    "\x00",
    "\u2028",
    "1 < 2",
    "é",
    "\u212a",
    "Related",  # BOILER_HEADINGS, as a heading's whole text or a part of it
    "ÄHNLICHE Beiträge:",
    " Über den\xa0AUTOR ",
    "À PROPOS DE L'AUTEUR",
    "Ita\xadli&shy;ens",  # soft hyphens, left out of the text
    "&shy;",
    "A sentence long enough to weigh as paragraph text, " * 3,
] + SPACES


# every tag, word and role of lib/html/rules.py too, so that a rule added there is drawn here
RULE_TAGS = sorted(
    set().union(*(getattr(rules, name) for name in rules.TAG_SETS), rules.HTML_TAGS, rules.HTML_CONTEXT) - {"html"}
)
RULE_WORDS = sorted(rules.BOILER_WORDS | rules.STATE_PARTS | rules.NOPRINT_WORDS | rules.NOPRINT_PARTS | {"print"})
RULE_ATTRS = [f"role={role}" for role in sorted(rules.BOILER_ROLES)]


def document(rnd: random.Random) -> str:
    """A random document of the parts the rules look at, closed or not, nested up to 6 deep."""

    def word() -> str:
        if rnd.random() < 0.5:
            return rnd.choice(WORDS)
        return rnd.choice(["-", "_"]).join(rnd.choices(RULE_WORDS, k=rnd.randint(1, 3)))

    def attr() -> str:
        if rnd.random() < 0.5:
            return rnd.choice(ATTRS) if rnd.random() < 0.8 else rnd.choice(RULE_ATTRS)
        value = rnd.choice(SPACES).join(word() for _ in range(rnd.randint(1, 3)))
        return rnd.choice(["class='{}'", "id='{}'", 'CLASS="{}"']).format(value)

    def text() -> str:
        return "".join(rnd.choices(TEXTS, k=rnd.randint(0, 5)))

    def element(depth: int) -> str:
        tag = rnd.choice(TAGS) if rnd.random() < 0.7 else rnd.choice(RULE_TAGS)
        parts = [text()]
        for _ in range(rnd.randint(0, 3) if depth < 6 else 0):
            parts += [element(depth + 1), text()]
        close = rnd.choice([f"</{tag}>", f"</{tag}>", ""])
        return f"<{tag} {' '.join(attr() for _ in range(rnd.randint(0, 3)))}>{''.join(parts)}{close}"

    head = rnd.choice(["", "<!doctype html>", "<html><head><title>t</title></head>"])
    body = rnd.choice(["<body>", "<body class=nav>", "<body hidden>", "<body id=main>", ""])
    return head + body + "".join(element(0) for _ in range(rnd.randint(0, 4)))


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
@settings(max_examples=2000, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_identical_on_generated_documents(seed):
    html = document(random.Random(seed))  # a seed, not Hypothesis' randoms: each of their calls is a draw
    with_html = seed % 2 == 0  # main_html written alongside (the text must not change) or not
    got = vars(content.extract(html, "http://h.example/a/b", None, with_html))
    walk.WALK = None
    try:
        want = vars(content.extract(html, "http://h.example/a/b", None, with_html))
    finally:
        walk.WALK = NATIVE
    assert got == want, html


# fmt: off
HREF_PARTS = [
    "/", ".", "?", "#", ";", ":", "\\", "@", "[", "]", "%", "a", "Z", "9", "-", " ", "\t", "\n", "\r", "\x00",
    "\xa0", "\u3000", "\x1c", "é", "//", "..", "/./", "http://", "HTTPS://", "hTtP:", "javascript:", "mailto:",
    "#x", "&amp;", "&#x20;", "\u212a"
]
# fmt: on
# fmt: off
BASES = [
    "http://h.example/a/b.html?q=1#f", "https://H.Example:443/", "http://h.example", "http://u@h:8/x/",
    "https://h.example/a;p/b;q?x", "http://[::1]:80/v6/", "ftp://h/x", "notaurl", "http://h.example/\udcff/"
]
# fmt: on


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_links_identical_on_generated_hrefs(seed):
    # the walker's own resolution (LinkResolver's fast paths in C) against LinkResolver itself
    rnd = random.Random(seed)
    hrefs = ["".join(rnd.choices(HREF_PARTS, k=rnd.randint(0, 8))) for _ in range(20)]
    base = rnd.choice(BASES)
    html = "<body>" + "".join(f'<a href="{h.replace(chr(34), "&quot;")}">t{i}</a>' for i, h in enumerate(hrefs))
    html += rnd.choice(["", "<base href='/other/'>", "<base href='https://b.example/x/'>"])
    got = vars(content.extract(html, base))
    walk.WALK = None
    try:
        want = vars(content.extract(html, base))
    finally:
        walk.WALK = NATIVE
    assert got == want, (base, hrefs)


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
@pytest.mark.parametrize(
    "html, text, links",
    [
        # no rule drops <body> (nor a layout word on it, nor the page-wide form of ASP.NET)
        ("<body hidden><p>x</p><a href=/y>y</a>", "x\ny", [("http://h/y", "y", None)]),
        ("<body class='a NAV-top'><p>x</p>", "x", []),
        ("<body><form id=aspnetForm><div class=menu>m</div><p>the text</p></form><nav>n</nav>", "the text", []),
        (
            "<body><div class='S\u212aIP-LINK'>k</div><div>a\x1eb</div><a href=/z><b>c</b>d<i>e</i></a>",
            "a\nb\ncde",
            [("http://h/z", "c d e", None)],
        ),
        (
            "<body><svg><a xlink:href=/s>s</a><a href=/t>t</a></svg><p>p\xa0 q\u3000r</p>",
            "p q r",
            [("http://h/t", "t", None)],
        ),
        ("<body><a href=/i><img><img alt=' one  two '><img alt=three></a>", "", [("http://h/i", "one two", None)]),
        # rel kept as its nofollow/ugc/sponsored tokens; a link followed once on the page is followed
        (
            "<body><a href=/n rel='NoFollow noopener'>n</a><a href=/u rel='ugc  sponsored'>u</a><a href=/o rel=me>o</a>"
            "<a href=/f rel=nofollow>f</a><a href=/f>f</a>",
            "nuoff",
            [
                ("http://h/n", "n", "nofollow"),
                ("http://h/u", "u", "ugc sponsored"),
                ("http://h/o", "o", None),
                ("http://h/f", "f", None),
            ],
        ),
    ],
)
def test_cases(html, text, links, python_path):
    got, want = both(html, "http://h/", python_path)
    assert got == want
    assert (got["text"], got["links"]) == (text, links)


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_content_root_inside_a_link_heavy_page_wrapper(python_path):
    # the wrapper holds most of the page and is mostly link text, so the write walk keeps it; its
    # paragraphs must then locate the content root too (they used to count for nothing, the root
    # was the whole body and the text outside the wrapper came with the article)
    menu = "<ul>" + "".join(f"<li><a href=/s{i}>Section headline number {i}</a></li>" for i in range(60)) + "</ul>"
    first, second = "The council met on Tuesday to vote on the budget. " * 10, "It passed by seven votes to two. " * 10
    html = (
        f"<body><div class=content>{menu}<div><p>{first}</p><p>{second}</p></div></div>"
        "<div>Stray text outside the wrapper</div>"
    )
    got, want = both(html, "http://h/", python_path)
    assert got == want
    assert got["text"] == f"{first.strip()}\n{second.strip()}"


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_siblings_of_the_content_root(python_path):
    # the root holds 5/6 of the paragraph text; its siblings with paragraph text of their own
    # (a lead in its own <div>, the article's second half after an ad slot) come with it, a
    # teaser list beside them does not; main_html holds the same blocks
    lead, body, tail = "A lead paragraph of the story. " * 5, "The body of the story goes on. " * 40, "The end. " * 20
    teasers = "".join(f"<li><a href=/t{i}>Another story {i}</a></li>" for i in range(10))
    html = (
        f"<body><nav><a href=/>Home</a></nav><div><div class=lead><p>{lead}</p></div><div><p>{body}</p></div>"
        f"<div><ul>{teasers}</ul></div><div><p>{tail}</p></div></div><p>Stray words outside</p>"
    )
    got, want = both(html, "http://h/", python_path, True)
    assert got == want
    assert got["text"] == "\n".join(x.strip() for x in (lead, body, tail))
    assert got["main_html"] == "".join(f"<p>{x.strip()}</p>" for x in (lead, body, tail))


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_root_by_clean_text_when_the_article_is_not_in_paragraphs(python_path):
    # the article's text sits in <div>s; the only <p>s are a side box's: the paragraphs' root
    # holds less than a quarter of the page's clean text, so the clean text locates the root
    side = "Subscribe to our print edition today and save. " * 14
    article = "".join(f"<div>Sentence {i} of the article, in a div of its own.</div>" for i in range(80))
    html = f"<body><div><div class=article>{article}</div><div class=box><p>{side}</p></div></div>"
    got, want = both(html, "http://h/", python_path)
    assert got == want
    assert got["text"] == "\n".join(f"Sentence {i} of the article, in a div of its own." for i in range(80))


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_residue_of_a_boilerplate_block(python_path):
    # a heading over a comment list that a class word drops: what remains of the block (under a
    # third of its text, under 100 characters) is dropped with it; a block with a short text of
    # its own and a link stays
    story = "The story itself is told in these words. " * 20
    comments = "<div><h3>Three comments</h3><ol class=commentlist>" + "<li>I read it and I disagree.</li>" * 3
    kept = "<div><p>Kept words here.</p><a href=/x>x</a></div>"
    html = f"<body><div class=post><p>{story}</p>{kept}{comments}</ol></div><p>{story}</p></div>"
    got, want = both(html, "http://h/", python_path)
    assert got == want
    assert got["text"] == f"{story.strip()}\nKept words here.\nx\n{story.strip()}"


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_heading_that_only_dropped_blocks_follow(python_path):
    # the title of a related-articles block in the article's container, the list a class word
    # drops: the heading goes too; a heading followed by text stays, and so does a last heading
    # with only empty blocks after it
    story = "The story itself is told in these words. " * 20
    related = "<ul class=related>" + "".join(f"<li><a href=/r{i}>Story {i}</a> and more</li>" for i in range(5))
    start = f"<body><div class=post><h2>The story</h2><p>{story}</p><p>{story}</p><h3>More on this</h3>"
    for html, last in (
        (f"{start}{related}</ul><div class=share><a href=/s>Share</a></div></div>", []),
        (f"{start}<div></div></div>", ["More on this"]),
    ):
        got, want = both(html, "http://h/", python_path, True)
        assert got == want
        assert got["text"].split("\n") == ["The story", story.strip(), story.strip(), *last]
        assert got["main_html"].endswith(f"</p>{''.join(f'<h3>{x}</h3>' for x in last)}")


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_boilerplate_heading_and_the_block_it_titles(python_path):
    # a heading whose whole text titles a boilerplate block ("Ähnliche Beiträge", any case, a
    # colon after it) goes with what follows it in its parent up to the next heading; a heading
    # that only begins so stays, and a titled box inside the article is dropped alone when the
    # article goes on after it (HEADED_MAX clean characters)
    story = "The story itself is told in these words. " * 20
    teasers = "<ul><li>Another story</li><li>And one more</li></ul><p>Written by the desk.</p>"
    html = (
        f"<body><div class=post><h2>The story</h2><p>{story}</p><p>{story}</p><h3>ÄHNLICHE  Beiträge:</h3>{teasers}"
        f"<h3>Related matters of state</h3><p>Kept words here.</p></div>"
    )
    got, want = both(html, "http://h/", python_path, True)
    assert got == want
    assert got["text"].split("\n") == [
        "The story",
        story.strip(),
        story.strip(),
        "Related matters of state",
        "Kept words here.",
    ]
    html = f"<body><div class=post><p>{story}</p><h4>Auch interessant</h4>{teasers}<p>{story}</p><p>{story}</p></div>"
    got, want = both(html, "http://h/", python_path, True)
    assert got == want
    assert got["text"].split("\n") == [
        story.strip(),
        "Another story",
        "And one more",
        "Written by the desk.",
        story.strip(),
        story.strip(),
    ]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_boilerplate_heading_inside_a_block_a_rule_marks(python_path):
    # the paragraph an author heading titles inside a block that a class word marks (then
    # unprotected: it holds the page's text) was never counted in the body's paragraph text, so
    # it leaves only the ancestors up to that block: the body's paragraph text stays 0, not -5
    # (the compiled walk's unsigned total wrapped, took the body as the root and kept the sidebar;
    # generated seed 230875)
    story = "The story itself is told in these words. " * 20
    html = f"<body><div>Sidebar words</div><div class=social><h2>About the author</h2><p>A bio.</p>{story}</div>"
    got, want = both(html, "http://h/", python_path)
    assert got == want
    assert got["text"] == story.strip()


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_ruby_words_in_glossary_links(python_path):
    # a word that links to its glossary entry, with its reading over it (<ruby>, furigana): the
    # <ruby> inside the link is not judged by link density (inline phrasing), and the reading
    # (<rt>, <rp>) is left out, so the sentence's words stay whole
    gloss = "<a href='javascript:void(0)' class=dicWin><ruby><span class=under>{}</span><rt>{}</rt></ruby></a>"
    child = "<ruby>子<rp>(</rp><rt>こ</rt><rp>)</rp></ruby>"
    law = "<ruby>法律<rt>ほうりつ</rt></ruby>"
    abuse, parent = gloss.format("虐待", "ぎゃくたい"), gloss.format("親", "おや")
    sentence = f"<p>{child}どもへの{abuse}をなくすための{law}ができて、{parent}が子どもを教育するために。</p>"
    got, want = both("<body><div>" + sentence * 12 + "</div>", "http://h/", python_path, True)
    assert got == want
    line = "子どもへの虐待をなくすための法律ができて、親が子どもを教育するために。"
    assert got["text"].split("\n") == [line] * 12
    assert "<rt>" not in got["main_html"] and "ぎゃくたい" not in got["main_html"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_link_density_counts_what_the_rules_leave(python_path):
    # an article container whose links are all in a related-articles list that a class word drops
    # is judged by what remains (its title and paragraph), not dropped as link-heavy with its story
    story = "The story itself is told in these words, and they are few. " * 3
    links = "".join(
        f"<li><a href=/a{i}>Another story that the desk wrote about the town {i}</a></li>" for i in range(12)
    )
    other = "The desk of the paper sits in the old town hall and answers every letter. " * 12
    html = f"<body><div class=post><h1>The story</h1><p>{story}</p><div class=related><ul>{links}</ul></div></div>"
    got, want = both(html + f"<div>{other}</div>", "http://h/", python_path, True)
    assert got == want
    assert got["text"].split("\n") == ["The story", story.strip(), other.strip()]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_page_in_a_noscript(python_path):
    # the main text is short and a <noscript> holds more text than the body shows: it is read as
    # part of the page, in both walks. Swallowed: <noscript><div id=nojs></noscript> ... lexbor
    # parses without scripts, so the open <div> keeps the page in the first <noscript> (nothing
    # visible). Templated: a post that a script writes, copied for readers without scripts. A
    # script-run page's short notice stays out: no page is in it
    story = "The story itself is told in these words, and they are its own. " * 12
    swallowed = (
        f"<body><noscript><div id=nojs></noscript><div class=page><nav><a href=/>Home</a></nav><p>{story}</p></div>"
        "<noscript></div></noscript><script>var x = 1;</script>"
    )
    months = "".join(f"<li><a href=/{i}>Month {i}</a></li>" for i in range(12))
    templated = (
        f"<body><h1>A blog</h1><div class=post><h2>The story</h2><script type=text/template><p>{story}</p></script>"
        f"<noscript><p>{story}</p></noscript></div><ul>{months}</ul>"
    )
    notice = "<body><noscript>You need to enable JavaScript to run this app.</noscript><div id=root></div>"
    words = len("".join(story.split()))
    cases = [(swallowed, story.strip(), words + len("Home")), (templated, story.strip(), None), (notice, "", 0)]
    for (html, text, body_chars), main_html in itertools.product(cases, (False, True)):
        got, want = both(html, "http://h/", python_path, main_html)
        assert got == want
        assert got["text"] == text
        assert body_chars is None or got["body_chars"] == body_chars


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_soft_hyphens_are_left_out_of_the_text(python_path):
    # a soft hyphen (U+00AD, &shy;) only says where a word may break: the text holds the word whole
    # (its index term), a line of soft hyphens alone is no line; main_html keeps them for display
    words = "Schon im Mit\xadtel\xadal\xadter war der St. Mag&shy;da&shy;le&shy;ner das Aus\xadhän\xadge\xadschild. "
    html = f"<body><div><p>{words * 6}</p><p>\xad &shy; \xad</p><pre>{words * 6}Ita\xadli\xad\nens</pre></div>"
    got, want = both(html, "http://h/", python_path, True)
    assert got == want
    line = " ".join(["Schon im Mittelalter war der St. Magdalener das Aushängeschild."] * 6)
    assert got["text"].split("\n") == [line, line + " Itali", "ens"]
    assert "\xad" in got["main_html"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_every_boilerplate_heading_of_the_python_list(python_path):
    # the compiled walk reads lib.html.headings.BOILER_HEADINGS when it is imported: every phrase
    # drops its heading and the paragraph it titles in both walks; a heading of the list's shape
    # that is not in it keeps both
    story = "The story itself is told in these words. " * 20
    after = "The desk of the paper wrote these words after the story, and they are its own. " * 3
    page = "<body><div class=post><p>{}</p><h3>{}:</h3><p>{}</p></div>"
    for phrase in sorted(headings.BOILER_HEADINGS):
        got, want = both(page.format(story, phrase, after), "http://h/", python_path)
        assert got == want, phrase
        assert got["text"] == story.strip(), phrase
    got, want = both(page.format(story, "The desk", after), "http://h/", python_path)
    assert got == want
    assert got["text"].split("\n") == [story.strip(), "The desk:", after.strip()]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_deep_documents(python_path):
    # 20,000 nested elements (lexbor's parser is quadratic in depth: deeper costs seconds);
    # the walks are loops, not recursion, so depth costs them no stack
    # (a link of one character: the innermost blocks are not mostly link text)
    deep = "<body>" + "<div><span>w " * 10000 + "<a href=/d>d</a>" + "</span></div>" * 10000
    got = vars(content.extract(deep, "http://h/"))
    assert got["links"] == [("http://h/d", "d", None)]
    # no paragraphs: the clean text locates the root, the deepest <div> holding 5/6 of it (the
    # 1667th: 10,002 - 1667 of the 10,001 characters)
    assert got["text"] == "\n".join(["w"] * 8333 + ["w d"])
    assert got == python_path(deep, "http://h/")


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_the_tree_is_left_as_it_was():
    html = "<html><body><nav>n</nav><div class=menu>m</div><p>p<br>q</p><a href=/x>x</a></body></html>"
    tree = LexborHTMLParser(html)
    before = tree.html
    assert content.main_text(tree) == "p\nq\nx"  # a block's end ends its line
    assert tree.html == before  # both paths only read
    walk.WALK = None
    try:
        assert content.main_text(tree) == "p\nq\nx"
    finally:
        walk.WALK = NATIVE
    assert tree.html == before


def test_another_selectolax_version_falls_back(monkeypatch):
    # the walker reads lexbor's structs as the selectolax it was compiled against lays them out
    monkeypatch.setattr(selectolax, "__version__", "0.0.1")
    try:
        fresh = importlib.reload(walk)
        assert fresh.WALK is None
        assert "installed 0.0.1" in fresh.status() or "not built" in fresh.status()
    finally:
        monkeypatch.undo()
        importlib.reload(walk)
    monkeypatch.setattr(walk, "API", walk.API + 1)  # a module built from older source than lib/html
    monkeypatch.setattr(walk, "WALK", walk._usable())
    assert walk.WALK is None and "older source" in walk.status() and walk.slow_by_accident(walk.status())
    monkeypatch.undo()
    monkeypatch.setenv("DAILYSLICE_NATIVE_HTML", "off")
    try:
        assert importlib.reload(walk).WALK is None
    finally:
        monkeypatch.delenv("DAILYSLICE_NATIVE_HTML")
        importlib.reload(walk)


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_found_from_a_zipped_lib():
    # a cluster's executors import lib from the zip the job ships; the walker then comes from
    # the installed project, when it is installed there (the venv on a shared file system)
    module = walk.from_installed_project()
    assert module is not None and module.SELECTOLAX_VERSION == selectolax.__version__
    tree = LexborHTMLParser("<body><p>a<nav>n</nav></p><a href=/x>b <i>c</i></a>")
    assert module.main_text(tree.body.mem_id) == ("a\nb c", 4)  # <nav> closes the <p>; "</p>" opens an empty one
    assert module.links(tree.root.mem_id, "http://h") == [(None, "b c", "http://h/x", None)]  # resolved in C
    assert module.links(tree.root.mem_id, None) == [("/x", "b c", None, None)]  # no origin: for LinkResolver


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_a_class_word_never_drops_the_container_of_most_paragraphs(python_path):
    # the article's container carries a boilerplate word ("share": a WordPress theme's) and holds
    # less than half of the page's visible characters (menus and a link list fill the rest), but
    # more than half of its paragraph text: no class word drops it; a tag still would
    menu = "<ul>" + "".join(f"<li><a href=/s{i}>Section headline number {i}</a></li>" for i in range(60)) + "</ul>"
    article = "The council met on Tuesday to vote on the budget, which passed by seven votes to two. " * 8
    promo = "<div class=promo><p>Subscribe to our newsletter for the week's news.</p></div>"
    for wrap, kept in (("div class='entry themeform share'", True), ("aside", False)):
        tag = wrap.split()[0]
        html = f"<body><div>{menu}</div><{wrap}><p>{article}</p></{tag}>{promo}<div>{menu}</div>"
        got, want = both(html, "http://h/", python_path, main_html=True)
        assert got == want
        assert (article.strip() in got["text"]) is kept, wrap
        assert "Subscribe" not in got["text"]


@pytest.mark.skipif(NATIVE is None, reason="walker not built")
def test_links_tell_the_head_fields_outside_head():
    # extract asks the whole document for a field <head> lacks only where its tag occurs
    # outside <head> (bits: title 1, meta 2, base 4, link 8); the links are the same either way
    html = (
        "<html><head><title>t</title><meta name=a content=b><link rel=x href=/y><base href=/z/></head>"
        "<body><a href=/x>b <i>c</i></a><svg><title>icon</title></svg><div><meta itemprop=p content=q></div>"
        "</body></html>"
    )
    tree = LexborHTMLParser(html)
    links = NATIVE.links(tree.root.mem_id, "http://h")
    assert NATIVE.links(tree.root.mem_id, "http://h", tree.head.mem_id) == (links, 1 | 2)
    assert links == [(None, "b c", "http://h/x", None)]
    late = LexborHTMLParser("<html><head></head><body><p>x</p><link rel=canonical href=/c><base href=/b/></body>")
    assert NATIVE.links(late.root.mem_id, None, late.head.mem_id) == ([], 4 | 8)
    assert NATIVE.links(tree.root.mem_id, "http://h", None) == (links, 1 | 2 | 4 | 8)  # no head: all outside
    assert content.extract(html, "http://h/p").title == "t"
