"""Labels of the main-text kinds set (issue 46): forum threads, Q&A pages, listings, collections.

    python -m devtools.label_maintext_kinds [--set DIR] [--audit] [--show ID]

The set is committed in ``tests/data/maintext_kinds`` (``$DAILYSLICE_MAINTEXT_KINDS`` or ``--set``
point elsewhere): public pages with their sources' licences, rebuilt from those sources by
``python -m benchmarks.build_maintext_kinds``. There:

  ``pages.jsonl``         one line per page: id, url, kind, source repository, commit, path, licence,
                          sha1 (the manifest benchmarks/build_maintext_kinds.py builds the set from);
  ``html/ID.html.gz``     the page's bytes (as served; a Harvest page in the charset it declares);
  ``harvest-gold.jsonl``  the post texts that the Harvest project (fhgr/harvest, Apache-2.0)
                          corrected by hand for its forum pages, one line per page;
  ``labels.jsonl``        written by this script: id, kind, engine, method and the expected main
                          text as ``lines`` (one block per line), per docs/maintext-labelling.md.

How a page is labelled (``method``):

  ``selector``  the engine's post-body selector (ENGINES), or the page's item selectors (ITEMS),
                with the parts the guide leaves out removed first (quote headers, signatures,
                edit notes, dates, "read more");
  ``harvest``   a forum page of an engine without a selector here: Harvest's hand-corrected post
                texts, with the quote headers and "Click to expand" controls of the guide cut.

``--audit`` prints, per page, the method, the number of blocks and words, and for the Harvest
pages labelled by selector the word precision/recall/F1 of the selector label against Harvest's
own gold posts and both post counts: the check that a selector picks the posts and only them.
``--show ID`` prints one page's label.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import re
from collections import Counter
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from lib.html.charset import decode_html

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: the set as committed: pages, labels, sources and licences (benchmarks/build_maintext_kinds.py rebuilds it)
COMMITTED = ROOT / "tests" / "data" / "maintext_kinds"
#: the set read and written by default: the committed one, or the folder $DAILYSLICE_MAINTEXT_KINDS names
SET = pathlib.Path(os.environ.get("DAILYSLICE_MAINTEXT_KINDS") or COMMITTED)

# What a post body never keeps (docs/maintext-labelling.md): quote attribution headers and their
# expand controls, signatures, edit notes, attachment boxes. Checked on the set's engines.
COMMON_DROP = (
    "script, style, .signature, .message-signature, .postsignature, .postedit, .edit-note,"
    " .bbCodeBlock-title, .bbCodeBlock-expandLink, .bbCodeBlock-sourceJump, .quoteExpand, .attribution,"
    " blockquote cite, .quotebox cite, .bbcode_postedby, .ipsQuote_citation, .quoteheader, .codeheader,"
    " .QuoteAuthor, aside.quote > .title, .lastedit, .message-lastEdit, .attachments, .attachment"
)

# engine -> CSS selector of each post's body (the first post included)
ENGINES: dict[str, str] = {
    "phpBB": ".postbody .content",
    "FluxBB": ".postmsg",
    "Simple Machines": ".post .inner, div.post",
    "XenForo": ".message-body .bbWrapper, .messageText",
    "Discourse": ".topic-body .cooked, .crawler-post div.post, div.post[itemprop='articleBody']",
    "Invision": "[data-role='commentContent']",
    "vBulletin": "blockquote.postcontent, div[id^='post_message_']",
    "bbPress": ".bbp-reply-content, .bbp-topic-content",
    "Vanilla": "div.Message",
    "StackExchange": ".question .s-prose, .answer .s-prose, .question .post-text, .answer .post-text",
    "Forumotion": ".post-entry",
    "reddit": "[data-test-id='post-content'] .RichTextJSON-root, [data-test-id='comment']",
}

# host -> engine (read from each page's markup: generator meta, class names, URL scheme)
HOSTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "forum.ebaumsworld.com forum.mein-schoener-garten.de forum.nationstates.net forum.openoffice.org"
            " forum.videolan.org forums.maladiesraresinfo.org www.airliners.net foren.myoos.de"
        ).split(),
        "phpBB",
    ),
    "bbs.archlinux.org": "FluxBB",
    "bpdfamily.com": "Simple Machines",
    "blog.angelman-asa.org": "Phorum",
    **dict.fromkeys(
        (
            "community.bitdefender.com community.scope.org.uk forums.moneysavingexpert.com talk.collegeconfidential.com"
        ).split(),
        "Vanilla",
    ),
    "community.kaspersky.com": "inSided",
    **dict.fromkeys(
        (
            "forum.digitalfernsehen.de forum.statcounter.com forum.wordreference.com forums.macrumors.com"
            " forums.sherdog.com kiwifarms.net uhrforum.de www.android-hilfe.de www.computerbase.de www.gtplanet.net"
            " www.juraforum.de www.med1.de www.musiker-board.de villagersandheroes.com www.katzen-forum.net"
        ).split(),
        "XenForo",
    ),
    **dict.fromkeys("forum.glamour.de us.forums.blizzard.com".split(), "Discourse"),
    **dict.fromkeys("forum.utorrent.com www.neowin.net".split(), "Invision"),
    **dict.fromkeys(
        "forums.futura-sciences.com skyscraperpage.com www.drwindows.de www.msworld.org".split(),
        "vBulletin",
    ),
    "shift.ms": "bbPress",
    "forum.ubuntuusers.de": "Inyoka (Django)",
    "www.msconnection.org": "YAF.NET",
    "german.stackexchange.com": "StackExchange",
    "wolfsrebellen-netz.forumieren.com": "Forumotion",
    "www.reddit.com": "reddit",
    "healthunlocked.com": "HealthUnlocked",
    "www.fanfiction.net": "FanFiction.Net",
    "www.nairaland.com": "Nairaland",
    "www.mumsnet.com": "Mumsnet",
    "www.pistonheads.com": "PistonHeads",
    "www.medhelp.org": "MedHelp",
    "www.medschat.com": "MedsChat",
    "www.hifi-forum.de": "hifi-forum",
    "proxer.me": "Proxer",
    "www.amsel.de": "AMSEL",
    "myparkinsons.org": "Perl CGI forum",
    "www.paradisi.de": "paradisi",
}

# Listings and collections: (id pattern, engine, item selector or "" for the page, part selectors, drop).
# Each matched part is one block; parts are read in page order within an item.
ITEMS: list[tuple[str, str, str, str, str]] = [
    (r"bitchmagazine-org-", "Drupal 6", ".node-teaser", "h2.node-title, div.content", ".read-more, .links"),
    (
        r"archive-org-details-",
        "archive.org 2008",
        "",
        "#description, #spotlight, .box a, .browseTitle, .browseDescription",
        "#description .itemCount, .box h1 a",
    ),
    (r"archive-org-mediatypes-browse", "archive.org 2008", "", ".box li", ""),
    (r"archive-org-iathreads-posts-display-new", "archive.org 2008", "tr.forumRow", "a[href*='post-view']", ""),
    # a forum's topic list and a poster's posts (issue 61): each topic's title, not its poster, forum,
    # counts or date
    (r"archive-org-iathreads-forum-display", "archive.org 2008", "tr[valign=top]", "a[href*='post-view']", ""),
    # the forum index: each forum's name, and the titles of the latest posts listed below the forums
    (
        r"archive-org-iathreads-forums-php",
        "archive.org 2008",
        "tr[valign=top][bordercolor], tr[valign=top][style]",
        "td:first-child > font > a, a[href*='post-view']",
        "",
    ),
    # XenForo 2 (voz.vn, 2020; andy1xx8/riverflow-dart's test pages): a forum's thread list and the
    # "new posts" list keep each thread's title (the list shows no first line), not its starter, date,
    # page links, reply and view counts or last poster; the forum index keeps each forum's name and the
    # title of its latest thread, as archive.org's forum index above; the search results keep each
    # result's title and snippet, not its poster, post number, date and forum
    (r"voz-vn-f-|voz-vn-whats-new", "XenForo", ".structItem--thread", ".structItem-title", ""),
    (r"voz-vn-forum-list", "XenForo", ".node", ".node-title, .node-extra-title", ""),
    (r"voz-vn-search", "XenForo", ".block-row", ".contentRow-title, .contentRow-snippet", ""),
    # CNN International's front page of 2014 (newspaper's test pages): the top story's headline and
    # teaser, the headline lists, the features' titles and the section boxes' headlines and blurbs; not
    # the markets, the video players' captions, the weather, the menus and the footer
    (
        r"edition-cnn-com-front",
        "CNN front page 2014",
        "",
        ".cnn_mtt1imghtitle, .cnn_mtt1content, ul.cnn_bulletbin li, .cnn_fabcattxt, .cnn_mc2_headline, .cnn_mc2_blurb",
        "script, style",
    ),
    # deutschland.de's English front page (htmldate's test pages): each story's title and teaser, not
    # its category label or "Read more"
    (r"deutschland-de-en-front", "Drupal 8", "article.cover", "h2, h3, .cover__text", ""),
    (r"blog-wordpress-com", "WordPress", "div.post", "h2, .entrytext", ""),
    (r"uk-yahoo-com-front", "Yahoo front page 2014", "li.content", "h3, p.summary", ""),
    (r"amyxzhang-wordpress", "WordPress", "article", ".entry-title, .entry-content", ".sharedaddy, .jp-relatedposts"),
    (r"creativecommons-org", "WordPress", "article.story", "h3.title, .excerpt, p", ".byline, .attribution"),
    (r"kyleclo-com-research", "Jekyll", ".card-body", "h4, h5, .card-title, p", ""),
    (r"semanticscholar-org-research", "Webflow", "div.researcher", "h4, h5, div", ""),
    (r"jxtdw-com-area", "Chinese job board", "ul.bd", "li.zw, li.qy", ""),
    (r"die-partei-net-sh", "custom CMS", "div.newsentry", "h2, .newstext", ""),
    (r"cric-grenoble", "SPIP (Mutu)", ".resume_article_simple", "h3, .titre, .introduction, .chapo, p", ".date"),
    (r"echte-demokratie-jetzt", "WordPress", "div.post, article", ".entry-title, .entry-content", ".more-link"),
]

# Harvest's post texts keep the quote's header and control; the guide does not.
QUOTE_HEADER = re.compile(
    r"(?:^|(?<=\s))(?:[^\s].{0,60}? said:|Click to expand\.\.\.|Zum Vergrößern anklicken\.\.\.?|"
    r"Klicken Sie zum Erweitern\.\.\.|Cliquez pour agrandir\.\.\.|Zitat von .{1,40}?:|Originally Posted by \S+|"
    r"Zitat von \S+|Quote:|Zitat:)"
)


def missing(folder: pathlib.Path = SET) -> str | None:
    """None when ``folder`` holds the whole set, else what it lacks and the command that provides it."""
    names = ["pages.jsonl", "harvest-gold.jsonl", "labels.jsonl"]
    if (folder / "pages.jsonl").is_file():
        names += [f"html/{p['id']}.html.gz" for p in load_pages(folder)]
    lacking = [n for n in names if not (folder / n).is_file()]
    if not lacking:
        return None
    if lacking == ["labels.jsonl"]:
        how = f"python -m devtools.label_maintext_kinds --set {folder}"
    elif folder.resolve() == COMMITTED.resolve():
        how = f"git checkout -- {COMMITTED.relative_to(ROOT)}"
    else:
        how = (
            f"cp -r {COMMITTED}/. {folder} (or rebuild it from the sources: python -m benchmarks.build_maintext_kinds"
            f" --repos DIR --out {folder}, docs/maintext-labelling.md)"
        )
    return f"the kinds set in {folder} lacks {', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}: {how}"


def load_pages(folder: pathlib.Path = SET) -> list[dict]:
    """The set's pages.jsonl, in file order."""
    with open(folder / "pages.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def page_html(page: dict, folder: pathlib.Path = SET) -> str:
    """The page decoded as every extractor gets it (lib.html.charset.decode_html)."""
    return decode_html(gzip.decompress((folder / "html" / f"{page['id']}.html.gz").read_bytes())).text


# lexbor parses the content of <noscript> as markup (as a browser without scripts does), and one
# unclosed <iframe> in it (computerbase.de, musiker-board.de: an ad's fallback) swallows the rest of
# the page as raw text. A reader sees the posts, so the labels are read with the <iframe> tags inside
# <noscript> blocks taken out; the blocks themselves stay (Discourse serves its posts in one).
NOSCRIPT = re.compile(r"(?is)<noscript\b.*?</noscript\s*>")
IFRAME = re.compile(r"(?i)</?iframe\b[^>]*>")


def _tree(html: str) -> LexborHTMLParser:
    return LexborHTMLParser(NOSCRIPT.sub(lambda m: IFRAME.sub(" ", m.group(0)), html))


def _text(node) -> str:
    return " ".join(node.text(separator=" ").split())


def _blocks(tree, items: str, parts: str, drop: str) -> list[str]:
    for junk in tree.css(drop):
        junk.decompose()
    lines: list[str] = []
    roots = tree.css(items) if items else [tree.root]
    for root in roots:
        taken: set[int] = set()
        for node in root.css(parts):
            # a part matched twice, or inside a part already taken, is not taken twice
            if _taken(node, taken):
                continue
            text = _text(node)
            if text:
                taken.add(node.mem_id)
                lines.append(text)
    return lines


def _taken(node, taken: set[int]) -> bool:
    while node is not None:
        if node.mem_id in taken:
            return True
        node = node.parent
    return False


def engine_of(page: dict) -> str:
    host = urlsplit(page["url"]).hostname or ""
    if page["kind"] in ("forum", "qa"):
        return HOSTS.get(host, "unknown")
    return next((eng for pat, eng, *_ in ITEMS if re.search(pat, page["id"])), "unknown")


def label(page: dict, html: str, gold: dict[str, list[str]]) -> tuple[str, str, list[str]]:
    """(engine, method, lines) of one page, per docs/maintext-labelling.md."""
    engine = engine_of(page)
    if page["kind"] in ("forum", "qa"):
        if engine in ENGINES:
            return engine, "selector", _blocks(_tree(html), "", ENGINES[engine], COMMON_DROP)
        if page["id"] in gold:
            lines = [" ".join(QUOTE_HEADER.sub(" ", p).split()) for p in gold[page["id"]]]
            return engine, "harvest", [line for line in lines if line]
        raise ValueError(f"{page['id']}: no selector and no Harvest gold for engine {engine!r}")
    for pat, eng, items, parts, drop in ITEMS:
        if re.search(pat, page["id"]):
            tree = _tree(html)
            return eng, "selector", _blocks(tree, items, parts, drop or "script, style")
    raise ValueError(f"{page['id']}: no item selectors")


def words(text: str) -> Counter:
    """The bag of words the score counts: lower-cased \\w+ runs."""
    return Counter(re.findall(r"\w+", text.lower()))


def prf(expected: Counter, got: Counter) -> tuple[float, float, float]:
    """Word precision, recall and F1 of ``got`` against ``expected`` (bags of words)."""
    tp = sum((expected & got).values())
    p = tp / sum(got.values()) if got else 0.0
    r = tp / sum(expected.values()) if expected else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def load_gold(folder: pathlib.Path = SET) -> dict[str, list[str]]:
    path = folder / "harvest-gold.jsonl"
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as f:
        return {d["id"]: d["posts"] for d in map(json.loads, f)}


def load_labels(folder: pathlib.Path = SET) -> dict[str, dict]:
    """id -> label record of labels.jsonl."""
    with open(folder / "labels.jsonl", encoding="utf-8") as f:
        return {d["id"]: d for d in map(json.loads, f)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=pathlib.Path, default=SET)
    ap.add_argument("--audit", action="store_true", help="per page: method, blocks, words; selector vs Harvest")
    ap.add_argument("--show", help="print one page's label")
    args = ap.parse_args(argv)
    gold = load_gold(args.set)
    out, agree = [], []
    for page in load_pages(args.set):
        engine, method, lines = label(page, page_html(page, args.set), gold)
        if not lines:
            print(f"EMPTY {page['id']} ({engine}, {method})")
            continue
        out.append({"id": page["id"], "kind": page["kind"], "engine": engine, "method": method, "lines": lines})
        if args.show == page["id"]:
            print("\n".join(lines))
        if args.audit:
            n = sum(words("\n".join(lines)).values())
            extra = ""
            if method == "selector" and page["id"] in gold:
                p, r, f1 = prf(words("\n".join(gold[page["id"]])), words("\n".join(lines)))
                agree.append((f1, page["id"]))
                extra = f" vs Harvest: P {p:.3f} R {r:.3f} F1 {f1:.3f}, posts {len(lines)}/{len(gold[page['id']])}"
            print(f"{page['kind']:10} {engine:18} {method:8} {len(lines):4} blocks {n:6} words  {page['id']}{extra}")
    with open(args.set / "labels.jsonl", "w", encoding="utf-8") as f:
        for rec in out:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    kinds = Counter(r["kind"] for r in out)
    engines = Counter(r["engine"] for r in out if r["kind"] in ("forum", "qa"))
    print(f"{len(out)} pages labelled: {dict(kinds)}; {len(engines)} forum/Q&A engines")
    if agree:
        agree.sort()
        print(
            f"selector vs Harvest gold on {len(agree)} pages: median F1 {agree[len(agree) // 2][0]:.3f}, "
            f"lowest {agree[0][0]:.3f} ({agree[0][1]})"
        )


if __name__ == "__main__":
    main()
