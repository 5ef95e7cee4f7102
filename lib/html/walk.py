"""The compiled DOM walker (``lib/html/native/lexwalk.c``), when this process can use it.

:data:`WALK` is the module ``lib.html._lexwalk`` when it was built (``pip install`` compiles
it; it is optional) and the installed selectolax is the version whose lexbor it was compiled
against: it reads selectolax's tree through lexbor's struct layouts, which another version may
change. Otherwise, or with ``DAILYSLICE_NATIVE_HTML=off``, it is None and ``lib.html.extract``
runs its pure-Python path, whose output is the same.
"""

from __future__ import annotations

import os

import selectolax

try:
    from lib.html import _lexwalk
except ImportError:  # not built (no compiler at install time, or lib imported from a zip)
    _lexwalk = None


def _usable() -> object | None:
    if _lexwalk is None or os.environ.get("DAILYSLICE_NATIVE_HTML", "").lower() in ("off", "0", "false"):
        return None
    if selectolax.__version__ != _lexwalk.SELECTOLAX_VERSION:
        return None
    return _lexwalk


WALK = _usable()


def status() -> str:
    """One line for logs and summaries: which path extracts pages, and why."""
    if WALK is not None:
        return f"compiled walker (selectolax {selectolax.__version__})"
    if _lexwalk is None:
        return "pure Python (lib.html._lexwalk not built)"
    if selectolax.__version__ != _lexwalk.SELECTOLAX_VERSION:
        return f"pure Python (built for selectolax {_lexwalk.SELECTOLAX_VERSION}, installed {selectolax.__version__})"
    return "pure Python (DAILYSLICE_NATIVE_HTML=off)"
