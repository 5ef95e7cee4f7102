"""The compiled DOM walker (``lib/html/native/lexwalk.c``), when this process can use it.

:data:`WALK` is the module ``lib.html._lexwalk`` when it was built (``pip install`` compiles
it) and the installed selectolax is the version whose lexbor it was compiled against (the one
pyproject.toml pins): it reads selectolax's tree through lexbor's struct layouts, which another
version may change, and it was built from this checkout's rules (lib/html/rules.py, whose digest the
module carries: a rule changed without a rebuild leaves it unused). It is the production path;
``DAILYSLICE_NATIVE_HTML=off`` chooses the pure-Python path of
``lib.html.content`` (the same output, several times slower); ending up there any other way (a
module that did not load, another selectolax) is reported as a warning in the preprocess
job's log and in the day's health block (:func:`slow_by_accident`).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import urllib.parse
import urllib.request
from types import ModuleType
from typing import Any, Protocol, cast, overload

import selectolax

from lib.html import rules

DIST = "daily-index-slice"
#: what this module expects of the compiled walker (lexwalk.c's API): a module built from older
#: source (an install not rebuilt after an update) is not used
API = 8

#: a link as the walker reports it: (href or None, anchor text, URL or None, rel or None)
Link = tuple[str | None, str, str | None, str | None]


class Walker(Protocol):
    """What lexwalk.c's module offers (its method docs say more)."""

    SELECTOLAX_VERSION: str
    API: int
    RULES: str

    def main_text(self, mem_id: int, resolver: Any = ..., origin: str | None = ..., /) -> tuple[Any, ...]:
        """(main text, visible characters of the body[, main_html with a resolver])."""
        ...

    @overload
    def links(self, mem_id: int, origin: str | None, /) -> list[Link]: ...
    @overload
    def links(self, mem_id: int, origin: str | None, head_mem_id: int | None, /) -> tuple[list[Link], int]: ...
    @overload
    def links(
        self, mem_id: int, origin: str | None, head_mem_id: int | None, resolver: Any, max_each: int, /
    ) -> tuple[list[Link], int, tuple[list | None, ...]]: ...


def from_installed_project(dotted: str = "lib.html._lexwalk") -> ModuleType | None:
    """The compiled module ``dotted`` the installed project built, for a ``lib`` imported from
    elsewhere: the zip a job ships to a cluster's executors, from which Python loads no compiled module."""
    try:
        dist = importlib.metadata.distribution(DIST)
    except importlib.metadata.PackageNotFoundError:
        return None
    roots = [str(dist.locate_file(""))]  # site-packages, for a regular install
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    if url.startswith("file:"):  # an editable install: the project's folder
        roots.append(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    for root in roots:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(root, *dotted.split(".")) + suffix
            if os.path.exists(path):
                spec = importlib.util.spec_from_file_location(dotted, path)
                if spec is None or spec.loader is None:  # an extension suffix always has a loader
                    continue
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module
    return None


_lexwalk: ModuleType | None
try:
    _lexwalk = importlib.import_module("lib.html._lexwalk")
except ImportError:  # not built (no compiler at install time), or lib imported from a zip
    _lexwalk = from_installed_project()


def _usable() -> Walker | None:
    if _lexwalk is None or os.environ.get("DAILYSLICE_NATIVE_HTML", "").lower() in ("off", "0", "false"):
        return None
    if selectolax.__version__ != _lexwalk.SELECTOLAX_VERSION or getattr(_lexwalk, "API", 1) != API:
        return None
    if _lexwalk.RULES != rules.digest():
        return None
    return cast(Walker, _lexwalk)  # a module: mypy cannot hold it to the Protocol


WALK = _usable()


def slow_by_accident(status_line: str) -> bool:
    """Whether a :func:`status` line says pages went through the pure-Python path although
    nobody asked for it (``DAILYSLICE_NATIVE_HTML=off`` is the one way to ask)."""
    return status_line.startswith("pure Python") and "DAILYSLICE_NATIVE_HTML=off" not in status_line


def status() -> str:
    """One line for logs and summaries: which path extracts pages, and why."""
    if WALK is not None:
        return f"compiled walker (selectolax {selectolax.__version__})"
    if _lexwalk is None:
        return "pure Python (lib.html._lexwalk not built)"
    if selectolax.__version__ != _lexwalk.SELECTOLAX_VERSION:
        return f"pure Python (built for selectolax {_lexwalk.SELECTOLAX_VERSION}, installed {selectolax.__version__})"
    if getattr(_lexwalk, "API", 1) != API:
        return f"pure Python (lib.html._lexwalk built from older source, API {getattr(_lexwalk, 'API', 1)}: rebuild it)"
    if _lexwalk.RULES != rules.digest():
        return "pure Python (lib.html._lexwalk built from other rules than lib/html/rules.py: rebuild it)"
    return "pure Python (DAILYSLICE_NATIVE_HTML=off)"
