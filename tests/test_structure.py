"""The code's shape: imports run downward, no cycles, no hidden imports, docs/layout.md lists it all.

Layers, top to bottom: ``jobs/`` -> lib stage packages -> lib format packages -> lib base packages
(``store``, ``runtime``, ``pages`` and the ``errors`` module).
A module may import its own layer or a lower one, never a higher one; module-level imports
form no cycle; an import inside a function is only allowed for an optional dependency
(one that ``pyproject.toml`` does not require), because a function-level import is
otherwise a cycle or a slow import in hiding. Everything here reads source with
:mod:`ast`: nothing is imported, no Spark, so it runs in well under a second.

Each check is a function over a project root, so the ``test_*_fails_*`` tests can feed it a
small synthetic tree and show that it really fails.
"""

from __future__ import annotations

import ast
import pathlib
import re
import tomllib
from dataclasses import dataclass

import pytest


def _project_root() -> pathlib.Path:
    """The folder holding pyproject.toml, wherever in tests/ this file sits."""
    here = pathlib.Path(__file__).resolve().parent
    return next(p for p in (here, *here.parents) if (p / "pyproject.toml").is_file())


ROOT = _project_root()

BASE = {"store", "runtime", "pages", "errors"}
FORMATS = {"warc", "html", "ciff", "text"}
STAGES = {
    "preprocess",
    "index",
    "extract",
    "catalogue",
    "placement",
    "staging",
    "orchestration",
    "serve",
    "purge",
    "ondemand",
    "links",
    "neardup",
    "community",
}
#: rank of each layer: an import may only go to the same rank or a lower one
RANK = {"base": 0, "format": 1, "stage": 2, "jobs": 3}

