"""Days the tests build from the shared real samples (``../shared/corpus``)."""

from __future__ import annotations

import pathlib
import shutil
from typing import Any


def index_corpus_small_shards(
    spark: Any, corpus: pathlib.Path, warc: pathlib.Path, pre: pathlib.Path, out: pathlib.Path
) -> None:
    """The shared samples copied to ``warc``, preprocessed into ``pre`` and indexed into ``out``
    in small shards (64 documents a shard, groups of at least 16 pages), without the graph: the
    day of the golden digests, the OWI schema check and the global BM25 check."""
    from jobs import index, preprocess

    shutil.copytree(corpus, warc, ignore=shutil.ignore_patterns("*.md"))  # as benchmarks/bench_index.py
    assert preprocess.main(["--input", str(warc), "--output", str(pre)], spark=spark) == 0
    argv = ["--input", str(pre), "--output", str(out), "--docs-per-shard", "64", "--min-group-docs", "16"]
    assert index.main([*argv, "--no-graph"], spark=spark) == 0
