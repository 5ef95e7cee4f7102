"""Headless Chromium (Debian's ``chromium``) for the tests of the pages the project shows."""

from __future__ import annotations

import pathlib
import shutil

import pytest

# fmt: off
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# fmt: on


def chromium(tmp_path: pathlib.Path, *flags: str) -> list[str]:
    """The start of a headless Chromium command line with its own profile under ``tmp_path``
    (``flags`` added); skips the test when Chromium is not installed."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium not installed (scripts/install-system-deps.sh installs it)")
    return [browser, *CHROMIUM_FLAGS, *flags, f"--user-data-dir={tmp_path / 'profile'}"]
