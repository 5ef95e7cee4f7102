"""The placement errors, in a module of their own so that every placement module can raise them."""

from lib.errors import DailysliceError


class PlacementError(DailysliceError, RuntimeError):
    """The collection is not in a state that allows the operation."""


class NamespaceError(PlacementError):
    """A put would make a path component a file on one slice and a directory on another."""


class RebalanceError(PlacementError):
    """A rebalance cannot start, go on or finish (the message says why)."""
