"""Language of a text: script rules first, then py3langid with Latin-script evidence.

Contract:
- ``detect_language(text, allowed)`` returns ``(code, confidence)`` where ``code`` is an ISO 639-1
  code among ``allowed`` (default: the 11 supported languages) or ``"unknown"`` when there is too
  little text, the text is in another script (Hangul, Cyrillic, Arabic, ...) or the winner is not
  allowed. ``confidence`` is in 0..1. Pure, thread-safe, no I/O after the first call (which loads
  py3langid's model once; ``warm()`` loads it ahead, in each render worker).
- ``chinese_variant(text)`` is ``"simplified"``, ``"traditional"`` or None (too few variant
  characters); ``han_variant_counts`` gives the counts behind it. ``looks_chinese(text)`` says
  whether a read with the Japanese model beside the Chinese ones is Chinese after all.
- ``clean_text(text)`` is the text language scoring reads (OCR junk lines reduced to long words).
- The text normalisation the doctype scoring shares: ``nfkc``, ``fold`` (case and diacritics
  folded), ``is_cjk``/``has_cjk``, ``WORD_RE``. No imports from ``classify`` (it imports this).

How the language is decided (in this order):
1. Script: Japanese kana or Japanese-only kanji forms -> ``ja``; Han characters without kana ->
   ``zh``; letters mostly in another script (Hangul, Cyrillic, Greek, Arabic, ...) -> ``unknown``.
   py3langid (like every n-gram identifier) calls kanji-heavy Japanese ``zh``, so script rules
   must come first.
2. Latin script: py3langid restricted to the Latin-script languages, combined with evidence from
   distinctive letters (å/ä/ö vs æ/ø, ß, ñ, ã, ...) and function words (och/og, het/een, und/der,
   ...). Short Scandinavian/Dutch/German texts are where n-grams alone waver; the evidence is
   added to py3langid's log-probabilities, so long texts are still decided by the model.
"""

from __future__ import annotations

import functools
import math
import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

from daemon.vocab import LANGUAGES

UNKNOWN = "unknown"

#: Latin-script languages among the 11 (decided by py3langid + evidence).
LATIN_LANGUAGES: tuple[str, ...] = ("en", "fr", "de", "es", "it", "nl", "pt", "sv", "da")

# Below this many letters (Latin) or CJK characters the text says too little to name a language.
MIN_LATIN_LETTERS = 12
MIN_CJK_CHARS = 4


# ----------------------------------------------------------------------------- normalisation

# Unicode fixes Tesseract and VLMs emit; NFKC also turns fullwidth Latin into ASCII.
def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


_FOLD_MAP = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ı": "i", "ĳ": "ij"})


def fold(text: str) -> str:
    """Case- and diacritic-insensitive form used for keyword matching (é->e, ß->ss, ø->o)."""
    s = unicodedata.normalize("NFKD", nfkc(text).casefold())
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", s).translate(_FOLD_MAP)


def has_cjk(s: str) -> bool:
    return any(is_cjk(ch) for ch in s)


# ----------------------------------------------------------------------------- scripts

_HIRAGANA = (0x3040, 0x309F)
_KATAKANA = (0x30A0, 0x30FF)
_KATAKANA_EXT = (0x31F0, 0x31FF)
_HALFWIDTH_KATAKANA = (0xFF66, 0xFF9F)
_HAN = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))

# Kanji forms used in Japanese but not in Chinese (shinjitai simplifications and kokuji).
# Simplified Chinese writes e.g. 发/价/经/证/气/卖, traditional 發/價/經/證/氣/賣; Japanese writes
# 発/価/経/証/気/売. Two or more of these in a kana-less text still mean Japanese (kanji-heavy
# forms and tables with OCR dropping the few kana).
_JA_ONLY_KANJI = frozenset(
    "発価経証気売済険図駅関広払込収続総労営県変読帰戦薬様円辺頼働畑峠枠匂塀拠沢浜栄桜検験"
    "歳択鉄団恵悪圧囲稲隠応仮壊拡覚楽観歓挙駆軽継権顕厳効鉱砕剤雑賛歯児実釈従渋縦処奨焼乗"
    "剰畳譲粋酔摂専銭繊捜巣騒増蔵臓対滝単弾遅鋳庁聴逓転伝闘徳悩脳廃拝髪抜晩仏舗穂豊毎満黙"
    "訳揺謡覧竜両猟緑涙塁隷霊齢暦歴巻勧寛陥犠戯郷暁勲掲渓蛍鶏撃倹剣圏斎桟糸獣粛醸斉荘挿勅"
    "塚弐"
)


