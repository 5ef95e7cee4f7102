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
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = pathlib.Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "lock.txt"
BUILD_IN = ROOT / "requirements" / "build.in"
#: the extras the lock resolves (make lock); airflow comes in through the test extra
LOCKED_EXTRAS = ("test", "bench")
PROJECT = "daily-index-slice"


def parse_lock(text: str) -> dict[str, tuple[Version, str | None, int]]:
    """name -> (version, marker text or None, number of hashes) for every `name==version` line."""
    out: dict[str, tuple[Version, str | None, int]] = {}
    entry = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")
    current: str | None = None
    for line in text.splitlines():
        m = entry.match(line)
        if m:
            name = canonicalize_name(m.group(1))
            assert name not in out or out[name][1], f"{name} locked twice without markers"
            out[name] = (Version(m.group(2)), m.group(3), 0)
            current = name
        elif current and line.strip().startswith("--hash=sha256:"):
            v, mk, n = out[current]
            out[current] = (v, mk, n + 1)
        elif not line.startswith(" "):
            current = None
    return out


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
    from packaging.markers import Marker

    return Marker(marker_text).evaluate({**default_environment(), "extra": ""})


def test_parse_lock_reads_names_versions_markers_hashes():
    text = (
        "# header\n"
        "Foo_Bar==1.2.3 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n    # via x\n"
        "pisa==0.4.9 ; platform_machine == 'x86_64' \\\n    --hash=sha256:cc\n"
    )
    got = parse_lock(text)
    assert got["foo-bar"] == (Version("1.2.3"), None, 2)
    assert got["pisa"] == (Version("0.4.9"), "platform_machine == 'x86_64'", 1)


def test_lock_satisfies_pyproject():
    """Every range of pyproject.toml (core, test, bench, airflow, build) admits the locked version:
    a range moved without `make lock` fails here, naming the package."""
    lock = parse_lock(LOCK.read_text())
    problems = []
    for req in project_requirements():
        if req.marker is not None and not req.marker.evaluate({**default_environment(), "extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name not in lock:
            problems.append(f"{req}: not in requirements/lock.txt")
        elif not req.specifier.contains(lock[name][0], prereleases=True):
            problems.append(f"{req}: the lock has {lock[name][0]}")
    assert not problems, "pyproject.toml and the lock disagree (run `make lock`):\n" + "\n".join(problems)


def test_lock_pins_every_file_by_hash():
    lock = parse_lock(LOCK.read_text())
    assert len(lock) > 100
    assert not [n for n, (_, _, hashes) in lock.items() if hashes == 0]
    assert "make lock" in LOCK.read_text().splitlines()[1], "the lock names the command that writes it"


def test_installed_environment_is_the_locked_one():
    """The suite runs on exactly the locked set: a hand-installed or upgraded package is named."""
    lock = parse_lock(LOCK.read_text())
    drift = []
    for name, (version, marker, _) in lock.items():
        if not _applies(marker):
            continue
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
