"""lib/text/analysis.py: the per-language analyzers (no Spark)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.text.analysis import MAX_TOKEN_CHARS, analyzer_from_description, get_analyzer, raw_tokens


def test_english_lowercase_stop_stem():
    a = get_analyzer("eng")
    assert a.name == "dailyslice-v1:eng:lower+stop+snowball-english"
    assert a.tokens("The Running DOGS were barking at 42 cats") == ["run", "dog", "bark", "42", "cat"]
    # contractions stay one token, so the stop list catches them (curly apostrophe too)
    assert a.tokens("They don't and WON’T") == []


def test_nfkc_and_casefold():
    a = get_analyzer("und")
    assert a.name == "dailyslice-v1:und:lower"
    # ligature and full-width forms fold to plain letters; ß casefolds to ss; no stemming for und
    assert a.tokens("ﬁsh ＡＢＣ Straße running") == ["fish", "abc", "strasse", "running"]
    assert raw_tokens("foo_bar foo-bar e-mail") == ["foo", "bar", "foo", "bar", "e", "mail"]


def test_german_and_french():
    assert get_analyzer("deu").tokens("Die Häuser sind schön und groß") == ["haus", "schon", "gross"]
    fra = get_analyzer("fra")
    assert "elision" in fra.name
    assert fra.tokens("L'homme et l’enfant qu'il aime") == ["homm", "enfant", "aim"]


def test_marks_stay_inside_words():
    # Devanagari vowel signs are combining marks: they must not split a word
    assert raw_tokens("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert get_analyzer("hin").name.endswith("snowball-hindi")


def test_bigrams_for_scripts_without_spaces():
    assert raw_tokens("北京大学 in Beijing 中") == ["北京", "京大", "大学", "in", "beijing", "中"]
    # the prolonged sound mark belongs to the katakana word
    assert raw_tokens("タワー") == ["タワ", "ワー"]
    # Thai: grapheme clusters (consonant + tone mark) are the units
    assert raw_tokens("ง่าย") == ["ง่า", "าย"]
    # a script rule, not a language rule: a page tagged English gets the same bigrams
    assert get_analyzer("eng").tokens("東京 tower") == ["東京", "tower"]


def test_long_tokens_dropped():
    a = get_analyzer("und")
    assert a.tokens("x" * MAX_TOKEN_CHARS + " ok " + "y" * (MAX_TOKEN_CHARS + 1)) == ["x" * MAX_TOKEN_CHARS, "ok"]


def test_unknown_and_malformed_codes():
    assert get_analyzer(None) is get_analyzer("und") is get_analyzer("") is get_analyzer("12")
    assert get_analyzer("ENG") is get_analyzer("eng")
    assert get_analyzer("qaa").name == "dailyslice-v1:qaa:lower"  # a code without resources


def test_name_round_trip():
    for lang in ("eng", "deu", "zho", "und", "fra", "rus"):
        a = get_analyzer(lang)
        assert analyzer_from_description(f"{a.name}; dailyslice index x/{lang} shard 0 of 1") is a


def test_description_mismatch_is_refused():
    with pytest.raises(ValueError, match="no dailyslice analyzer"):
        analyzer_from_description("Anserini export of a Lucene index")
    with pytest.raises(ValueError, match="this code provides"):
        analyzer_from_description("dailyslice-v1:eng:lower+snowball-porter")
    with pytest.raises(ValueError, match="this code provides"):
        analyzer_from_description("dailyslice-v9:eng:lower+stop+snowball-english")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["eng", "deu", "fra", "zho", "und", "hin", "tha"]))
def test_term_counts_equals_counted_tokens(text, lang):
    a = get_analyzer(lang)
    toks = a.tokens(text)
    assert a.term_counts(text) == Counter(toks)
    for t in toks:
        assert t and len(t) <= MAX_TOKEN_CHARS and not any(c.isspace() for c in t)


# the batch path splits at ASCII whitespace only: texts dense in other whitespace, marks,
# apostrophes, compatibility forms and unspaced scripts
_TRICKY = st.text(st.sampled_from(list("ab1' \t\n\x1c\x85\u00a0\u1680\u2007\u2028\u202f\u3000\u0301\u00b4\u2019\ufb01Ⅻ北京ひカ\u0e01\u0e34ß_-")),
                  max_size=60)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=200), _TRICKY), max_size=8), st.sampled_from(["eng", "zho", "und", "fra"]))
def test_analyze_batch_equals_term_counts(texts, lang):
    a = get_analyzer(lang)
    bt = a.analyze_batch(texts)
    got: list[dict[str, int]] = [{} for _ in texts]
    for d, t, f in zip(bt.doc.tolist(), bt.term.tolist(), bt.tf.tolist()):
        got[d][bt.vocab[t]] = f
    assert got == [a.term_counts(t or "") for t in texts]
    assert bt.doclength.tolist() == [sum(g.values()) for g in got]
    assert list(zip(bt.term.tolist(), bt.doc.tolist())) == sorted(zip(bt.term.tolist(), bt.doc.tolist()))


def test_piece_table_starts_anew_when_full(monkeypatch):
    from lib.text import analysis

    monkeypatch.setattr(analysis, "TABLE_PIECES", 5)
    a = analysis.Analyzer("eng")  # a fresh one: the shared analyzers keep their tables
    texts = ["The rivers run to the sea", "Seas and rivers; the running river", "A new batch of words entirely"]
    first = a.analyze_batch(texts[:2])
    second = a.analyze_batch(texts[1:])
    assert first.vocab is not second.vocab  # the table was full: new ids, a new vocabulary
    for bt, batch in ((first, texts[:2]), (second, texts[1:])):
        got: list[dict[str, int]] = [{} for _ in batch]
        for d, t, f in zip(bt.doc.tolist(), bt.term.tolist(), bt.tf.tolist()):
            got[d][bt.vocab[t]] = f
        assert got == [a.term_counts(t) for t in batch]


_PIECES = st.lists(st.one_of(st.sampled_from(["the", "running", "rivers", "l'homme", "don't", "a" * 65, "x9", "über",
                                              "北京", "ﬁsh", "and", "der", "häuser", "c3po", "'"]),
                             st.text(st.sampled_from(list("abz09'-_äß北\u0301")), min_size=1, max_size=70)), max_size=30)


@settings(max_examples=100, deadline=None)
@given(_PIECES, st.sampled_from(["eng", "deu", "fra", "und", "zho"]))
def test_expand_many_equals_expanding_one_by_one(pieces, lang):
    """The piece table's batch expansion (plain ASCII words stemmed a list at a time) gives
    each piece the terms of the one-by-one path that queries use."""
    a = get_analyzer(lang)
    assert a.expand_many(pieces) == [a._uncached_expand(p) for p in pieces]