# Words written this way in Japanese documents only (Chinese: 股份有限公司, 先生/女士, 增值税, 汇款,
# 发票/發票, 收据/收據, 元). Each occurrence counts like two Japanese-only kanji.
_JA_ONLY_WORDS = ("株式会社", "有限会社", "御中", "様", "消費税", "振込", "請求書", "領収書", "税込", "税抜",
                  "令和", "平成", "昭和", "〒", "円", "殿", "御請求", "月額", "口座名義")


_CJK_RE = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def _in(cp: int, rng: tuple[int, int]) -> bool:
    return rng[0] <= cp <= rng[1]


def _is_kana(cp: int) -> bool:
    return _in(cp, _HIRAGANA) or _in(cp, _KATAKANA) or _in(cp, _KATAKANA_EXT) or _in(cp, _HALFWIDTH_KATAKANA)


def _is_han(cp: int) -> bool:
    return any(_in(cp, r) for r in _HAN)


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return _is_han(cp) or _is_kana(cp)


def _script_counts(text: str) -> dict[str, int]:
    """Letters of ``text`` counted by script: latin, han, kana, ja_only (subset of han), other."""
    c = {"latin": 0, "han": 0, "kana": 0, "ja_only": 0, "other": 0}
    for ch in text:
        cp = ord(ch)
        if cp < 0x80:
            if ch.isalpha():
                c["latin"] += 1
            continue
        if _is_kana(cp):
            # The prolonged sound mark and middle dot sit in the katakana block but also show up
            # in Chinese OCR output as dashes/dots; they are not evidence of Japanese.
            if ch not in "ー・ｰ･":
                c["kana"] += 1
        elif _is_han(cp):
            c["han"] += 1
            if ch in _JA_ONLY_KANJI:
                c["ja_only"] += 1
        elif ch.isalpha():
            name = unicodedata.name(ch, "")
            if name.startswith("LATIN"):
                c["latin"] += 1
            else:
                c["other"] += 1
    if c["han"]:
        compact = re.sub(r"\s+", "", text)
        c["ja_only"] += 2 * sum(compact.count(w) for w in _JA_ONLY_WORDS)
    return c


# ----------------------------------------------------------------------------- Chinese variants


@functools.lru_cache(maxsize=1)
def _han_variants() -> tuple[frozenset[str], frozenset[str]]:
    """(simplified-only, traditional-only) characters of CC-CEDICT (zhon): ~2,300 and ~2,700."""
    from zhon import cedict

    simp, trad = set(cedict.simplified), set(cedict.traditional)
    return frozenset(simp - trad), frozenset(trad - simp)


def han_variant_counts(text: str) -> tuple[int, int]:
    """(characters only simplified Chinese writes, characters only traditional Chinese writes)."""
    simp, trad = _han_variants()
    s = t = 0
    for ch in text:
        if ch in simp:
            s += 1
        elif ch in trad:
            t += 1
    return s, t


#: A read with the Japanese model beside the Chinese ones counts as Chinese when kana are under
#: this share of its CJK characters (maths symbols and table rules read as kana by jpn: 5.7 % in
#: a ruled Chinese goods list; Japanese prose has 30 %+ kana) and it has fewer than 2
#: Japanese-only kanji forms/words (株式会社, 円, 発 ...: kanji-heavy Japanese tables have those).
MAX_STRAY_KANA_SHARE = 0.10


def looks_chinese(text: str) -> bool:
    """True for text that is Chinese although a Japanese model strewed kana into it."""
    c = _script_counts(nfkc(text))
    cjk = c["han"] + c["kana"]
    return c["han"] >= 20 and c["kana"] < MAX_STRAY_KANA_SHARE * cjk and c["ja_only"] < 2


#: Variant characters a page needs before its script is trusted (a title alone may have none).
MIN_VARIANT_CHARS = 3


def chinese_variant(text: str) -> str | None:
    """``"simplified"`` or ``"traditional"``: what a Chinese page is written in, from the page
    itself (the side with more variant-only characters; a read with both Tesseract models mixes
    in 6-15 % of the other side's forms, issue 15), or None with too few variant characters."""
    s, t = han_variant_counts(text)
    if s + t < MIN_VARIANT_CHARS or s == t:
        return None
    return "simplified" if s > t else "traditional"


# ----------------------------------------------------------------------------- clean text

# OCR junk: lines of rules, dots, table borders and misread specks. Their short "words" ("a",
# "o", "e", "os", "ao") are function words of Portuguese/Italian/Spanish, so a French page with
# a noisy margin scored as Portuguese (issue 15). Prose lines (most visible characters letters,
# two words of 3+ letters) keep all their words; other lines (junk, table rows, dates) keep only
# their words of 4+ letters, which OCR junk rarely makes and table labels are.
_CLEAN_MIN_LETTER_SHARE = 0.6
_CLEAN_MIN_WORD_OUTSIDE_PROSE = 4
_LONG_WORD_RE = re.compile(r"[^\W\d_]{3,}")
_TOKEN_RE = re.compile(r"\S+")
_TOKEN_STRIP = ".,;:!?()[]«»\"'“”„’-–—"


