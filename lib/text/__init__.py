"""Text analysis: the per-language analyzers the index, CIFF and the service share."""
