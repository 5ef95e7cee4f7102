"""Language id: fastText lid.176 mapped to ISO 639-3 (no Spark)."""

from __future__ import annotations

import pytest

from lib.preprocess import langid


@pytest.mark.parametrize(
    "text,code",
    [
        ("The council approved the new budget for the public libraries on Tuesday.", "eng"),
        ("Der Stadtrat hat am Dienstag den neuen Haushalt für die Bibliotheken beschlossen.", "deu"),
        ("Le conseil municipal a approuvé mardi le nouveau budget des bibliothèques.", "fra"),
        ("Городской совет во вторник утвердил новый бюджет для публичных библиотек.", "rus"),
        ("市议会星期二批准了公共图书馆的新预算。", "zho"),
    ],
)
def test_language_id_iso639_3(text, code):
    lang, score = langid.identify(text)
    assert lang == code and 0.5 < score <= 1.0


def test_language_id_empty_text():
    assert langid.identify("   \n ") == ("und", 0.0)
