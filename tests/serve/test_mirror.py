"""Index updates for mirrors, end to end (docs/mirror.md): the demo day built by the pipeline in the
session Spark is published as update 1; a take-down purges one page (update 2); the day is indexed
again after one page's text changed and one page left (update 3). A local copy applies the updates
in order (from the root, and over real HTTP from the service with the download client's resume and
checksums) and equals the published slice by canonical digests after each; twice changes nothing,
out of order is refused naming the missing update, a torn apply leaves no copy that looks complete."""

from __future__ import annotations

import io
import json
import os
import pathlib
import re
import shutil

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs import index as index_job
from jobs import purge
from lib.index import mirror_apply
from lib.index.mirror_updates import OutOfOrder, complete, publish_update, read_manifest, updates_dir, verify_files
from lib.index.shard_digests import shard_digests
from lib.serve.app import create_app
from lib.serve.mirror_command import main as mirror_main
from lib.serve.server import ServerThread
from lib.store import layout
from tests.serve.fixtures_http import DEMO_DAY

INDEX_OPTS = ["--docs-per-shard", "20", "--min-group-docs", "5"]


def _pages(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted((root / layout.PREPROCESSED / f"{DEMO_DAY:%Y-%m}" / f"{DEMO_DAY:%d}").rglob("part-*.parquet"))


def _metadata(day: pathlib.Path) -> list[dict]:
    cols = ["collection_docid", "url", "language"]
    return [r for p in sorted(day.rglob(layout.METADATA_GLOB)) for r in pq.read_table(p, columns=cols).to_pylist()]


@pytest.fixture(scope="module")
def chain(published_root, spark, tmp_path_factory):
    """A copy of the demo root with three updates published; each step's slice digests and the
    documents the steps changed, taken from the published slice itself."""
    root = tmp_path_factory.mktemp("mirror") / "root"
    shutil.copytree(published_root, root, ignore=shutil.ignore_patterns("*.lock", "public"))
    day = pathlib.Path(layout.day_path(str(root), layout.INDEX, DEMO_DAY))
    steps: dict = {"digests": [], "manifests": []}

    def publish() -> None:
        man = publish_update(str(root), DEMO_DAY)
        assert man is not None
        steps["manifests"].append(man)
        steps["digests"].append(shard_digests(day, canonical=True))

    steps["docs1"] = _metadata(day)
    publish()
    # a take-down of a page that shares its shard with others
    target = steps["docs1"][3]
    (root / layout.EXCLUSIONS).write_text(
        json.dumps({"url": target["url"], "date": "2026-12-01", "reason": "test"}) + "\n"
    )
    assert purge.main(["--root", str(root), "--no-urldb", "--wait-lock", "0"], spark=spark) == 0
    steps["purged"] = target
    # the purge published update 2 itself (a root that publishes updates gets its take-downs in one)
    (seq, folder), *_ = reversed(complete(updates_dir(str(root))))
    assert seq == 2
    steps["manifests"].append(read_manifest(folder))
    steps["digests"].append(shard_digests(day, canonical=True))
    assert publish_update(str(root), DEMO_DAY) is None
    # the day again, after one page's text changed and another page left the preprocessed day
    after_purge = _metadata(day)
    changed, dropped = after_purge[0], after_purge[-1]
    for part in _pages(root):
        t = pq.read_table(part)
        rows = t.to_pylist()
        keep = [r for r in rows if r.get("url") != dropped["url"]]
        for r in keep:
            if r.get("url") == changed["url"]:
                r["plain_text"] = (r.get("plain_text") or "") + " zyzzyva marmalade"
        if keep != rows or any(r.get("url") == changed["url"] for r in rows):
            os.remove(part)
            pq.write_table(pa.Table.from_pylist(keep, schema=t.schema), part)
    argv = ["--date", DEMO_DAY.isoformat(), "--root", str(root), *INDEX_OPTS]
    assert index_job.main(argv, spark=spark) == 0
    steps["changed"], steps["dropped"] = changed, dropped
    publish()
    steps["root"], steps["day"] = root, day
    return steps


def _folders(root: pathlib.Path) -> list[str]:
    return [f for _, f in complete(updates_dir(str(root)))]


def test_updates_hold_the_changes_with_a_manifest(chain):
    m1, m2, m3 = chain["manifests"]
    assert [m["seq"] for m in chain["manifests"]] == [1, 2, 3]
    assert [m["previous"] for m in chain["manifests"]] == [None, "00000001", "00000002"]
    for man, folder, digests in zip(chain["manifests"], _folders(chain["root"]), chain["digests"]):
        verify_files(folder, man)  # every file's sha256
        assert man["slice"]["digests"] == digests
    # update 1: every document of the day, as CIFF with its metadata
    u1 = pathlib.Path(_folders(chain["root"])[0])
    assert sorted(r["collection_docid"] for r in _metadata(u1)) == sorted(r["collection_docid"] for r in chain["docs1"])
    assert pq.read_table(u1 / "removed.parquet").num_rows == 0
    assert m1["counts"]["added"] == len(chain["docs1"])
    # update 2: the purged page leaves, named with its reason
    u2 = pathlib.Path(_folders(chain["root"])[1])
    removed2 = pq.read_table(u2 / "removed.parquet").to_pylist()
    purged = [r for r in removed2 if r["reason"] == "purged"]
    assert [r["record_id"] for r in purged] == [chain["purged"]["collection_docid"]]
    assert chain["purged"]["collection_docid"] not in {r["collection_docid"] for r in _metadata(u2)}
    # update 3: the changed page replaced (removed, then added again), the dropped page gone
    u3 = pathlib.Path(_folders(chain["root"])[2])
    removed3 = {r["record_id"]: r["reason"] for r in pq.read_table(u3 / "removed.parquet").to_pylist()}
    assert removed3[chain["changed"]["collection_docid"]] == "replaced"
    assert removed3[chain["dropped"]["collection_docid"]] == "gone"
    added3 = {r["collection_docid"] for r in _metadata(u3)}
    assert chain["changed"]["collection_docid"] in added3 and chain["dropped"]["collection_docid"] not in added3
    assert len(added3) < len(chain["docs1"]) // 2  # an update carries what changed, not the day
    # publishing an unchanged slice adds nothing
    out = io.StringIO()
    assert mirror_main(["publish", "--root", str(chain["root"]), "--date", DEMO_DAY.isoformat()], out=out) == 0
    assert "unchanged" in out.getvalue() and len(_folders(chain["root"])) == 3


def _tree(copy: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(copy)): p.read_bytes() for p in sorted(copy.rglob("*")) if p.is_file()}


