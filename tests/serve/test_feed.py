"""GET /feed over real HTTP: a subscriber polls ROOT/shared/auxiliary/logs.csv and sees each update once."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from lib.serve.app import create_app
from lib.store import update_log
from tests.serve.conftest import ROOT_DIR, Served


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.fixture()
def served(tmp_path):
    roots = {"dc1": str(tmp_path / "dc1"), "dc2": str(tmp_path / "dc2")}
    for r in roots.values():
        (tmp_path / r).mkdir()
    srv = Served(create_app(roots, cache_dir=str(tmp_path / "cache")))
    yield srv, roots
    srv.stop()


def test_a_subscriber_polls_the_feed(served):
    srv, roots = served
    status, body = _get(f"{srv.url}/feed")
    assert status == 200 and json.loads(body) == {"dc": "dc1", "after": 0, "last": 0, "updates": []}
    update_log.append(roots["dc1"], "day", "preprocessed/2026-01/15", detail="preprocess")
    update_log.append(roots["dc1"], "model", "lid", "v2")
    update_log.append(roots["dc2"], "purge", "2026-01-14")
    first = json.loads(_get(f"{srv.url}/feed?after=0")[1])
    assert [(u["seq"], u["kind"], u["name"]) for u in first["updates"]] == [
        (1, "day", "preprocessed/2026-01/15"),
        (2, "model", "lid"),
    ]
    assert first["last"] == 2 and first["updates"][1]["version"] == "v2"
    # a writer in another process appends while the subscriber waits; the next poll gets only that
    code = f"from lib.store import update_log; update_log.append({roots['dc1']!r}, 'subindex', 'req-7')"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT_DIR, check=True)
    nxt = json.loads(_get(f"{srv.url}/feed?after={first['last']}")[1])
    assert [(u["seq"], u["name"]) for u in nxt["updates"]] == [(3, "req-7")] and nxt["last"] == 3
    again = json.loads(_get(f"{srv.url}/feed?after=3")[1])
    assert again["updates"] == [] and again["last"] == 3
    other = json.loads(_get(f"{srv.url}/feed?dc=dc2")[1])
    assert [(u["seq"], u["kind"]) for u in other["updates"]] == [(1, "purge")]
    limited = json.loads(_get(f"{srv.url}/feed?after=0&limit=1")[1])
    assert [u["seq"] for u in limited["updates"]] == [1] and limited["last"] == 1
    status, text = _get(f"{srv.url}/feed.csv?after=1")
    rows = list(csv.reader(io.StringIO(text.decode())))
    assert status == 200 and rows[0] == list(update_log.HEADER) and [r[0] for r in rows[1:]] == ["2", "3"]


def test_bad_feed_requests_are_refused_with_a_reason(served):
    srv, _ = served
    status, body = _get(f"{srv.url}/feed?dc=dc9")
    assert status == 404 and "no data center 'dc9'" in json.loads(body)["error"]
    status, body = _get(f"{srv.url}/feed?after=-1")
    assert status in (400, 422) and "after" in body.decode()
