"""The index's postings held against the old code's: golden digests (lib.index.shard_digests) of the
shards the index job wrote for the shared crawl samples before its map/reduce were rebuilt
(commit 47992df), regenerated when the main text changed (lib/html/maintext.py: a content root,
link density; two pages that had lost their text to a body class and were taken for Czech and
Polish from their titles are English now; later the root's siblings, the clean-text root, residues
and trailing headings; later class words in any part of a token, teaser lists, leads before the
root; later link density over an element's own text, soft hyphens left out, ruby readings,
boilerplate heading families, the <noscript> fallback; later listings made of links, issue 61: 20 of
the 30 digests, 10 shards, by the 55 listing and collection pages of the samples whose items the
text keeps now). Regenerated when pages' signals came
(docs/robots.md): every metadata table gained robots and ows_index_details and fills
ows_index/ows_genai; of the postings only other/zho/index-0 changed, by the one sample page that
says noindex, now left out. Regenerated when pages' embedded resources came (issue 56): the 14 metadata
tables fill image_links and iframes; no posting changed. The samples are preprocessed here, in
another folder than the golden's, so the digests are the canonical ones (terms, collection
docids, tfs, lengths, metadata rows: not the file numbering). The benchmark day's exact golden is checked by
benchmarks/bench_index.py."""

from __future__ import annotations

import json
import pathlib

from lib.index.shard_digests import diff, shard_digests
from tests.helpers_day import index_corpus_small_shards

GOLDEN = pathlib.Path(__file__).parents[1] / "data" / "index_golden"


def test_shared_samples_index_equals_the_golden(spark, corpus, tmp_path):
    warc, pre, out = tmp_path / "warc", tmp_path / "pre", tmp_path / "idx"
    # small shards and groups: 15 shards in 8 groups, 7 languages (CJK bigrams, elision, stemmers)
    index_corpus_small_shards(spark, corpus, warc, pre, out)
    want = json.loads((GOLDEN / "samples-canonical.json").read_text())
    assert len(want) == 30
    assert diff(shard_digests(out, canonical=True), want) == []
