"""The exchange task in the nightly DAG on real parts: loopback S3 with a day's WARCs and a
partner data center's published day, real sbatch, the job in Spark local mode inside the
allocation (the lightest real run), then the exchange merges the partner's links into the
index before it is staged. One Spark run; the second DAG run reuses it."""

from __future__ import annotations

import datetime as dt
import json
import os
import pathlib
from collections import Counter, defaultdict

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from tests.helpers_datacenters import LOCAL_SPARK, datacenter_entry

pytest_plugins = ["tests.fixtures_airflow", "tests.fixtures_slurm"]
ROOT = pathlib.Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 1, 15)
RUN_AT = dt.datetime(2026, 1, 16, 3, 0, tzinfo=dt.timezone.utc)
HIDDEN = "https://news.example.com/only-linked-from-the-partner"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _partner_edges(urls: list[str]) -> list[dict]:
    """The partner's crawl (hosts *.partner.example) links to two of our pages, to a URL of
    one of our hosts that none of our pages links to, and to a host nobody crawled."""
    out = []
    for i in range(4):
        src = f"https://www{i}.partner.example/"
        for dst, a in [
            (urls[0], "Partner   says"),
            (urls[1], f"partner {i % 2}"),
            (HIDDEN, "hidden"),
            ("https://nobody.example/", "x"),
            (f"https://www{(i + 1) % 4}.partner.example/", "own"),
        ]:
            host = dst.split("/")[2]
            out.append(
                {"src_url": src, "dst_url": dst, "anchor_text": a, "src_host": src.split("/")[2], "dst_host": host}
            )
    return out


def _publish_partner_day(root: str, work: pathlib.Path, edges: list[dict]) -> None:
    """A partner's index day as far as the exchange reads it (_stats.json, graph/edges), with
    its outbound folder written by the real function."""
    from lib.index.graph_exchange import write_outbound
    from lib.store import storage

    day = work / "partner-day"
    (day / "graph" / "edges").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(edges), day / "graph" / "edges" / "part-00000.parquet")
    (day / "graph" / "edges" / "_SUCCESS").write_bytes(b"")
    (day / "_stats.json").write_text(json.dumps({"partner": True}))
    (day / "_SUCCESS").write_bytes(b"")
    uri = f"{root}/index/{DAY:%Y-%m}/{DAY:%d}"
    storage.upload_tree(str(day), uri)
    assert write_outbound(uri)["rows"] == 16  # 4 pages: to our hosts (3 urls) and to nobody's


def _sample_urls(paths: list[str]) -> list[str]:
    from warcio.archiveiterator import ArchiveIterator

    urls = []
    for p in paths:
        with open(p, "rb") as f:
            urls += [
                r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f) if r.rec_type == "response"
            ]
    return urls


@pytest.fixture(scope="module")
def exchange_run(slurm_cluster, airflow_home, s3_server, submit_jvm_archive, tmp_path_factory):
    import yaml

    from lib.orchestration.dag_factory import build_dags
    from lib.orchestration.datacenters import load_config
    from lib.store import s3
    from lib.warc.sample import write_sample_crawl

    base = tmp_path_factory.mktemp("exchange")
    bucket = "crawl-xdc"
    s3.client().create_bucket(Bucket=bucket)
    paths = write_sample_crawl(str(base / "crawl"), DAY, files=1, pages_per_file=8)
    for p in paths:
        s3.client().upload_file(p, bucket, "dcx/" + os.path.relpath(p, base / "crawl").replace(os.sep, "/"))
    urls = sorted(set(_sample_urls(paths)))
    partner_root = f"s3://{bucket}/dcy"
    _publish_partner_day(partner_root, base, _partner_edges(urls))
    dcx = datacenter_entry(base, s3_server, bucket, "dcx", 1, LOCAL_SPARK | submit_jvm_archive)
    dcx["exchange"] = {"enabled": True, "partners": {"dcy": partner_root, "dcz": f"s3://{bucket}/dcz"}}
    config = {"datacenters": {"dcx": dcx}}
    cfg_path = base / "datacenters.yaml"
    cfg_path.write_text(yaml.safe_dump(config))
    saved = os.environ.get("DAILYSLICE_DATACENTERS")
    os.environ["DAILYSLICE_DATACENTERS"] = str(cfg_path)  # dag.test() serializes the DAG folder's DAGs
    try:
        dag = build_dags(load_config(str(cfg_path)))["dailyslice-dcx"]
        dr = dag.test(logical_date=RUN_AT)
        yield {"base": base, "dag": dag, "state": str(dr.state), "urls": urls, "partner_edges": _partner_edges(urls)}
    finally:
        if saved is None:
            os.environ.pop("DAILYSLICE_DATACENTERS", None)
        else:
            os.environ["DAILYSLICE_DATACENTERS"] = saved


