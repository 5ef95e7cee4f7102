"""Replication per folder: rules checked at load, staging to every holder, the copies compared by check-days."""

from __future__ import annotations

import datetime as dt
import json
import pathlib

import pytest

from lib.errors import ConfigError
from lib.orchestration import days, replicas
from lib.orchestration.datacenters import load_config
from lib.orchestration.replication import FOLDER_KINDS, exchange_partners
from lib.orchestration.stage_outputs import stage_replicated

DAY = dt.date(2026, 3, 4)


def _config(tmp_path: pathlib.Path, replication: object, **extra: dict) -> str:
    doc = {
        "datacenters": {
            dc: {
                "s3": {"bucket": f"crawl-{dc}"},
                "staging": {"type": "filesystem", "path": str(tmp_path / "archive" / dc)},
            }
            for dc in ("dc-a", "dc-b", "dc-c")
        },
        "replication": replication,
    }
    for dc, over in extra.items():
        doc["datacenters"][dc.replace("_", "-")].update(over)
    path = tmp_path / "datacenters.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize(
    "rule, message",
    [
        ({"index": ["dc-a", "dc-x"]}, "replication.index: unknown data center(s) 'dc-x' (known: dc-a, dc-b, dc-c)"),
        ({"community": "dc-z"}, "replication.community: unknown data center(s) 'dc-z'"),
        ({"indexes": "all"}, "replication: unknown folder kind(s) 'indexes'"),
        ({"public": []}, "replication.public: give 'own', 'all', a data center or a non-empty list"),
        ({"urldb": ["dc-a", "dc-a"]}, "replication.urldb: a data center is named twice"),
        (["index"], "replication must map folder kinds to data centers"),
    ],
)
def test_a_bad_rule_is_refused_at_load_with_the_reason(tmp_path, rule, message) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, rule))
    assert message in str(e.value)
    assert str(tmp_path / "datacenters.json") in str(e.value)


def test_rules_expand_per_kind_and_a_slices_target_cannot_hold_copies(tmp_path) -> None:
    cfgs = load_config(_config(tmp_path, {"index": "all", "shared/auxiliary": "all", "preprocessed": ["dc-b"]}))
    a = cfgs["dc-a"]["replication"]
    assert set(a) == set(FOLDER_KINDS)
    assert [h["dc"] for h in a["index"]] == ["dc-a", "dc-b", "dc-c"]
    assert a["index"][1]["staging"]["path"] == str(tmp_path / "archive" / "dc-b" / "_replicas" / "dc-a")
    assert a["index"][0]["staging"]["path"] == str(tmp_path / "archive" / "dc-a")  # its own: the usual layout
    assert [h["dc"] for h in a["preprocessed"]] == ["dc-b"]
    assert [h["dc"] for h in a["warc"]] == ["dc-a"]  # no rule: own
    slices = {"dc_b": {"staging": {"type": "slices", "config": "/etc/slices.json"}}}
    with pytest.raises(ConfigError, match=r"replication.index: staging type 'slices' cannot hold"):
        load_config(_config(tmp_path, {"index": "all"}, **slices))
    assert load_config(_config(tmp_path, {"catalogue": "own"}, **slices))  # no copies asked of it: fine


def _day_folder(root: pathlib.Path, kind: str, files: dict[str, str]) -> str:
    folder = root / kind
    for rel, text in {**files, "_SUCCESS": ""}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return str(folder)


