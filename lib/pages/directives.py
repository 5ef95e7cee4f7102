"""What a page says about its own use: robots directives, link ``rel`` and AI opt-outs.

Parsed as search engines parse them (Google's and Bing's documentation of the robots meta
tag and ``X-Robots-Tag``):

- sources: ``<meta name="robots">``, metas named for a crawler in the configured agent list
  (default ``robots`` only: e.g. add ``googlebot`` or ``ccbot``), and every ``X-Robots-Tag``
  header, with or without its ``agent: directives`` prefix (an agent prefix applies to the
  rest of its header line; lines without one apply to every crawler);
- values: comma lists (words separated by spaces only are read as a list too), any case and
  spacing; ``none`` is ``noindex, nofollow``; ``max-snippet:0`` is ``nosnippet``; values we do
  not know are ignored; the most restrictive of all sources wins;
- AI and text-and-data-mining opt-outs: the robots values ``noai`` and ``noimageai``, and
  TDMRep (``tdm-reservation: 1``, ``tdm-policy``) as meta or HTTP header.

Plain Python, no Spark: preprocess calls :func:`page_signals` once per page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

#: the directives we act on, in the order they are written into the ``robots`` column
TRACKED = ("noindex", "nofollow", "nosnippet", "noarchive", "noai", "noimageai")
#: link ``rel`` tokens that say "do not follow" (Google treats ugc and sponsored as nofollow hints)
NOFOLLOW_RELS = ("nofollow", "ugc", "sponsored")
#: the meta names read by default; an operator adds crawler names (``--robots-agents``)
DEFAULT_AGENTS = ("robots",)
#: directive names that take a value after a colon: in an X-Robots-Tag line they are no agent
_VALUED = frozenset(("max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"))
_EXPAND = {"none": ("noindex", "nofollow")}
TDM_META = ("tdm-reservation", "tdm-policy")


def parse_values(content: str | None) -> set[str]:
    """The tracked directives in one ``content`` value or header line (no agent prefix)."""
    out: set[str] = set()
    if not content:
        return out
    for token in content.lower().split(","):
        name, colon, value = token.partition(":")
        name = name.strip()
        if colon:
            if name == "max-snippet" and value.strip() == "0":
                out.add("nosnippet")
            continue
        for word in name.split():
            out.update(_EXPAND.get(word, (word,)))
    return out & set(TRACKED)


def parse_x_robots_tag(value: str | None, agents: Iterable[str] = DEFAULT_AGENTS) -> set[str]:
    """The tracked directives of ``X-Robots-Tag`` header lines (several lines joined with
    newlines) that apply to us: lines or parts without an agent, and those whose ``agent:``
    prefix names one of ``agents`` (``robots`` counts as every crawler)."""
    out: set[str] = set()
    if not value:
        return out
    ours = {a.lower() for a in agents} | {"robots"}
    for line in value.split("\n"):
        agent: str | None = None
        for token in line.split(","):
            name, colon, rest = token.partition(":")
            key = name.strip().lower()
            if colon and key and key not in _VALUED and " " not in key:
                agent, token = key, rest  # 'googlebot: noindex': the agent applies from here on
            if agent is None or agent in ours:
                out |= parse_values(token)
    return out


@dataclass(frozen=True)
class Signals:
    """A page's directives and the OWI columns they fill."""

    robots: list[str] | None  # tracked directives in effect, in TRACKED order; None without any
    ows_index: bool
    ows_index_details: str | None  # which source said noindex
    ows_genai: bool
    ows_genai_details: str | None  # which signal(s) opt out of AI use

    def row(self) -> dict[str, object]:
        return {
            "robots": self.robots,
            "ows_index": self.ows_index,
            "ows_index_details": self.ows_index_details,
            "ows_genai": self.ows_genai,
            "ows_genai_details": self.ows_genai_details,
        }


def page_signals(
    metas: Iterable[tuple[str, str]], headers: Mapping[str, str], agents: Iterable[str] = DEFAULT_AGENTS
) -> Signals:
    """The signals of one page from its metas (``(name lowercased, content)``, as
    :func:`lib.html.content.extract` collects them) and its HTTP headers (lowercased names,
    repeated ``X-Robots-Tag`` lines joined with newlines)."""
    names = {a.lower() for a in agents} | {"robots"}
    found: dict[str, list[str]] = {}  # directive -> sources, in the order seen
    tdm: dict[str, str] = {}
    for name, content in metas:
        if name in names:
            for d in parse_values(content):
                found.setdefault(d, []).append(f"meta {name}")
        elif name in TDM_META and content and name not in tdm:
            tdm[name] = content.strip()
    xrt = headers.get("x-robots-tag")
    if xrt:
        for d in parse_x_robots_tag(xrt, agents):
            found.setdefault(d, []).append("x-robots-tag")
    for name in TDM_META:
        if name in headers and headers[name].strip():
            tdm[name] = headers[name].strip()  # the header, when both say it: what the server sent
    robots = [d for d in TRACKED if d in found] or None
    genai = [f"{d} ({', '.join(found[d])})" for d in ("noai", "noimageai") if d in found]
    reserved = tdm.get("tdm-reservation", "").strip() == "1"
    if reserved:
        genai.append("tdm-reservation=1")
    if reserved and "tdm-policy" in tdm:  # a policy means something only with the reservation (TDMRep)
        genai.append(f"tdm-policy={tdm['tdm-policy']}")
    opt_out = bool(reserved or "noai" in found or "noimageai" in found)
    return Signals(
        robots=robots,
        ows_index="noindex" not in found,
        ows_index_details=f"noindex ({', '.join(found['noindex'])})" if "noindex" in found else None,
        ows_genai=not opt_out,
        ows_genai_details="; ".join(genai) if genai else None,
    )


def link_rel(rel: str | None, page_nofollow: bool = False) -> str | None:
    """The ``rel`` kept on a link: its nofollow/ugc/sponsored tokens in that order, space
    separated, plus ``nofollow`` when the page says nofollow; None for a link that may be
    followed."""
    tokens = set(rel.lower().split()) if rel else set()
    if page_nofollow:
        tokens.add("nofollow")
    kept = [t for t in NOFOLLOW_RELS if t in tokens]
    return " ".join(kept) if kept else None


def followed(rel: str | None) -> bool:
    """Whether a link with this stored ``rel`` counts for in-links and anchor texts."""
    return not rel
