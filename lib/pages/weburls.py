"""URL normalisation, ids and host parts (Public Suffix List from tldextract's bundled snapshot)."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from urllib.parse import urlparse, urlsplit, urlunsplit

import surt as _surt
import tldextract

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """Lowercase scheme and host, drop default port and fragment, '/' for an empty path."""
    try:
        p = urlsplit(url.strip())
        scheme = p.scheme.lower()
        host = (p.hostname or "").rstrip(".")
        port = p.port
    except ValueError:
        return url.strip()
    netloc = f"[{host}]" if ":" in host else host  # IPv6 literals keep their brackets
    if p.username or p.password:
        netloc = f"{p.username or ''}{':' + p.password if p.password else ''}@{host}"
    if port and _DEFAULT_PORTS.get(scheme) != port:
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, p.path or "/", p.query, ""))


def url_id(url: str) -> str:
    """sha256 (hex) of the normalized URL: the page id, stable across days."""
    return hashlib.sha256(normalize_url(url).encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def _extractor():
    # no network: the Public Suffix List snapshot bundled with the package
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def url_parts(url: str) -> dict[str, str]:
    """scheme, host, path, query, subdomain, registered domain and public suffix of ``url``."""
    try:
        p = urlsplit(url)
        host = (p.hostname or "").lower()
    except ValueError:
        return {
            "url_scheme": "",
            "url_host": "",
            "url_path": "",
            "url_query": "",
            "url_subdomain": "",
            "url_domain": "",
            "url_suffix": "",
        }
    ext = _extractor()(host)
    domain = f"{ext.domain}.{ext.suffix}" if ext.suffix and ext.domain else ext.domain
    return {
        "url_scheme": p.scheme.lower(),
        "url_host": host,
        "url_path": p.path,
        "url_query": p.query,
        "url_subdomain": ext.subdomain,
        "url_domain": domain,
        "url_suffix": ext.suffix,
    }


@lru_cache(maxsize=1 << 16)
def _host_parts(host: str) -> tuple[str, str, str, bool]:
    ext = _extractor()(host)
    return ext.subdomain, ext.domain, ext.suffix, bool(getattr(ext, "is_private", False))


def owi_url_parts(url: str) -> dict[str, str | bool | None]:
    """URL parts as OpenWebSearch.eu's schema 0.1.0 has them: ``urllib.parse.urlparse``'s
    scheme, path, params, query and fragment, and tldextract's subdomain, domain (the
    registered name without its suffix: ``example`` of ``www.example.co.uk``), suffix and
    is_private; empty parts are None, as Resilipipe writes them."""
    try:
        p = urlparse(url)
        host = (p.hostname or "").lower()
    except ValueError:
        return dict.fromkeys(OWI_URL_KEYS)
    sub, dom, suf, private = _host_parts(host) if host else ("", "", "", False)
    out: dict[str, str | bool | None] = {
        "url_scheme": p.scheme.lower(),
        "url_path": p.path,
        "url_params": p.params,
        "url_query": p.query,
        "url_fragment": p.fragment,
        "url_subdomain": sub,
        "url_domain": dom,
        "url_suffix": suf,
    }
    out = {k: v or None for k, v in out.items()}
    out["url_is_private"] = private
    return out


OWI_URL_KEYS = (
    "url_scheme",
    "url_path",
    "url_params",
    "url_query",
    "url_fragment",
    "url_subdomain",
    "url_domain",
    "url_suffix",
    "url_is_private",
)


# CDXJ lines are "KEY TS JSON": a key must never contain whitespace or control characters,
# or byte order of lines would no longer be the order of (key, timestamp).
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")


def _escape(text: str) -> str:
    return _UNSAFE.sub(lambda m: "%{:02x}".format(ord(m.group())), text)


def surt_key(url: str) -> str:
    """SURT key of ``url`` as pywb computes it (``surt.surt`` defaults: lowercased,
    ``www.`` dropped, query sorted, fragment removed); never contains whitespace.

    URLs the surt package cannot parse fall back to the lowercased URL, so every capture
    still gets a line (pywb would look such a URL up by the same fallback)."""
    try:
        key = _surt.surt(url)
    except Exception:
        key = url.strip().lower()
    return _escape(key)


def surt_key_strict(url: str) -> str:
    """SURT key of a URL a user asks for (a CDX query): as :func:`surt_key`, but a URL the surt
    package cannot parse raises ValueError naming it (pywb answers such a query 400 too)."""
    try:
        key = _surt.surt(url)
    except Exception as e:
        raise ValueError(f"cannot canonicalise URL {url!r}: {type(e).__name__}: {e}") from None
    return _escape(key)