def clean_text(text: str) -> str:
    """``text`` as words for language scoring (see above): tokens that mix letters with digits
    or symbols ("l1ne", "C0", "|ist") dropped, short words kept in prose lines only; the text
    unchanged when fewer than ``MIN_LATIN_LETTERS`` letters are left."""
    kept: list[str] = []
    for line in text.splitlines():
        visible = [ch for ch in line if not ch.isspace()]
        if not visible:
            continue
        letters = sum(ch.isalpha() for ch in visible)
        prose = letters >= _CLEAN_MIN_LETTER_SHARE * len(visible) and len(_LONG_WORD_RE.findall(line)) >= 2
        shortest = 1 if prose else _CLEAN_MIN_WORD_OUTSIDE_PROSE
        words = [w.strip(_TOKEN_STRIP) for w in _TOKEN_RE.findall(line)]
        words = [w for w in words if len(w) >= shortest and all(ch.isalpha() or ch in "'’-" for ch in w)]
        if words:
            kept.append(" ".join(words))
    out = "\n".join(kept)
    return out if sum(ch.isalpha() for ch in out) >= MIN_LATIN_LETTERS else text


# ----------------------------------------------------------------------------- Latin evidence

# Letters that occur in some of the Latin-script languages only. Weight = log-odds added per
# distinct letter present (not per occurrence). Capital forms are handled by lower-casing.
_LETTER_EVIDENCE: dict[str, dict[str, float]] = {
    "æ": {"da": 2.5},
    "ø": {"da": 2.5},
    "å": {"da": 1.2, "sv": 1.2},
    "ä": {"sv": 1.2, "de": 1.2},
    "ö": {"sv": 1.2, "de": 1.2},
    "ü": {"de": 2.0},
    "ß": {"de": 2.5},
    "ñ": {"es": 2.5},
    "ã": {"pt": 2.5},
    "õ": {"pt": 2.5},
    "ç": {"fr": 1.2, "pt": 1.2},
    "œ": {"fr": 2.5},
    "è": {"fr": 1.0, "it": 1.0},
    "ù": {"fr": 1.0, "it": 0.8},
    "ò": {"it": 2.0},
    "ì": {"it": 2.0},
    "ê": {"fr": 1.0, "pt": 1.0},
    "â": {"fr": 1.0, "pt": 1.0},
    "î": {"fr": 1.5},
    "û": {"fr": 1.5},
    "ë": {"nl": 1.0, "fr": 0.5},
    "ï": {"nl": 0.8, "fr": 0.8},
    "ĳ": {"nl": 2.5},
}

# Short function words frequent in one (or two) of the nine languages. Words in several lists
# give a smaller bonus split between them. Very ambiguous words ("de", "en", "la") are left out.
def _w(words: str) -> frozenset[str]:
    return frozenset(words.split())


_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": _w("the and of to is are for with your you this that from our we be by on have will please"),
    "fr": _w("le les et des du est pour avec une vous nous dans sur au aux ce cette votre nos pas sont"),
    "de": _w("und der die das nicht ist mit für auf von zu dem den ein eine wir sie ihr ihre bitte sind oder bei des zur zum"),
    "es": _w("el los las y del que por para con una su sus al lo se usted nuestro muy"),
    "it": _w("il lo gli e di del della che per con una sono è le al dei delle nel sul questo"),
    "pt": _w("o os as e do da dos das que em não para com uma um são ao no na pelo pela seu sua"),
    "nl": _w("het een van is niet op te voor met zijn dat bij uw wij ons aan naar wordt worden"),
    "sv": _w("och inte att är av till med för på som jag vi har kan ska om eller det den ett vid från er "
             "ditt tack mycket också vänliga hälsningar välkommen åter sedan enligt"),
    "da": _w("og ikke at er af til med for på som jeg vi har kan skal om eller det den et ved fra jer "
             "dit tak meget også venlig hilsen velkommen igen siden ifølge hvis"),
}
_DISTINCT_WEIGHT = 0.9
_SHARED_WEIGHT = 0.3

WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


@functools.lru_cache(maxsize=1)
def _word_owners() -> dict[str, tuple[str, ...]]:
    owners: dict[str, list[str]] = {}
    for lang, words in _FUNCTION_WORDS.items():
        for w in words:
            # OCR drops diacritics: "för" is often read "for", so the folded form counts too.
            for form in {w, fold(w)}:
                if lang not in owners.setdefault(form, []):
                    owners[form].append(lang)
    return {w: tuple(v) for w, v in owners.items()}


