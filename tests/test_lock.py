"""requirements/lock.txt against pyproject.toml and the installed environment.

The lock is what `make setup` installs (the set of the last green run); pyproject.toml keeps the ranges
for other environments. These tests fail when the two drift apart (a range moved without `make lock`)
or when the environment running the suite is not the locked one.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import re
import sys
import tomllib

import pytest
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
BUILD_IN = ROOT / "requirements" / "build.in"
#: the extras the lock resolves (make lock); airflow comes in through the test extra
LOCKED_EXTRAS = ("test", "bench")
PROJECT = "daily-index-slice"


def parse_lock(text: str) -> dict[str, list[tuple[Version, str | None, int]]]:
    """name -> [(version, marker text or None, number of hashes)] for every `name==version` line (a
    universal lock pins a package once per fork of the resolution, each under its marker)."""
    out: dict[str, list[tuple[Version, str | None, int]]] = {}
    entry = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")
    current: str | None = None
    for line in text.splitlines():
        m = entry.match(line)
        if m:
            name = canonicalize_name(m.group(1))
            assert name not in out or (m.group(3) and all(mk for _, mk, _ in out[name])), f"{name} pinned twice"
            out.setdefault(name, []).append((Version(m.group(2)), m.group(3), 0))
            current = name
        elif current and line.strip().startswith("--hash=sha256:"):
            v, mk, n = out[current][-1]
            out[current][-1] = (v, mk, n + 1)
        elif not line.startswith(" "):
            current = None
    return out


def here(lock: dict[str, list[tuple[Version, str | None, int]]]) -> dict[str, Version]:
    """The version each package is locked at on this interpreter and platform (markers evaluated)."""
    return {name: v for name, pins in lock.items() for v, marker, _ in pins if _applies(marker)}


def project_requirements() -> list[Requirement]:
    """Every requirement the locked install must satisfy: core, the locked extras (self-references
    expanded), the build system's and requirements/build.in."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = meta["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    seen: set[str] = set()
    todo = list(LOCKED_EXTRAS)
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for r in map(Requirement, extras[extra]):
            if canonicalize_name(r.name) == PROJECT:
                todo.extend(r.extras)
            else:
                reqs.append(r)
    reqs += [Requirement(r) for r in meta["build-system"]["requires"]]
    reqs += [Requirement(line) for line in BUILD_IN.read_text().splitlines() if line.strip() and line[0] != "#"]
    return reqs


def _applies(marker_text: str | None) -> bool:
    if not marker_text:
        return True
    return Marker(marker_text).evaluate({**default_environment(), "extra": ""})


def test_parse_lock_reads_names_versions_markers_hashes():
    text = (
        "# header\n"
        "Foo_Bar==1.2.3 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n    # via x\n"
        "pisa==0.4.9 ; platform_machine == 'x86_64' \\\n    --hash=sha256:cc\n"
    )
    text += "nx==3.6.1 ; python_full_version < '3.12' \\\n    --hash=sha256:dd\n"
    text += "nx==3.7 ; python_full_version >= '3.12' \\\n    --hash=sha256:ee\n"
    got = parse_lock(text)
    assert got["foo-bar"] == [(Version("1.2.3"), None, 2)]
    assert got["pisa"] == [(Version("0.4.9"), "platform_machine == 'x86_64'", 1)]
    assert [v for v, _, _ in got["nx"]] == [Version("3.6.1"), Version("3.7")]
    assert here(got)["nx"] == (Version("3.6.1") if sys.version_info < (3, 12) else Version("3.7"))


def test_lock_satisfies_pyproject():
    """Every range of pyproject.toml (core, test, bench, airflow, build) admits the locked version:
    a range moved without `make lock` fails here, naming the package."""
    lock = here(parse_lock(LOCK.read_text()))
    problems = []
    for req in project_requirements():
        if req.marker is not None and not req.marker.evaluate({**default_environment(), "extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name not in lock:
            problems.append(f"{req}: not in requirements/lock.txt")
        elif not req.specifier.contains(lock[name], prereleases=True):
            problems.append(f"{req}: the lock has {lock[name]}")
    assert not problems, "pyproject.toml and the lock disagree (run `make lock`):\n" + "\n".join(problems)


def test_lock_pins_every_file_by_hash():
    lock = parse_lock(LOCK.read_text())
    assert len(lock) > 100
    assert not [n for n, pins in lock.items() for _, _, hashes in pins if hashes == 0]
    assert "make lock" in LOCK.read_text().splitlines()[1], "the lock names the command that writes it"


def test_installed_environment_is_the_locked_one():
    """The suite runs on exactly the locked set: a hand-installed or upgraded package is named."""
    drift = []
    for name, version in here(parse_lock(LOCK.read_text())).items():
        try:
            installed = Version(importlib.metadata.version(name))
        except importlib.metadata.PackageNotFoundError:
            drift.append(f"{name}=={version}: not installed")
            continue
        if installed != version:
            drift.append(f"{name}=={version}: {installed} installed")
    if drift and pathlib.Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
        pytest.skip(f"not make setup's .venv ({sys.prefix}): " + "; ".join(drift[:5]))
    assert not drift, "the environment is not the locked one (make setup reinstalls it):\n" + "\n".join(drift)
