"""Links across days (docs/links.md, issue 56): the link database beside the URL database, and its
look-ups.

``urls`` (a link's URLs checked, normalised, keyed and partitioned), ``entries`` (a day's edges
to link entries, runs merged, entries read over a window: DuckDB SQL, no Spark), ``store`` (the
log-structured store: state, lease, commit, sweep), ``query`` (in-links and anchors of a URL over
a window).
"""
