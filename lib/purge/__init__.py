"""Take-down requests applied to days already published (docs/operations.md).

:mod:`lib.purge.rebuild` rebuilds and swaps one day (the jobs it re-runs are given by
``jobs/purge.py``, the command), :mod:`lib.purge.urldb_removal` removes URL database rows,
:mod:`lib.purge.linkdb_removal` the link database's entries, :mod:`lib.purge.audit` keeps the
audit log.
"""
