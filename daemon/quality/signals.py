"""Signals of a badly read page beside the engine's own figure (daemon.quality.confidence).

Contract (each pure on its inputs, cheap; None where the page says too little to judge):

- ``lexicon(language) -> Lexicon | None``: Tesseract's own dictionary of a language (the
  ``lstm-word-dawg`` of its traineddata, listed with Tesseract's ``combine_tessdata`` and
  ``dawg2wordlist``, both in Debian's ``tesseract-ocr``): the words (lower-cased) and, for
  Chinese and Japanese, the pairs of adjacent CJK characters inside those words. Loaded once per
  process per language (~0.3 s of CPU); None when the tools or the model are missing (the signal
  is then not judged: a stage that only adds something never costs a page its text).
- ``dictionary_share(text, language)``: Latin languages: the share of the text's words of 3+
  letters that are in the language's dictionary (as written, lower-cased or capitalised);
  Chinese/Japanese: the share of adjacent CJK character pairs found inside dictionary words (a
  column read across or a junk read strings characters that never stand together).
  ``language`` picks the dictionary; None below ``MIN_WORDS`` words / ``MIN_PAIRS`` pairs.
- ``low_word_share(confidences)``: the share of the page's words whose engine confidence is under
  ``LOW_WORD_CONF`` (60) -- the spread, not the mean: a page with a third of its words unsure is
  read badly even when the sure words lift the mean. None with fewer than ``MIN_WORDS`` words
  with a confidence. The Tesseract engine records it in the page's ``meta["low_words"]`` (the
  journal keeps no word confidences), so it lives with the engine's words
  (``daemon.engines.tesswords``, below this stage).
- ``unplaced(text)``: the page's text has enough letters (``MIN_LETTERS``) and
  daemon.language cannot place it among the 11 languages (junk read as letters).
- ``judge(...) -> list[str]``: the signals that trip, by name (``dictionary``, ``low_words``,
  ``language``), with the thresholds below, chosen on the calibration set of bench/bench_flag.py
  (generated bad pages and bench/realdocs' tune split; bench/RESULTS.md "Flag signals").
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from daemon.engines.tesswords import MIN_WORDS
from daemon.language import UNKNOWN, detect_language
from daemon.tessdata import tessdata_dir

#: The traineddata whose dictionary stands for each language.
MODELS: dict[str, tuple[str, ...]] = {
    "en": ("eng",), "de": ("deu",), "fr": ("fra",), "es": ("spa",), "it": ("ita",), "nl": ("nld",),
    "pt": ("por",), "sv": ("swe",), "da": ("dan",), "zh": ("chi_sim", "chi_tra"), "ja": ("jpn",),
}
CJK_LANGUAGES = frozenset({"zh", "ja"})

MIN_PAIRS = 20  # adjacent CJK character pairs before their share is judged
MIN_LETTERS = 40  # letters before an unplaced language counts

# Thresholds (bench/bench_flag.py, calibration set; bench/RESULTS.md "Flag signals"). low_words:
# the best F1 holds from 0.14 to 0.16 (bad pages 0.17-0.68: a real page blurred at 75 dpi, a
# Chinese manual page read at 0.66; good pages up to 0.13, a Swedish manual scan read at 0.97).
# The dictionary shares are backstops for junk: no clean or well-read page of the set is under
# them (Latin: clean corpus texts >= 0.77, pages read well >= 0.71; CJK pairs: corpus >= 0.36,
# pages read well >= 0.44 -- a Chinese text's pairs often cross word boundaries).
DICTIONARY_LATIN_BELOW = 0.5
DICTIONARY_CJK_BELOW = 0.25
LOW_WORDS_ABOVE = 0.15

_LATIN_WORD = re.compile(r"[^\W\d_]{3,}")
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RUN = re.compile(f"[{_CJK}]{{2,}}")


@dataclass(frozen=True)
class Lexicon:
    """A language's dictionary words (lower-cased) and, for CJK, the character pairs in them."""

    words: frozenset[str]
    pairs: frozenset[str]


_lock = threading.Lock()


def _wordlist(traineddata: Path) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="ocr-lexicon-") as tmp:
        dawg, uni, out = (Path(tmp) / n for n in ("w.lstm-word-dawg", "w.lstm-unicharset", "w.txt"))
        run = {"capture_output": True, "timeout": 60, "check": True}
        subprocess.run(["combine_tessdata", "-e", str(traineddata), str(dawg), str(uni)], **run)  # type: ignore[call-overload]
        if not dawg.exists() or not uni.exists():
            return []
        subprocess.run(["dawg2wordlist", str(uni), str(dawg), str(out)], **run)  # type: ignore[call-overload]
        return out.read_text(encoding="utf-8", errors="replace").split()


@functools.lru_cache(maxsize=16)
def _load(language: str, tessdata: str) -> Lexicon | None:
    if shutil.which("combine_tessdata") is None or shutil.which("dawg2wordlist") is None:
        return None
    words: set[str] = set()
    for model in MODELS.get(language, ()):
        path = Path(tessdata) / f"{model}.traineddata"
        if path.is_file():
            try:
                words.update(w.lower() for w in _wordlist(path))
            except (OSError, subprocess.SubprocessError):
                continue
    if not words:
        return None
    pairs: set[str] = set()
    if language in CJK_LANGUAGES:
        for w in words:
            for run in _CJK_RUN.findall(w):
                pairs.update(run[i:i + 2] for i in range(len(run) - 1))
    return Lexicon(frozenset(words), frozenset(pairs))


def lexicon(language: str) -> Lexicon | None:
    """See the module docstring."""
    if language not in MODELS:
        return None

    with _lock:
        return _load(language, os.environ.get("TESSDATA_PREFIX") or tessdata_dir())


def dictionary_share(text: str, language: str) -> float | None:
    """See the module docstring."""
    lex = lexicon(language)
    if lex is None:
        return None
    if language in CJK_LANGUAGES:
        pairs = [run[i:i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)]
        if len(pairs) < MIN_PAIRS:
            return None
        return sum(p in lex.pairs for p in pairs) / len(pairs)
    words = _LATIN_WORD.findall(text)
    if len(words) < MIN_WORDS:
        return None
    return sum(w.lower() in lex.words for w in words) / len(words)


def unplaced(text: str) -> bool:
    """See the module docstring."""

    letters = sum(ch.isalpha() for ch in text)
    return letters >= MIN_LETTERS and detect_language(text)[0] == UNKNOWN


def judge(language: str, dictionary: float | None, low_words: float | None, is_unplaced: bool) -> list[str]:
    """The signals that trip (see the module docstring)."""
    out = []
    if dictionary is not None:
        below = DICTIONARY_CJK_BELOW if language in CJK_LANGUAGES else DICTIONARY_LATIN_BELOW
        if dictionary < below:
            out.append("dictionary")
    if low_words is not None and low_words > LOW_WORDS_ABOVE:
        out.append("low_words")
    if is_unplaced:
        out.append("language")
    return out
