"""How sure the engine's read of a page is: one figure per page, 0-100.

Contract:

- ``page_confidence(page, language) -> PageConfidence | None``: None for a page read from the
  PDF's own text layer (nothing was recognised) and for a page with no text at all (a blank page
  is not a doubtful read), but 0 for a page read as nothing whose image has ink
  (``meta["ink_ppm"]`` over daemon.intake.pagescan's blank line). Otherwise ``value`` = the engine's figure times the share of the
  page's tokens that look like words of the document's language and script (``wordlike``):
  - Tesseract: its word confidences, each weighted by the word's length
    (``meta["word_confidence"]``, daemon.engines.tesswords; a page recorded before it existed
    falls back on ``meta["confidence"]``, Tesseract's plain mean);
  - a VLM (no word confidences): 100, halved when the engine's repetition guard cut a loop or a
    band stayed truncated (``flags``, daemon.engines.pagepolicy / textguard).
- ``wordlike(text, language)``: the share of tokens that look like words. Latin scripts: letters
  of the nine Latin languages' alphabets, one case pattern (lower, Capitalised, UPPER), a vowel
  unless very short, no letter thrice in a row; numbers and dates count as words; runs of
  symbols (``|``, ``~~``, ``_=``) do not; tokens mixing letters and digits are not counted either
  way. CJK: every ideograph, kana and CJK punctuation counts as a word of its own, other symbols
  next to them do not. Pure, cheap (a regex pass over the text).
- Beside the figure, the signals of daemon.quality.signals, worked out on the same text:
  ``dictionary`` (share of words, or CJK character pairs, in Tesseract's dictionary of the
  page's language: the language py3langid places the page's text in, else the document's),
  ``low_words`` (share of Tesseract words under confidence 60), ``language`` (the page's
  language: ``unknown`` when the text cannot be placed among the 11), and ``signals`` (the names
  of those that trip, ``signals.judge``).
- ``is_low(conf, threshold)``: the page is flagged ``low_confidence`` (daemon.service.outputs):
  its figure is under ``threshold`` or a signal trips (``threshold`` 0: never).

Why these two parts: junk reads come in two kinds. Tesseract reading a page it cannot read
(vertical Japanese read across, heavy noise, a page turned 90 degrees) is unsure of its words
(confidence 19-45), but a VLM is not, and Tesseract is sometimes sure of symbol soup; the word
shape catches those (bench/bench_flags.py measures both, bench/RESULTS.md "Quality flag").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from daemon.intake.pagescan import is_blank
from daemon.language import UNKNOWN, detect_language
from daemon.quality import signals
from daemon.writers.pdflayout import plain_lines

#: Letters of the nine Latin languages (en de fr es it nl pt sv da) beyond a-z.
_LATIN_EXTRA = "äöüßàâæçéèêëîïôœùûÿáíóúñìòãõåø"
_LETTERS = "a-z" + _LATIN_EXTRA
_VOWELS = set("aeiouy" + "äöüàâæéèêëîïôœùûÿáíóúìòãõåø")
_WORD = re.compile(rf"^[{_LETTERS}]+(?:['’\-][{_LETTERS}]+)*\.?$", re.IGNORECASE)
_NUMBER = re.compile(r"^[+\-−(]?[€$£]?\d[\d.,:/\-–%°'’)]*[€$£%]?$")
_CJK_CHAR = re.compile(r"[\u2e80-\u2fff\u3000-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
#: Punctuation a token may carry around a word ("(Haus),", «mot», „Wort“).
_EDGE = "\"'“”‘’„‚«»‹›()[]{}<>.,;:!?¡¿*…·•§¶"
#: One-character tokens that are ordinary text, not junk: dashes, bullets, signs.
_NEUTRAL = set("-–—&/+=%§•·*#@€$£")
_TRIPLE = re.compile(r"(.)\1\1", re.IGNORECASE)
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[^\W\d_]")


@dataclass(frozen=True)
class PageConfidence:
    """A page's confidence (see the module docstring)."""

    value: float  # 0-100; the page is flagged below the configured threshold
    engine: float  # the engine's own figure (Tesseract: length-weighted word confidence)
    wordlike: float  # share of tokens that look like words (0-1)
    tokens: int  # tokens judged
    dictionary: float | None = None  # daemon.quality.signals.dictionary_share
    low_words: float | None = None  # daemon.engines.tesswords.low_word_share
    language: str = "unknown"  # the page's language (py3langid), "unknown" when not placed
    signals: tuple[str, ...] = ()  # the signals that trip (signals.judge)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": round(self.value, 1), "engine": round(self.engine, 1),
                               "wordlike": round(self.wordlike, 3), "tokens": self.tokens, "language": self.language}
        if self.dictionary is not None:
            out["dictionary"] = round(self.dictionary, 3)
        if self.low_words is not None:
            out["low_words"] = round(self.low_words, 3)
        if self.signals:
            out["signals"] = list(self.signals)
        return out


