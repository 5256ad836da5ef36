"""daemon.quality.signals on real text: Tesseract's own dictionaries (the 11 languages' traineddata
as installed), the corpus texts of tests/data/corpus.yaml, and what Tesseract made of real pages
read badly (bench/bench_flag.py's calibration rows, bench/results/2026-12-03/flag-calib.jsonl)."""

from __future__ import annotations

import pytest
from corpus import DOCTYPE_TEXTS
from pagerecords import ocr_page

from daemon.engines import tesswords
from daemon.quality import signals
from daemon.quality.confidence import is_low, page_confidence

#: Tesseract's read of a real Debian manual page (Swedish, Audacity) scanned at 75 dpi and blurred:
#: word recall 0.46 (bench/bench_flag.py row deb-audacity-sv-p0-s75b).
SV_BLURRED = ("Detise Edu Shotelinux manual for Audacity oe is\n\n1 Manual fér Audacity\n\nOvereattaing\n\n"
              "2016 Erik Sundin\n2018 Andere Jonsson\n2019 Matts Munster\n1020 Lune\n\nDetta & on manual for "
              "Audacity. baserad ph verwon 1 2 4b-21+b1 trie Detian Edu Etch 30\n\nVermonen tiiganghg pd en hs och\n"
              "pdater as regelbundet")
#: A real Russian sentence: letters py3langid and the script rules place in none of the 11 languages.
RUSSIAN = ("Настоящий документ описывает систему Дебиан и содержит сведения о настройке пакетов, "
           "управлении службами и обслуживании системы после установки.")


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "it", "nl", "pt", "sv", "da", "zh", "ja"])
def test_clean_texts_are_dictionary_text_in_their_language(lang: str) -> None:
    shares = [signals.dictionary_share(by[lang], lang) for by in DOCTYPE_TEXTS.values() if lang in by]
    judged = [s for s in shares if s is not None]
    assert judged, "every language's corpus texts are long enough to judge"
    below = signals.DICTIONARY_CJK_BELOW if lang in signals.CJK_LANGUAGES else signals.DICTIONARY_LATIN_BELOW
    assert min(judged) >= below  # no clean text trips the signal


def test_a_misread_page_and_scrambled_text_have_fewer_dictionary_words() -> None:
    clean = signals.dictionary_share(DOCTYPE_TEXTS["letter"]["sv"], "sv")
    misread = signals.dictionary_share(SV_BLURRED.replace("\n", " ") * 2, "sv")
    assert clean is not None and misread is not None and misread < clean - 0.15
    # the same Chinese characters in another order: pairs that never stand together in a word
    zh = DOCTYPE_TEXTS["contract"]["zh"]
    shuffled = "".join(zh[i] for i in range(0, len(zh), 3)) + "".join(zh[i] for i in range(1, len(zh), 3))
    ok, bad = signals.dictionary_share(zh, "zh"), signals.dictionary_share(shuffled, "zh")
    assert ok is not None and bad is not None and bad < signals.DICTIONARY_CJK_BELOW < ok
    assert signals.dictionary_share("too few words here", "en") is None  # too little to judge
    assert signals.dictionary_share(DOCTYPE_TEXTS["letter"]["en"], "ko") is None  # no dictionary


def test_low_word_share_is_the_spread_not_the_mean() -> None:
    sure = [96.0] * 30
    assert tesswords.low_word_share(sure) == 0.0
    spread = [96.0] * 18 + [30.0] * 12  # mean 70: a third of the words unsure
    share = tesswords.low_word_share(spread)
    assert share == 0.4 and share > signals.LOW_WORDS_ABOVE
    assert tesswords.low_word_share([-1.0] * 40 + [90.0]) is None  # confidences not known: not judged


def test_text_in_no_supported_language_is_unplaced() -> None:
    assert signals.unplaced(RUSSIAN)
    assert not signals.unplaced(DOCTYPE_TEXTS["letter"]["de"]) and not signals.unplaced(DOCTYPE_TEXTS["letter"]["ja"])
    assert not signals.unplaced("Привет")  # too few letters to say


def test_signals_make_the_page_low_with_its_figure_high() -> None:
    meta = {"word_confidence": 90.0, "low_words": 0.45}
    unsure = page_confidence(ocr_page(0, DOCTYPE_TEXTS["letter"]["en"], meta=meta))
    assert unsure is not None and unsure.value > 80 and unsure.signals == ("low_words",)
    assert is_low(unsure, 50) and not is_low(unsure, 0)  # 0: never
    sure = page_confidence(ocr_page(0, DOCTYPE_TEXTS["letter"]["en"],
                                      meta={"word_confidence": 90.0, "low_words": 0.02}))
    assert sure is not None and sure.signals == () and not is_low(sure, 50)
    russian = page_confidence(ocr_page(0, RUSSIAN, meta={"word_confidence": 90.0}))
    assert russian is not None and "language" in russian.signals and russian.language == "unknown"
