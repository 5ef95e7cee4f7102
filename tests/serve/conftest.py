"""A published root with three real days (preprocessed pages -> jobs/index.py in the shared Spark
session) and the slice API served over real HTTP by uvicorn on loopback.

Each day gets different pages (the index test's sample pages with day-specific words and a day-
dependent subset), so the three days' files differ. The catalogue folders are small hand-written
files (index.cdxj, report.html): the slice API only serves them, it does not read them. A fourth
day is left without ``_SUCCESS`` (a crashed run) and must never be listed or served.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import pathlib
import socket
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import uvicorn

from lib.pages.schema import PAGE_SCHEMA
from lib.serve.files_api import create_app
from lib.serve.published import SliceStore
from tests.index.test_index_job import sample_pages

ROOT_DIR = pathlib.Path(__file__).resolve().parents[2]
DAYS = [dt.date(2026, 5, 1), dt.date(2026, 5, 2), dt.date(2026, 5, 3)]
INCOMPLETE = dt.date(2026, 5, 4)
OPTS = ["--docs-per-shard", "4", "--min-group-docs", "3"]
EXTRA = ["amber", "cobalt", "saffron", "indigo"]


def day_pages(i: int) -> list[dict]:
    """The sample pages of day ``i``: a day word in every text, every page but one per day."""
    pages = []
    for j, p in enumerate(sample_pages()):
        if j % 5 == i:  # a different page is missing each day
            continue
        p = dict(p)
        p["plain_text"] = (p["plain_text"] or "") + (f" {EXTRA[i]} day {i}" if p["plain_text"] else "")
        p["warc_date"] = dt.datetime(2026, 5, 1 + i, 12, 0, tzinfo=dt.timezone.utc)
        pages.append(p)
    return pages


def write_preprocessed(root: pathlib.Path, day: dt.date, pages: list[dict], complete: bool = True) -> pathlib.Path:
    out = root / "preprocessed" / f"{day:%Y-%m}" / f"{day:%d}"
    schema = pa.schema([f for f in PAGE_SCHEMA if f.name != "language"])
    by_lang: dict[str, list[dict]] = {}
    for p in pages:
        by_lang.setdefault(p["language"], []).append({k: v for k, v in p.items() if k != "language"})
    for lang, rows in by_lang.items():
        d = out / f"language={lang}"
        d.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), d / "part-00000.zstd.parquet")
    (out / "_captures").mkdir(parents=True)
    pq.write_table(pa.table({"url": [p["url"] for p in pages]}), out / "_captures" / "part-00000.parquet")
    (out / "_stats.json").write_text('{"pages": %d}' % len(pages))
    if complete:
        (out / "_SUCCESS").write_bytes(b"")
    return out


def write_catalogue(root: pathlib.Path, day: dt.date, complete: bool = True) -> None:
    out = root / "catalogue" / f"{day:%Y-%m}" / f"{day:%d}"
    out.mkdir(parents=True)
    (out / "index.cdxj").write_text(f"com,example)/ {day:%Y%m%d}120000 {{}}\n")
    (out / "report.html").write_text(f"<html><body>report of {day}</body></html>")
    if complete:
        (out / "_SUCCESS").write_bytes(b"")


@pytest.fixture(scope="session")
def published(spark, tmp_path_factory) -> pathlib.Path:
    """ROOT with three complete days (preprocessed, index, catalogue; the graph on the first day
    only) and one incomplete day."""
    from jobs import index

    root = tmp_path_factory.mktemp("published")
    for i, day in enumerate(DAYS):
        write_preprocessed(root, day, day_pages(i))
        graph = [] if i == 0 else ["--no-graph"]  # one day's graph is enough to serve, and it costs Spark stages
        assert index.main(["--date", day.isoformat(), "--root", str(root), *OPTS, *graph], spark=spark) == 0
        write_catalogue(root, day)
    write_preprocessed(root, INCOMPLETE, day_pages(3), complete=False)
    write_catalogue(root, INCOMPLETE, complete=False)
    return root


class Served:
    """A uvicorn server in a background thread on 127.0.0.1, port chosen by the OS."""

    def __init__(self, app):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


class Throttle:
    """ASGI middleware: download bodies go out in ``piece``-byte pieces, ``delay`` s apart, so a
    client can be killed half-way through a file. Records each download's Range header."""

    def __init__(self, app, piece: int = 512, delay: float = 0.1):
        self.app, self.piece, self.delay = app, piece, delay
        self.requests: list[tuple[str, str | None]] = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/download/"):
            return await self.app(scope, receive, send)
        hdrs = dict(scope["headers"])
        self.requests.append((scope["path"], hdrs.get(b"range", b"").decode() or None))

        async def slow_send(message):
            if message["type"] == "http.response.body" and message.get("body"):
                body, more = message["body"], message.get("more_body", False)
                for k in range(0, len(body), self.piece):
                    last = k + self.piece >= len(body)
                    await send(
                        {"type": "http.response.body", "body": body[k : k + self.piece], "more_body": more or not last}
                    )
                    await asyncio.sleep(self.delay)
                return
            await send(message)

        return await self.app(scope, receive, slow_send)


@pytest.fixture(scope="session")
def store(published) -> SliceStore:
    return SliceStore({"dc1": str(published)})


@pytest.fixture(scope="session")
def server(store):
    s = Served(create_app(store))
    yield s
    s.stop()


# the HTTP service's fixtures (a published demo day with catalogue; the full service on it)
from tests.serve.fixtures_http import service  # noqa: E402,F401  (published_root: tests/conftest.py)