def _judge(token: str) -> bool | None:
    """True: looks like a word (or a number); False: junk; None: not counted either way."""
    core = token.strip(_EDGE)
    if not core:
        return None if len(token) == 1 or set(token) <= set(".…-–—") else False
    if len(core) == 1 and core in _NEUTRAL:
        return None
    if _NUMBER.match(core):
        return True
    if _HAS_DIGIT.search(core):
        return None if _HAS_ALPHA.search(core) else False
    if not _WORD.match(core):
        return False
    letters = core.rstrip(".").replace("'", "").replace("’", "").replace("-", "")
    if _TRIPLE.search(letters) or len(letters) > 40:
        return False
    if not (letters.islower() or letters.isupper() or (letters[0].isupper() and letters[1:].islower())):
        return False
    return len(letters) <= 3 or any(c in _VOWELS for c in letters.lower())  # "Nr", "BGB"; no "rnnl"


def wordlike(text: str, language: str = "unknown") -> tuple[float, int]:
    """The share of ``text``'s tokens that look like words, and how many were judged (see the
    module docstring); (1.0, 0) for a text with nothing to judge. ``language`` is the document's
    (ISO 639-1): CJK characters are words in any language's text (a Japanese line on an English
    page), so it changes nothing yet beyond documenting the intent."""
    del language  # every supported language's letters are accepted (see _LATIN_EXTRA)
    good = total = 0
    for raw in unicodedata.normalize("NFC", text).split():
        cjk = len(_CJK_CHAR.findall(raw))
        if cjk:
            rest = _CJK_CHAR.sub(" ", raw).split()
            good += cjk
            total += cjk
            for part in rest:  # symbols and Latin next to CJK characters: judged on their own
                verdict = _judge(part)
                if verdict is not None:
                    total += 1
                    good += verdict
            continue
        verdict = _judge(raw)
        if verdict is not None:
            total += 1
            good += verdict
    return (good / total if total else 1.0), total


#: A VLM's page whose loop was cut (``repetition``) or whose band stayed cut off (``truncated``):
#: its figure is halved (the text it kept may be right, but part of the page is not there).
VLM_DOUBT_FLAGS = frozenset({"repetition", "truncated"})


def page_confidence(page: Any, language: str = "unknown") -> PageConfidence | None:
    """The confidence of one finished page (``daemon.pagerecord.PageResult``); see the module
    docstring."""
    if page.source != "ocr":
        return None
    text = page.text
    if page.markdown:
        text = "\n".join(line for para in plain_lines(text, True) for line in para)
    share, tokens = wordlike(text, language)
    meta = page.meta or {}
    if tokens == 0:
        ink = meta.get("ink_ppm")
        if isinstance(ink, int | float) and not is_blank(float(ink)):
            return PageConfidence(0.0, 0.0, 0.0, 0)  # ink on the page and no word read from it
        return None
    figure = meta.get("word_confidence", meta.get("confidence"))
    if isinstance(figure, int | float) and page.engine == "tesseract":
        engine = max(0.0, min(100.0, float(figure)))
    else:
        engine = 50.0 if VLM_DOUBT_FLAGS & set(page.flags) else 100.0

    placed = detect_language(text)[0]
    unplaced = placed == UNKNOWN and signals.unplaced(text)
    lang = placed if placed != UNKNOWN else language
    dictionary = signals.dictionary_share(text, lang)
    low = meta.get("low_words")  # daemon.engines.tesseract (None: a VLM, a page read before it)
    low_words = float(low) if isinstance(low, int | float) and page.engine == "tesseract" else None
    tripped = signals.judge(lang, dictionary, low_words, unplaced)
    return PageConfidence(engine * share, engine, share, tokens, dictionary, low_words, placed, tuple(tripped))


def is_low(conf: PageConfidence | None, threshold: float) -> bool:
    """The page is flagged ``low_confidence``: its figure is under ``threshold`` or one of its
    signals trips (``threshold`` 0: never)."""
    return conf is not None and threshold > 0 and (conf.value < threshold or bool(conf.signals))
