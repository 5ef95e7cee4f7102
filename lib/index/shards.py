"""Which shard a page goes to: TLD/LANG groups, the ``other`` merge rule and shard counts.

Plain functions (no Spark): the index job collects the page counts per (url_suffix,
language) — a few thousand rows — and plans the day's shards on the driver with these.

Rules (docs/index.md):

* TLD = the last label of the page's public suffix (``co.uk`` -> ``uk``), lowercased,
  Unicode labels in IDNA/punycode form (``рф`` -> ``xn--p1ai``). Pages without a public
  suffix (IP hosts) or with a label that is not ``[a-z0-9-]`` go to ``other``.
* LANG = the page's ISO 639-3 language (``und`` when missing).
* A (TLD, LANG) group with fewer than ``min_group_docs`` pages that day is merged into
  (``other``, LANG). Languages are never merged: each shard holds one language, so one
  analyzer serves the whole shard.
* A group of ``n`` pages gets ``k = 2^ceil(log2(ceil(n / docs_per_shard)))`` shards (at
  least 1) and a page goes to shard ``partition_of(url, k)`` of the MD5 key space
  (lib.pages.keyspace): with the same ``k`` a URL lands in the same shard every day,
  and when ``k`` doubles shard ``i`` splits into ``i`` and ``i + k``.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow.compute as pc
import pyarrow.parquet as pq

from lib.store import layout

OTHER = "other"
_LABEL = re.compile(r"[a-z0-9-]{1,63}")
_LANG = re.compile(r"[a-z]{2,8}")


def tld_label(url_suffix: str | None) -> str:
    """TLD folder name of a public suffix (see module doc)."""
    last = (url_suffix or "").strip().strip(".").rsplit(".", 1)[-1].lower()
    if not last:
        return OTHER
    if not last.isascii():
        try:
            last = last.encode("idna").decode("ascii")
        except UnicodeError:
            return OTHER
    return last if _LABEL.fullmatch(last) and last != OTHER else OTHER


def lang_label(language: str | None) -> str:
    """LANG folder name: the ISO 639-3 code, ``und`` when missing or malformed."""
    code = (language or "").strip().lower()
    return code if _LANG.fullmatch(code) else layout.UNKNOWN_LANG


def shard_count(docs: int, docs_per_shard: int) -> int:
    """Shards for a group of ``docs`` pages: ``ceil(docs / docs_per_shard)`` rounded up to a
    power of two (so that a URL's shard is stable for a given size class)."""
    if docs_per_shard < 1:
        raise ValueError(f"docs_per_shard must be >= 1, got {docs_per_shard}")
    need = max(1, -(-docs // docs_per_shard))
    return 1 << (need - 1).bit_length()


@dataclass(frozen=True)
class Group:
    """One output folder ``{tld}/{lang}/`` and its shards ``base .. base + k - 1`` (global
    shard ordinals, used as Spark partition ids)."""

    gid: int
    tld: str
    lang: str
    docs: int
    k: int
    base: int

    @property
    def bits(self) -> int:
        return self.k.bit_length() - 1


def plan_groups(
    counts: dict[tuple[str, str], int] | dict[tuple[str | None, str | None], int],
    docs_per_shard: int,
    min_group_docs: int,
) -> tuple[list[Group], dict[tuple[str, str], int]]:
    """Plan the day's shards from page counts per (url_suffix, language).

    Returns the groups (sorted by tld, lang; ``gid`` = position) and, for every input key,
    normalized as (url_suffix or '', language or ''), the gid its pages go to."""
    by_group: dict[tuple[str, str], int] = {}
    key_group: dict[tuple[str, str], tuple[str, str]] = {}
    for (suffix, language), n in counts.items():
        g = (tld_label(suffix), lang_label(language))
        by_group[g] = by_group.get(g, 0) + n
        key_group[(suffix or "", language or "")] = g
    merged: dict[tuple[str, str], tuple[str, str]] = {}
    final: dict[tuple[str, str], int] = {}
    for (tld, lang), n in by_group.items():
        target = (OTHER, lang) if n < min_group_docs else (tld, lang)
        merged[(tld, lang)] = target
        final[target] = final.get(target, 0) + n
    groups: list[Group] = []
    base = 0
    index: dict[tuple[str, str], int] = {}
    for gid, (tld, lang) in enumerate(sorted(final)):
        k = shard_count(final[(tld, lang)], docs_per_shard)
        groups.append(Group(gid, tld, lang, final[(tld, lang)], k, base))
        index[(tld, lang)] = gid
        base += k
    assign = {key: index[merged[g]] for key, g in key_group.items()}
    return groups, assign


def count_pages(files: list[tuple[str, str]], columns: list[str], threads: int = 4) -> dict[tuple[str, str], int]:
    """Pages per (url_suffix or '', language) of the day's files ``(path, language)``; raises
    ValueError naming the first file that lacks one of ``columns`` (``language`` excepted:
    it is the folder name).

    Reads only the ``url_suffix`` column (dictionary-encoded: a few bytes a page), with
    pyarrow, a few files at a time; faster than a Spark job for the plan, which is all the
    driver needs before the map stage."""

    def one(item: tuple[str, str]) -> list[tuple[tuple[str, str], int]]:
        path, language = item
        f = pq.ParquetFile(path)
        missing = sorted(set(columns) - {"language"} - set(f.schema_arrow.names))
        if missing:
            raise ValueError(f"preprocessed pages in {path} lack columns {missing}")
        col = f.read(columns=["url_suffix"]).column(0).combine_chunks()
        return [((r["values"] or "", language or ""), r["counts"]) for r in pc.value_counts(col).to_pylist()]

    counts: dict[tuple[str, str], int] = {}
    with ThreadPoolExecutor(threads) as ex:
        for rows in ex.map(one, files):
            for key, n in rows:
                counts[key] = counts.get(key, 0) + n
    return counts


def shard_dir(group: Group) -> str:
    """Relative folder of a group's files."""
    return f"{group.tld}/{group.lang}"
