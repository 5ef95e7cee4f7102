"""The main text on real forum threads, Q&A pages, listings and collections (issue 46): the kinds
set committed in tests/data/maintext_kinds ($DAILYSLICE_MAINTEXT_KINDS points elsewhere; rebuilt from
its public sources by benchmarks/build_maintext_kinds.py), labelled per docs/maintext-labelling.md by
devtools/label_maintext_kinds.py. Not timed (speed is benchmarks/bench_extraction_quality.py's).

* The set is what the issue asks for: at least 50 forum threads from at least 10 engines and 50
  listing or collection pages, each with a label, and the labels are what the committed labeller
  writes today (so a floor below is measured against labels anyone can regenerate).
* The labeller's selectors pick the posts: against the posts the Harvest project corrected by hand,
  the selector labels agree.
* The text can never silently get worse on a kind: word F1, precision and recall of each kind and
  of the whole set are held at the levels of the baseline (docs/benchmarks.md, "The kinds set").
"""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from selectolax.lexbor import LexborHTMLParser

from devtools import label_maintext_kinds as lab
from lib.html import content, discussion, walk
from lib.html.content import extract

KINDS = lab.SET
# kind -> (F1, precision, recall) reached on 2026-11-28 (docs/benchmarks.md, "The kinds set"), rounded
# down to 0.005: before any tuning forum 0.568/0.633/0.603, qa 0.842/0.765/0.969, all
# 0.641/0.691/0.673; with a <noscript>'s unclosed <iframe> no longer swallowing the page
# (content.unswallowed) forum 0.657/0.730/0.696, all 0.697/0.753/0.732; with a thread's text its
# post bodies (lib.html.discussion) forum 0.902/0.917/0.920, qa 0.958/0.951/0.968, listing
# 0.854/0.934/0.804, collection 0.510/0.440/0.679, all 0.858/0.880/0.874.
# The set as committed (issue 60, 2026-12-07; docs/maintext-labelling.md, "Where the set lives")
# differs from that first copy in two ways, so its figures differ, same code: the Harvest pages are
# in the charset they declare (the first copy wrote all as UTF-8, and 12 declaring iso-8859-1 were
# read as mojibake), and the 30 Drupal listings are the site's pages listing at least 5 posts (the
# first copy's 30 of the 53 are not recorded). Measured: forum 0.904/0.920/0.922, qa
# 0.973/0.969/0.979, listing 0.840/0.935/0.783, collection 0.510/0.440/0.679, all 0.857/0.882/0.870.
# Against the floors before: qa and all's precision raised (0.955/0.95/0.965 and 0.875), listing's
# F1 and recall lowered (0.85 and 0.80: the selection, not the extractor), the rest unchanged.
# Issue 61 (2026-12-07, docs/benchmarks.md): 8 listings made of links added (archive.org's forum
# lists, a blog front, a news front: 164 pages), and lists of items led by links kept
# (lib/html/link_listings.py): forum 0.923/0.929/0.944, qa 0.973/0.969/0.979, listing 0.922/0.959/0.901
# (0.712/0.802/0.662 before the rules, on the same 44), collection 0.521/0.453/0.684, all
# 0.891/0.898/0.911; every floor raised to those figures.
# Issue 61 again (2026-12-08): 8 more listings (XenForo's thread lists, forum index, new posts and
# search results of voz.vn; CNN International's 2014 front, deutschland.de's front: 172 pages) and the
# lists inside a listing's items kept (a forum index's categories, each a list of forums): listing
# 0.889/0.943/0.859 (0.877/0.941/0.849 with main's rules on the same 52: only the forum index moved,
# 0.13 -> 0.77), all 0.882/0.896/0.898, forum and qa unchanged; listing and all floors set to those
# figures (the new pages are harder: CNN's front 0.09, as both peers).
FLOORS = {
    "forum": (0.92, 0.925, 0.94),
    "qa": (0.97, 0.965, 0.975),
    "listing": (0.885, 0.94, 0.855),
    "collection": (0.52, 0.45, 0.68),
    "all": (0.88, 0.895, 0.895),
}
# forum pages that give no text (there were 12 before content.unswallowed)
MAX_EMPTY = 0


