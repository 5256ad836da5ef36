"""Document-type classification of a document's OCR text, and the ``classify()`` entry point.

Contract:
- ``classify(text, cfg=..., filename=..., pages=..., markdown=...)`` returns a ``Classification``:
  language (``daemon.language.detect_language`` on the first ``MAX_CLASSIFY_CHARS``),
  table/math features and the doctype whose score is highest among those that reach
  their threshold (``"other"`` when none does). ``fired`` lists, for *every* doctype, the matchers
  that contributed, so ``route --explain`` can show why.
- ``detect_table``, ``detect_math``, ``is_toc_line``: the features; ``keyword_languages`` and
  ``score_doctype``: the doctype scoring below; ``fold`` (from ``language``) is the matching form.
- ``format_explain(cls, rows)`` renders the text ``ocr-daemon route --explain FILE`` prints.

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
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from daemon.config import LANGUAGES, Config, DoctypeCfg
from daemon.dates import document_date
from daemon.language import WORD_RE, detect_language, fold, has_cjk, is_cjk, nfkc
from daemon.models import Classification

if TYPE_CHECKING:
    from daemon.understand.route import RouteExplain

from daemon.document.parse import parse_document
from daemon.stages import Degraded, Stage, optional

log = logging.getLogger(__name__)

OTHER = "other"

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
        self.raw = nfkc(text)
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
    if has_cjk(kw):
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
    words = WORD_RE.findall(text)
    cjk = sum(1 for ch in text if is_cjk(ch))
    total = sum(1 for w in words if not has_cjk(w)) + cjk / 2  # ~2 CJK characters a word
    en = sum(1 for w in words if w.lower() in _EN_FUNCTION)
    if en >= EN_SECOND_MIN and en >= EN_SECOND_SHARE * total:
        return frozenset({language, "en"})
    return frozenset({language})


def classify(
    text: str, *, cfg: Config, filename: str, pages: int, markdown: bool, degraded: list[Degraded] | None = None,
    plain: str | None = None,
) -> Classification:
    """Language, features and doctype of a document (see the module docstring). The document
    date is an optional stage (``daemon.stages``): a failure leaves ``doc_date`` None and is
    appended to ``degraded``.

    ``plain``: the document model's plain text (``daemon.document.model.Document.text()``, text
    layer pages from their own blocks); language, keywords, regexes and the date read it, the
    table and math features read ``text``. Without it a Markdown ``text`` is parsed here."""
    head = text[:MAX_CLASSIFY_CHARS]
    if plain is not None:
        head = plain[:MAX_CLASSIFY_CHARS]
    elif markdown:
        # Language and keywords read the words only: the HTML table tags and LaTeX of engine
        # Markdown are Latin letters that outweigh a short Chinese or Japanese text.

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
        doc_date=optional(Stage.DATES, lambda: document_date(head, lang), lambda: None,
                          degraded if degraded is not None else []),
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
