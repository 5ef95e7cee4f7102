"""``make demo``: the daily pipeline end to end on an embedded default.

Generates a sample crawl in the bucket layout under ``--root`` (local folder, no S3, no
cluster), then runs the night's chain (preprocess, index and the catalogue: CDXJ, URL
database, daily report) for ``--date`` in one local Spark session, as ``dailyslice day`` does
(:func:`jobs.day.run_steps`), checks the index with the CIFF validator, and prints where
everything is. It ends with the service (``python -m lib.serve``) on the day: it
builds the search engine, answers one search and one ranged download over real HTTP on
loopback, and prints a working search URL and a download command. ``--serve yes`` then keeps
serving until Ctrl-C; ``auto`` (the default) does so only on a terminal outside CI, so the demo
still exits when run non-interactively; ``no`` skips the service.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import sys

import httpx
from pyspark.sql import SparkSession

from jobs import catalogue, day, index, preprocess
from lib.catalogue.report import REPORT
from lib.ciff.__main__ import main as ciff_main
from lib.orchestration import chain
from lib.preprocess import gate
from lib.runtime.session import setup_logging, use_this_python
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from lib.store import layout, storage
from lib.warc.sample import write_sample_crawl


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="demo")
    ap.add_argument("--date", type=dt.date.fromisoformat, default=dt.date(2026, 1, 15))
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--pages-per-file", type=int, default=60)
    ap.add_argument(
        "--s3",
        metavar="s3://BUCKET/PREFIX",
        help="run against S3 (AWS_ENDPOINT_URL, e.g. make demo-s3's SeaweedFS): the sample crawl is "
        "uploaded there, the jobs read and publish there; --root then holds the URL database, "
        "the staging folders and a copy of what was published",
    )
    ap.add_argument(
        "--serve",
        choices=("auto", "yes", "no"),
        default="auto",
        help="end with the service: yes keeps it running (Ctrl-C stops it); auto: only on a terminal "
        "outside CI; no: skip it",
    )
    ap.add_argument("--port", type=int, default=8080, help="the service's port when it keeps running")
    ap.add_argument(
        "--enrich",
        default="",
        metavar="NAME[,NAME]",
        help="run these enrichment plugins (e.g. microdata), each first through the plugin gate "
        "(dailyslice plugin evaluate: docs/plugin-gate.md), as the nightly run must",
    )
    a = ap.parse_args(argv)
    root = os.path.abspath(a.root)
    warc = layout.day_path(root, layout.WARC, a.date)
    if not os.path.isdir(warc):
        paths = write_sample_crawl(root, a.date, a.files, a.pages_per_file)
        print(f"demo: wrote a sample crawl of {len(paths)} WARC files under {warc}")
    common = {"date": a.date, "root": root}
    urldb = None
    if a.s3:
        common = {"date": a.date, "root": a.s3.rstrip("/"), "staging": os.path.join(root, "staging")}
        urldb = os.path.join(root, layout.URLDB)
        sent = storage.upload_tree(warc, layout.day_path(a.s3, layout.WARC, a.date))
        print(f"demo: uploaded {sent} archives to {layout.day_path(a.s3, layout.WARC, a.date)}", file=sys.stderr)
    plugins = tuple(n.strip() for n in a.enrich.split(",") if n.strip())
    for name in plugins:  # the gate first: preprocess runs only plugins approved for their exact version
        doc = gate.evaluate(common["root"], name)
        verdict = "approved" if doc["approved"] else f"refused ({'; '.join(doc['reasons'])})"
        print(f"demo: plugin {name} {doc['version']} {verdict} on {doc['measures']['pages']} benchmark pages")
    options = {  # the night's steps (lib.orchestration.chain), as dailyslice day runs them
        "preprocess": preprocess.PreprocessOptions(**common, enrich=plugins),
        "index": index.IndexOptions(**common),
        "catalogue": catalogue.CatalogueOptions(**common, urldb=urldb),
    }
    setup_logging()
    use_this_python()
    spark = (
        SparkSession.builder.appName("dailyslice-demo")
        .config("spark.ui.showConsoleProgress", "true")
        .config("spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    try:
        flags = " ".join(f"--{k} {v}" for k, v in common.items())
        codes, _ = day.run_steps(options, spark, lambda line: print(f"demo: {line} {flags}", file=sys.stderr))
        rc = chain.night_exit(codes)
        if rc != 0:
            print(f"demo: the chain failed (exit {rc}): {chain.describe(codes)}", file=sys.stderr)
            return rc
    finally:
        spark.stop()
    if a.s3:  # bring the published day back to look at it (and to validate the shards below)
        for kind in (layout.PREPROCESSED, layout.INDEX, layout.CATALOGUE):
            src = layout.day_path(a.s3, kind, a.date)
            files = storage.list_files(src)
            for f in files:
                storage.write_bytes(
                    os.path.join(layout.day_path(root, kind, a.date), f.uri[len(src) + 1 :]), storage.read_bytes(f.uri)
                )
            print(f"demo: {len(files)} files published under {src} (copied to {layout.day_path(root, kind, a.date)})")
    index_dir = layout.day_path(root, layout.INDEX, a.date)
    if os.path.isdir(index_dir):
        ciffs = sorted(os.path.join(d, f) for d, _, fs in os.walk(index_dir) for f in fs if f.endswith(".ciff.gz"))
        shards = [c for c in ciffs if os.path.basename(c).startswith("index-")]
        if ciffs and ciff_main(["validate", *ciffs]) != 0:
            return 1
        print(
            f"demo: {len(shards)} CIFF shards and {len(ciffs) - len(shards)} anchor-text CIFFs valid under {index_dir}"
        )
        if shards:
            pick = ([s for s in shards if "/eng/" in s] or shards)[0]
            py = os.path.relpath(sys.executable)
            print(f'demo: try  {py} -m lib.ciff search {pick} "library budget"')
    print(f"demo: pages under {layout.day_path(root, layout.PREPROCESSED, a.date)}")
    report = os.path.join(layout.day_path(root, layout.CATALOGUE, a.date), REPORT)
    if os.path.exists(report):
        print(f"demo: CDXJ and the daily report (open in a browser): {os.path.dirname(report)}")
    if rc == 0 and a.serve != "no":
        keep = a.serve == "yes" or (a.serve == "auto" and sys.stdin.isatty() and not os.environ.get("CI"))
        rc = serve(root, a.date, a.port if keep else 0, keep)
    return rc


def serve(root: str, day: dt.date, port: int, keep: bool, query: str = "library budget") -> int:
    """The service on the demo day: one search and one ranged download over HTTP, then the commands
    to use it; with ``keep`` it goes on serving on ``port`` until Ctrl-C."""
    cache = os.path.join(root, ".serve-cache")
    archives = os.path.join(root, layout.WARC)
    app = create_app({"demo": root}, cache_dir=cache, warm=True, archive_roots=[archives])
    try:
        srv = ServerThread(app, "127.0.0.1", port, timeout=600)
    except (OSError, RuntimeError) as e:
        print(f"demo: the service did not start on 127.0.0.1:{port}: {e}", file=sys.stderr)
        return 1
    try:
        base = srv.url
        hits = httpx.get(f"{base}/search", params={"q": query, "day": day.isoformat()}, timeout=120)
        files = httpx.get(f"{base}/files", params={"day": day.isoformat(), "lang": "eng", "part": "ciff"}, timeout=120)
        if hits.status_code != 200 or files.status_code != 200 or not files.json()["files"]:
            print(
                f"demo: the service answered {hits.status_code} {hits.text[:200]} / {files.status_code} "
                f"{files.text[:200]}",
                file=sys.stderr,
            )
            return 1
        meta, first = hits.json()["meta"], files.json()["files"][0]
        top = hits.json()["results"][0]
        page = httpx.get(base + top["content_url"], timeout=60)
        if page.status_code != 200 or not page.content:
            print(f"demo: the capture of the first hit answered {page.status_code} {page.text[:200]}", file=sys.stderr)
            return 1
        part = httpx.get(f"{base}/download/{first['dc']}/{first['path']}", headers={"Range": "bytes=0-1"}, timeout=60)
        if part.status_code != 206 or part.content != b"\x1f\x8b":
            print(f"demo: ranged download of {first['path']} answered {part.status_code}", file=sys.stderr)
            return 1
        py = os.path.relpath(sys.executable)
        shown = base if keep else "http://127.0.0.1:8080"
        print(
            f"demo: search engine ready ({meta['shards']} shards); '{query}': {meta['total_results']} results "
            f"in {meta['query_time_ms']:.1f} ms"
        )
        if not keep:
            print(
                f"demo: start the service:  {py} -m lib.serve --root {shlex.quote(root)} --port 8080"
                f" --cache {shlex.quote(cache)} --archives {shlex.quote(archives)}"
            )
        print(f"demo: search page:        {shown}/?q={query.replace(' ', '+')}&day={day}")
        print(f"demo: search JSON:        curl '{shown}/search?q={query.replace(' ', '+')}&day={day}'")
        print(
            f"demo: download (English index shards, verified):  {py} -m lib.serve.client --server {shown} "
            f"--day {day} --lang eng --part ciff --dest {shlex.quote(os.path.join(root, 'download'))}"
        )
        print(f"demo: the first hit's page ({len(page.content)} bytes as crawled):  curl '{shown}{top['content_url']}'")
        print(f"demo: OpenSearch:         {shown}/opensearch.xml   API: {shown}/docs")
        if keep:
            print("demo: serving until Ctrl-C", flush=True)
            try:
                srv.thread.join()
            except KeyboardInterrupt:
                pass
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
