"""The index's postings held against the old code's: golden digests (lib.index.digest) of the
shards the index job wrote for the shared crawl samples before its map/reduce were rebuilt
(commit 47992df), regenerated when the main text changed (lib/html/maintext.py: a content root,
link density; two pages that had lost their text to a body class and were taken for Czech and
Polish from their titles are English now). The samples are preprocessed here, in another folder than the golden's, so
the digests are the canonical ones (terms, collection docids, tfs, lengths, metadata rows:
not the file numbering). The benchmark day's exact golden is checked by
benchmarks/bench_index.py."""

from __future__ import annotations

import json
import pathlib
import shutil

from lib.index.digest import diff, shard_digests

GOLDEN = pathlib.Path(__file__).parents[1] / "data" / "index_golden"


def test_shared_samples_index_equals_the_golden(spark, corpus, tmp_path):
    from jobs import index, preprocess

    warc, pre, out = tmp_path / "warc", tmp_path / "pre", tmp_path / "idx"
    shutil.copytree(corpus, warc, ignore=shutil.ignore_patterns("*.md"))  # as benchmarks/bench_index.py
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    # small shards and groups: 15 shards in 8 groups, 7 languages (CJK bigrams, elision, stemmers)
    assert (
        index.main(
            [
                "--input",
                str(pre),
                "--output",
                str(out),
                "--docs-per-shard",
                "64",
                "--min-group-docs",
                "16",
                "--no-graph",
            ],
            spark=spark,
        )
        == 0
    )
    want = json.loads((GOLDEN / "samples-canonical.json").read_text())
    assert len(want) == 30
    assert diff(shard_digests(out, canonical=True), want) == []
