"""Links across days (docs/links.md, issue 56): the link database beside the URL database, its
look-ups, and the host and domain graphs of a window with their ranks.

``urls`` (a link's URLs checked, normalised, keyed and partitioned), ``entries`` (a day's edges
to link entries, runs merged, entries read over a window: DuckDB SQL, no Spark), ``linkdb`` (the
log-structured store: state, lease, commit, sweep), ``inlinks`` (in-links and anchors of a URL over
a window), ``paths`` (the shortest path of followed links between two URLs over a window,
bounded in hops and time), ``hostgraph`` (host and domain graphs of a window in Common Crawl's layout),
``ranks`` (PageRank and harmonic centrality, python-igraph), ``__main__`` (``python -m lib.links graph``,
``dailyslice webgraph``: a window's graphs published as Parquet).
"""
