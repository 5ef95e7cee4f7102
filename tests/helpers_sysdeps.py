"""The versions of the system packages the suite runs against, for its header and docs/dependencies.md.

PyPI packages are pinned by requirements/lock.txt; Debian's are whatever the machine's release serves
(scripts/install-system-deps.sh), so each run prints them at its start: a failure after an apt upgrade
can then be read against the versions of the last green run."""

from __future__ import annotations

import re
import subprocess

#: (label, command, pattern of the version in its output)
PROBES: tuple[tuple[str, list[str], str], ...] = (
    ("java", ["java", "-version"], r'version "([^"]+)"'),
    ("slurm", ["/usr/sbin/slurmctld", "-V"], r"slurm[- ]?(?:wlm )?(\S+)"),
    ("munge", ["/usr/sbin/munged", "--version"], r"munge-(\S+)"),
    ("chromium", ["chromium", "--version"], r"Chromium (\S+)"),
    ("gcc", ["gcc", "-dumpfullversion"], r"(\S+)"),
    ("nginx", ["/usr/sbin/nginx", "-v"], r"nginx/(\S+)"),
    ("curl", ["curl", "--version"], r"curl (\S+)"),
)


def probe(cmd: list[str], pattern: str) -> str:
    """The version a command prints (stdout or stderr), or why there is none."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"missing ({type(e).__name__})"
    m = re.search(pattern, p.stdout + p.stderr, re.IGNORECASE)
    return m.group(1) if m else f"unknown (exit {p.returncode})"


def system_versions() -> dict[str, str]:
    """label -> version of every system package in PROBES."""
    return {label: probe(cmd, pattern) for label, cmd, pattern in PROBES}
