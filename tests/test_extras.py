"""Dependencies by role: the pipeline runs on a node without the service's, the report's or the
development tools' packages, and a part whose extra is missing says which extra to install.

Each check runs in a fresh interpreter where the extra's modules are made unimportable
(``sys.modules[name] = None``, as for a package that is not installed)."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap
import tomllib

from packaging.requirements import Requirement

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
#: the import names of the role extras' packages
SERVE = ("fastapi", "uvicorn", "httpx")
REPORT = ("matplotlib",)
DEV = ("ruff", "mypy", "uv")


def _without(modules: tuple[str, ...], code: str) -> subprocess.CompletedProcess[str]:
    hide = "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    src = "import sys\n" + hide + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", src], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_roles_are_extras_not_core():
    core = {
        Requirement(r).name for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    }
    for extra, names in (("serve", SERVE), ("report", REPORT), ("dev", DEV)):
        declared = {Requirement(r).name for r in EXTRAS[extra]}
        assert set(names) <= declared, (extra, declared)
        assert not core & declared, f"{extra}'s packages are core dependencies too: {core & declared}"


def _import_names_the_extra(hidden: tuple[str, ...], module: str, first: str = "") -> str:
    """Import ``module`` (after the statements ``first``) with ``hidden`` unimportable; the
    MissingExtra's text (the check fails if the import succeeds or raises anything else)."""
    p = _without(
        hidden,
        first
        + f"""
try:
    import {module}
except ImportError as e:
    from lib.errors import MissingExtra
    assert isinstance(e, MissingExtra), type(e)
    print(e)
else:
    raise SystemExit("{module} imported without {hidden[0]}")
""",
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_import_lib_serve_names_the_missing_extra():
    out = _import_names_the_extra(("fastapi",), "lib.serve")
    assert "needs the 'serve' extra (fastapi not installed)" in out
    assert "pip install 'daily-index-slice[serve]'" in out


def test_pipeline_jobs_run_on_a_node_without_the_extras():
    """The jobs a cluster node runs import, and the catalogue's report renders every plot's data as a
    table, with none of the service's, the report's or the development tools' packages."""
    p = _without(
        SERVE + REPORT + DEV,
        """
        import jobs.preprocess, jobs.index, jobs.catalogue, jobs.extract, jobs.exchange
        from lib.catalogue import report

        assert report.plt is None
        stats = {
            "by_language": [{"key": "deu", "count": 7}], "by_mime": [{"key": "text/html", "count": 9}],
            "by_status": [{"key": "200", "count": 9}], "top_hosts": [{"key": "example.org", "count": 9}],
            "duplicates": {"unique": 8, "revisit": 1}, "page_sizes": [{"bucket": 10, "count": 9}],
            "captures": 9, "urls": 8, "pages": 7, "day": "2026-01-15",
        }
        page = report.render(stats, [("eng/index-0.ciff.gz", 2048)])
        print(page)
        """,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    page = p.stdout
    assert page.count("plots need the report extra") == 7
    for cell in ("<td>deu</td><td>7</td>", "<td>example.org</td><td>9</td>", "<td>revisit</td><td>1</td>"):
        assert cell in page, cell
    assert "<td>eng/index-0.ciff.gz</td><td>2</td>" in page  # KiB
    assert "<svg" not in page


def test_the_swap_servers_name_their_extra_and_publishing_needs_none():
    """``lib.placement.net`` without aiohttp says to install the 'swap' extra; the placement CLI
    (publishing into a SWAP collection over HTTP included) imports without it."""
    first = "import lib.placement.__main__\nfrom lib.placement.publish_http import publish_http\n"
    out = _import_names_the_extra(("aiohttp", "httpx"), "lib.placement.net.routes", first)
    assert "needs the 'swap' extra (aiohttp, httpx not installed)" in out
