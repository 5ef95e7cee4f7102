"""lib.store.atomic: a file appears whole under its final name, or not at all."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lib.store import atomic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_success_leaves_the_exact_bytes_and_no_temp(tmp_path):
    final = tmp_path / "sub" / "out.bin"  # the folder is created
    data = bytes(range(256)) * 1000
    with atomic.atomic_file(str(final)) as f:
        f.write(data[:1000])
        assert not final.exists()  # nothing under the final name while writing
        f.write(data[1000:])
    assert final.read_bytes() == data
    assert os.listdir(final.parent) == ["out.bin"]


def test_error_removes_the_temp_and_keeps_the_old_file(tmp_path):
    final = tmp_path / "out.txt"
    final.write_text("old")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic.atomic_file(str(final), "w", encoding="utf-8") as f:
            f.write("new, half")
            raise RuntimeError("boom")
    assert final.read_text() == "old"
    assert os.listdir(tmp_path) == ["out.txt"]
    with pytest.raises(ValueError):
        with atomic.atomic_path(str(tmp_path / "fresh.bin")) as tmp:
            open(tmp, "wb").write(b"x")
            raise ValueError
    assert os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("existing", [None, b"previous complete content"])
def test_crash_mid_write_leaves_no_final_file(tmp_path, existing):
    final = tmp_path / "out.bin"
    if existing is not None:
        final.write_bytes(existing)
    code = ("import os, sys; from lib.store import atomic\n"
            "with atomic.atomic_file(sys.argv[1], fsync=True) as f:\n"
            "    f.write(b'half of it'); f.flush(); os._exit(9)\n")  # killed: no cleanup runs
    rc = subprocess.run([sys.executable, "-c", code, str(final)], cwd=ROOT).returncode
    assert rc == 9
    if existing is None:
        assert not final.exists()
    else:
        assert final.read_bytes() == existing
    leftovers = [n for n in os.listdir(tmp_path) if n != "out.bin"]
    assert len(leftovers) == 1 and atomic.is_temp(leftovers[0]) and leftovers[0].startswith(".out.bin.tmp-")


def test_temp_names_are_hidden_unique_siblings(tmp_path):
    final = str(tmp_path / "index-3.ciff.gz")
    a, b = atomic.temp_path(final), atomic.temp_path(final)
    assert a != b and os.path.dirname(a) == str(tmp_path)
    assert os.path.basename(a).startswith(f".index-3.ciff.gz.tmp-{os.getpid()}-")
    assert atomic.is_temp(a) and atomic.is_temp(os.path.basename(b))
    for name in ("index-3.ciff.gz", ".hidden", ".x.swaptmp", "x.tmp-1-abcdef01", ".x.tmp-1-xyz"):
        assert not atomic.is_temp(name)


def test_replace_syncs_file_then_folder_and_discard_is_quiet(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(os.path.isdir(f"/proc/self/fd/{fd}")) or real_fsync(fd))
    final = str(tmp_path / "_SUCCESS")
    tmp = atomic.temp_path(final)
    with open(tmp, "w") as f:
        f.write("{}")
    atomic.replace(tmp, final, fsync=True)
    assert open(final).read() == "{}" and not os.path.exists(tmp)
    assert synced == [False, True]  # the data before the rename, the folder entry after it
    synced.clear()
    atomic.write_bytes(final, b"again", fsync=True)
    assert open(final, "rb").read() == b"again" and synced == [False, True]
    synced.clear()
    atomic.write_bytes(final, b"plain")
    assert synced == []
    atomic.discard(tmp)  # already gone
    atomic.discard(None)
