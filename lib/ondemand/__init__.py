"""On-demand sub-indices: a request folder in, a published sub-index out (docs/ondemand.md).

``request`` (the request folder), ``patterns`` (its URL patterns), ``select`` (its pages from
published days), ``subindex`` (the sub-index built from them), ``side_outputs`` (what a run writes beside
the shards)."""