def test_staging_follows_the_rules_and_check_days_reports_missing_or_different_copies(tmp_path, capsys) -> None:
    config = _config(tmp_path, {"index": "all", "preprocessed": ["dc-b"]})
    cfgs = load_config(config)
    scratch = tmp_path / "scratch"
    marker = {
        "outputs": {
            "index": _day_folder(
                scratch, "index", {"language=eng/index-0.ciff.gz": "ciff", "graph/edges.parquet": "e"}
            ),
            "preprocessed": _day_folder(scratch, "preprocessed", {"language=eng/part-0.zstd.parquet": "pages"}),
            "catalogue": _day_folder(scratch, "catalogue", {"captures.cdxj": "cdx"}),
        }
    }
    report = stage_replicated(marker, cfgs["dc-a"], "dc-a", DAY)
    assert sorted(report) == ["catalogue", "index", "replicas"]  # own target: no preprocessed copy
    assert sorted(report["replicas"]) == ["dc-b", "dc-c"]
    assert sorted(report["replicas"]["dc-b"]) == ["index", "preprocessed"]
    archive = tmp_path / "archive"
    day = "2026-03/04"
    assert (archive / "dc-a" / "index" / day / "_SUCCESS").exists()
    assert not (archive / "dc-a" / "preprocessed").exists()
    assert (
        archive / "dc-b" / "_replicas" / "dc-a" / "preprocessed" / day / "language=eng/part-0.zstd.parquet"
    ).exists()
    assert (archive / "dc-c" / "_replicas" / "dc-a" / "index" / day / "graph/edges.parquet").read_text() == "e"
    again = stage_replicated(marker, cfgs["dc-a"], "dc-a", DAY)  # a re-run copies nothing
    assert again["index"]["copied"] == 0 and again["replicas"]["dc-c"]["index"]["copied"] == 0

    rows = replicas.check_replicas(cfgs, [DAY])
    assert [(r["producer"], r["kind"], r["state"]) for r in rows] == [("dc-a", "index", "consistent")]
    (archive / "dc-c" / "_replicas" / "dc-a" / "index" / day / "graph/edges.parquet").write_text("tampered")
    (archive / "dc-b" / "_replicas" / "dc-a" / "index" / day / "language=eng/index-0.ciff.gz").unlink()
    (row,) = replicas.check_replicas(cfgs, [DAY])
    assert row["state"] == "differs"
    assert sorted(row["differs"]) == ["graph/edges.parquet"]
    assert row["missing_files"] == {"dc-b": ["language=eng/index-0.ciff.gz"]}

    argv = ["--root", str(tmp_path / "crawl"), "--end", DAY.isoformat(), "--days", "1", "--datacenters", config]
    assert days.main(argv) == 1
    out = capsys.readouterr().out
    assert (
        "dc-a index 2026-03-04  differs (3 files at dc-a, dc-b, dc-c); dc-b lacks language=eng/index-0.ciff.gz" in out
    )
    assert "checksums differ: graph/edges.parquet" in out
    import shutil

    shutil.rmtree(archive / "dc-b" / "_replicas")
    shutil.copytree(archive / "dc-a" / "index", archive / "dc-c" / "_replicas" / "dc-a" / "index", dirs_exist_ok=True)
    assert days.main([*argv, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["replication"]["folders"]
    assert (row["state"], row["missing_copies"]) == ("missing", ["dc-b"])
    assert (
        days.main(["--root", str(tmp_path / "crawl"), "--end", DAY.isoformat(), "--days", "1"]) == 0
    )  # no config: days only


def test_check_days_refuses_a_config_with_an_unknown_data_center(tmp_path, capsys) -> None:
    config = _config(tmp_path, {"index": ["dc-a", "dc-q"]})
    with pytest.raises(SystemExit) as e:
        days.main(["--root", str(tmp_path), "--days", "1", "--datacenters", config])
    assert e.value.code == 2
    assert "unknown data center(s) 'dc-q'" in capsys.readouterr().err


def test_the_exchange_reads_a_partner_from_the_copy_it_holds(tmp_path) -> None:
    partners = {"dc-b": "s3://crawl-dc-b", "dc-c": "s3://crawl-dc-c", "elsewhere": "s3://other-org"}
    dc_a = {"exchange": {"enabled": True, "partners": partners}}
    held = load_config(_config(tmp_path, {"index": "all"}, dc_a=dc_a))["dc-a"]
    replica = tmp_path / "archive" / "dc-a" / "_replicas"
    assert exchange_partners(held, "dc-a") == {
        "dc-b": str(replica / "dc-b"),
        "dc-c": str(replica / "dc-c"),
        "elsewhere": "s3://other-org",  # not a data center of the file: nobody copies it here
    }
    not_held = load_config(_config(tmp_path, {"index": ["dc-b", "dc-c"]}, dc_a=dc_a))["dc-a"]
    assert exchange_partners(not_held, "dc-a") == partners
    assert exchange_partners(load_config(_config(tmp_path, None, dc_a=dc_a))["dc-a"], "dc-a") == partners


def test_community_uploads_are_staged_to_the_holders_of_community_and_compared(tmp_path, capsys) -> None:
    from lib.community.__main__ import main as community
    from tests.community.helpers_uploads import make_upload, register

    config = _config(tmp_path, {"community": ["dc-a", "dc-c"]})
    root = tmp_path / "bucket-a"
    register(root, {"alpha": None})
    manifest = make_upload(root / "community" / "alpha" / "incoming" / "u1")
    argv = ["validate", "--root", str(root), "--json", "--datacenters", config, "--data-center", "dc-a"]
    assert community(argv) == 0
    (verdict,) = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "accepted" and sorted(verdict["staged"]["replicas"]) == ["dc-c"]
    sub = pathlib.Path("community/alpha/published/u1")
    own, held = tmp_path / "archive" / "dc-a" / sub, tmp_path / "archive" / "dc-c" / "_replicas" / "dc-a" / sub
    for folder in (own, held):
        assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == sorted(
            [*manifest["files"], "_manifest.json", "_SUCCESS"]
        )
    assert not (tmp_path / "archive" / "dc-b").exists()  # not a holder
    cfgs = load_config(config)
    assert [(r["kind"], r["state"]) for r in replicas.check_replicas(cfgs, [DAY])] == [("community", "consistent")]
    (held / "graph" / "edges.parquet").write_bytes(b"changed")
    (row,) = replicas.check_replicas(cfgs, [DAY])
    assert (row["state"], list(row["differs"])) == ("differs", ["alpha/published/u1/graph/edges.parquet"])
    assert community([*argv[:-1], "dc-q"]) == 2
    assert "--data-center 'dc-q': not a data center" in capsys.readouterr().err