def test_a_copy_applies_updates_in_order_and_equals_each_published_step(chain, tmp_path):
    copy = tmp_path / "copy"
    u1, u2, u3 = _folders(chain["root"])
    with pytest.raises(OutOfOrder, match="update 00000001 is missing"):
        mirror_apply.apply_update(str(copy), u2)
    assert mirror_apply.apply_update(str(copy), u1) == "applied"
    local = copy / "index" / f"{DEMO_DAY:%Y-%m}" / f"{DEMO_DAY:%d}"
    assert shard_digests(local, canonical=True) == chain["digests"][0]
    before = _tree(copy)
    assert mirror_apply.apply_update(str(copy), u1) == "already applied"
    assert _tree(copy) == before
    with pytest.raises(OutOfOrder, match=r"follows 00000002.*update 00000002 is missing"):
        mirror_apply.apply_update(str(copy), u3)
    assert _tree(copy) == before  # refused before anything changed
    assert mirror_apply.apply_update(str(copy), u2) == "applied"
    assert shard_digests(local, canonical=True) == chain["digests"][1]
    assert chain["purged"]["collection_docid"] not in {r["collection_docid"] for r in _metadata(local)}
    assert mirror_apply.apply_update(str(copy), u3) == "applied"
    assert shard_digests(local, canonical=True) == chain["digests"][2] == shard_digests(chain["day"], canonical=True)
    stats, published = (json.loads((d / layout.STATS).read_text()) for d in (local, chain["day"]))
    assert stats["totals"] == published["totals"] and len(stats["shards"]) == len(published["shards"])
    assert mirror_apply.problems(str(copy)) == []
    # the command, from the root: every update in order into a fresh copy
    again = tmp_path / "again"
    out = io.StringIO()
    assert mirror_main(["apply", "--dest", str(again), "--from", str(chain["root"])], out=out) == 0
    assert out.getvalue().count(": applied") == 3
    assert sorted(_tree(again / "index")) == sorted(_tree(copy / "index"))
    assert shard_digests(again / "index", canonical=True) == shard_digests(copy / "index", canonical=True)


def test_a_batch_is_a_target_of_its_own(chain, tmp_path):
    """A sub-daily batch (``index/YYYY-MM/DD/batch=N``) publishes and applies in the same format."""
    root = tmp_path / "root"
    batch = root / "index" / "2026-01" / "16" / "batch=1"
    shutil.copytree(chain["day"], batch, ignore=shutil.ignore_patterns("graph"))
    man = publish_update(str(root), DEMO_DAY.replace(day=16), batch=1)
    assert man is not None and man["target"] == "index/2026-01/16/batch=1" and man["previous"] is None
    copy = tmp_path / "copy"
    assert mirror_main(["apply", "--dest", str(copy), "--from", str(root)], out=io.StringIO()) == 0
    got = shard_digests(copy / "index" / "2026-01" / "16" / "batch=1", canonical=True)
    assert got == shard_digests(batch, canonical=True) == chain["digests"][-1]


