"""Community uploads on a local root: accepted ones published whole, bad ones refused with every reason, quotas."""

from __future__ import annotations

import gzip
import json
import pathlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from lib.community import accept
from lib.community.__main__ import main
from lib.community.uploads import GRAPH_COLUMNS
from lib.errors import ConfigError
from tests.community.helpers_uploads import make_upload, register, write_manifest


def _incoming(root: pathlib.Path, party: str, upload: str) -> pathlib.Path:
    return root / "community" / party / "incoming" / upload


def test_an_accepted_upload_is_published_as_checked_and_its_incoming_copy_removed(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    manifest = make_upload(_incoming(tmp_path, "alpha", "u1"))
    sources = {rel: (_incoming(tmp_path, "alpha", "u1") / rel).read_bytes() for rel in manifest["files"]}
    (verdict,) = accept.process_all(str(tmp_path))
    assert verdict["status"] == "accepted", verdict["reasons"]
    out = tmp_path / "community" / "alpha" / "published" / "u1"
    assert (out / "_SUCCESS").exists()
    assert {rel: (out / rel).read_bytes() for rel in manifest["files"]} == sources
    assert json.loads((out / "_manifest.json").read_text()) == manifest
    assert not _incoming(tmp_path, "alpha", "u1").exists()
    state = accept.party_state(str(tmp_path), "alpha")
    assert [p["upload"] for p in state["published"]] == ["u1"]
    assert state["used_bytes"] == sum(e["bytes"] for e in manifest["files"].values())
    assert accept.process_all(str(tmp_path)) == []  # a re-run finds nothing pending


def _refused(root: pathlib.Path, party: str, upload: str) -> dict:
    (v,) = [v for v in accept.process_all(str(root)) if v["upload"] == upload]
    assert v["status"] == "refused"
    assert not (root / "community" / party / "published" / upload).exists()  # nothing half-published
    saved = json.loads((root / "community" / party / "verdicts" / f"{upload}.json").read_text())
    assert saved["reasons"] == v["reasons"]
    return v


def test_an_unknown_metadata_column_is_refused_with_its_name(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    make_upload(_incoming(tmp_path, "alpha", "u2"), unknown_column=True)
    v = _refused(tmp_path, "alpha", "u2")
    assert any("metadata/metadata-0.parquet" in r and "sentiment" in r for r in v["reasons"]), v["reasons"]


def test_a_malformed_ciff_is_refused_with_the_validators_position(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    folder = _incoming(tmp_path, "alpha", "u3")
    make_upload(folder)
    ciff = folder / "ciff" / "index-0.ciff.gz"
    raw = gzip.decompress(ciff.read_bytes())
    ciff.write_bytes(gzip.compress(raw[:-3]))  # the last document record cut short
    write_manifest(folder)  # the sha256 matches: the CIFF validator must be what refuses it
    v = _refused(tmp_path, "alpha", "u3")
    assert any(r.startswith("ciff/index-0.ciff.gz: malformed CIFF") for r in v["reasons"]), v["reasons"]


def test_a_file_changed_after_its_manifest_or_unlisted_is_refused(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    folder = _incoming(tmp_path, "alpha", "u4")
    make_upload(folder)
    edges = folder / "graph" / "edges.parquet"
    edges.write_bytes(edges.read_bytes()[::-1][: edges.stat().st_size])  # same size, other bytes
    (folder / "stray.txt").write_text("x")
    v = _refused(tmp_path, "alpha", "u4")
    assert any(r.startswith("stray.txt: uploaded, not in the manifest") for r in v["reasons"]), v["reasons"]
    (folder / "stray.txt").unlink()
    write_manifest(folder)  # the party fixes the manifest: checked again, now sha256 matches, Parquet does not
    v = _refused(tmp_path, "alpha", "u4")
    assert any(r.startswith("graph/edges.parquet: not a readable Parquet file") for r in v["reasons"]), v["reasons"]


def test_a_bad_manifest_is_refused_entry_by_entry(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    folder = _incoming(tmp_path, "alpha", "u5")
    make_upload(folder)
    doc = json.loads((folder / "_manifest.json").read_text())
    doc["files"]["../escape"] = {"kind": "ciff", "bytes": 1, "sha256": "0" * 64}
    doc["files"]["ciff/index-0.ciff.gz"]["kind"] = "model"
    doc["files"]["graph/edges.parquet"]["sha256"] = "abc"
    (folder / "_manifest.json").write_text(json.dumps(doc))
    reasons = _refused(tmp_path, "alpha", "u5")["reasons"]
    assert "'../escape': not a safe relative path inside the upload" in reasons
    assert any(r.startswith("ciff/index-0.ciff.gz: unknown kind 'model'") for r in reasons)
    assert any(r.startswith("graph/edges.parquet: sha256 must be 64") for r in reasons)


def test_the_quota_refuses_an_upload_that_would_exceed_it(tmp_path) -> None:
    first = make_upload(_incoming(tmp_path, "beta", "u1"))
    size = sum(e["bytes"] for e in first["files"].values())
    register(tmp_path, {"beta": size + size // 2})
    assert [v["status"] for v in accept.process_all(str(tmp_path), "beta")] == ["accepted"]
    make_upload(_incoming(tmp_path, "beta", "u2"))
    v = _refused(tmp_path, "beta", "u2")
    assert v["reasons"] == [
        f"quota exceeded: {size:,} bytes published + {size:,} bytes in this upload > quota {size + size // 2:,} bytes"
    ]
    state = accept.party_state(str(tmp_path), "beta")
    assert [r["upload"] for r in state["refused"]] == ["u2"] and state["pending"] == []
    assert accept.process_all(str(tmp_path)) == []  # refused under this quota: not checked again
    register(tmp_path, {"beta": 2 * size})  # the operator raises the quota: checked again, accepted
    assert [(v["upload"], v["status"]) for v in accept.process_all(str(tmp_path))] == [("u2", "accepted")]
    assert accept.party_state(str(tmp_path), "beta")["used_bytes"] == 2 * size


def test_an_upload_without_its_manifest_waits_and_a_published_id_cannot_change(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    folder = _incoming(tmp_path, "alpha", "u6")
    make_upload(folder)
    (folder / "_manifest.json").unlink()
    assert accept.process_all(str(tmp_path)) == []  # still uploading
    write_manifest(folder)
    assert accept.process_all(str(tmp_path))[0]["status"] == "accepted"
    make_upload(_incoming(tmp_path, "alpha", "u6"), unknown_column=False)
    (_incoming(tmp_path, "alpha", "u6") / "graph" / "more.parquet").write_bytes(
        (tmp_path / "community/alpha/published/u6/graph/edges.parquet").read_bytes()
    )
    write_manifest(_incoming(tmp_path, "alpha", "u6"))
    v = _refused_keeping(tmp_path, "alpha", "u6")
    assert any("is published already and cannot change" in r for r in v["reasons"])


def _refused_keeping(root: pathlib.Path, party: str, upload: str) -> dict:
    (v,) = accept.process_all(str(root))
    assert v["status"] == "refused"
    assert (root / "community" / party / "published" / upload / "_SUCCESS").exists()  # the accepted one stays
    assert not (root / "community" / party / "published" / upload / "graph" / "more.parquet").exists()
    return v


def test_the_command_line_and_bad_party_config(tmp_path, capsys) -> None:
    register(tmp_path, {"alpha": None})
    make_upload(_incoming(tmp_path, "alpha", "u7"), unknown_column=True)
    assert main(["validate", "--root", str(tmp_path)]) == 1
    assert "alpha/u7: refused" in capsys.readouterr().out
    assert main(["validate", "--root", str(tmp_path), "--party", "nobody"]) == 2
    assert "'nobody' is not registered" in capsys.readouterr().err
    (tmp_path / "community" / "_parties.json").write_text(json.dumps({"parties": {"Bad Name": {}}}))
    with pytest.raises(ConfigError, match="party name 'Bad Name'"):
        accept.load_parties(str(tmp_path))
    assert main(["policy", "--party", "alpha", "--bucket", "crawl", "--format", "seaweed"]) == 0
    assert capsys.readouterr().out.strip().split(",") == [
        "Read:crawl/community/alpha/*",
        "List:crawl/community/alpha/*",
        "Write:crawl/community/alpha/incoming/*",
    ]


def test_a_known_column_of_another_type_and_bad_edges_are_refused(tmp_path) -> None:
    register(tmp_path, {"alpha": None})
    folder = _incoming(tmp_path, "alpha", "u8")
    make_upload(folder)
    pq.write_table(pa.table({"id": ["x"], "warc_ip": [17]}), folder / "metadata" / "metadata-0.parquet")
    pq.write_table(pa.table({"src_url": ["a"], "weight": [1.0]}), folder / "graph" / "edges.parquet")
    write_manifest(folder)
    reasons = _refused(tmp_path, "alpha", "u8")["reasons"]
    assert reasons == [
        "graph/edges.parquet: missing column dst_url",
        f"graph/edges.parquet: unknown column(s) weight (edges have {', '.join(GRAPH_COLUMNS)})",
        "metadata/metadata-0.parquet: column warc_ip is int64, the metadata schema says string",
    ]
