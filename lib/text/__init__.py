"""Text analysis: ``analysis`` (the per-language analyzers the index, CIFF and the service share).
Near-duplicates (MinHash signatures, clusters) are lib.neardup's."""
