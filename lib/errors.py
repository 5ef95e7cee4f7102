"""The project's one error family: every error raised on purpose derives from :class:`DailysliceError`.

Each package keeps its own subclasses beside the code that raises them (``CiffError``,
``CaptureError``, ``StagingError``, ...), with the built-in base its callers already catch
(``ValueError`` for bad input, ``RuntimeError`` for a failed operation) as a second base.
``except DailysliceError`` catches them all; anything else is a bug.

* :class:`UsageError`: a wrong option or argument combination. Raised anywhere, it reaches the
  entry point (``SparkJob.main``, the ``__main__`` modules), which prints it and exits 2.
* :class:`ConfigError`: a configuration file or setting that cannot be used (the data-center
  config, the slice config, the exclusion list); its text names the file and what is wrong.
"""

from __future__ import annotations

import importlib.util


class DailysliceError(Exception):
    """Base of every error the project raises on purpose."""


class UsageError(DailysliceError, ValueError):
    """A wrong option or argument: entry points exit 2 with the text."""


class ConfigError(DailysliceError, ValueError):
    """A configuration that cannot be used; the text names the file and the setting."""


class MissingExtra(DailysliceError, ImportError):
    """A part of the project whose optional dependencies (an extra of pyproject.toml) are not installed."""


def require_extra(part: str, extra: str, *modules: str) -> None:
    """Fail with :class:`MissingExtra` naming ``extra`` when any of ``modules`` cannot be imported.

    The pipeline's core dependencies are what a cluster node needs; the service, the report's plots,
    the benchmarks and the development tools are extras, so a node without them fails here, at the
    import of the part that needs them, with the install command instead of a bare ModuleNotFoundError."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(
            f"{part} needs the {extra!r} extra ({', '.join(missing)} not installed): "
            f"pip install 'daily-index-slice[{extra}]'"
        )
