"""Main-text quality and speed: ours against Resiliparse and trafilatura, same run, same pages.

    python -m benchmarks.bench_extraction_quality [--scrapinghub DIR] [--trafilatura-eval DIR]
                                                  [--kinds DIR] [--set scrapinghub,trafilatura,kinds]
                                                  [--limit N] [--only ours,resiliparse,trafilatura]

Sets (each scored by its own method):

  ScrapingHub   ../shared/extraction/scrapinghub (181 news and blog pages, the default ``--scrapinghub``):
                shingle-based precision, recall and F1 of each page's ``articleBody``, computed by the
                set's own ``evaluate.py`` (imported from the set's folder, not re-implemented).
  trafilatura   ``--trafilatura-eval DIR``: the multilingual evaluation pages that trafilatura's
                repository publishes (adbar/trafilatura, Apache-2.0; DIR holds its ``tests/`` folder
                or is it: ``evaldata.json``, ``eval/``, ``cache/``). ~990 pages of news, blogs, magazines,
                government and company pages in many languages; each lists snippets that must
                (``with``) and must not (``without``) be in the text, scored as its
                ``tests/eval_common.py`` does (normalised substring match; precision, recall, F1 over
                the set's totals). Fetched data, never committed; skipped with a line when absent.
                It labels no page types. trafilatura was tuned on this set: its lead here is a ceiling.
  kinds         tests/data/maintext_kinds (committed; the default ``--kinds``, or
                ``$DAILYSLICE_MAINTEXT_KINDS``): forum threads, Q&A pages, listings and collections
                from public repositories and the shared WARCs, labelled per docs/maintext-labelling.md
                by devtools/label_maintext_kinds.py (its labels.jsonl; benchmarks/build_maintext_kinds.py
                rebuilds the set from its sources). Word precision, recall and F1 per page (bags of lower-cased
                ``\\w+`` words, the expected text against the extract), averaged over the pages of
                each kind and over all pages.

Every extractor gets the same decoded ``str`` (lib.html.charset.decode_html on the bytes).
ours: ``lib.html.content.extract(html, url).text`` (the whole extract the preprocess job pays:
head fields and links too); Resiliparse: ``extract_plain_text(html, main_content=True)``;
trafilatura: ``trafilatura.extract(html, include_comments=False, include_tables=True)`` (the
settings of its own evaluation). ms per page is the median over the set's pages, one core.

With ours in the run, the cost of the opt-in ``main_html`` column (``--main-html``: the main
content as structural HTML, written in the walk that writes the text) is measured too: ours with
and without it, alternating page by page (3 rounds), on the ScrapingHub pages and on the heavy
pages of tests/data/heavy_pages.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import pathlib
import re
import statistics
import sys
import time
from collections.abc import Callable

from benchmarks.common import load, write_result
from devtools import label_maintext_kinds as lab
from lib.html import walk
from lib.html.charset import decode_html
from lib.html.content import extract as ours_extract

ROOT = pathlib.Path(__file__).resolve().parent.parent
# ../shared beside the checkout, or where $DAILYSLICE_SHARED says (as tests/conftest.py)
SCRAPINGHUB = pathlib.Path(os.environ.get("DAILYSLICE_SHARED") or ROOT.parent / "shared") / "extraction" / "scrapinghub"


def extractors(only: list[str]) -> dict[str, Callable[[str, str], str]]:
    """name -> f(html, url) -> main text, for the extractors asked for."""
    out: dict[str, Callable[[str, str], str]] = {}
    if "ours" in only:
        out["ours"] = lambda html, url: ours_extract(html, url).text
    if "resiliparse" in only:
        from resiliparse.extract.html2text import extract_plain_text

        out["resiliparse"] = lambda html, url: extract_plain_text(html, main_content=True)
    if "trafilatura" in only:
        import trafilatura

        out["trafilatura"] = lambda html, url: (
            trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""
        )
    return out


def run(fns: dict, pages: list[tuple[str, str, str]]) -> tuple[dict, dict]:
    """key -> text and median ms per extractor, over ``pages`` (key, url, html)."""
    texts: dict = {name: {} for name in fns}
    ms: dict = {}
    for name, fn in fns.items():
        times = []
        for key, url, html in pages:
            t0 = time.perf_counter()
            try:
                text = fn(html, url)
            except Exception as exc:  # a crash costs the page, as in the sets' own scorers
                print(f"  {name}: {key}: {type(exc).__name__}: {exc}", file=sys.stderr)
                text = ""
            times.append(time.perf_counter() - t0)
            texts[name][key] = text or ""
        ms[name] = 1000 * statistics.median(times) if times else float("nan")
    return texts, ms


def main_html_cost(title: str, pages: list[tuple[str, str, str]], rounds: int = 3) -> None:
    """ms per page of ours without and with main_html, the two alternating page by page so that
    the machine's load weighs on both alike; per page the best of ``rounds``."""
    best = {False: [], True: []}
    for _, url, html in pages:
        times = {False: [], True: []}
        for _ in range(rounds):
            for with_html in (False, True):
                t0 = time.perf_counter()
                ours_extract(html, url, None, with_html)
                times[with_html].append(time.perf_counter() - t0)
        for k in times:
            best[k].append(min(times[k]))
    med = {k: 1000 * statistics.median(v) for k, v in best.items()}
    tot = {k: sum(v) for k, v in best.items()}
    size = statistics.median(len(ours_extract(html, url, None, True).main_html) for _, url, html in pages)
    print(
        f"| {title} ({len(pages)}) | {med[False]:.2f} | {med[True]:.2f} | {med[True] / med[False]:.2f}x "
        f"| {tot[True] / tot[False]:.2f}x | {size / 1000:.1f} kB |"
    )


