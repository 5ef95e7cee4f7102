"""On-demand sub-indices: a request folder in, a published sub-index out (docs/ondemand.md).

``request`` (the request folder), ``patterns`` (its URL patterns), ``select`` (its pages from
published days), ``build`` (the sub-index built from them), ``outputs`` (what a run writes beside
the shards)."""
