"""Storage and the bucket layout: ``locations`` (URIs, no I/O), ``storage`` and ``s3`` (local and
S3 access), ``httpread`` (reads over HTTP, as from a SWAP server), ``layout`` (the bucket layout),
``atomic`` (atomic writes), ``publish`` (a job's output published in one step), ``lease`` (one run
per output), ``versioned`` (compare-and-swap JSON state), ``runs`` (which log-structured sorted
runs a commit merges), ``auxiliary`` (``shared/auxiliary``: models and filters, versioned, by sha256),
``update_log`` (``shared/auxiliary/logs.csv``: one line per update, appended atomically)."""
