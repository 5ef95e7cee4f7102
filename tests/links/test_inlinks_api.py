"""In-links over a window through the catalogue's CLI (``python -m lib.catalogue inlinks``) and the
service over real HTTP on 127.0.0.1 (``/catalogue/inlinks``): the same answer as the function the
link database tests hold to the fold, and bad input answered 2 / 400 / 404 with the reason."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from urllib.parse import quote

import pytest

from lib.catalogue.__main__ import main as cli
from lib.catalogue.query import to_json
from lib.links import inlinks


@pytest.fixture(scope="module")
def top(merged):
    """The URL with the most links over all time, and its answer from the function."""
    state = inlinks.linkdb.read_state(merged["db"])
    con = inlinks.entries.connect()
    files = [f for q in range(state["parts"]) for f in inlinks.linkdb.files(merged["db"], state, q)]
    source = inlinks.entries.source(files)
    url = con.execute(
        f"SELECT dst_url FROM ({source}) GROUP BY dst_url ORDER BY count(*) DESC, dst_url LIMIT 1"
    ).fetchone()[0]
    con.close()
    return url, json.loads(to_json(inlinks.inlinks(merged["db"], url, None)))


def _cli(*args: str) -> tuple[int, str]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        code = cli(list(args))
    return code, buf.getvalue()


def test_cli_inlinks(merged, top, capsys):
    url, want = top
    code, out = _cli("--root", merged["root"], "--json", "inlinks", url, "--window", "all")
    assert code == 0 and json.loads(out) == want and want["totals"]["links"] > 10
    code, out = _cli("--root", merged["root"], "inlinks", url, "--window", "2", "--limit", "3")
    assert code == 0 and 'first: "2026-01-13"' in out and 'last: "2026-01-14"' in out
    assert out.count("https://") + out.count("http://") >= 3  # the table's source URLs
    code, out = _cli("--root", merged["root"], "--json", "inlinks", url, "--window", "365")
    assert code == 0 and "longer than the history" in json.loads(out)["window"]["note"]
    for args, reason in (
        (["inlinks", "mailto:someone@example.com"], "not an http(s) URL"),
        (["inlinks", "http://example.com:99999/"], "cannot normalise URL"),
        (["inlinks", url, "--window", "0"], "window must be at least 1 day"),
        (["inlinks", url, "--until", "yesterday"], "day must be YYYY-MM-DD"),
        (["inlinks", url, "--until", "2020-01-01"], "before the link database's first day"),
    ):
        assert _cli("--root", merged["root"], *args)[0] == 2
        assert reason in capsys.readouterr().err


def test_service_inlinks_over_real_http(merged, top, tmp_path):
    from lib.serve.app import create_app
    from lib.serve.server import ServerThread
    from tests.catalogue.test_catalogue import _get

    url, want = top
    empty = tmp_path / "empty"
    empty.mkdir()
    srv = ServerThread(create_app({"dc1": merged["root"], "dc2": str(empty)}, cache_dir=str(tmp_path / "cache")))
    base = srv.url + "/catalogue/inlinks"
    try:
        assert _get(base, f"?url={quote(url, safe='')}&window=all") == (200, want)
        code, got = _get(base, f"?url={quote(url, safe='')}&window=1&limit=2")
        assert code == 200 and len(got["inlinks"]) <= 2 and all(r["last_seen"] == "2026-01-14" for r in got["inlinks"])
        code, got = _get(base, "?url=" + quote("https://never.linked.example/", safe=""))
        assert code == 200 and got["totals"]["links"] == 0 and got["inlinks"] == []
        for q, status, reason in (
            ("?url=" + quote("http://[::1/", safe=""), 400, "cannot normalise URL"),
            ("?url=notaurl", 400, "not an http(s) URL"),
            ("", 400, "missing query parameter 'url'"),
            (f"?url={quote(url, safe='')}&window=many", 400, "window must be a number of days or 'all'"),
            (f"?url={quote(url, safe='')}&dc=dc2", 404, "no link database"),
            (f"?url={quote(url, safe='')}&limit=0", 400, "limit"),
            (f"?url={quote(url, safe='')}&limit=many", 400, "limit"),
            (f"?url={quote(url, safe='')}&until=2026-13-01", 400, "day must be YYYY-MM-DD"),
        ):
            code, err = _get(base, q)
            assert code == status and reason in err["error"], (q, code, err)
    finally:
        srv.stop()


def test_graph_command_answers_bad_input(merged, tmp_path, capsys):
    from lib.links.__main__ import main as links_cli

    for args, reason in (
        (["--root", merged["root"], "graph", "--window", "0"], "window must be at least 1 day"),
        (["--root", merged["root"], "graph", "--until", "2020-01-01"], "before the link database's first day"),
        (["--root", str(tmp_path), "graph"], "no link database"),
    ):
        assert links_cli(args) == 2
        assert reason in capsys.readouterr().err
