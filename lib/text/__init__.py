"""Text analysis: ``analysis`` (the per-language analyzers the index, CIFF and the service share),
``stoplists`` (their stop-word lists from ROOT/shared/auxiliary/models, by version).
Near-duplicates (MinHash signatures, clusters) are lib.neardup's."""
