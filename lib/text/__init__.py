"""Text analysis: ``analysis`` (the per-language analyzers the index, CIFF and the service share),
``minhash`` (MinHash signatures of page texts), ``neardup`` (a day's near-duplicate clusters)."""
