"""A party's page in headless Chromium: the validated files linked (each link serves the checked bytes), the
refused upload with its reasons."""

from __future__ import annotations

import re
import subprocess
import urllib.request
from html import unescape

from lib.community import accept
from lib.serve.app import create_app
from lib.serve.server import ServerThread
from tests.community.helpers_uploads import make_upload, register
from tests.helpers_browser import chromium


def test_a_partys_page_links_its_validated_files_and_says_why_an_upload_was_refused(tmp_path) -> None:
    root = tmp_path / "root"
    register(root, {"alpha": 10_000_000})
    incoming = root / "community" / "alpha" / "incoming"
    manifest = make_upload(incoming / "good")
    checked = {rel: (incoming / "good" / rel).read_bytes() for rel in manifest["files"]}
    make_upload(incoming / "bad", unknown_column=True)
    assert sorted(v["status"] for v in accept.process_all(str(root))) == ["accepted", "refused"]
    cmd = chromium(tmp_path)
    app = create_app({"dc1": str(root)}, cache_dir=str(tmp_path / "cache"))
    with ServerThread(app) as srv:
        dom = unescape(
            subprocess.run(
                cmd + ["--dump-dom", f"{srv.url}/community/dc1/alpha/page"],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout
        )
        links = re.findall(r'href="(/community/dc1/alpha/good/files/[^"]+)"', dom)
        assert sorted(links) == sorted(f"/community/dc1/alpha/good/files/{rel}" for rel in manifest["files"])
        for link in links:
            assert urllib.request.urlopen(srv.url + link).read() == checked[link.rsplit("/files/", 1)[1]]
        (why,) = re.findall(r"<li>([^<]*)</li>", dom)
        assert why.startswith("metadata/metadata-0.parquet: unknown column(s) sentiment")
        assert f"{sum(len(b) for b in checked.values()):,} bytes published, quota 10,000,000 bytes" in dom
