"""What a main-text change does downstream: pages kept, empty text, language and own-title retrieval.

Runs preprocess's record loop (``lib.preprocess.archive_pages.process_file``) over the same archives with
this checkout's code and with a peer tree's (a baseline commit, checked out to a temporary git
worktree with its extension built, or ``--peer-tree`` already built), each in a process of its own
with ``PYTHONPATH`` set to that tree, and compares the pages they give:

- per producer (the folder an archive sits in): records, pages kept, pages with empty main text;
- language: share of pages whose language changed, ``und`` pages, mean lid.176 score, agreement with
  the page's declared ``<html lang>`` (primary subtag) where it declares one;
- own title as a query: each titled page's title is searched with BM25 (k1 0.9, b 0.4, as
  lib.ciff.search) over the pages of its language (each tree's language, as the index groups
  shards by language), documents indexed as jobs/index.py does (title, description, main text,
  the analyzer of the page's language). Both trees' pages are scored by this checkout's analyzer
  and BM25, so only the pages differ. Counted: own page first, own page in the top 10.

Archives: ``tests/data/conformance`` (22 producers' public test archives) and the shared samples
(``../shared/corpus``, or ``$DAILYSLICE_SHARED/corpus``; skipped with a note when absent), or the
folders given with ``--input``.

    python -m benchmarks.bench_maintext_downstream --baseline a5072c7 [--input DIR ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

from benchmarks.common import write_result

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: run in each tree: every page of every file, the fields this comparison needs (one JSON line)
LOOP = r"""
import json, sys
from lib.preprocess.archive_pages import process_file
out = []
for label, path in json.loads(sys.argv[1]):
    try:
        with open(path, "rb") as f:
            rows, proc = process_file(f, path)
    except Exception as e:  # a file the loop cannot read at all: counted, not fatal
        out.append({"file": path, "label": label, "error": f"{type(e).__name__}: {e}", "pages": []})
        continue
    st = proc.stats.as_dict()
    out.append({"file": path, "label": label, "kept": st.get("kept", len(rows)),
                "records": st.get("read"), "failed": st.get("failed"), "empty_text_stat": st.get("empty_text") or 0,
                "pages": [{"url": r["url"], "title": r["title"] or "", "description": r["description"] or "",
                           "text": r["plain_text"] or "", "lang": r["language"],
                           "score": r["language_score"], "html_lang": r["html_lang"] or ""} for r in rows]})
print(json.dumps(out))
"""


def input_files(dirs: list[str]) -> list[tuple[str, str]]:
    """(producer label, path) of every archive below ``dirs``; the label is the archive's folder."""
    out = []
    for d in dirs:
        for base, _, names in os.walk(d):
            for n in sorted(names):
                if ".warc" in n.lower() or ".arc" in n.lower():
                    out.append((os.path.basename(base) or base, os.path.abspath(os.path.join(base, n))))
    return sorted(out)


def default_inputs() -> list[str]:
    dirs = [os.path.join(ROOT, "tests", "data", "conformance")]
    shared = os.environ.get("DAILYSLICE_SHARED") or os.path.join(ROOT, "..", "shared")
    corpus = os.path.join(shared, "corpus")
    if os.path.isdir(corpus):
        dirs.append(corpus)
    else:
        print(f"note: no shared samples at {corpus} (set $DAILYSLICE_SHARED); conformance archives only")
    return dirs


