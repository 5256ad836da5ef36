"""Which Tesseract models read a page: decided once per document, from a cheap probe.

Contract:

- ``plan_page(allowed, script, known, read_band) -> Plan``: the models of the page's one full read.
  ``allowed``: ISO 639-1 codes the page may be in; ``script``: OSD's script from the render stage
  ("" when OSD could not tell); ``known``: the document's language decided on an earlier page
  (``Plan.language``), ``CJK_UNDECIDED`` (a page of the document was read with CJK models but
  its language not told: a Latin-script page is then probed with the CJK models too), or None; ``read_band(models) -> (text, mean confidence)`` reads the page's
  inkiest band (``probe_band``) with those models (the caller's Tesseract). Pure otherwise.
- ``Plan.models``: traineddata names for the full read. ``Plan.language``: the language decided
  (a Latin ISO code, ``zh-Hans``, ``zh-Hant`` or ``ja``) for the caller to remember for the
  document, or None; ``Plan.probes``: the model sets read on the band (for the page's meta);
  ``Plan.decide_after``: the probe could not tell a Latin language, so the caller decides from
  the full read's text (``latin_language``) and reads again only if it is not the probe's.
- ``choose_languages`` (the models for a script, and the all-models fallback), ``models_for``,
  ``latin_language``, ``cjk_language``, ``band_variant``, ``undecided_models``, ``cjk_wins``, ``probe_band``: the
  rules the plan uses, for the engine's per-page checks too. ``probe_bands`` and ``band_words``:
  a band read as no words (``BAND_MIN_WORDS``) is followed by the next band (the engine's
  ``read_band``).
- Vertical CJK (tategaki): ``vertical_models`` (the ``_vert`` twins of a plan's CJK models) and
  ``vertical_band`` (the probe band of a page written in columns); the engine asks Tesseract's
  layout analysis whether an upright CJK page runs in columns (``VERTICAL_SHARE``) and plans it
  with these.

Why a probe (issue 26): reading every page with all 9 Latin models, then again with the language
detected, cost 2 full passes on the first page of every document, up to 4.5x a one-model read on
real pages with uncertain words (bench/bench_tesseract_passes.py: 13.4 s against 2.7 s on a
table of numbers), and Chinese pages were read with 3 CJK models then again with their own.
Reading a quarter of the page (the band with the most ink; 12 % since issue 32, ``PROBE_BAND``)
with English alone costs about a third of a one-model read and names the Latin language as well
as the 9-model read did (14 of 14
Latin pages of the bench corpus right, Nordic ones included: their function words survive the
English model) -- then the page is read once, with ``<language>+eng`` (Swedish and Danish:
their own model alone, ``OWN_MODEL_ONLY``). A band that reads badly (mean confidence under ``CJK_RETRY_BELOW_CONF``) is read again with the CJK models (OSD calls some
Chinese pages "Latin"); a page OSD calls Han or Japanese has its band read with every allowed CJK
model, which tells Chinese from Japanese and simplified from traditional, then one read with the
one model. When the page's language cannot be told from the band, the full read uses the probe's
models (less the other Chinese variant's, ``undecided_models``) and the language comes from its text.

Simplified or traditional: Tesseract's two Chinese models do not see the difference. Each reads
either variant's glyphs at ~99 % symbol confidence and writes its own forms (a simplified table:
chi_tra reads 项目 数量 金额 as 項目 數量 金額; its traditional twin: chi_sim reads 發票號碼 as
发票号码), and their mean confidences do not tell either (93/93 on the simplified band, 91/73 the
wrong way round on the traditional one). So the variant comes from the variant-only characters of
the band read with both models, chi_sim first (``band_variant``: traditional only with 1.5 times the
simplified forms, a mixed read being no evidence): on a long band the read
leans to the page's variant (the integration tests' invoice: 20/0 simplified, 6/12 traditional),
on a short one it is a tie-break towards simplified. Telling a short traditional page needs the
glyphs themselves (not done: a heading and two lines of traditional text are read with chi_sim).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from daemon.language import MIN_VARIANT_CHARS, detect_language, han_variant_counts, looks_chinese
from daemon.pages.orient import inkiest_band, text_bands

__all__ = [
    "TESS_CODES", "LATIN", "CJK_SCRIPTS", "CJK_UNDECIDED", "Plan", "plan_page", "choose_languages", "models_for", "fits",
    "latin_language", "cjk_language", "band_variant", "cjk_chars", "undecided_models", "cjk_wins", "probe_band", "lang_pass_is_latin",
    "VERT_MODELS", "VERTICAL_SHARE", "vertical_models", "vertical_band", "probe_bands", "band_words",
    "BAND_MIN_WORDS",
]

#: ISO 639-1 -> Tesseract traineddata names.
TESS_CODES: dict[str, tuple[str, ...]] = {
    "zh": ("chi_sim", "chi_tra"),
    "en": ("eng",),
    "ja": ("jpn",),
    "fr": ("fra",),
    "de": ("deu",),
    "es": ("spa",),
    "it": ("ita",),
    "nl": ("nld",),
    "pt": ("por",),
    "sv": ("swe",),
    "da": ("dan",),
}
LATIN = ("en", "de", "fr", "es", "it", "nl", "pt", "sv", "da")
CJK_SCRIPTS = ("Han", "Japanese", "Katakana", "Hiragana")
#: A decided CJK language -> the one model its page is read with.
CJK_MODELS = {"zh-Hans": ("chi_sim",), "zh-Hant": ("chi_tra",), "ja": ("jpn",)}

#: Share of the page's height the probe reads (the band with the most ink): 200-600 characters
#: on Latin text pages, enough for the language detector (~30-50 words). A 12 % band decided the
#: same language as the 25 % one on all 10 pages of the CPU profiling set at 55-60 % of its CPU
#: (0.33-0.89 s at 300 dpi; 8 % lost an English page: bench/cpu_profile_2026-12-03.md).
PROBE_BAND = 0.12
#: A probe band read as fewer words than this (a screenshot, a photo) is not judged: the next
#: band (``probe_bands``) is read instead of leaving the decision to a second full read.
BAND_MIN_WORDS = 5
#: ... for a CJK probe: CJK text is denser (the 12 % band of the corpus' Chinese and Japanese
#: pages holds 100+ characters) and three CJK models cost about three times one (1.0-1.8 s on
#: the 12 % band, bench/bench_tesseract_passes.py).
CJK_PROBE_BAND = 0.12
#: A Latin-model band read below this mean confidence is read again with the CJK models.
CJK_RETRY_BELOW_CONF = 70.0
#: Latin languages read with their own model alone, without English as the second (``choose_languages``).
OWN_MODEL_ONLY = ("sv", "da")
#: A band is traditional Chinese when it has this many times its simplified forms (``band_variant``).
#: Measured bands read with chi_sim+chi_tra+jpn: a simplified manual page 11 traditional / 9
#: simplified (1.22), the tests' traditional invoice 12 / 7 (1.71) with the 12 % probe band (12 / 6
#: with the old 25 % band): 1.5 lies between them (2.0 read the invoice as simplified).
TRADITIONAL_MAJORITY = 1.5
#: A CJK read with enough CJK characters to name its language (``CJK_MIN_CHARS``) keeps the
#: CJK models, beside English, at this mean confidence even when the Latin read is surer: the
#: page mixes CJK lines with code or formulas.
CJK_MIXED_MIN_CONF = 60.0
#: How much lower the CJK read's confidence may be and still win for its Han characters.
CJK_KEEP_SLACK = 5.0
#: Text must be this long, and its language this sure, to decide a Latin page's language.
LEARN_MIN_CHARS = 80
LEARN_MIN_CONF = 0.8
#: CJK characters a band needs before its CJK language is decided.
CJK_MIN_CHARS = 20
#: CJK characters (Han or kana) that make a band that reads better with the CJK models CJK text,
#: when there are too few to tell which language (``CJK_MIN_CHARS``): a page of numbers that
#: reads better with them has none (mtcars: 67 against 56, 0 Han).
CJK_SOME_CHARS = 5
#: ``known`` for a document with a page read with CJK models whose language was not told yet (a
#: title page of a few characters): its later Latin-script pages are probed with the CJK models
#: whatever the English band's confidence. The Japanese Debian maintainer guide's second page
#: (Japanese with English paragraphs; OSD says "Latin") read its English band at 72, its CJK band
#: at 91 with ``jpn``; it was read with ``eng`` (word recall 0.42 against OCRmyPDF's 0.96).
CJK_UNDECIDED = "cjk"

#: Vertical (tategaki) text: each CJK model's ``_vert`` twin (Debian tesseract-ocr-jpn-vert,
#: -chi-sim-vert, -chi-tra-vert). A vertical Japanese letter read with ``jpn``: confidence 24,
#: junk; with ``jpn_vert``: 90, the letter's text (issue 32).
VERT_MODELS = {"jpn": "jpn_vert", "chi_sim": "chi_sim_vert", "chi_tra": "chi_tra_vert"}
#: Share of a CJK page's text-line area running top to bottom that makes it a vertical page
#: (``daemon.engines.tesswords.vertical_share``: 1.0 on vertical letters, 0.0 on horizontal
#: pages; a heading or a caption set across a vertical page does not change the body's reading).
VERTICAL_SHARE = 0.6

_HAN_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def choose_languages(allowed: list[str], script: str, known: str | None = None) -> list[str]:
    """Traineddata names for a page of ``script`` (OSD name) among ISO codes ``allowed``.

    ``known``: the language already decided for the document (a Latin one); Latin pages then use
    just that language, with English as second model when allowed (not for ``OWN_MODEL_ONLY``). Without it, Latin pages get
    every allowed Latin language, English first (the fallback when no probe can be read).
    """
    allowed = [a for a in allowed if a in TESS_CODES] or list(TESS_CODES)
    latin = [a for a in allowed if a in LATIN]
    out: list[str] = []
    cjk: list[str] = [c for c in ("zh", "ja") if c in allowed]
    if script in CJK_SCRIPTS and cjk:
        # Every allowed CJK model, the script's own first: OSD's "Han" also covers kanji-heavy
        # Japanese (whose kana the Chinese models drop) and "Japanese" some Chinese pages.
        # Measured on the held-out set's 80 CJK page reads: language right 90 % with one family
        # of models, 98.8 % with both, at about the same wall time (bench/RESULTS.md).
        first = "ja" if script != "Han" and "ja" in cjk else cjk[0]
        for code in [first, *[c for c in cjk if c != first]]:
            out += TESS_CODES[code]
    elif latin:
        if known in latin:
            # The document's language first (Tesseract's primary model), English second: it
            # costs little and catches English names and terms in foreign documents.
            # Not for Swedish and Danish: English reads their å, ä, æ, ø, ö as a, ae, o and
            # takes those words from the page's own model ("pa" for "på", "bekreeft" for
            # "bekræft"): a Swedish reference card's PDF word recall 0.856 with swe+eng, 0.935
            # with swe alone; a Danish one 0.876 / 0.898; German (0.913 / 0.881 on a bank
            # statement), Italian and Portuguese keep English (issue 32).
            second = TESS_CODES["en"] if "en" in latin and known not in OWN_MODEL_ONLY else ()
            out += TESS_CODES[known] + second
        else:
            ordered = (["en"] if "en" in latin else []) + [a for a in latin if a != "en"]
            for a in ordered:
                out += TESS_CODES[a]
    else:  # only CJK allowed and OSD could not tell
        for a in allowed:
            out += TESS_CODES[a]
    return list(dict.fromkeys(out))


def lang_pass_is_latin(langs: list[str]) -> bool:
    """True when a pass used Latin models only."""
    return all(c not in ("chi_sim", "chi_tra", "jpn") for c in langs)


def models_for(code: str, allowed: list[str]) -> list[str]:
    """The models of a page whose language ``code`` was decided (see ``Plan.language``)."""
    if code in CJK_MODELS:
        return list(CJK_MODELS[code])
    return choose_languages(allowed, "Latin", code)


def fits(code: str, script: str) -> bool:
    """True when a page of OSD ``script`` can be in the decided language ``code`` (a Latin page
    of a Chinese document is decided again, for itself)."""
    if not script:
        return True
    return (code in CJK_MODELS) == (script in CJK_SCRIPTS)


def latin_language(text: str, latin: list[str]) -> str | None:
    """The Latin language of ``text`` when it is long enough and the detector sure."""
    if len(text) < LEARN_MIN_CHARS or not latin:
        return None

    lang, conf = detect_language(text, latin)
    return lang if lang in latin and conf >= LEARN_MIN_CONF else None


def cjk_language(text: str, allowed: list[str]) -> str | None:
    """``ja``, ``zh-Hans`` or ``zh-Hant`` for a CJK read, when it has enough CJK characters;
    Chinese decided as ``daemon.language`` decides it (kana, or a Japanese read that
    is Chinese after all), the variant by its variant-only characters (simplified by default)."""

    if len(_HAN_CHAR.findall(text)) < CJK_MIN_CHARS and _kana(text) < CJK_MIN_CHARS:
        return None
    lang = detect_language(text, allowed)[0]
    if "zh" in allowed and (lang == "zh" or looks_chinese(text)):
        return "zh-Hant" if band_variant(text) == "traditional" else "zh-Hans"
    return "ja" if "ja" in allowed and lang == "ja" else None


def band_variant(text: str) -> str | None:
    """The Chinese variant of a probe band read with both Chinese models (and ``jpn``): traditional
    only when its variant-only characters outnumber the simplified ones ``TRADITIONAL_MAJORITY``
    times, else simplified; None with fewer than ``MIN_VARIANT_CHARS`` of them. Both models read
    either variant's glyphs and Tesseract takes each line from either, so a simplified page's band
    can come out with more traditional forms: a simplified LaTeX manual page with code and
    formulas, 9 simplified against 11 traditional (jpn's kanji count as traditional), was read with
    chi_tra alone (PDF word recall 0.56 against 0.81 for chi_sim, issue 32); real pages of either
    variant are clear (58/1, 2/39; the traditional invoice of the tests 7/12)."""

    s, t = han_variant_counts(text)
    if s + t < MIN_VARIANT_CHARS:
        return None
    return "traditional" if t >= TRADITIONAL_MAJORITY * s else "simplified"


def undecided_models(text: str, cands: list[str]) -> list[str]:
    """The models of a page whose CJK band was too short to tell its language (``cands``: the
    band's models): all of them, less the Chinese model of the other variant when the band is
    Chinese text (no kana) in one variant (``band_variant``: 3+ variant-only characters,
    traditional with a 3:2 majority). Both Chinese models read either variant's glyphs at ~99 %
    symbol confidence and
    write their own forms (the gate's simplified table band: chi_tra reads 项目 数量 金额 as
    項目 數量 金額 at 99-100), so a full read with both lets chi_tra take some lines and cells at
    random: the gate's simplified table came out in traditional forms. The band's read, with
    chi_sim first, is the tie-break the variant count already is for longer bands. ``jpn``
    stays: a few Han characters do not tell Chinese from kanji-only Japanese headings."""
    if "chi_sim" not in cands or "chi_tra" not in cands or _kana(text):
        return cands
    variant = band_variant(text)
    if variant is None:
        return cands
    drop = "chi_tra" if variant == "simplified" else "chi_sim"
    return [m for m in cands if m != drop]


def _kana(text: str) -> int:
    """Hiragana and katakana in ``text``."""
    return sum(0x3040 <= ord(c) <= 0x30FF for c in text)


def cjk_chars(text: str) -> int:
    """Han characters and kana in ``text``."""
    return len(_HAN_CHAR.findall(text)) + _kana(text)


def cjk_wins(latin_conf: float, cjk_text: str, cjk_conf: float) -> bool:
    """The CJK read of an unsure Latin read is the better one: surer, or as sure and full of Han
    characters, which Latin models cannot read (a ruled Chinese goods list, mostly numbers, read
    at 67 with Latin and 67 with chi_sim: 551 Han characters, bench/RESULTS.md)."""
    han = len(_HAN_CHAR.findall(cjk_text))
    letters = sum(ch.isalpha() for ch in cjk_text)
    return cjk_conf > latin_conf + 10 or (cjk_conf >= latin_conf - CJK_KEEP_SLACK and han >= 20 and han >= 0.3 * letters)


def probe_band(gray: Any, share: float = PROBE_BAND) -> Any:
    """The band of ``share`` of the page's height with the most ink (``orient``'s)."""

    return inkiest_band(gray, share)


def probe_bands(gray: Any, share: float = PROBE_BAND) -> list[Any]:
    """``probe_band``, then a band that does not overlap it (``orient.text_bands``): read when
    the first holds fewer than ``BAND_MIN_WORDS`` words (``band_words``)."""

    return text_bands(gray, share)


def band_words(text: str) -> int:
    """Words in a band's read: tokens of 2+ letters, and every two CJK characters as one."""
    return sum(sum(c.isalpha() for c in tok) >= 2 for tok in text.split()) + cjk_chars(text) // 2


def vertical_models(models: list[str], have: Callable[[str], bool]) -> list[str] | None:
    """``models`` for a vertical page: each CJK model's ``_vert`` twin (Latin models dropped:
    they cannot read columns); None when one is missing (``have(name)``: its traineddata is
    installed), and the page is read as before."""
    vert = [VERT_MODELS[m] for m in models if m in VERT_MODELS]
    if not vert or not all(have(m) for m in vert):
        return None
    return vert


def vertical_band(gray: Any, share: float) -> Any:
    """The vertical band of ``share`` of the page's width with the most ink: the language
    probe of a vertical page (a horizontal band cuts every column into a few characters)."""
    from PIL import Image

    turned = gray.transpose(Image.Transpose.ROTATE_90)
    band = probe_band(turned, share)
    return band.transpose(Image.Transpose.ROTATE_270)


@dataclass
class Plan:
    """See the module contract."""

    models: list[str]
    language: str | None = None
    probes: list[list[str]] = field(default_factory=list)
    decide_after: bool = False
    vertical: bool = False  # a CJK page written in columns, read with the ``_vert`` models


def plan_page(
    allowed: list[str], script: str, known: str | None, read_band: Callable[[list[str], float], tuple[str, float]],
) -> Plan:
    """The models of the page's full read (see the module contract)."""
    latin = [a for a in allowed if a in LATIN]
    cjk_codes = [c for c in ("zh", "ja") if c in allowed]
    cjk_doc = known == CJK_UNDECIDED
    if cjk_doc:
        known = None
    if known is not None and fits(known, script) and (known in allowed or known[:2] in allowed):
        return Plan(models_for(known, allowed))
    if script in CJK_SCRIPTS and cjk_codes:
        cands = choose_languages(allowed, script)
        if len(cands) == 1:
            return Plan(cands)
        text, _ = read_band(cands, CJK_PROBE_BAND)
        code = cjk_language(text, allowed)
        return Plan(models_for(code, allowed) if code else undecided_models(text, cands), code, [cands])
    if not latin:
        return Plan(choose_languages(allowed, script))
    first = ["eng"] if "en" in latin else list(TESS_CODES[latin[0]])
    if len(latin) == 1 and not cjk_codes:
        return Plan(first)
    text, conf = read_band(first, PROBE_BAND)
    probes = [first]
    if cjk_codes and (conf < CJK_RETRY_BELOW_CONF or cjk_doc):
        # OSD sometimes calls a page of Chinese/Japanese "Latin" (seen on JPEG receipts at ~25 px
        # glyphs: Latin models read it at confidence 50, chi_sim at 91), or could not tell. It
        # is CJK when the CJK models read it better and as CJK text (a page of numbers reads
        # about as well with both: mtcars, 56 with English, 67 with CJK models, 0 Han).
        cands = choose_languages(allowed, "Han")
        text2, conf2 = read_band(cands, CJK_PROBE_BAND)
        probes.append(cands)
        code = cjk_language(text2, allowed)
        if cjk_wins(conf, text2, conf2) and (code is not None or cjk_chars(text2) >= CJK_SOME_CHARS):
            # a band too short to tell Chinese from Japanese (a receipt: 10 kana and 5 Han
            # characters read at 91 against 45 with English) is still CJK: every CJK model
            return Plan(models_for(code, allowed) if code else undecided_models(text2, cands), code, probes)
        if code is not None and conf2 >= CJK_MIXED_MIN_CONF:
            # CJK text among code, formulas or English (OSD says "Latin"): the Latin letters
            # outnumber the Han characters, so the CJK read does not "win", but English alone
            # reads the CJK lines as junk (a Chinese page with code and formulas: language "it",
            # word recall 0.28 against 0.66 with chi_sim, issue 32). Its CJK model first, English
            # second for the code.
            models = models_for(code, allowed) + (["eng"] if "en" in latin else [])
            return Plan(list(dict.fromkeys(models)), code, probes)
    if len(latin) == 1:
        return Plan(first, latin[0], probes)
    lang = latin_language(text, latin)
    if lang is None:
        return Plan(first, None, probes, decide_after=True)
    return Plan(models_for(lang, allowed), lang, probes)
