"""lib/neardup/native/minhash.c against the numpy path it replaced (issue 62): the same shingle hashes
and the same signature bytes on real pages (the heavy pages and the shared crawl samples through our
extractor) and on the texts where the two could part (scripts without spaces, code points above the
BMP, lone surrogates, case mappings that change a length, long texts cut in pieces)."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.heavypages import heavy_pages
from lib.html.content import extract
from lib.neardup import minhash
from lib.neardup.minhash import MinHasher
from lib.warc.http import HttpError, parse_response
from lib.warc.records import BadRecord, iter_records

pytestmark = pytest.mark.skipif(minhash.NATIVE is None, reason="lib.neardup._minhash not built")

TRICKY = [
    "İstanbul'da ÇOK güzel don't e-mail foo_bar 3.14 " * 12,
    "हिन्दी भाषा 日本語のテキスト ภาษาไทย 中文abc123 emoji 🙂 𠀋𠀌 x 々〆 ｶﾀｶﾅ " * 8,
    "lone \ud800 surrogate and ß Straße " * 20,
    "",
    "a b c d",
    "ΟΔΟΣ " * 200 + "日本語のテキスト" * 100 + " tail words here and there",
]


@pytest.fixture(scope="module")
def real_texts(corpus) -> list[str]:
    """Main texts of the heavy pages and of the shared samples' HTML responses, by our extractor."""
    out = [extract(html.decode("utf-8", "replace"), url).text for url, html in heavy_pages()]
    for path in sorted(corpus.glob("*/*.warc.gz")):
        with open(path, "rb") as f:
            for rec in iter_records(f, str(path)):
                if isinstance(rec, BadRecord) or rec.rec_type != "response" or not rec.url.startswith("http"):
                    continue
                try:
                    resp = parse_response(rec.content)
                except HttpError:
                    continue
                if "html" in (resp.mime_type or ""):
                    out.append(extract(resp.body.decode("utf-8", "replace"), rec.url).text)
    return out


def test_the_compiled_path_is_the_one_used():
    assert MinHasher()._kernel is minhash.NATIVE
    assert MinHasher(native=False)._kernel is None
    assert MinHasher(shingle=65)._kernel is None  # longer shingles than its ring: numpy
    assert MinHasher() == MinHasher(native=False)  # the same hasher: same options, same bytes


def test_signatures_equal_the_numpy_path_on_real_pages(real_texts):
    texts = real_texts + TRICKY
    assert len(real_texts) > 150
    native, numpy_path = MinHasher(), MinHasher(native=False)
    sh_c, off_c = native.shingle_hashes(texts)
    sh_p, off_p = numpy_path.shingle_hashes(texts)
    assert np.array_equal(off_c, off_p) and np.array_equal(sh_c, sh_p)
    sigs = native.signatures(texts)
    assert sigs == numpy_path.signatures(texts)
    judged = [s for s in sigs if s is not None]
    assert len(judged) > 100 and len(set(judged)) > 0.8 * len(judged)  # real signatures, not one repeated


@pytest.mark.parametrize("shingle,perms,seed", [(1, 16, 3), (2, 64, 1), (5, 128, 1), (9, 32, 11), (64, 8, 2)])
def test_every_option_gives_the_same_bytes(real_texts, shingle, perms, seed):
    texts = real_texts[:40] + TRICKY
    opts = {"shingle": shingle, "perms": perms, "seed": seed, "min_shingles": 3}
    assert MinHasher(**opts).signatures(texts) == MinHasher(**opts, native=False).signatures(texts)


def test_long_texts_cut_in_pieces_give_the_same_bytes(real_texts, monkeypatch):
    monkeypatch.setattr(minhash, "_GROUP_CHARS", 700)  # every real text in several pieces and groups
    texts = [" ".join(real_texts[:5]), "x" * 900 + " after a blob " * 30, *TRICKY]
    assert MinHasher().signatures(texts) == MinHasher(native=False).signatures(texts)


def test_bad_buffers_are_refused_not_overrun():
    k = minhash.NATIVE
    table = minhash._bmp_classes()
    mult = np.ones(5, np.uint64)
    with pytest.raises(ValueError, match="no room"):
        k.shingles(["a b c d e f g"], table, minhash._class_of, mult, np.empty(1, np.uint32), np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="a count per text"):
        k.shingles(["a"], table[:10], minhash._class_of, mult, np.empty(9, np.uint32), np.zeros(1, np.int64))
    with pytest.raises(TypeError, match="str"):
        k.shingles([b"a"], table, minhash._class_of, mult, np.empty(9, np.uint32), np.zeros(1, np.int64))
    a = np.ones(4, np.uint32)
    with pytest.raises(ValueError, match="inconsistent"):
        k.minima(np.ones(3, np.uint32), np.array([0, 5], np.int64), a, a, np.empty(4, np.uint32))
    with pytest.raises(ValueError, match="backwards"):
        k.minima(np.ones(3, np.uint32), np.array([0, 2, 1], np.int64), a, a, np.empty(8, np.uint32))


def test_a_broken_class_lookup_is_an_error_not_a_wrong_signature():
    def broken(cp: int) -> int:
        raise RuntimeError(f"no class for {cp:#x}")

    k = minhash.NATIVE
    args = (minhash._bmp_classes(), broken, np.ones(5, np.uint64), np.empty(20, np.uint32), np.zeros(1, np.int64))
    with pytest.raises(RuntimeError, match="0x1f642"):
        k.shingles(["emoji 🙂 here"], *args)