@pytest.fixture(scope="module")
def kinds():
    why = lab.missing(KINDS)
    if why and KINDS.resolve() == lab.COMMITTED.resolve():
        pytest.fail(why)  # a checkout without its committed data is broken, not a machine without data
    if why:
        pytest.skip(why)
    pages = {p["id"]: p for p in lab.load_pages(KINDS)}
    html = {k: lab.page_html(p, KINDS) for k, p in pages.items()}
    return pages, html, lab.load_labels(KINDS), lab.load_gold(KINDS)


def test_the_set_has_the_issues_shape_and_the_labellers_labels(kinds):
    pages, html, labels, gold = kinds
    assert set(labels) == set(pages)
    forum = [k for k, p in pages.items() if p["kind"] == "forum"]
    engines = Counter(labels[k]["engine"] for k in forum)
    assert len(forum) >= 50 and len(engines) >= 10, (len(forum), engines)
    assert sum(1 for p in pages.values() if p["kind"] in ("listing", "collection")) >= 50
    for k, page in pages.items():
        engine, method, lines = lab.label(page, html[k], gold)
        assert (engine, method, lines) == (labels[k]["engine"], labels[k]["method"], labels[k]["lines"]), k
        assert sum(lab.words("\n".join(lines)).values()) >= 20, k


def test_selector_labels_agree_with_harvests_hand_made_posts(kinds):
    _, _, labels, gold = kinds
    f1 = [
        lab.prf(lab.words("\n".join(gold[k])), lab.words("\n".join(d["lines"])))[2]
        for k, d in labels.items()
        if d["method"] == "selector" and k in gold
    ]
    assert len(f1) >= 50
    assert statistics.median(f1) >= 0.98 and min(f1) >= 0.75, (statistics.median(f1), min(f1))


def test_kinds_scores(kinds):
    pages, html, labels, _ = kinds
    scores: dict[str, list] = {kind: [] for kind in FLOORS}
    empty = 0
    for k, page in pages.items():
        text = extract(html[k], page["url"]).text
        empty += not text.strip()
        s = lab.prf(lab.words("\n".join(labels[k]["lines"])), lab.words(text))
        scores[page["kind"]].append(s)
        scores["all"].append(s)
    # prf gives (precision, recall, F1); the floors are (F1, precision, recall)
    got = {kind: tuple(statistics.mean(s[i] for s in v) for i in (2, 0, 1)) for kind, v in scores.items()}
    for kind, floor in FLOORS.items():
        assert all(g >= f for g, f in zip(got[kind], floor)), (kind, got[kind], floor)
    assert empty <= MAX_EMPTY, empty


def test_a_threads_text_is_its_posts_on_both_paths(kinds, monkeypatch):
    """On every page whose post bodies lib.html.discussion finds, the words of the text are those
    bodies' words (none of the chrome around them), nearly all the bodies' words are kept, and the
    pure-Python path writes what the compiled walk writes (text, size and main_html)."""
    pages, html, _, _ = kinds
    threads, recall = 0, []
    for k, page in pages.items():
        tree = LexborHTMLParser(content.unswallowed(html[k]) or html[k])  # the tree extract reads
        found = discussion.recognise(tree)
        if found is None or not found.posts:
            continue
        threads += 1
        posts = lab.words("\n".join(n.text(separator=" ") for n in discussion.bodies(tree, found.posts)))
        native = vars(content.extract(html[k], page["url"], None, True))
        got = lab.words(native["text"])
        # a word the walk joins across an inline element the bodies' text splits there ("read<b>ty</b>")
        assert sum((got - posts).values()) <= 0.01 * sum(got.values()), (k, got - posts)
        recall.append(lab.prf(posts, got)[1])
        with monkeypatch.context() as m:
            m.setattr(walk, "WALK", None)
            assert vars(content.extract(html[k], page["url"], None, True)) == native, k
    # 75 threads and Q&A pages: 61 whose bodies were found before content.unswallowed and the 14
    # whose posts lexbor sees since; recall against the bodies' own words median 0.993 (on the first copy
    # and the committed set alike)
    assert threads >= 75 and statistics.median(recall) >= 0.99, (threads, statistics.median(recall))
