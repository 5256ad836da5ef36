"""The document's own date: the date printed on it (an invoice's date), for the sidecar and the
``{doc_yyyy}`` / ``{doc_mm}`` / ``{doc_date}`` route template fields.

Contract:
- ``find_dates(text, language)`` -> every date printed in ``text`` as ``FoundDate`` (ISO date,
  position, whether a date label such as "Rechnungsdatum:" or "日付" stands right before it,
  whether it is labelled a birth date), in text order. Pure; no I/O.
- ``document_date(text, language)`` -> ``"YYYY-MM-DD"`` or None: the first labelled date, else
  the first date of the text (letterheads and invoices print their date near the top). A birth
  date ("Geburtsdatum:", "date of birth", "DOB", "née le", "fecha de nacimiento", "生年月日"... before
  it on its line, or alone on the line above, as forms print a field's label) is never the
  document's date.
- ``starts_with_date(line)``: the line begins with a day and a month name (a date, not a numbered
  list item: ``daemon.document.layout``'s list rule).
- No daemon imports: the classifier (``daemon.understand.classify``) and the document model's
  builders (``daemon.document.layout``) both read dates through here.

Formats, in the 11 languages' usual ways of printing a date (four-digit years only, so version
numbers, prices and "1.2.3" are not dates; years 1900 .. next year):
- ISO and year-first: ``2024-03-14``, ``2024/3/14``, ``2024.03.14``;
- CJK: ``2024年3月14日``, Japanese eras ``令和6年3月14日``, ``平成31年4月1日`` (``R6.3.14`` is not read);
- numeric day-first: ``14.03.2024``, ``14/03/2024``, ``14-03-2024`` (fr de es it nl pt sv da);
  in English month-first (``03/14/2024``) unless that is no date and day-first is;
- month names (full and abbreviated, accents optional, case-insensitive): ``14 March 2024``,
  ``March 14, 2024``, ``14. März 2024``, ``le 14 mars 2024``, ``1er mars 2024``, ``14 de marzo
  de 2024``, ``14 marzo 2024``, ``14 maart 2024``, ``14 de março de 2024``, ``14 mars 2024``
  (sv), ``14. marts 2024`` (da); English ordinals ``12th October 2022``, ``1st of March 2024``,
  ``October 12th, 2022``. A date alone on a line ("12. März 2018") is read from the document
  model's plain text, where Markdown list numbering does not eat it (``Document.text()``).
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["FoundDate", "find_dates", "document_date", "starts_with_date"]

_MONTHS: dict[str, tuple[str, ...]] = {
    # month 1..12 -> names in the 9 Latin-script languages (folded: lower case, no accents)
    "1": ("january", "jan", "janvier", "janv", "januar", "enero", "ene", "gennaio", "gen", "januari", "janeiro", "jan"),
    "2": ("february", "feb", "fevrier", "fevr", "fev", "februar", "febrero", "febbraio", "februari", "fevereiro", "fev"),
    "3": ("march", "mar", "mars", "marz", "marzo", "maart", "mrt", "marco", "marts"),
    "4": ("april", "apr", "avril", "avr", "abril", "abr", "aprile"),
    "5": ("may", "mai", "mayo", "maggio", "mag", "mei", "maio", "maj"),
    "6": ("june", "jun", "juin", "juni", "junio", "giugno", "giu", "junho"),
    "7": ("july", "jul", "juillet", "juil", "juli", "julio", "luglio", "lug", "julho"),
    "8": ("august", "aug", "aout", "agosto", "ago", "augustus", "augusti"),
    "9": ("september", "sep", "sept", "septembre", "septiembre", "settembre", "set", "setembro"),
    "10": ("october", "oct", "octobre", "oktober", "okt", "octubre", "ottobre", "ott", "outubro", "out"),
    "11": ("november", "nov", "novembre", "noviembre", "novembro"),
    "12": ("december", "dec", "decembre", "dezember", "dez", "diciembre", "dic", "dicembre", "dezembro"),
}
_MONTH_OF = {name: int(m) for m, names in _MONTHS.items() for name in names}
_MONTH_ALT = "|".join(sorted(_MONTH_OF, key=len, reverse=True))

# Labels a document's own date follows ("Datum: 14.03.2024"); folded like the text.
_LABELS = (
    "date", "dated", "invoice date", "issue date", "issued", "datum", "rechnungsdatum", "belegdatum",
    "date de facture", "date d'emission", "fecha", "fecha de emision", "fecha de factura", "data",
    "data fattura", "data di emissione", "data de emissao", "factuurdatum", "fakturadatum",
    "fakturadato", "dato", "udstedelsesdato",
)
_CJK_LABELS = ("日付", "日期", "開票日期", "开票日期", "発行日", "請求日", "发票日期", "發票日期", "作成日")
_LABEL_RE = re.compile(r"(?:^|[^\w])(?:" + "|".join(re.escape(x) for x in sorted(_LABELS, key=len, reverse=True)) + r")\s*[:.]?\s*$")

_ISO_RE = re.compile(r"(?<![\d.,/-])((?:19|20)\d\d)[-/.](\d{1,2})[-/.](\d{1,2})(?![\d])")
_CJK_RE = re.compile(r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_ERA_RE = re.compile(r"(令和|平成)\s*(\d{1,2}|元)\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_NUM_RE = re.compile(r"(?<![\d.,/-])(\d{1,2})([./-])(\d{1,2})\2((?:19|20)\d\d)(?![\d])")
# Day first: "12. März 2018", "1er mars", "12 de marzo de", "12th October 2022", "1st of March
# 2024", "1e maart" (nl), "1:a mars" (sv), "1.º de março"; OCR reads the day's dot as "," or ":"
# ("12, März 2018", "le 12: mars 2018" in bench/eval_filing.py's scans).
_DMY_NAME_RE = re.compile(
    r"(?<!\d)(\d{1,2})(?:st|nd|rd|th|er|eme|e|:a|:e|º|°|o|\.º)?[.,:]?\s+(?:de\s+|of\s+)?(" + _MONTH_ALT
    + r")\.?,?\s+(?:de\s+)?((?:19|20)\d\d)(?!\d)"
)
_MDY_NAME_RE = re.compile(r"(?<![\w])(" + _MONTH_ALT + r")\.?\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)(?!\d)")

# A date labelled as someone's birth date is not the document's date (a form's "Geburtsdatum:
# 01.01.1970" became the date of the form, issue 32). Folded like the text; the label stands
# before the date on its line, or alone on the line above (a form's label over its field).
_BIRTH = (
    "date of birth", "birth date", "birthdate", "born", "born on", "dob", "d.o.b", "geboren", "geboren am", "geb",
    "geburtsdatum", "geburtstag", "ne le", "nee le", "ne(e) le", "date de naissance", "fecha de nacimiento",
    "nacido el", "nacida el", "f. nacimiento", "data di nascita", "nato il", "nata il", "nato a", "nata a",
    "geboortedatum", "geboren op", "data de nascimento", "nascido em", "nascida em", "fodd", "fodelsedatum",
    "fodelsedag", "fodt", "fodselsdato", "fodselsdag", "født", "fødselsdato", "fødselsdag",  # NFKD keeps ø
)
_CJK_BIRTH = ("出生日期", "出生年月日", "出生", "生年月日", "誕生日")
_BIRTH_RE = re.compile(r"(?:^|[^\w])(?:" + "|".join(re.escape(x) for x in sorted(_BIRTH, key=len, reverse=True))
                       + r")\b[^\n]{0,24}$")
_ERA_BASE = {"令和": 2018, "平成": 1988}


@dataclass(frozen=True)
class FoundDate:
    iso: str  # YYYY-MM-DD
    start: int  # position in the folded text
    labelled: bool
    birth: bool = False  # labelled as a birth date (never the document's date)


def _fold(text: str) -> str:
    s = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(ch for ch in s if not unicodedata.combining(ch))


def _valid(y: int, m: int, d: int) -> str | None:
    if not 1900 <= y <= dt.date.today().year + 1:
        return None
    try:
        return dt.date(y, m, d).isoformat()
    except ValueError:
        return None


def find_dates(text: str, language: str = "unknown") -> list[FoundDate]:
    """Every date printed in ``text`` (see the module docstring), in text order."""
    folded = _fold(text)
    hits: dict[int, str] = {}

    def put(start: int, iso: str | None) -> None:
        if iso and start not in hits:
            hits[start] = iso

    for m in _CJK_RE.finditer(folded):
        put(m.start(), _valid(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _ERA_RE.finditer(folded):
        n = 1 if m.group(2) == "元" else int(m.group(2))
        put(m.start(), _valid(_ERA_BASE[m.group(1)] + n, int(m.group(3)), int(m.group(4))))
    for m in _ISO_RE.finditer(folded):
        put(m.start(), _valid(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _NUM_RE.finditer(folded):
        a, b, y = int(m.group(1)), int(m.group(3)), int(m.group(4))
        # English prints month first (03/14/2024) where that is a date; everyone else day first.
        first = _valid(y, a, b) if language == "en" else _valid(y, b, a)
        put(m.start(), first or (_valid(y, b, a) if language == "en" else _valid(y, a, b)))
    for m in _DMY_NAME_RE.finditer(folded):
        put(m.start(), _valid(int(m.group(3)), _MONTH_OF[m.group(2)], int(m.group(1))))
    for m in _MDY_NAME_RE.finditer(folded):
        put(m.start(), _valid(int(m.group(3)), _MONTH_OF[m.group(1)], int(m.group(2))))
    out = []
    prev_end = 0
    for start in sorted(hits):
        before = folded[max(0, start - 40) : start]
        line = before.rsplit("\n", 1)[-1]
        labelled = bool(_LABEL_RE.search(line)) or any(line.rstrip(" :：").endswith(lab) for lab in _CJK_LABELS)
        # what stands between the previous date on this line (or the line's start) and this one
        own = folded[max(prev_end, start - len(line)) : start]
        if not own.strip(" \t:：|"):  # the date starts its line: a form's label may be the line above
            above = folded[max(0, start - len(line) - 60) : start - len(line)].rstrip().rsplit("\n", 1)[-1]
            own = above if len(above.strip()) <= 40 and not re.search(r"\d", above) else own
        prev_end = start + 8
        birth = bool(_BIRTH_RE.search(own.rstrip(" :：\t"))) or any(lab in own for lab in _CJK_BIRTH)
        out.append(FoundDate(hits[start], start, labelled, birth))
    return out


_DATE_START_RE = re.compile(
    r"^\s*\d{1,2}(?:st|nd|rd|th|er|e|º|°|o)?\.?\s+(?:de\s+|of\s+)?(" + _MONTH_ALT + r")\b\.?(,?\s+(?:de\s+)?\d{4})?"
)


def starts_with_date(line: str) -> bool:
    """True when ``line`` begins with a day and a month name ("12. März 2018", "1er mars",
    "3 de mayo de 2024"): a date, not a numbered list item (``daemon.document.layout``). Without
    a year the month must be a full name that is no English word ("3. Set up", "4. Out of
    scope", "2. May I", "1. Mars" stay list items)."""
    m = _DATE_START_RE.match(_fold(line))
    if m is None:
        return False
    return bool(m.group(2)) or (len(m.group(1)) >= 4 and m.group(1) not in ("mars", "june", "july"))


def document_date(text: str, language: str = "unknown") -> str | None:
    """The document's date as ``YYYY-MM-DD``: the first labelled date, else the first date;
    birth dates left out."""
    dates = [d for d in find_dates(text, language) if not d.birth]
    if not dates:
        return None
    labelled = [d for d in dates if d.labelled]
    return (labelled or dates)[0].iso
