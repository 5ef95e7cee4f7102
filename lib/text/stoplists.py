"""The analyzers' stop-word lists from ``ROOT/shared/auxiliary/models``: one item per language.

An item ``stopwords-LANG`` (LANG the ISO 639-3 code the analyzers use) is a UTF-8 text file,
one word a line (blank lines and lines starting with ``#`` are skipped), added with
``dailyslice auxiliary add models stopwords-eng FILE --version V``. Its words are
NFKC-casefolded like the packaged lists'. A language with such an item is analyzed with it
instead of the ``stopwords`` package's list, and its analyzer's name says which version
(``dailyslice-v1:eng:lower+stop@V+snowball-english``), so each CIFF names its list. Languages
without one keep the packaged list and the names of before: a root whose shared folder holds no
list indexes byte for byte as it did.

Who loads what:

- the index job's driver :func:`resolve`\\ s the root's lists once (checksum checked, file
  parsed: a bad list stops the job before it writes anything) into :class:`Ref`\\ s, pinned
  versions that travel to the tasks, which :func:`load` them (checksum checked again, once per
  process) whatever the manifest says by then;
- the day's ``_stats.json`` ``built_with.models`` records each as ``stopwords-LANG``
  (:func:`records`);
- whoever analyzes text for a published day later (the service's queries, anchor CIFFs
  rewritten after a graph exchange, a purge's rebuild) takes the versions the day records
  (:func:`refs_of_day`), not the root's current ones: versions stay side by side under
  ``models/stopwords-LANG/VERSION/``, so a day built with v1 is still read with v1 after v2 is
  added.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable

from lib.errors import ConfigError
from lib.store import auxiliary, storage
from lib.store.layout import MODELS

PREFIX = "stopwords-"  # item name = PREFIX + language
_LANG = re.compile(r"^[a-z]{2,8}$")


class StopListError(ConfigError):
    """A shared stop-word list that cannot be used: not UTF-8, a line that is not one word,
    an item named after no language code, a day's list that is not where it says."""


@dataclass(frozen=True)
class StopList:
    """One language's shared list: the version and sha256 that name it, and its words."""

    lang: str
    version: str
    sha256: str
    words: frozenset[str] = field(default=frozenset(), compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Ref:
    """A pinned shared list: which root, language, file (under ``models/``), version and bytes.
    Small and picklable: what the driver gives the tasks."""

    root: str
    lang: str
    rel: str
    version: str
    sha256: str

    @property
    def uri(self) -> str:
        return storage.join(auxiliary.folder(self.root, MODELS), self.rel)


def item_name(lang: str) -> str:
    """The manifest's item name of ``lang``'s list."""
    return PREFIX + lang


def normalize(word: str) -> str:
    """A word as the analyzers compare it (NFKC, casefolded, typographic apostrophe as ``'``)."""
    return unicodedata.normalize("NFKC", word).casefold().replace("\u2019", "'")


def parse(data: bytes, shown: str) -> frozenset[str]:
    """The words of a list file's bytes; :class:`StopListError` naming ``shown`` and where."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StopListError(f"{shown}: not UTF-8 at byte offset {e.start}: refused") from None
    words = set()
    for n, line in enumerate(text.splitlines(), 1):
        w = line.strip()
        if not w or w.startswith("#"):
            continue
        w = normalize(w)
        if any(c.isspace() for c in w):
            raise StopListError(f"{shown}: line {n} ({line.strip()!r}) is not one word: refused")
        words.add(w)
    return frozenset(words)


_loaded: dict[tuple[str, str], StopList] = {}  # (uri, sha256) -> list: a task process reads each once


def load_one(ref: Ref) -> StopList:
    """The list ``ref`` pins, its sha256 checked (:class:`lib.store.auxiliary.ChecksumMismatch`
    naming the file when it differs)."""
    key = (ref.uri, ref.sha256)
    got = _loaded.get(key)
    if got is None:
        item = auxiliary.pinned(ref.root, MODELS, item_name(ref.lang), ref.rel, ref.version, ref.sha256)
        with open(item.path, "rb") as f:
            words = parse(f.read(), ref.uri)
        got = _loaded[key] = StopList(ref.lang, ref.version, ref.sha256, words)
    return got


def load(refs: Iterable[Ref]) -> dict[str, StopList]:
    """``{lang: list}`` of pinned lists (what :func:`lib.text.analysis.get_analyzer` takes)."""
    return {r.lang: load_one(r) for r in refs}


def resolve(root: str | None) -> tuple[Ref, ...]:
    """The root's current shared lists, pinned, each checked and parsed (the driver, before the
    job writes anything); none without a root or a list."""
    if not root:
        return ()
    refs = []
    for name in sorted(auxiliary.manifest(root, MODELS)):
        if not name.startswith(PREFIX):
            continue
        lang = name[len(PREFIX) :]
        if not _LANG.match(lang):
            raise StopListError(f"{auxiliary.folder(root, MODELS)}: item {name!r}: {lang!r} is not a language code")
        item = auxiliary.resolve(root, MODELS, name, None)
        assert item is not None  # the manifest lists it
        ref = Ref(root, lang, item.rel, item.version, item.sha256)
        load_one(ref)  # a list that does not parse is refused here, not in a task
        refs.append(ref)
    return tuple(refs)


def records(refs: Iterable[Ref]) -> dict[str, dict[str, str]]:
    """What ``_stats.json`` ``built_with.models`` keeps of each list, by item name."""
    return {
        item_name(r.lang): {"version": r.version, "sha256": r.sha256, "source": "shared", "file": r.uri, "rel": r.rel}
        for r in refs
    }


def refs_of_day(built_with: dict[str, Any] | None, root: str) -> tuple[Ref, ...]:
    """The lists a day was built with (its ``_stats.json`` ``built_with``), found under ``root``'s
    models folder (any copy of the root: the record's ``rel``, not its ``file``)."""
    models = (built_with or {}).get("models") or {}
    refs = []
    for name, rec in sorted(models.items()):
        if not name.startswith(PREFIX) or not isinstance(rec, dict) or rec.get("source") != "shared":
            continue
        try:
            refs.append(Ref(root, name[len(PREFIX) :], str(rec["rel"]), str(rec["version"]), str(rec["sha256"])))
        except KeyError as e:
            raise StopListError(f"built_with.models.{name} lacks {e}") from None
    return tuple(refs)


def day_lists(built_with: dict[str, Any] | None, root: str) -> tuple[dict[str, StopList], dict[str, str]]:
    """(``{lang: list}``, ``{lang: why not}``) of the lists a day was built with: a list that
    cannot be loaded (missing, another sha256) is named with its reason, the others load."""
    lists: dict[str, StopList] = {}
    problems: dict[str, str] = {}
    for ref in refs_of_day(built_with, root):
        try:
            lists[ref.lang] = load_one(ref)
        except ConfigError as e:
            problems[ref.lang] = str(e)
    return lists, problems
