"""Lay the main-text kinds set (issue 46) out in a folder from its public sources, then label it.

    python -m benchmarks.build_maintext_kinds --repos DIR [--out DIR] [--corpus DIR] [--no-label]

The set is committed in ``tests/data/maintext_kinds``; this rebuilds it (or a copy anywhere, e.g.
``../shared/extraction/maintext_kinds``) from what its manifest names, so every byte of it can be
traced to a public repository at a commit. The manifest is the set's ``pages.jsonl``: one line per
page with ``id``, ``url``, ``kind``, ``source`` (GitHub repository), ``commit``, ``path`` (in that
repository), ``licence``, ``sha1`` (of the page's bytes); a page cut out of a WARC adds ``warc`` (its
name under ``../shared/corpus``) and ``offset`` (its record's); a Harvest page adds ``charset``.

Where each page's bytes come from:

  fhgr/harvest        the ``html`` field of ``corpus/goldDocuments/*.json``: Harvest keeps the page
                      as text, so it is written back in the charset its ``<meta>`` declares
                      (``charset``), the bytes a reader decodes it from; ``harvest-gold.jsonl`` is
                      the same file's ``gold_standard_annotation`` post texts (corrected by hand).
  adbar/trafilatura,  the file at ``path``, as it is.
  adbar/htmldate
  ``extract: dart``   a page saved inside a Dart test file as a raw string (andy1xx8/riverflow-dart's
                      XenForo pages): the bytes between the file's first ``r'''`` and its last ``'''``.
  WARC pages          the HTTP payload of the response record at ``offset`` of the WARC, read from
                      ``--corpus`` (``../shared/corpus``) when the file is there, else from the source
                      repository (the same file: ``path`` at ``commit``).

``--repos DIR`` holds the source repositories, each a clone or a bare git directory, found as
``DIR/owner+name/repo``, ``DIR/owner+name`` or ``DIR/owner/name`` (``git clone
https://github.com/owner/name DIR/owner/name`` makes the last). Every page's bytes are checked
against the manifest's ``sha1``; the licence of each source repository is written beside the pages
(``LICENSE-<name>``), and ``devtools/label_maintext_kinds.py`` writes ``labels.jsonl`` last.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import pathlib
import subprocess
from collections import Counter

from devtools import label_maintext_kinds as lab
from lib.html.charset import codec_name, meta_charset
from lib.warc.http import parse_response
from lib.warc.records import iter_records

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = pathlib.Path(os.environ.get("DAILYSLICE_SHARED") or ROOT.parent / "shared") / "corpus"
HARVEST = "fhgr/harvest"


def repo_dir(repos: pathlib.Path, name: str) -> pathlib.Path:
    """The git directory (bare) or clone of ``owner/name`` under ``repos``."""
    owner, short = name.split("/")
    for cand in (repos / f"{owner}+{short}" / "repo", repos / f"{owner}+{short}", repos / owner / short):
        if cand.is_dir():
            return cand
    raise SystemExit(f"{name}: not under {repos} (git clone https://github.com/{name} {repos / owner / short})")


def git_show(repo: pathlib.Path, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit`` (``git show``, so a bare git directory serves as well as a clone)."""
    out = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True)
    if out.returncode:
        raise SystemExit(f"{repo}: {commit}:{path}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout


def harvest_html(doc: dict, charset: str) -> bytes:
    """A Harvest page's bytes: its text in the charset it declares (characters that charset lacks as
    character references, which a parser reads back as the same characters)."""
    return doc["html"].encode(charset, "xmlcharrefreplace")


def declared_charset(html: str) -> str:
    """The Python codec of the charset a page's ``<meta>`` declares, UTF-8 when it declares none."""
    return codec_name(meta_charset(html[:4096].encode("utf-8", "replace"))) or "utf-8"


def dart_raw_string(data: bytes, where: str) -> bytes:
    """The bytes of the one raw string literal (``r'''...'''``) a Dart test file keeps a page in."""
    start, end = data.find(b"r'''"), data.rfind(b"'''")
    if start < 0 or end <= start + 4:
        raise SystemExit(f"{where}: no r'''...''' string in the file")
    return data[start + 4 : end]


def warc_payload(raw: io.BufferedIOBase, name: str, offset: int) -> bytes:
    """The HTTP payload (de-chunked, decompressed) of the response record at ``offset``."""
    raw.seek(offset)
    rec = next(iter(iter_records(raw, name, start=offset)))
    if getattr(rec, "rec_type", None) != "response":
        raise SystemExit(f"{name}@{offset}: not a response record")
    return parse_response(rec.content).body


class Sources:
    """Reads the pages' bytes from the source repositories and the shared WARCs, each file once."""

    def __init__(self, repos: pathlib.Path, corpus: pathlib.Path) -> None:
        self.repos, self.corpus = repos, corpus
        self.cache: dict[tuple[str, str, str], bytes] = {}

    def file(self, page: dict) -> bytes:
        key = (page["source"], page["commit"], page["path"])
        if key not in self.cache:
            self.cache[key] = git_show(repo_dir(self.repos, page["source"]), page["commit"], page["path"])
        return self.cache[key]

    def page(self, page: dict) -> tuple[bytes, list[str] | None]:
        """(the page's bytes, Harvest's hand-corrected post texts or None)."""
        if "warc" in page:
            local = self.corpus / page["warc"]
            if local.is_file():
                with open(local, "rb") as f:
                    return warc_payload(f, page["warc"], page["offset"]), None
            # a BufferedReader: the reader peeks at the first bytes to tell gzip from the rest
            return warc_payload(io.BufferedReader(io.BytesIO(self.file(page))), page["warc"], page["offset"]), None
        if page["source"] == HARVEST:
            doc = json.loads(self.file(page))
            posts = [a["post_text"]["surface_form"] for a in doc["gold_standard_annotation"]]
            return harvest_html(doc, page["charset"]), posts
        if page.get("extract") == "dart":
            return dart_raw_string(self.file(page), f"{page['source']}:{page['path']}"), None
        return self.file(page), None


def build(manifest: pathlib.Path, out: pathlib.Path, repos: pathlib.Path, corpus: pathlib.Path) -> list[dict]:
    """Write ``pages.jsonl``, ``html/ID.html.gz``, ``harvest-gold.jsonl`` and the source licences into
    ``out``, each page checked against the manifest's sha1. Returns the pages."""
    with open(manifest, encoding="utf-8") as f:
        pages = [json.loads(line) for line in f]
    src = Sources(repos, corpus)
    (out / "html").mkdir(parents=True, exist_ok=True)
    gold = []
    for page in pages:
        body, posts = src.page(page)
        sha1 = hashlib.sha1(body).hexdigest()
        if sha1 != page["sha1"]:
            raise SystemExit(f"{page['id']}: sha1 {sha1} is not the manifest's {page['sha1']}")
        # mtime 0: the same bytes give the same file, so a rebuild shows no change in git
        (out / "html" / f"{page['id']}.html.gz").write_bytes(gzip.compress(body, 9, mtime=0))
        if posts is not None:
            gold.append({"id": page["id"], "posts": posts})
    if manifest.resolve() != (out / "pages.jsonl").resolve():
        (out / "pages.jsonl").write_bytes(manifest.read_bytes())
    (out / "SOURCES.md").write_text(sources_md(pages), encoding="utf-8")
    with open(out / "harvest-gold.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(g, ensure_ascii=False) + "\n" for g in gold)
    for name, commit in sorted({(p["source"], p["commit"]) for p in pages}):
        (out / f"LICENSE-{name.split('/')[1]}").write_bytes(git_show(repo_dir(repos, name), commit, "LICENSE"))
    return pages


def sources_md(pages: list[dict]) -> str:
    """SOURCES.md of the set: each source repository (commit, licence, pages) and each page's origin."""
    repos = Counter((p["source"], p["commit"], p["licence"]) for p in pages)
    kinds = Counter(p["kind"] for p in pages)
    lines = [
        "# The main-text kinds set: sources",
        "",
        f"{len(pages)} real pages ({', '.join(f'{n} {k}' for k, n in kinds.items())}), labelled per",
        "docs/maintext-labelling.md. Written by `python -m benchmarks.build_maintext_kinds` from `pages.jsonl`",
        "(the manifest); every page is data of the repository named, under that repository's licence",
        "(`LICENSE-<name>` here). `html/ID.html.gz`: the page's bytes, checked against the manifest's sha1;",
        "`harvest-gold.jsonl`: the post texts the Harvest project corrected by hand for its pages;",
        "`labels.jsonl`: written by devtools/label_maintext_kinds.py. Which pages, and why:",
        "docs/maintext-labelling.md.",
        "",
        "| repository | commit | licence | licence file | pages |",
        "|---|---|---|---|---:|",
    ]
    for (name, commit, licence), n in sorted(repos.items()):
        lines.append(f"| {name} | {commit} | {licence} | LICENSE-{name.split('/')[1]} | {n} |")
    lines += [
        "",
        "Pages of a WARC: the HTTP payload of the response record at the offset given, in the WARC of the",
        "path given (the same file as `../shared/corpus/<warc>`). Pages of Harvest: the `html` field of",
        "the JSON file, in the charset given (the one the page declares).",
        "",
        "| id | url | repository | path | record offset / charset |",
        "|---|---|---|---|---|",
    ]
    for p in pages:
        where = f"{p['offset']}" if "warc" in p else p.get("charset", "")
        lines.append(f"| {p['id']} | {p['url'].replace('|', '%7C')} | {p['source']} | {p['path']} | {where} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", type=pathlib.Path, required=True, help="folder of the source repositories")
    ap.add_argument("--out", type=pathlib.Path, default=lab.SET, help=f"where to lay the set out ({lab.SET})")
    ap.add_argument("--manifest", type=pathlib.Path, default=lab.COMMITTED / "pages.jsonl")
    ap.add_argument("--corpus", type=pathlib.Path, default=CORPUS, help="the shared WARCs (../shared/corpus)")
    ap.add_argument("--no-label", action="store_true", help="lay the pages out, do not write labels.jsonl")
    args = ap.parse_args(argv)
    pages = build(args.manifest, args.out, args.repos, args.corpus)
    print(f"{len(pages)} pages in {args.out}: {dict(Counter(p['kind'] for p in pages))}")
    if not args.no_label:
        lab.main(["--set", str(args.out)])


if __name__ == "__main__":
    main()