def run(tree: str, files: list[tuple[str, str]]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run(
        [sys.executable, "-c", LOOP, json.dumps(files)], cwd=tree, env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"the loop failed in {tree} ({out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _declared(html_lang: str) -> str | None:
    """ISO 639-3 of a declared ``<html lang>`` (its primary subtag), None when absent or unknown."""
    import pycountry

    sub = html_lang.strip().lower().replace("_", "-").split("-")[0]
    if len(sub) == 2:
        lang = pycountry.languages.get(alpha_2=sub)
        return getattr(lang, "alpha_3", None)
    return sub if len(sub) == 3 else None


def own_title(pages: list[dict]) -> tuple[int, int, int]:
    """(titled pages searched, own page first, own page in the top 10): BM25 over each language's pages."""
    from lib.index.invert import page_text
    from lib.text.analysis import get_analyzer

    k1, b = 0.9, 0.4
    groups: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pages):
        groups[p["lang"]].append(i)
    asked = first = top10 = 0
    for lang, ids in groups.items():
        an = get_analyzer(lang)
        tfs = [Counter(an.tokens(page_text(pages[i]["title"], pages[i]["description"], pages[i]["text"]))) for i in ids]
        dls = [sum(t.values()) for t in tfs]
        avgdl = (sum(dls) / len(dls)) or 1.0
        df: Counter = Counter()
        for t in tfs:
            df.update(t.keys())
        n = len(ids)
        for qi, i in enumerate(ids):
            terms = set(an.tokens(pages[i]["title"]))
            if not terms:
                continue
            asked += 1
            scores = []
            for d, (tf, dl) in enumerate(zip(tfs, dls)):
                s = 0.0
                for t in terms:
                    f = tf.get(t)
                    if f:
                        idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                        s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl))
                if s > 0:
                    scores.append((-s, d))
            # ties with the own page count against it: a page ranked first must be strictly first
            own = next((-s for s, d in scores if d == qi), None)
            if own is None:
                continue
            rank = sum(1 for s, d in scores if -s > own or (-s == own and d != qi))
            first += rank == 0
            top10 += rank < 10
    return asked, first, top10


def summary(files: list[dict]) -> dict:
    """Per producer and overall: files, records, kept, empty text, unreadable files."""
    per: dict[str, Counter] = defaultdict(Counter)
    for f in files:
        c = per[f["label"]]
        c["files"] += 1
        c["errors"] += "error" in f
        c["records"] += f.get("records") or 0
        c["kept"] += f.get("kept") or 0
        c["failed"] += f.get("failed") or 0
        c["empty"] += sum(1 for p in f["pages"] if not p["text"])
        c["empty_stat"] += f.get("empty_text_stat") or 0
    return per


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--baseline", help="git commit to compare with (checked out and built in a temporary worktree)")
    g.add_argument("--peer-tree", help="an already built checkout to compare with")
    p.add_argument("--input", action="append", help="folder of archives (repeatable); default: see above")
    args = p.parse_args()
    files = input_files(args.input or default_inputs())
    base = wt = None
    if args.baseline:
        base = tempfile.mkdtemp(prefix="bench-downstream-")
        wt = os.path.join(base, "baseline")
        subprocess.run(["git", "worktree", "add", "--detach", "-q", wt, args.baseline], cwd=ROOT, check=True)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=wt, check=True)
    peer = wt or os.path.abspath(args.peer_tree)
    try:
        print(
            f"{platform.node()} {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            f"load {os.getloadavg()[0]:.2f}; {len(files)} archives; peer {args.baseline or peer}",
            flush=True,
        )
        res = {"peer": run(peer, files), "this": run(ROOT, files)}
        fig = report(res)
        print(f"load {os.getloadavg()[0]:.2f}")
        write_result(
            "bench_maintext_downstream",
            fig,
            what="what the main text does downstream: pages kept and empty, language, own title as a BM25 query",
            peer=f"the tree of {args.baseline or peer}, in the same invocation",
            shape={"archives": len(files), "inputs": args.input or "default"},
        )
    finally:
        if wt:
            subprocess.run(["git", "worktree", "remove", "--force", wt], cwd=ROOT, check=False)
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _row(label: str, a: Counter, c: Counter) -> str:
    return (
        f"| {label} | {c['files']} | {c['records']} | {a['failed']} -> {c['failed']} | {a['kept']} -> {c['kept']} "
        f"| {a['empty']} -> {c['empty']} | {c['empty_stat']} |"
    )