def _latin_evidence(text: str) -> dict[str, float]:
    """Log-odds bonus per Latin language from distinctive letters and function words."""
    low = text.lower()
    bonus = dict.fromkeys(LATIN_LANGUAGES, 0.0)
    for letter, langs in _LETTER_EVIDENCE.items():
        if letter in low:
            for lang, weight in langs.items():
                bonus[lang] += weight
    owners = _word_owners()
    counts: dict[str, int] = {}
    for w in WORD_RE.findall(low):
        if w not in owners:
            continue
        counts[w] = counts.get(w, 0) + 1
    for w, n in counts.items():
        owner_langs = owners[w]
        weight = _DISTINCT_WEIGHT if len(owner_langs) == 1 else _SHARED_WEIGHT / len(owner_langs) * 2
        # Diminishing returns: a word repeated many times is one piece of evidence, not many.
        contrib = weight * (1.0 + math.log2(n) * 0.5)
        for lang in owner_langs:
            bonus[lang] += contrib
    return bonus


# ----------------------------------------------------------------------------- py3langid

_lock = threading.Lock()
_identifier: Any = None


def warm() -> None:
    """Load the language model now (0.1-0.5 s), not in the first ``classify`` call."""
    _langid()


def _langid() -> Any:
    """py3langid identifier restricted to the 11 languages, loaded once (about 0.1 s)."""
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            ident.set_languages(list(LANGUAGES))
            _identifier = ident
        return _identifier


def _model_scores(text: str, langs: Sequence[str]) -> dict[str, float]:
    """py3langid probabilities renormalised over ``langs``."""
    ident = _langid()
    with _lock:  # the identifier is not documented as thread-safe
        ranked = ident.rank(text)
    probs = {lang: float(p) for lang, p in ranked if lang in langs}
    total = sum(probs.values())
    if total <= 0:
        return dict.fromkeys(langs, 1.0 / max(len(langs), 1))
    return {lang: p / total for lang, p in probs.items()}


def detect_language(text: str, allowed: Sequence[str] = LANGUAGES) -> tuple[str, float]:
    """Language of ``text`` as an ISO 639-1 code among ``allowed``, or ``"unknown"``.

    Returns ``(code, confidence)``; confidence is 0..1 (0 for "unknown" from too little text).
    """
    text = nfkc(text or "")
    allowed_set = set(allowed)
    c = _script_counts(text)
    cjk = c["han"] + c["kana"]
    letters = c["latin"] + cjk + c["other"]
    if letters == 0:
        return UNKNOWN, 0.0
    # A CJK character carries roughly a word's worth of information; weigh it like 3 letters so
    # a Chinese invoice with some English labels is still Chinese.
    cjk_weight = cjk * 3
    if c["other"] > max(c["latin"], cjk_weight) and c["other"] >= MIN_LATIN_LETTERS // 2:
        return UNKNOWN, min(1.0, c["other"] / letters)
    if cjk >= MIN_CJK_CHARS and cjk_weight >= c["latin"]:
        share = cjk_weight / (cjk_weight + c["latin"] + c["other"])
        # Kana: any real Japanese text has particles (の, は, を ...) even when kanji-heavy. Two
        # kana are required so one OCR mis-read does not flip a Chinese page.
        kana_ratio = c["kana"] / cjk
        if c["kana"] >= 2 and (kana_ratio >= 0.02 or c["kana"] >= 5):
            lang = "ja"
            conf = min(1.0, 0.6 + 0.4 * min(1.0, kana_ratio * 5)) * share
        elif c["ja_only"] >= 2 and c["ja_only"] >= 0.02 * c["han"]:
            lang = "ja"
            conf = 0.7 * share
        else:
            lang = "zh"
            conf = (0.95 if c["kana"] == 0 else 0.7) * share
        if lang not in allowed_set:
            return UNKNOWN, 0.0
        return lang, round(max(0.05, min(1.0, conf)), 3)
    if c["latin"] < MIN_LATIN_LETTERS:
        return UNKNOWN, 0.0
    latin_allowed = [lang for lang in LATIN_LANGUAGES if lang in allowed_set]
    if not latin_allowed:
        return UNKNOWN, 0.0
    # Only the Latin-script part goes to the model: stray CJK/Cyrillic would skew n-grams; and
    # only lines that read as prose (``clean_text``): OCR junk words are short function words.
    latin_text = clean_text(_CJK_RE.sub(" ", text))
    probs = _model_scores(latin_text, latin_allowed)
    evidence = _latin_evidence(latin_text)
    logit = {lang: math.log(max(probs.get(lang, 0.0), 1e-6)) + evidence[lang] for lang in latin_allowed}
    top = max(logit.values())
    exp = {lang: math.exp(v - top) for lang, v in logit.items()}
    z = sum(exp.values())
    best = max(exp, key=lambda k: exp[k])
    conf = exp[best] / z
    # Scale by how much of the text is Latin letters at all (mixed-script pages are less sure).
    conf *= c["latin"] / letters
    return best, round(max(0.05, min(1.0, conf)), 3)
