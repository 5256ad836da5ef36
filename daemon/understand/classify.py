"""Language and document-type classification of a document's OCR text.

(~800 lines: language detection and keyword scoring share the text normalisation (``fold``,
``_script_counts``, clean text); moving language detection into its own module is the next split.)

Contract:
- ``detect_language(text, allowed)`` returns ``(code, confidence)`` where ``code`` is an ISO 639-1
  code among ``allowed`` (default: the 11 supported languages) or ``"unknown"`` when there is too
  little text, the text is in another script (Hangul, Cyrillic, Arabic, ...) or the winner is not
  allowed. ``confidence`` is in 0..1. Pure, thread-safe, no I/O after the first call (which loads
  py3langid's model once).
- ``classify(text, cfg=..., filename=..., pages=..., markdown=...)`` returns a ``Classification``:
  language, table/math features and the doctype whose score is highest among those that reach
  their threshold (``"other"`` when none does). ``fired`` lists, for *every* doctype, the matchers
  that contributed, so ``route --explain`` can show why.
- ``format_explain(cls, rows)`` renders the text ``ocr-daemon route --explain FILE`` prints.

How the language is decided (in this order):
1. Script: Japanese kana or Japanese-only kanji forms -> ``ja``; Han characters without kana ->
   ``zh``; letters mostly in another script (Hangul, Cyrillic, Greek, Arabic, ...) -> ``unknown``.
   py3langid (like every n-gram identifier) calls kanji-heavy Japanese ``zh``, so script rules
   must come first.
2. Latin script: py3langid restricted to the Latin-script languages, combined with evidence from
   distinctive letters (å/ä/ö vs æ/ø, ß, ñ, ã, ...) and function words (och/og, het/een, und/der,
   ...). Short Scandinavian/Dutch/German texts are where n-grams alone waver; the evidence is
   added to py3langid's log-probabilities, so long texts are still decided by the model.

Doctype scoring (see ``rules.yaml``, section ``doctypes``):
- the detected language's keywords are checked, and English's where the document has English
  text (``keyword_languages``); all languages' when the language is unknown or a doctype has no
  keywords in it (checking every language against every document made English "till" fire in
  Swedish and Spanish "firma" in German, issue 15); each distinct keyword counts once per document, whatever its count, so a long document does not
  out-score a short one by repetition; a keyword found only inside a longer keyword's match
  ("預金" in "普通預金", "total" in "total due") does not count again. Latin-script keywords match on word boundaries,
  case-insensitively and ignoring diacritics (OCR often drops them); CJK keywords match as
  substrings of the text with whitespace removed (Tesseract puts spaces between CJK characters).
  One-word German/Dutch/Swedish/Danish keywords of 5+ letters also match as the last part of a
  compound ("Vertrag" in "Wartungsvertrag").
- regexes count once each (weight), features add their weight when present, filename globs match
  the file name case-insensitively.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import math
import re
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.config import LANGUAGES, Config, DoctypeCfg
from daemon.models import Classification
from daemon.understand.dates import document_date

if TYPE_CHECKING:
    from daemon.understand.route import RouteExplain

log = logging.getLogger(__name__)

UNKNOWN = "unknown"
OTHER = "other"

#: Latin-script languages among the 11 (decided by py3langid + evidence).
LATIN_LANGUAGES: tuple[str, ...] = ("en", "fr", "de", "es", "it", "nl", "pt", "sv", "da")

# Only the first MAX_CLASSIFY_CHARS characters (about 10-15 pages) are used for language and
# doctype: a document's type and language show on its first pages, and matching ~1100 keywords
# over a 500-page text would cost seconds. Features (table, math) look at the whole text.
MAX_CLASSIFY_CHARS = 40_000
# Occurrences of one keyword looked at (it counts once anyway; the cap bounds the work).
MAX_SPANS = 20
# German, Dutch, Swedish and Danish write compounds as one word ("Wartungsvertrag",
# "uppdragsavtal", "onderhuurovereenkomst"): their one-word keywords of at least this many letters
# also match at the end of a longer word.
COMPOUND_LANGUAGES = frozenset({"de", "nl", "sv", "da"})
MIN_COMPOUND_HEAD = 5

# Below this many letters (Latin) or CJK characters the text says too little to name a language.
MIN_LATIN_LETTERS = 12
MIN_CJK_CHARS = 4

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


def _is_cjk(ch: str) -> bool:
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
    c = _script_counts(_nfkc(text))
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

_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


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
    for w in _WORD_RE.findall(low):
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


# Unicode fixes Tesseract and VLMs emit; NFKC also turns fullwidth Latin into ASCII.
def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def detect_language(text: str, allowed: Sequence[str] = LANGUAGES) -> tuple[str, float]:
    """Language of ``text`` as an ISO 639-1 code among ``allowed``, or ``"unknown"``.

    Returns ``(code, confidence)``; confidence is 0..1 (0 for "unknown" from too little text).
    """
    text = _nfkc(text or "")
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


# ----------------------------------------------------------------------------- features

_HTML_TABLE_RE = re.compile(r"<table\b", re.IGNORECASE)
_MD_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.MULTILINE)
_CELL_SPLIT_RE = re.compile(r"\t+| {2,}")
_NUMERIC_TOKEN_RE = re.compile(r"(?<![\w.,])[-+(]?[$€£¥]?\d[\d.,:/'\u00a0]*%?[)]?(?![\w])")

_MATH_RE = re.compile(
    r"\$\$.+?\$\$"  # display math
    r"|\\\(.+?\\\)|\\\[.+?\\\]"  # \( \) and \[ \]
    r"|\\begin\{(?:equation|align|gather|multline|eqnarray|math|displaymath)\*?\}"
    r"|\\(?:frac|sqrt|sum|prod|int|oint|lim|infty|partial|nabla|alpha|beta|gamma|delta|epsilon|"
    r"theta|lambda|mu|sigma|omega|pi|cdot|times|leq|geq|neq|approx|mathbf|mathrm|mathcal|left|right)"
    r"(?![A-Za-z])"
    r"|(?<![\\$\w])\$(?=[^$\n]*[\\^_={}])[^$\s][^$\n]{0,200}?(?<!\s)\$(?![\w$])",  # $x^2$, not "$5 and $10"
    re.DOTALL,
)


# A table of contents line: dot leaders ("Einleitung . . . . 5", "Intro......5", "…"), or a
# section number, a title without numbers and a page number at the end ("9.11 Signale 157").
_TOC_LEADER_RE = re.compile(r"(?:\.\s?){4,}|…{2,}|(?:·\s?){3,}|_{4,}")
_TOC_LINE_RE = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3})*\.?|[IVXLC]{1,6}\.|[A-Z]\.)\s+[^\d]+?\s+\d{1,4}$")


def is_toc_line(line: str) -> bool:
    """True for a table-of-contents line (dot leaders, or "1.2 Title 17")."""
    s = line.strip()
    return bool(_TOC_LEADER_RE.search(s) or _TOC_LINE_RE.match(s))


def detect_table(text: str, markdown: bool = True) -> bool:
    """True when ``text`` contains a table.

    HTML ``<table`` and Markdown pipe tables count in any text. For plain text (Tesseract) a
    heuristic: 3+ consecutive lines split into 3+ cells by tabs/runs of spaces, or 4+ consecutive
    lines that each carry 2+ numbers (line items, statement rows). Table-of-contents lines
    (``is_toc_line``: a section number and a page number are two numbers too) break a run: a
    table of contents is not a table (issue 15).
    """
    if _HTML_TABLE_RE.search(text) or _MD_TABLE_SEP_RE.search(text):
        return True
    cells_run = nums_run = 0
    for line in text.splitlines():
        s = line.strip()
        if not s or is_toc_line(s):
            cells_run = nums_run = 0
            continue
        cells = [x for x in _CELL_SPLIT_RE.split(s) if x.strip()]
        cells_run = cells_run + 1 if len(cells) >= 3 else 0
        nums_run = nums_run + 1 if len(_NUMERIC_TOKEN_RE.findall(s)) >= 2 else 0
        if cells_run >= 3 or nums_run >= 4:
            return True
    return False


def detect_math(text: str) -> bool:
    """True when ``text`` contains LaTeX math (``$..$``, ``$$``, ``\\(``, ``\\[``, commands)."""
    return _MATH_RE.search(text) is not None


# ----------------------------------------------------------------------------- keyword matching

_FOLD_MAP = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ı": "i", "ĳ": "ij"})


def fold(text: str) -> str:
    """Case- and diacritic-insensitive form used for keyword matching (é->e, ß->ss, ø->o)."""
    s = unicodedata.normalize("NFKD", _nfkc(text).casefold())
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", s).translate(_FOLD_MAP)


def _has_cjk(s: str) -> bool:
    return any(_is_cjk(ch) for ch in s)


@functools.lru_cache(maxsize=4096)
def _keyword_re(folded_kw: str) -> re.Pattern[str]:
    # Inner whitespace of phrases is flexible (OCR line breaks, double spaces) and a hyphen may be
    # read as a space. The pattern starts with a literal so re's fast prefix search applies; the
    # left word boundary is checked by the caller (a lookbehind first would disable it: 30x slower).
    parts = [re.escape(p) for p in re.split(r"[\s\-]+", folded_kw.strip()) if p]
    body = r"[\s\-]*".join(parts) if len(parts) > 1 else (parts[0] if parts else "")
    return re.compile(body + r"(?![^\W_])")


def _left_boundary(text: str, start: int) -> bool:
    """True when ``text[start]`` begins a word (no letter/digit right before it)."""
    if start == 0:
        return True
    return not text[start - 1].isalnum()


@functools.lru_cache(maxsize=256)
def _compiled_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    return re.compile(pattern, (re.IGNORECASE if ignore_case else 0) | re.MULTILINE)


class _Text:
    """A document's text prepared once for all matchers."""

    def __init__(self, text: str) -> None:
        self.raw = _nfkc(text)
        self.folded = fold(text)
        # CJK keywords match against the text without whitespace.
        self.compact = re.sub(r"\s+", "", self.folded)
        self._cache: dict[str, tuple[str, list[tuple[int, int]]]] = {}

    def spans(self, keyword: str, compound: bool = False) -> tuple[str, list[tuple[int, int]]]:
        """Where ``keyword`` occurs: ("cjk" | "latin", [(start, end), ...]), at most MAX_SPANS.

        CJK spans index ``compact``, Latin spans index ``folded``. ``compound``: a Latin keyword
        may also end a longer word (German "Wartungsvertrag" for "Vertrag").
        """
        ckey = ("+" if compound else "") + keyword
        hit = self._cache.get(ckey)
        if hit is not None:
            return hit
        space, needle = _needle(keyword)
        out: list[tuple[int, int]] = []
        if needle and space == "cjk":
            i = self.compact.find(needle)
            while i >= 0 and len(out) < MAX_SPANS:
                out.append((i, i + len(needle)))
                i = self.compact.find(needle, i + 1)
        elif needle:
            for m in _keyword_re(needle).finditer(self.folded):
                if not compound and not _left_boundary(self.folded, m.start()):
                    continue
                out.append(m.span())
                if len(out) >= MAX_SPANS:
                    break
        self._cache[ckey] = (space, out)
        return space, out

    def count(self, keyword: str) -> int:
        return len(self.spans(keyword)[1])


@functools.lru_cache(maxsize=16384)
def _needle(keyword: str) -> tuple[str, str]:
    """("cjk", compact folded keyword) or ("latin", folded keyword)."""
    kw = fold(keyword).strip()
    if _has_cjk(kw):
        return "cjk", re.sub(r"\s+", "", kw)
    return "latin", kw


@dataclass(frozen=True)
class _Keywords:
    """A doctype's keywords, prepared once per config: deduplicated, with containment links."""

    best: dict[str, tuple[float, str, str]]  # folded keyword -> (weight, language, keyword as written)
    supers: dict[str, tuple[str, ...]]  # folded keyword -> longer keywords (same script) containing it
    compound: frozenset[str]  # folded keywords that may end a compound word (de nl sv da)
    # folded keyword -> {language: weight} of every language that lists it
    by_lang: dict[str, dict[str, float]]
    compound_by_lang: dict[str, frozenset[str]]  # folded keyword -> languages whose compound rule applies


_prepared: dict[int, tuple[DoctypeCfg, _Keywords]] = {}
_prepared_lock = threading.Lock()


def _keywords(dt: DoctypeCfg) -> _Keywords:
    with _prepared_lock:
        hit = _prepared.get(id(dt))
        if hit is not None and hit[0] is dt:
            return hit[1]
    # Same keyword listed under several languages (Faktura: sv, da) counts once, best weight.
    best: dict[str, tuple[float, str, str]] = {}
    compound: set[str] = set()
    by_lang: dict[str, dict[str, float]] = {}
    compound_by_lang: dict[str, set[str]] = {}
    for lang, kws in dt.keywords.items():
        for kw, w in kws.items():
            key = fold(kw)
            if key not in best or w > best[key][0]:
                best[key] = (w, str(lang), kw)
            by_lang.setdefault(key, {})[str(lang)] = max(w, by_lang.get(key, {}).get(str(lang), w))
            if lang in COMPOUND_LANGUAGES and len(key) >= MIN_COMPOUND_HEAD and re.fullmatch(r"[^\W\d_]+", key):
                compound.add(key)
                compound_by_lang.setdefault(key, set()).add(str(lang))
    needles = {key: _needle(kw) for key, (_w, _l, kw) in best.items()}
    supers = {
        key: tuple(o for o, (osp, on) in needles.items() if o != key and osp == sp and n and n in on and len(on) > len(n))
        for key, (sp, n) in needles.items()
    }
    prepared = _Keywords(
        best, supers, frozenset(compound), by_lang, {k: frozenset(v) for k, v in compound_by_lang.items()}
    )
    with _prepared_lock:
        if len(_prepared) > 64:  # configs are reloaded rarely; drop stale ones
            _prepared.clear()
        _prepared[id(dt)] = (dt, prepared)
    return prepared


def _short(pattern: str, n: int = 40) -> str:
    return pattern if len(pattern) <= n else pattern[: n - 1] + "…"


def _active_keywords(prepared: _Keywords, languages: frozenset[str] | None) -> dict[str, tuple[float, str, str, bool]]:
    """folded keyword -> (weight, language, keyword as written, compound?) of the keywords that
    count for a document in ``languages`` (None: every language's)."""
    out: dict[str, tuple[float, str, str, bool]] = {}
    for key, (w, lang_code, kw) in prepared.best.items():
        if languages is None:
            out[key] = (w, lang_code, kw, key in prepared.compound)
            continue
        mine = {lg: lw for lg, lw in prepared.by_lang[key].items() if lg in languages}
        if not mine:
            continue
        lg = max(mine, key=lambda k: mine[k])
        out[key] = (mine[lg], lg, kw, bool(prepared.compound_by_lang.get(key, frozenset()) & languages))
    return out


def score_doctype(
    dt: DoctypeCfg,
    doc: _Text,
    *,
    filename: str,
    pages: int,
    has_table: bool,
    has_math: bool,
    languages: frozenset[str] | None = None,
) -> tuple[float, list[str]]:
    """Score of one doctype and the matchers that fired (``"kw:de:Rechnung +2"`` ...).

    ``languages``: only these languages' keywords count (``keyword_languages``); a doctype that
    has no keywords in any of them falls back to all of its keywords (a config written in one
    language still classifies the others), and None means all.
    """
    score = 0.0
    fired: list[str] = []
    prepared = _keywords(dt)
    active = _active_keywords(prepared, languages)
    if not active and languages is not None:
        active = _active_keywords(prepared, None)
    for key, (w, lang_code, kw, compound) in active.items():
        _space, spans = doc.spans(kw, compound)
        if not spans:
            continue
        # A keyword found only inside a longer keyword's match ("預金" in "普通預金", "total" in
        # "total due") is the same evidence: it does not count a second time.
        covering = [
            sp for o in prepared.supers[key] if o in active for sp in doc.spans(active[o][2], active[o][3])[1]
        ]
        free = [sp for sp in spans if not any(a <= sp[0] and sp[1] <= b for a, b in covering)]
        if free:
            score += w
            n = len(spans)
            fired.append(f"kw:{lang_code}:{kw} {w:+g}" + (f" (x{n}{'+' if n >= MAX_SPANS else ''})" if n > 1 else ""))
    for rx in dt.regex:
        m = _compiled_regex(rx.pattern, rx.ignore_case).search(doc.raw)
        if m:
            score += rx.weight
            fired.append(f"regex:/{_short(rx.pattern)}/ {rx.weight:+g} ({_short(m.group(0).strip(), 24)!r})")
    f = dt.features
    if f.has_table and has_table:
        score += f.has_table
        fired.append(f"feature:has_table {f.has_table:+g}")
    if f.has_math and has_math:
        score += f.has_math
        fired.append(f"feature:has_math {f.has_math:+g}")
    if f.pages is not None and f.pages_weight and f.pages.contains(pages):
        score += f.pages_weight
        fired.append(f"feature:pages={pages} {f.pages_weight:+g}")
    low_name = filename.lower()
    for glob, w in dt.filename.items():
        if fnmatch.fnmatchcase(low_name, glob.lower()):
            score += w
            fired.append(f"filename:{glob} {w:+g}")
    return round(score, 4), fired


# English words in a document of another language count as English text (so English keywords
# count too) when they are at least this share of the document's words and this many: English
# prose is ~30 % function words, so 5 % means roughly a sixth of the text is English (a bilingual
# invoice, an English abstract), while the odd "the" or "for" in a Swedish or Japanese page is not.
EN_SECOND_SHARE = 0.05
EN_SECOND_MIN = 5
_EN_FUNCTION = frozenset(["the", "and", "of", "to", "is", "are", "for", "with", "your", "you", "this", "that", "from", "our", "we", "be", "by", "on", "have", "will", "please"])


def keyword_languages(text: str, language: str) -> frozenset[str] | None:
    """Languages whose doctype keywords count for a document in ``language``: that language,
    plus English where English text is there (see ``EN_SECOND_SHARE``); None (all) when the
    language is unknown. Every language's keywords checked against every document made English
    "till" fire in Swedish, Spanish "firma" in German, English "abstract" in Japanese (issue 15)."""
    if language not in LANGUAGES:
        return None
    if language == "en":
        return frozenset({"en"})
    words = _WORD_RE.findall(text)
    cjk = sum(1 for ch in text if _is_cjk(ch))
    total = sum(1 for w in words if not _has_cjk(w)) + cjk / 2  # ~2 CJK characters a word
    en = sum(1 for w in words if w.lower() in _EN_FUNCTION)
    if en >= EN_SECOND_MIN and en >= EN_SECOND_SHARE * total:
        return frozenset({language, "en"})
    return frozenset({language})


def classify(text: str, *, cfg: Config, filename: str, pages: int, markdown: bool) -> Classification:
    """Language, features and doctype of a document (see the module docstring)."""
    head = text[:MAX_CLASSIFY_CHARS]
    if markdown:
        # Language and keywords read the words only: the HTML table tags and LaTeX of engine
        # Markdown are Latin letters that outweigh a short Chinese or Japanese text.
        from daemon.document.parse import parse_document

        head = parse_document([head], markdown=True).text()
    lang, conf = detect_language(head)
    has_table = detect_table(text, markdown)
    has_math = detect_math(text)
    doc = _Text(head)
    kw_langs = keyword_languages(head, lang)
    scores: dict[str, float] = {}
    fired: dict[str, list[str]] = {}
    winner, winner_key = OTHER, (0.0, 0.0)
    for name, dt in cfg.doctypes.items():
        s, f = score_doctype(
            dt, doc, filename=filename, pages=pages, has_table=has_table, has_math=has_math, languages=kw_langs
        )
        scores[name] = s
        fired[name] = f
        if s >= dt.threshold:
            # Highest score wins; on a tie the one further above its threshold; then config order.
            key = (s, s / dt.threshold)
            if key > winner_key:
                winner, winner_key = name, key
    log.debug("classified %s: lang=%s (%.2f) doctype=%s scores=%s", filename, lang, conf, winner, scores)
    return Classification(
        language=lang,
        language_confidence=conf,
        doctype=winner,
        doctype_scores=scores,
        fired=fired,
        has_table=has_table,
        has_math=has_math,
        doctype_thresholds={name: dt.threshold for name, dt in cfg.doctypes.items()},
        doc_date=document_date(head, lang),
    )


# ----------------------------------------------------------------------------- explain


def format_explain(cls: Classification, rows: list[RouteExplain], thresholds: dict[str, float] | None = None) -> str:
    """Text printed by ``ocr-daemon route --explain FILE``.

    Thresholds come from ``cls.doctype_thresholds`` (filled by ``classify``); ``thresholds``
    overrides them (doctype -> threshold).
    """
    out = [
        f"language: {cls.language} (confidence {cls.language_confidence:.2f})",
        f"features: has_table={'yes' if cls.has_table else 'no'} has_math={'yes' if cls.has_math else 'no'}",
        f"doctype: {cls.doctype}",
        f"document date: {cls.doc_date or 'none found'}",
    ]
    if cls.doctype_scores:
        out.append("doctype scores:")
        width = max(len(n) for n in cls.doctype_scores)
        order = sorted(cls.doctype_scores, key=lambda n: -cls.doctype_scores[n])
        for name in order:
            s = cls.doctype_scores[name]
            thr = (thresholds or cls.doctype_thresholds or {}).get(name)
            thr_txt = f" / threshold {thr:g}" if thr is not None else ""
            mark = "  <- chosen" if name == cls.doctype else ""
            out.append(f"  {name:<{width}}  score {s:g}{thr_txt}{mark}")
            fired = cls.fired.get(name) or []
            out.append("      fired: " + (", ".join(fired) if fired else "(nothing)"))
    else:
        out.append("doctype scores: (no doctypes configured)")
    out.append("routes (first match wins):")
    chosen = next((r.name for r in rows if r.matched), None)
    width = max((len(r.name) for r in rows), default=0)
    for r in rows:
        if r.matched:
            tag = "MATCH (chosen)" if r.name == chosen else "match (not reached: an earlier route won)"
            out.append(f"  {r.name:<{width}}  {tag}")
        else:
            out.append(f"  {r.name:<{width}}  no: {r.reason}")
    return "\n".join(out) + "\n"
