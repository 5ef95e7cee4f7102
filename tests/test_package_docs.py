"""Each package's docstring names its modules, and every module it names exists.

A package docstring is the map a newcomer reads first (``lib/serve/__init__.py`` once listed a
module ``slices`` that no longer existed, and ``lib/extract``'s left out three). A module is named
as ``name`` or :mod:`lib.package.name`; a name in double backquotes that looks like a module of
the package must be one.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for p in (ROOT / "lib").glob("*/__init__.py"))
_QUOTED = re.compile(r"``([a-z_][a-z0-9_]*)``")
_MOD = re.compile(r":mod:`(lib(?:\.\w+)+)`")


def _docstring(package: pathlib.Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""


def _modules(package: pathlib.Path) -> set[str]:
    return {p.stem for p in package.glob("*.py") if p.stem != "__init__"}


@pytest.mark.parametrize("package", [p for p in PACKAGES if _docstring(p)], ids=lambda p: p.name)
def test_the_package_docstring_names_each_module_and_no_other(package):
    doc, modules = _docstring(package), _modules(package)
    named = set(_QUOTED.findall(doc)) | {m.split(".")[2] for m in _MOD.findall(doc) if m.count(".") >= 2}
    assert modules - named == set(), f"{package.name}: modules its docstring leaves out"
    for dotted in _MOD.findall(doc):  # every module it points at exists
        path = ROOT.joinpath(*dotted.split("."))
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), dotted
    strays = {n for n in _QUOTED.findall(doc) if n not in modules}
    assert strays <= _NOT_MODULES, f"{package.name}: names no module of the package: {strays - _NOT_MODULES}"


#: words in double backquotes in package docstrings that are not meant as modules
_NOT_MODULES = {"lib", "publish_tree"}  # the package; a function of lib.placement.slice_publish


def test_only_lib_html_has_no_package_docstring():
    # lib/html's rules are being reorganised (issue 49, point 1); its docstring comes with them
    assert [p.name for p in PACKAGES if not _docstring(p)] == ["html"]