#: Top-level modules a function may import, and why each may not sit at module level.
#: Only optional dependencies belong here: everything in ``[project].dependencies`` is
#: always installed, so importing it inside a function would only hide a cycle or a cost.
OPTIONAL_IMPORTS = {
    "airflow": "apache-airflow, the optional [airflow] extra: only code running inside Airflow tasks needs it",
    "pendulum": "comes with apache-airflow (the [airflow] extra); only the DAG factory needs it",
    "irods": "python-irodsclient, the optional [airflow] extra: only the iRODS staging target needs it",
    "igraph": "python-igraph, the optional [webgraph] extra: only the web graph's ranks (lib.links.ranks) need it",
    "yaml": "PyYAML is not a declared dependency (Airflow brings it); only YAML data-center configs need it",
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module, dotted
    target: str  # imported module, dotted (a project module when it is one)
    line: int
    in_function: bool

    def __str__(self) -> str:
        where = "inside a function" if self.in_function else "at module level"
        return f"{self.source}:{self.line} imports {self.target} ({where})"


def project_modules(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Dotted name -> file of every module under ``root/lib`` and ``root/jobs``."""
    out = {}
    for top in ("lib", "jobs"):
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module a ``from`` import names (relative imports resolved)."""
    if not level:
        return name or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def imports_of(module: str, path: pathlib.Path, known: set[str]) -> list[Import]:
    """Every import statement in ``path`` (``if TYPE_CHECKING:`` blocks left out: they never run).

    ``from P import x`` names module ``P.x`` when that is a project module, else ``P``.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def visit(nodes: list[ast.AST], in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                visit(node.orelse, in_function)
            elif isinstance(node, ast.Import):
                found.extend(Import(module, a.name, node.lineno, in_function) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node.level, node.module)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    found.append(Import(module, sub if sub in known else base, node.lineno, in_function))
            else:
                nested = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                visit(list(ast.iter_child_nodes(node)), nested)

    visit(tree.body, False)
    return found


def all_imports(root: pathlib.Path) -> list[Import]:
    modules = project_modules(root)
    known = set(modules)
    return [imp for name, path in modules.items() for imp in imports_of(name, path, known)]


def _owner(target: str, known: set[str]) -> str | None:
    """The project module ``target`` is, or lies in (``lib.x.y.Name`` -> ``lib.x.y``)."""
    parts = target.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in known:
            return name
    return None


def module_graph(root: pathlib.Path) -> dict[str, set[str]]:
    """Module -> the project modules it imports at module level."""
    known = set(project_modules(root))
    graph: dict[str, set[str]] = {m: set() for m in known}
    for imp in all_imports(root):
        target = _owner(imp.target, known)
        if not imp.in_function and target and target != imp.source:
            graph[imp.source].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``[a, b, ..., a]``) per strongly connected component that has one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def strongconnect(v: str) -> None:  # Tarjan; the graphs are small enough for recursion
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            components.append(comp)

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)

    cycles = []
    for comp in components:
        start = min(comp)
        if len(comp) == 1 and start not in graph.get(start, ()):
            continue
        # breadth-first from start back to start inside the component: a shortest cycle
        prev: dict[str, str] = {}
        queue = [start]
        while queue and start not in prev:
            v = queue.pop(0)
            for w in sorted(graph[v] & comp):
                if w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        v = prev[start]
        while v != start:
            path.append(v)
            v = prev[v]
        cycles.append([start, *reversed(path[1:]), start])
    return cycles


def layer_of(module: str) -> str | None:
    """``jobs``, ``stage``, ``format`` or ``base``; None for ``lib`` itself and unknown packages."""
    parts = module.split(".")
    if parts[0] == "jobs":
        return "jobs"
    if parts[0] != "lib" or len(parts) < 2:
        return None
    pkg = parts[1]
    return "base" if pkg in BASE else "format" if pkg in FORMATS else "stage" if pkg in STAGES else None


def upward_imports(root: pathlib.Path, source_layers: set[str], target_layers: set[str]) -> list[Import]:
    """Imports (module level or not) from a module in ``source_layers`` into one in ``target_layers``."""
    known = set(project_modules(root))
    out = []
    for imp in all_imports(root):
        target = _owner(imp.target, known)
        if target and layer_of(imp.source) in source_layers and layer_of(target) in target_layers:
            out.append(imp)
    return out


def unplaced_packages(root: pathlib.Path) -> list[str]:
    """lib/ packages that belong to no layer (a new package must be given one here)."""
    return sorted(
        p.name
        for p in (root / "lib").iterdir()
        if (p / "__init__.py").is_file() and p.name not in BASE | FORMATS | STAGES
    )


def hidden_imports(root: pathlib.Path, allowed: dict[str, str]) -> list[Import]:
    """Function-level imports of anything but an allow-listed optional dependency."""
    return [imp for imp in all_imports(root) if imp.in_function and imp.target.split(".")[0] not in allowed]


def layout_missing(root: pathlib.Path) -> list[str]:
    """``lib/<package>`` and ``jobs/<name>.py`` entries missing from docs/layout.md's "## Layout" section."""
    readme = (root / "docs" / "layout.md").read_text(encoding="utf-8")
    match = re.search(r"^## Layout\s*$(.*?)(?=^## |\Z)", readme, re.S | re.M)
    section = match.group(1) if match else ""
    want = [f"lib/{p.name}" for p in sorted((root / "lib").iterdir()) if (p / "__init__.py").is_file()]
    want += [f"jobs/{p.name}" for p in sorted((root / "jobs").glob("*.py")) if p.name != "__init__.py"]
    return [w for w in want if not re.search(re.escape(w) + r"(?![\w.])", section)]


#: folders of the project root that hold no project source (virtual environments, build output)
_NOT_SOURCE = {"tests", "build", "dist", ".venv", "venv", "node_modules"}
_RUNS_TESTS_MODULE = re.compile(r"-m\s+tests\.|\btests\.[A-Za-z_]+\s+import\b")


def imports_of_tests(root: pathlib.Path) -> list[str]:
    """Places outside ``tests/`` that import the ``tests`` package (Python imports, and ``-m tests.x``
    runs in the Makefile and shell scripts): tests may use the rest of the tree, never the reverse."""
    out = []
    tops = [p for p in sorted(root.iterdir()) if p.name not in _NOT_SOURCE and not p.name.startswith(".")]
    for path in (f for top in tops for f in ([top] if top.is_file() else sorted(top.rglob("*")))):
        rel = path.relative_to(root)
        if path.suffix == ".py":
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                out += [f"{rel}:{node.lineno} imports {n}" for n in names if n == "tests" or n.startswith("tests.")]
        elif path.name == "Makefile" or path.suffix in (".sh", ".mk", ".toml", ".cfg", ".ini", ".yml", ".yaml"):
            for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if _RUNS_TESTS_MODULE.search(line):
                    out.append(f"{rel}:{i} runs {line.strip()}")
    return out


# -- the project ------------------------------------------------------------------------


def test_no_import_cycles():
    cycles = find_cycles(module_graph(ROOT))
    assert not cycles, "import cycles (module level):\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_lib_never_imports_jobs():
    bad = upward_imports(ROOT, {"base", "format", "stage"}, {"jobs"})
    assert not bad, "lib/ imports jobs/:\n" + "\n".join(map(str, bad))


def test_base_imports_no_other_lib_package():
    bad = upward_imports(ROOT, {"base"}, {"format", "stage", "jobs"})
    assert not bad, "a base package (store, runtime, pages, errors) imports a higher lib package:\n" + "\n".join(
        map(str, bad)
    )


def test_format_packages_import_no_stage_package():
    bad = upward_imports(ROOT, {"format"}, {"stage", "jobs"})
    assert not bad, "a format package (warc, html, ciff) imports a stage package:\n" + "\n".join(map(str, bad))


def test_every_lib_package_has_a_layer():
    assert not unplaced_packages(ROOT), "give these lib/ packages a layer in tests/test_structure.py"


def test_function_level_imports_are_optional_dependencies_only():
    bad = hidden_imports(ROOT, OPTIONAL_IMPORTS)
    assert not bad, (
        "imports inside functions (move them to module level, or allow-list an optional "
        "dependency in OPTIONAL_IMPORTS with the reason):\n" + "\n".join(map(str, bad))
    )


def test_optional_imports_are_not_declared_dependencies():
    """The allow-list may only name packages pyproject.toml does not require."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    distributions = {"yaml": "pyyaml", "irods": "python-irodsclient", "airflow": "apache-airflow"}
    declared = [m for m in OPTIONAL_IMPORTS if distributions.get(m, m) in names]
    assert not declared, f"declared dependencies belong at module level: {declared}"


def test_layout_doc_lists_every_package_and_job():
    missing = layout_missing(ROOT)
    assert not missing, "docs/layout.md '## Layout' does not mention: " + ", ".join(missing)


def test_nothing_outside_tests_imports_tests():
    found = imports_of_tests(ROOT)
    assert not found, "code outside tests/ uses the tests package (move what it needs to devtools/): " + "; ".join(
        found
    )


# -- each check fails when it should ----------------------------------------------------


def _tree(tmp_path: pathlib.Path, files: dict[str, str], readme: str = "## Layout\n") -> pathlib.Path:
    for rel, text in {"lib/__init__.py": "", "jobs/__init__.py": "", **files}.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "layout.md").write_text(readme)
    return tmp_path


def test_cycle_check_fails_on_a_cycle(tmp_path):
    root = _tree(
        tmp_path,
        {
            "lib/placement/__init__.py": "",
            "lib/placement/a.py": "from lib.placement import b\n",
            "lib/placement/b.py": "from lib.placement.c import f\n",
            "lib/placement/c.py": "from . import a\n",  # relative imports count too
            "lib/placement/d.py": "from lib.placement import a\n",  # leads into the cycle, not part of it
        },
    )
    assert find_cycles(module_graph(root)) == [
        ["lib.placement.a", "lib.placement.b", "lib.placement.c", "lib.placement.a"]
    ]


def test_cycle_check_sees_package_init_cycles(tmp_path):
    root = _tree(
        tmp_path,
        {
            "lib/staging/__init__.py": "from lib.staging.targets import T\n",
            "lib/staging/targets.py": "from lib.staging import StagingError\n",
        },
    )
    assert find_cycles(module_graph(root)) == [["lib.staging", "lib.staging.targets", "lib.staging"]]


def test_cycle_check_ignores_function_level_and_type_checking_imports(tmp_path):
    root = _tree(
        tmp_path,
        {
            "lib/staging/__init__.py": "def f():\n    from lib.staging import targets\n",
            "lib/staging/targets.py": (
                "from typing import TYPE_CHECKING\nimport lib.staging\n"
                "if TYPE_CHECKING:\n    from lib.staging import other\n"
            ),
            "lib/staging/other.py": "from lib.staging import targets\n",
        },
    )
    assert find_cycles(module_graph(root)) == []


def test_layer_checks_fail_on_upward_imports(tmp_path):
    root = _tree(
        tmp_path,
        {
            "lib/store/__init__.py": "",
            "lib/store/disk.py": "from lib.warc import records\n",
            "lib/warc/__init__.py": "",
            "lib/warc/records.py": "def f():\n    import lib.extract.task\n",
            "lib/extract/__init__.py": "",
            "lib/extract/task.py": "from jobs.extract import main\nfrom lib.store import disk\n",
            "jobs/extract.py": "from lib.extract import task\n",
        },
    )
    assert [str(i) for i in upward_imports(root, {"base", "format", "stage"}, {"jobs"})] == [
        "lib.extract.task:1 imports jobs.extract (at module level)"
    ]
    assert [str(i) for i in upward_imports(root, {"base"}, {"format", "stage", "jobs"})] == [
        "lib.store.disk:1 imports lib.warc.records (at module level)"
    ]
    assert [str(i) for i in upward_imports(root, {"format"}, {"stage", "jobs"})] == [
        "lib.warc.records:2 imports lib.extract.task (inside a function)"
    ]


def test_unplaced_package_is_reported(tmp_path):
    root = _tree(tmp_path, {"lib/store/__init__.py": "", "lib/misc/__init__.py": ""})
    assert unplaced_packages(root) == ["misc"]


def test_hidden_import_check_fails_on_a_function_level_import(tmp_path):
    root = _tree(
        tmp_path,
        {
            "lib/store/__init__.py": "",
            "lib/store/m.py": (
                "import json\n\n"
                "def f():\n    import numpy as np\n    from airflow.sdk import dag\n\n"
                "class C:\n    def g(self):\n        from lib.store import m\n"
            ),
        },
    )
    assert [str(i) for i in hidden_imports(root, OPTIONAL_IMPORTS)] == [
        "lib.store.m:4 imports numpy (inside a function)",
        "lib.store.m:9 imports lib.store.m (inside a function)",
    ]


def test_layout_check_reports_what_the_layout_doc_misses(tmp_path):
    files = {
        "lib/store/__init__.py": "",
        "lib/index/__init__.py": "",
        "lib/indexer/__init__.py": "",
        "jobs/index.py": "",
        "jobs/demo.py": "",
    }
    readme = (
        "# x\n\n## Layout\n\n| `lib/store/` | store |\n| `lib/indexer/` | x |\n| `jobs/index.py` | y |\n\n"
        "## Other\n\n`lib/index/` and `jobs/demo.py` are mentioned, but outside the section\n"
    )
    assert layout_missing(_tree(tmp_path, files, readme)) == ["lib/index", "jobs/demo.py"]


def test_tests_import_check_fails_on_each_way_in(tmp_path):
    root = _tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/seaweed.py": "X = 1\n",
            "tests/test_a.py": "from tests.seaweed import X\n",  # inside tests/: allowed
            "benchmarks/bench_x.py": "import os\n\ndef f():\n    from tests.seaweed import X\n",
            "scripts/tool.py": "import tests.seaweed as s\nfrom lib import tests_helpers\n",
            "devtools/ok.py": "from . import tests\nimport testsuite\n",  # relative import, another package
            "Makefile": "demo:\n\tpython -m tests.seaweed -- true\n\tpython -m pytest tests/serve\n",
            "build/lib/x.py": "import tests\n",  # build output is not source
        },
    )
    assert imports_of_tests(root) == [
        "Makefile:2 runs python -m tests.seaweed -- true",
        "benchmarks/bench_x.py:4 imports tests.seaweed",
        "scripts/tool.py:1 imports tests.seaweed",
    ]


@pytest.mark.parametrize(
    "module,is_package,level,name,want",
    [
        ("lib.placement.slices", False, 1, "rebalance", "lib.placement.rebalance"),
        ("lib.placement", True, 1, "slices", "lib.placement.slices"),
        ("lib.placement.slices", False, 2, "core", "lib.core"),
        ("lib.placement.slices", False, 0, "lib.core", "lib.core"),
    ],
)
def test_relative_imports_resolve(module, is_package, level, name, want):
    assert _resolve(module, is_package, level, name) == want
