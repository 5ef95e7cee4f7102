"""Packaging: the ``lib`` package as a zip that executors on other machines import."""

from __future__ import annotations

import os
import tempfile
import zipfile


def zip_lib() -> str:
    """Zip the whole ``lib`` package (this module sits in ``lib/runtime``) for ``addPyFile``;
    the path of the zip, in a fresh temporary folder."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(tempfile.mkdtemp(prefix="dailyslice-pyfiles-"), "lib.zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, dirnames, files in os.walk(here):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in files:
                if f.endswith(".py"):
                    full = os.path.join(dirpath, f)
                    z.write(full, os.path.join("lib", os.path.relpath(full, here)))
    return out