@pytest.mark.parametrize("stop_after", ["old moved away", "new swapped in"])
def test_a_torn_apply_never_looks_complete_and_the_next_run_finishes_it(chain, tmp_path, monkeypatch, stop_after):
    copy = tmp_path / "copy"
    u1, u2, _ = _folders(chain["root"])
    assert mirror_apply.apply_update(str(copy), u1) == "applied"
    real_swap = mirror_apply._swap

    def killed(new: str, final: str) -> None:  # the process dies inside the swap, or right after it
        if stop_after == "old moved away":
            os.replace(final, final + mirror_apply.OLD)
        else:
            real_swap(new, final)
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(mirror_apply, "_swap", killed)
    with pytest.raises(KeyboardInterrupt):
        mirror_apply.apply_update(str(copy), u2)
    monkeypatch.setattr(mirror_apply, "_swap", real_swap)
    problems = mirror_apply.problems(str(copy))
    assert any("00000002 was being applied" in p for p in problems)
    out = io.StringIO()
    assert mirror_main(["check", "--dest", str(copy)], out=out) == 1 and "INCOMPLETE" in out.getvalue()
    # the next run recovers, then applies (or finds applied) update 2
    outcome = mirror_apply.apply_update(str(copy), u2)
    assert outcome == ("applied" if stop_after == "old moved away" else "already applied")
    local = copy / "index" / f"{DEMO_DAY:%Y-%m}" / f"{DEMO_DAY:%d}"
    assert shard_digests(local, canonical=True) == chain["digests"][1]
    assert mirror_apply.problems(str(copy)) == [] and not list(local.parent.glob("*.mirror-*"))


def test_a_bad_file_in_an_update_is_refused_naming_it(chain, tmp_path):
    bad = tmp_path / "u1"
    shutil.copytree(_folders(chain["root"])[0], bad)
    victim = next(bad.rglob("index-*.ciff.gz"))
    victim.write_bytes(victim.read_bytes()[:-10])
    copy = tmp_path / "copy"
    with pytest.raises(mirror_apply.UpdateError, match=re.escape(str(victim.relative_to(bad)))):
        mirror_apply.apply_update(str(copy), str(bad))
    assert mirror_apply.read_state(str(copy))["applied"] is None
    assert not (copy / "index").exists()


def test_the_mirror_command_fetches_updates_over_http_resuming_and_refuses_a_gap(chain, tmp_path):
    root = chain["root"]
    app = create_app({"dc1": str(root)}, cache_dir=str(tmp_path / "cache"), warm=False)
    copy = tmp_path / "copy"
    u1, u2, _ = _folders(root)
    # a download of update 1 that stopped half-way through its largest file
    man1 = read_manifest(u1)
    big = max(man1["files"], key=lambda p: man1["files"][p]["bytes"])
    part = copy / "_incoming" / "00000001" / (big + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    data = (pathlib.Path(u1) / big).read_bytes()
    part.write_bytes(data[: len(data) // 2])
    hidden = root / "public" / "_updates" / "hidden-00000002"
    with ServerThread(app) as srv:
        os.replace(u2, hidden)  # the server lacks update 2
        try:
            out = io.StringIO()
            assert mirror_main(["apply", "--dest", str(copy), "--server", srv.url], out=out) == 3
        finally:
            os.replace(hidden, u2)
        total = sum(f["bytes"] for f in man1["files"].values()) + os.path.getsize(os.path.join(u1, "_manifest.json"))
        got = int(re.search(r"update 00000001 .*: applied, ([\d,]+) bytes", out.getvalue())[1].replace(",", ""))
        assert got == total - len(data) // 2  # the half already there was not fetched again
        assert mirror_apply.read_state(str(copy))["applied"] == "00000001"
        out = io.StringIO()
        assert mirror_main(["apply", "--dest", str(copy), "--server", srv.url], out=out) == 0, out.getvalue()
        assert mirror_main(["apply", "--dest", str(copy), "--server", srv.url], out=io.StringIO()) == 0
    local = copy / "index" / f"{DEMO_DAY:%Y-%m}" / f"{DEMO_DAY:%d}"
    assert shard_digests(local, canonical=True) == shard_digests(chain["day"], canonical=True)
    assert not (copy / "_incoming" / "00000002").exists()
    assert mirror_main(["check", "--dest", str(copy)], out=io.StringIO()) == 0
    # the copy serves: the same hits and BM25 scores as the published day
    ranked = {}
    for name, where in (("published", root), ("copy", copy)):
        with ServerThread(create_app({"dc1": str(where)}, cache_dir=str(tmp_path / f"c-{name}"))) as srv:
            for q in ("zyzzyva", "library budget"):
                r = httpx.get(f"{srv.url}/search", params={"q": q, "day": DEMO_DAY.isoformat(), "k": 10}, timeout=60)
                assert r.status_code == 200, r.text
                ranked[(name, q)] = [(h["url"], round(h["score"], 6)) for h in r.json()["results"]]
    assert [u for u, _ in ranked[("copy", "zyzzyva")]] == [chain["changed"]["url"]]
    assert ranked[("copy", "library budget")] == ranked[("published", "library budget")] != []