def _by_url(pages: list[dict]) -> dict[tuple[str, int], dict]:
    """Pages by (URL, how many times the URL came before): the same page in both trees."""
    seen: Counter = Counter()
    out = {}
    for pg in pages:
        out[(pg["url"], seen[pg["url"]])] = pg
        seen[pg["url"]] += 1
    return out


def report(res: dict[str, list[dict]]) -> dict:
    """Print the comparison; the totals (peer, this) it shows, for the result file."""
    sp, st = summary(res["peer"]), summary(res["this"])
    print(
        "\n| producer | files | records | failed (peer -> this) | kept (peer -> this) | empty text (peer -> this) "
        "| of which the body has text (this) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    tot = {k: Counter() for k in ("peer", "this")}
    for label in sorted(set(sp) | set(st)):
        a, c = sp[label], st[label]
        tot["peer"].update(a)
        tot["this"].update(c)
        print(_row(label, a, c))
    print(_row("all", tot["peer"], tot["this"]))
    a, c = tot["peer"], tot["this"]
    if a["errors"] or c["errors"]:
        print(f"unreadable files: peer {a['errors']}, this {c['errors']}")

    pages = {k: [pg for f in v for pg in f["pages"]] for k, v in res.items()}
    by_key = {k: _by_url(v) for k, v in pages.items()}
    common = sorted(set(by_key["peer"]) & set(by_key["this"]), key=str)
    changed = [
        (by_key["peer"][k], by_key["this"][k]) for k in common if by_key["peer"][k]["lang"] != by_key["this"][k]["lang"]
    ]
    print(
        f"\nlanguage: {len(common)} pages in both; language changed on {len(changed)} "
        f"({len(changed) / max(1, len(common)):.1%})"
    )
    texts = sum(1 for k in common if by_key["peer"][k]["text"] != by_key["this"][k]["text"])
    print(f"main text changed on {texts} of them")
    fig = {f"{k} (peer, this)": [a[k], c[k]] for k in ("kept", "empty", "failed")}
    fig.update(pages_in_both=len(common), language_changed=len(changed), text_changed=texts)
    for k in ("peer", "this"):
        v = pages[k]
        decl = [(pg, _declared(pg["html_lang"])) for pg in v]
        decl = [(pg, d) for pg, d in decl if d]
        agree = sum(1 for pg, d in decl if pg["lang"] == d)
        fig[f"{k}: und, agrees with <html lang> of"] = [sum(1 for pg in v if pg["lang"] == "und"), agree, len(decl)]
        print(
            f"  {k:4s}: und {sum(1 for pg in v if pg['lang'] == 'und')}, "
            f"mean lid.176 score {sum(pg['score'] for pg in v) / max(1, len(v)):.4f}, "
            f"agrees with <html lang> {agree} / {len(decl)}, languages {len({pg['lang'] for pg in v})}"
        )
        for pg, d in decl:
            if pg["lang"] != d:
                print(f"    {pg['lang']} (declared {pg['html_lang']}): {pg['url'][:90]}")
    right = Counter()
    for a, c in changed:
        d = _declared(a["html_lang"])
        verdict = (
            "no lang declared"
            if not d
            else "this right"
            if c["lang"] == d
            else "peer right"
            if a["lang"] == d
            else "neither"
        )
        right[verdict] += 1
        print(f"  {a['lang']} -> {c['lang']} (declared {a['html_lang'] or '-'}): {a['url'][:90]}")
    if changed:
        print("  changed pages by the declared language: " + ", ".join(f"{k} {v}" for k, v in sorted(right.items())))

    print("\nown title as a query (BM25 over the pages of the page's language, both with this checkout's analyzer):")
    for k in ("peer", "this"):
        asked, first, top10 = own_title(pages[k])
        print(f"  {k:4s}: {asked} titled pages, own page first {first}, in the top 10 {top10}")
        fig[f"{k}: titled pages, own page first, in the top 10"] = [asked, first, top10]
    return fig


if __name__ == "__main__":
    sys.exit(main())
