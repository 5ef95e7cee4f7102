"""The purge command: take-down requests applied to days already published (docs/operations.md).

:mod:`lib.purge.day` rebuilds and swaps one day, :mod:`lib.purge.urldb` removes URL database
rows, :mod:`lib.purge.__main__` is the command line and writes the audit log.
"""