def _table(folder) -> dict[str, tuple]:
    rows = ds.dataset(str(folder), format="parquet", ignore_prefixes=["_", "."]).to_table().to_pylist()
    return {r["dst_url"]: (r["inlinks"], r["source_pages"], r["source_hosts"], r["anchor_texts"]) for r in rows}


def _oracle(edges: list[dict]) -> dict[str, tuple]:
    import re

    by = defaultdict(list)
    for e in edges:
        by[e["dst_url"]].append(e)
    out = {}
    for url, es in by.items():
        texts = Counter(
            t for t in (re.sub(r"[ \t\n\x0b\f\r]+", " ", e["anchor_text"] or "").strip(" ") for e in es) if t
        )
        top = [t for t, _ in sorted(texts.items(), key=lambda kv: (-kv[1], kv[0].encode()))][:10]
        out[url] = (len(es), len({e["src_url"] for e in es}), len({e["src_host"] for e in es}), top)
    return out


def test_the_nightly_run_merges_the_partner_s_links_before_staging(exchange_run):
    from lib.ciff.validate import validate_file

    assert exchange_run["state"] == "success"
    staged = exchange_run["base"] / "archive" / "dcx" / "index" / "2026-01" / "15"
    record = json.loads((staged / "graph" / "_exchange.json").read_text())
    assert record["partners"]["dcy"]["status"] == "merged" and record["partners"]["dcy"]["same_day"]
    assert record["partners"]["dcz"] == {"status": "missing"}  # never waited for
    # the oracle: our own edges (as the job wrote them) plus the partner's edges to hosts we crawled
    local_edges = ds.dataset(str(staged / "graph" / "edges"), ignore_prefixes=["_"]).to_table().to_pylist()
    hosts = {e["src_host"] for e in local_edges} | {
        h
        for f in staged.rglob("metadata-*.parquet")
        for h in pq.read_table(f, columns=["url_host"]).column(0).to_pylist()
    }
    incoming = [e for e in exchange_run["partner_edges"] if e["dst_host"] in hosts]
    assert len(incoming) == 12 and record["counts"]["incoming_edges"] == 12
    merged, local = _table(staged / "graph" / "inlinks"), _table(staged / "graph" / "inlinks_local")
    assert local == _oracle(local_edges)
    assert merged == _oracle(local_edges + incoming)
    assert HIDDEN in merged and HIDDEN not in local and merged[HIDDEN] == (4, 4, 4, ["hidden"])
    u = exchange_run["urls"][0]
    assert merged[u][0] == local.get(u, (0,))[0] + 4 and "Partner says" in merged[u][3]
    # the staged day is the job's output after the exchange, anchors CIFFs included
    anchors = sorted(staged.rglob("anchors-*.ciff.gz"))
    assert anchors and all(validate_file(str(f)).ok for f in anchors)
    assert len(anchors) == len(list(staged.rglob("index-*.ciff.gz")))
    assert (staged / "graph" / "outbound" / "_SUCCESS").exists()


def test_a_second_run_changes_nothing(exchange_run):
    staged = exchange_run["base"] / "archive" / "dcx" / "index"
    before = {p: p.read_bytes() for p in staged.rglob("*") if p.is_file()}
    dr = exchange_run["dag"].test(logical_date=RUN_AT)
    assert str(dr.state) == "success"
    after = {p: p.read_bytes() for p in staged.rglob("*") if p.is_file()}
    assert after == before
