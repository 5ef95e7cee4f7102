"""On-demand sub-indices: a request folder in, a published sub-index out (docs/ondemand.md)."""
