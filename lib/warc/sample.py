"""A small synthetic but realistic crawl in the bucket layout, for the demo and tests.

Deterministic (seeded): multilingual HTML pages on hosts under several TLDs that link to
each other with anchor texts, plus the records a real crawl has around them (warcinfo,
requests, a redirect, a 404, a stylesheet, an image, a revisit). Each record is its own
gzip member, as crawlers write them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import io
import os
import random
import uuid
from html import escape

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from lib.store import layout
from lib.warc.records import sha1_digest

SENTENCES = {
    "eng": [
        "The city council approved the new budget for public libraries on Tuesday.",
        "Researchers found that regular walking improves memory in older adults.",
        "The museum will open a new exhibition about the history of printing next month.",
        "Farmers in the region expect a good harvest after a wet spring.",
        "Our guide explains how to repair a bicycle tyre in ten minutes.",
        "The railway company announced more trains between the two largest cities.",
    ],
    "deu": [
        "Der Stadtrat hat am Dienstag den neuen Haushalt für die öffentlichen Bibliotheken beschlossen.",
        "Forscher haben herausgefunden, dass regelmäßiges Spazierengehen das Gedächtnis älterer Menschen verbessert.",
        "Das Museum eröffnet im nächsten Monat eine neue Ausstellung über die Geschichte des Buchdrucks.",
        "Die Landwirte in der Region erwarten nach einem nassen Frühjahr eine gute Ernte.",
        "Unsere Anleitung erklärt, wie man einen Fahrradreifen in zehn Minuten repariert.",
    ],
    "fra": [
        "Le conseil municipal a approuvé mardi le nouveau budget des bibliothèques publiques.",
        "Des chercheurs ont constaté que la marche régulière améliore la mémoire des personnes âgées.",
        "Le musée ouvrira le mois prochain une nouvelle exposition sur l'histoire de l'imprimerie.",
        "Les agriculteurs de la région attendent une bonne récolte après un printemps pluvieux.",
        "Notre guide explique comment réparer un pneu de vélo en dix minutes.",
    ],
    "spa": [
        "El ayuntamiento aprobó el martes el nuevo presupuesto para las bibliotecas públicas.",
        "Los investigadores descubrieron que caminar con regularidad mejora la memoria de las personas mayores.",
        "El museo abrirá el próximo mes una nueva exposición sobre la historia de la imprenta.",
        "Los agricultores de la región esperan una buena cosecha después de una primavera lluviosa.",
    ],
    "nld": [
        "De gemeenteraad heeft dinsdag de nieuwe begroting voor de openbare bibliotheken goedgekeurd.",
        "Onderzoekers ontdekten dat regelmatig wandelen het geheugen van ouderen verbetert.",
        "Het museum opent volgende maand een nieuwe tentoonstelling over de geschiedenis van de boekdrukkunst.",
        "De boeren in de regio verwachten een goede oogst na een natte lente.",
    ],
    "rus": [
        "Городской совет во вторник утвердил новый бюджет для публичных библиотек.",
        "Исследователи обнаружили, что регулярные прогулки улучшают память пожилых людей.",
        "В следующем месяце музей откроет новую выставку об истории книгопечатания.",
        "Фермеры региона ожидают хорошего урожая после дождливой весны.",
    ],
    "zho": [
        "市议会星期二批准了公共图书馆的新预算。",
        "研究人员发现，经常散步可以改善老年人的记忆力。",
        "博物馆下个月将开幕一个关于印刷史的新展览。",
        "该地区的农民预计在多雨的春天之后会有好收成。",
    ],
}
HOSTS = {
    "eng": ["news.example.com", "www.city.example.gov", "blog.example.org"],
    "deu": ["www.beispiel.de", "nachrichten.example.de"],
    "fra": ["www.exemple.fr"],
    "spa": ["www.ejemplo.es"],
    "nld": ["www.voorbeeld.nl"],
    "rus": ["www.primer.ru"],
    "zho": ["www.lizi.cn"],
}
CHARSETS = {"rus": "windows-1251", "zho": "gb18030"}
ANCHORS = ["read more", "related story", "home", "weiterlesen", "lire la suite", "more news", "архив", "更多"]


def _page(rng: random.Random, lang: str, url: str, n: int, links: list[tuple[str, str]]) -> str:
    sents = SENTENCES[lang]
    paras = ["".join(rng.choice(sents) + " " for _ in range(rng.randint(3, 6))) for _ in range(rng.randint(2, 5))]
    code = f"zq{hashlib.md5(url.encode()).hexdigest()[:8]}"  # one rare term per page, for search tests
    paras[0] += f" Reference {code}."
    body = "\n".join(f"<p>{escape(p)}</p>" for p in paras)
    link_html = " ".join(f'<a href="{escape(u)}">{escape(a)}</a>' for u, a in links)
    title = f"{sents[n % len(sents)][:48]} ({n})"
    charset = CHARSETS.get(lang, "utf-8")
    return (
        f'<!DOCTYPE html><html lang="{lang[:2]}"><head><meta charset="{charset}"><title>{escape(title)}</title>'
        f'<meta name="description" content="{escape(sents[0][:80])}">'
        f'<link rel="canonical" href="{escape(url)}"><script>var tracking = "ignore me";</script>'
        f"<style>body {{ color: black }}</style></head><body>"
        f'<nav><a href="/">Home</a> <a href="/about">About</a></nav>'
        f"<article><h1>{escape(title)}</h1>{body}</article>"
        f'<aside class="sidebar">Sidebar boilerplate</aside><p>{link_html}</p>'
        f"<footer>Copyright footer boilerplate</footer></body></html>"
    )


def _http(
    status: str, ctype: str, body: bytes, extra: list[tuple[str, str]] | None = None
) -> tuple[StatusAndHeaders, bytes]:
    headers = [("Content-Type", ctype), ("Content-Length", str(len(body))), ("Server", "sample/1.0")] + (extra or [])
    return StatusAndHeaders(status, headers, protocol="HTTP/1.1"), body


def write_sample_crawl(
    root: str, date: dt.date, files: int = 2, pages_per_file: int = 40, seed: int = 7, crawler: str = "crawler1"
) -> list[str]:
    """Write ``files`` WARC files under ``root/warc/YYYY-MM/DD/<crawler>/``; returns their paths."""
    rng = random.Random(seed)
    langs = list(SENTENCES)
    all_urls = []
    for i in range(files * pages_per_file):
        lang = langs[i % len(langs)]
        host = HOSTS[lang][i % len(HOSTS[lang])]
        all_urls.append((lang, f"https://{host}/articles/{date:%Y/%m}/page-{i}.html"))
    out_dir = os.path.join(layout.day_path(root, layout.WARC, date), crawler)
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    ts = dt.datetime.combine(date, dt.time(1, 0), tzinfo=dt.timezone.utc)
    for fno in range(files):
        path = os.path.join(out_dir, f"{ts:%H%M%S}-{fno}.warc.gz")
        with open(path, "wb") as fh:
            w = WARCWriter(fh, gzip=True)
            w.write_record(
                w.create_warcinfo_record(
                    os.path.basename(path), {"software": "dailyslice-sample", "format": "WARC File Format 1.1"}
                )
            )
            chunk = all_urls[fno * pages_per_file : (fno + 1) * pages_per_file]
            for j, (lang, url) in enumerate(chunk):
                n = fno * pages_per_file + j
                when = ts + dt.timedelta(seconds=n)
                targets = rng.sample(all_urls, k=min(4, len(all_urls)))
                links = [(u, rng.choice(ANCHORS)) for _, u in targets]
                html = _page(rng, lang, url, n, links).encode(CHARSETS.get(lang, "utf-8"), "xmlcharrefreplace")
                ctype = f"text/html; charset={CHARSETS.get(lang, 'utf-8')}"
                _write_pair(w, url, when, *_http("200 OK", ctype, html))
                if j % 10 == 3:  # the same page again, unchanged: a revisit
                    rec = w.create_revisit_record(
                        url,
                        digest=sha1_digest(html),
                        refers_to_uri=url,
                        refers_to_date=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        http_headers=_http("200 OK", ctype, b"")[0],
                    )
                    rec.rec_headers.replace_header(
                        "WARC-Date", (when + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
                    )
                    w.write_record(rec)
            host = HOSTS["eng"][fno % 3]
            extras = [
                (f"https://{host}/style.css", _http("200 OK", "text/css", b"body { margin: 0 }")),
                (f"https://{host}/logo.png", _http("200 OK", "image/png", b"\x89PNG\r\n\x1a\n" + bytes(range(64)))),
                (
                    f"https://{host}/old",
                    _http("301 Moved Permanently", "text/html", b"", [("Location", f"https://{host}/")]),
                ),
                (
                    f"https://{host}/missing",
                    _http("404 Not Found", "text/html", b"<html><body>Not found</body></html>"),
                ),
            ]
            for k, (url, (sh, body)) in enumerate(extras):
                _write_pair(w, url, ts + dt.timedelta(minutes=30, seconds=k), sh, body)
        paths.append(path)
    return paths


def _write_pair(w: WARCWriter, url: str, when: dt.datetime, http: StatusAndHeaders, body: bytes) -> None:
    date = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    req = w.create_warc_record(
        url,
        "request",
        payload=io.BytesIO(b""),
        http_headers=StatusAndHeaders(f"GET {url} HTTP/1.1", [("Host", url.split("/")[2])], is_http_request=True),
    )
    req.rec_headers.replace_header("WARC-Date", date)
    resp = w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
    resp.rec_headers.replace_header("WARC-Date", date)
    resp.rec_headers.replace_header("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url + date)}>")
    w.write_record(resp)
    w.write_record(req)


def main(argv: list[str] | None = None) -> int:
    """``python -m lib.warc.sample`` (``dailyslice sample-crawl``): write a sample crawl, print its files."""
    ap = argparse.ArgumentParser(description="write a sample crawl in the bucket layout")
    ap.add_argument("--root", required=True)
    ap.add_argument("--date", type=dt.date.fromisoformat, required=True)
    ap.add_argument("--files", type=int, default=2)
    ap.add_argument("--pages-per-file", type=int, default=40)
    a = ap.parse_args(argv)
    for p in write_sample_crawl(a.root, a.date, a.files, a.pages_per_file):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