def heavy_pages() -> list[tuple[str, str, str]]:
    """(key, url, html) of tests/data/heavy_pages."""
    folder = ROOT / "tests" / "data" / "heavy_pages"
    out = []
    with open(folder / "pages.tsv") as f:
        next(f)
        for line in f:
            name, url = line.split("\t")[:2]
            out.append((name, url, decode_html(gzip.decompress((folder / name).read_bytes())).text))
    return out


def load_module(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scrapinghub_pages(folder: pathlib.Path, limit: int | None) -> tuple[dict, list[tuple[str, str, str]]]:
    """The ScrapingHub ground truth and (key, url, html) of its pages."""
    truth = json.loads((folder / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for key in sorted(truth)[:limit]:
        raw = gzip.decompress((folder / "html" / f"{key}.html.gz").read_bytes())
        pages.append((key, truth[key].get("url") or "http://example.com/", decode_html(raw).text))
    return truth, pages


def scrapinghub(folder: pathlib.Path, fns: dict, limit: int | None) -> list[tuple]:
    """(extractor, F1, precision, recall, ms, empty pages) on the ScrapingHub set, its own scorer."""
    evaluate = load_module(folder / "evaluate.py", "scrapinghub_evaluate")
    truth, pages = scrapinghub_pages(folder, limit)
    keys = [key for key, _, _ in pages]
    texts, ms = run(fns, pages)
    truth = {k: truth[k] for k in keys}
    rows = []
    for name in fns:
        pred = {k: {"articleBody": texts[name][k]} for k in keys}
        m = evaluate.evaluate(truth, pred, n_bootstrap=0)
        empty = sum(1 for k in keys if not texts[name][k].strip())
        rows.append((name, m["f1"], m["precision"], m["recall"], ms[name], empty))
    return rows, len(keys)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def trafilatura_eval(folder: pathlib.Path, fns: dict, limit: int | None) -> tuple[list[tuple], int]:
    """(extractor, F1, precision, recall, ms, empty pages) on trafilatura's evaluation set, scored
    as its tests/eval_common.py does: per page, a ``with`` snippet in the text is a true positive,
    a ``without`` snippet a false positive; precision, recall and F1 over the set's totals."""
    if (folder / "tests" / "evaldata.json").exists():
        folder = folder / "tests"
    data = json.loads((folder / "evaldata.json").read_text(encoding="utf-8"))
    pages, items = [], {}
    for url in sorted(data)[:limit]:
        item = data[url]
        path = next(
            (folder / sub / item["file"] for sub in ("cache", "eval") if (folder / sub / item["file"]).is_file()), None
        )
        if path is None:
            continue
        pages.append((url, url, decode_html(path.read_bytes()).text))
        items[url] = item
    texts, ms = run(fns, pages)
    rows = []
    for name in fns:
        tp = fp = fn = 0
        for url, item in items.items():
            text = _norm(texts[name][url])
            hit = sum(1 for w in item["with"] if _norm(w) in text)
            tp += hit
            fn += len(item["with"]) - hit
            fp += sum(1 for w in item["without"] if _norm(w) in text)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
        empty = sum(1 for url in items if not texts[name][url].strip())
        rows.append((name, f1, precision, recall, ms[name], empty))
    return rows, len(items)


def kinds_eval(folder: pathlib.Path, fns: dict, limit: int | None) -> tuple[list[tuple], int]:
    """(kind, extractor, F1, precision, recall, ms, empty pages, pages) on the kinds set: word
    scores per page against labels.jsonl, averaged by kind and over all pages ("all")."""
    labels = lab.load_labels(folder)
    meta = {p["id"]: p for p in lab.load_pages(folder)}
    keys = sorted(labels)[:limit]
    pages = [(k, meta[k]["url"], lab.page_html(meta[k], folder)) for k in keys]
    texts, ms = run(fns, pages)
    kinds = sorted({labels[k]["kind"] for k in keys}) + ["all"]
    rows = []
    for kind in kinds:
        ks = [k for k in keys if kind in ("all", labels[k]["kind"])]
        for name in fns:
            scores = [lab.prf(lab.words("\n".join(labels[k]["lines"])), lab.words(texts[name][k])) for k in ks]
            p, r, f1 = (statistics.mean(s[i] for s in scores) for i in range(3))
            empty = sum(1 for k in ks if not texts[name][k].strip())
            rows.append((kind, name, f1, p, r, ms[name], empty, len(ks)))
    return rows, len(keys)


def kinds_table(rows: list[tuple], n: int) -> None:
    print(f"\nmain-text kinds set, word scores per page averaged by kind ({n} pages)\n")
    print("| kind (pages) | extractor | F1 | precision | recall | empty pages |")
    print("|---|---|---:|---:|---:|---:|")
    for kind, name, f1, p, r, _, empty, k in rows:
        print(f"| {kind} ({k}) | {name} | {f1:.3f} | {p:.3f} | {r:.3f} | {empty} |")
    print("\nms per page (median, all kinds): " + ", ".join(f"{r[1]} {r[5]:.2f}" for r in rows if r[0] == "all"))


def table(title: str, rows: list[tuple], n: int) -> None:
    print(f"\n{title} ({n} pages)\n")
    print("| extractor | F1 | precision | recall | ms per page (median) | empty pages |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, f1, p, r, ms, empty in rows:
        print(f"| {name} | {f1:.3f} | {p:.3f} | {r:.3f} | {ms:.2f} | {empty} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scrapinghub", type=pathlib.Path, default=SCRAPINGHUB)
    ap.add_argument(
        "--trafilatura-eval",
        type=pathlib.Path,
        default=None,
        help="folder of trafilatura's evaluation pages (its repository's tests/), fetched",
    )
    ap.add_argument("--kinds", type=pathlib.Path, default=lab.SET, help=f"the kinds set ({lab.SET})")
    ap.add_argument("--set", default="scrapinghub,trafilatura,kinds", help="the sets to run, comma-separated")
    ap.add_argument("--limit", type=int, default=None, help="the first N pages of each set only")
    ap.add_argument("--only", default="ours,resiliparse,trafilatura")
    args = ap.parse_args(argv)
    fns = extractors(args.only.split(","))
    sets = args.set.split(",")
    print(f"ours: {walk.status()}; load {os.getloadavg()[0]:.2f} (1 min) at start")
    load0, scores = load(), {}
    if "scrapinghub" not in sets:
        pass
    elif (args.scrapinghub / "ground-truth.json").exists():
        rows, n = scrapinghub(args.scrapinghub, fns, args.limit)
        table("ScrapingHub article-extraction benchmark, its evaluate.py's shingle scores", rows, n)
        scores[f"ScrapingHub ({n})"] = {r[0]: {"f1": round(r[1], 3), "ms": round(r[4], 2)} for r in rows}
    else:
        print(f"\nScrapingHub: skipped, no ground-truth.json in {args.scrapinghub}")
    if "trafilatura" not in sets:
        pass
    elif args.trafilatura_eval is not None and args.trafilatura_eval.exists():
        rows, n = trafilatura_eval(args.trafilatura_eval, fns, args.limit)
        table("trafilatura's multilingual evaluation set, its with/without snippet scores", rows, n)
        scores[f"trafilatura set ({n})"] = {r[0]: {"f1": round(r[1], 3), "ms": round(r[4], 2)} for r in rows}
    else:
        print("\ntrafilatura evaluation set: skipped (give --trafilatura-eval DIR, its repository's tests/)")
    if "kinds" not in sets:
        pass
    elif not lab.missing(args.kinds):
        krows, kn = kinds_eval(args.kinds, fns, args.limit)
        kinds_table(krows, kn)
        for kind, name, f1, *_, k in krows:
            scores.setdefault(f"kinds: {kind} ({k})", {})[name] = {"f1": round(f1, 3)}
    else:
        print(f"\nkinds set: skipped, {lab.missing(args.kinds)}")
    if "ours" in fns and "scrapinghub" in sets:
        print("\nmain_html's cost: ours without and with it, alternating page by page (best of 3 per page)\n")
        print(
            "| pages | ms per page (median) | with main_html | ratio of medians | ratio of totals | main_html "
            "(median) |"
        )
        print("|---|---:|---:|---:|---:|---:|")
        if (args.scrapinghub / "ground-truth.json").exists():
            main_html_cost("ScrapingHub", scrapinghub_pages(args.scrapinghub, args.limit)[1])
        main_html_cost("heavy pages", heavy_pages()[: args.limit])
    print(f"\nload {os.getloadavg()[0]:.2f} (1 min) at end")
    if scores:  # F1 by set (and kind); ms per page where timed
        write_result(
            "bench_extraction_quality",
            {s: v["ours"] for s, v in scores.items() if "ours" in v},
            what="main-text word F1 (each set's own scoring) and ms per page",
            peer=", ".join(n for n in fns if n != "ours") or None,
            peers={s: {n: x for n, x in v.items() if n != "ours"} for s, v in scores.items()},
            ratio={
                f"{s}: ours / {n} F1": round(v["ours"]["f1"] / v[n]["f1"], 3)
                for s, v in scores.items()
                for n in v
                if "ours" in v and n != "ours" and v[n]["f1"]
            },
            shape={"sets": sets, "limit": args.limit},
            variant="kinds set" if sets == ["kinds"] else "",
            load_before=load0,
        )


if __name__ == "__main__":
    main()
