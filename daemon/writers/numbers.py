"""Reading numbers in table cells the way the document's language writes them.

:func:`parse_number` decides whether a cell's whole text is one plain number in the document's
locale and returns its value plus an Excel number format that shows it as it was written:

- decimal comma, ``.``/space/``'`` grouping: ``de fr es it nl pt da sv`` (``1.234,56``,
  ``1 234,56``, ``12 345,67``);
- decimal point, ``,`` grouping: ``en zh ja`` (``1,234.56``);
- ``unknown`` (or any other code): only text that reads the same in both conventions
  (``1234``, ``3.14``, ``1,234.56``, ``1.234,56``); ``1,234`` and ``1.234`` stay text.

Decisions (documented in docs/outputs.md, "Numbers in XLSX"):

- Grouping must be regular (groups of three), else the cell is text: ``12.03.2024`` (a date),
  ``12 34 56 78`` (a phone number) stay text.
- A leading zero (``007``, ``0123``) or more than 15 significant digits (account numbers, IBAN
  parts) keeps the cell text: the digits are an identifier, and Excel would drop them.
- Percentages (``12,5 %``, ``12.5%``) are stored as the fraction (0.125) with a percent format
  of the same number of decimals, so Excel shows ``12.5%`` and computes with 0.125.
- One currency sign or code before or after the amount (``€ $ £ ¥ ￥ kr kr. EUR USD …``) is
  kept in the number format (``#,##0.00" €"``), the value is the amount.
- Negative: ``-``, ``−`` (U+2212) or accounting parentheses ``(1,234.56)``.
- Integers become ``int``, everything else ``float``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

DECIMAL_COMMA = frozenset({"de", "fr", "es", "it", "nl", "pt", "da", "sv"})
DECIMAL_POINT = frozenset({"en", "zh", "ja"})

_CURRENCY = (
    "US$", "R$", "CHF", "EUR", "USD", "GBP", "JPY", "CNY", "RMB", "SEK", "DKK", "NOK", "kr.", "kr",
    "€", "$", "£", "¥", "₩", "₹", "元", "円", "Fr.",
)  # fmt: skip
_CUR_ALT = "|".join(re.escape(c) for c in _CURRENCY)
_CUR_PREFIX = re.compile(rf"^({_CUR_ALT})(\s?)")
_CUR_SUFFIX = re.compile(rf"(\s?)({_CUR_ALT})$")
_SPACES = "\u00a0\u202f\u2009 "

_COMMA_GROUPED = re.compile(r"^(\d{1,3})((?:([.'\u00a0\u202f\u2009 ])\d{3})(?:\3\d{3})*)(?:,(\d+))?$")
_COMMA_PLAIN = re.compile(r"^(\d+)(?:,(\d+))?$")
_POINT_GROUPED = re.compile(r"^(\d{1,3})((?:,\d{3})+)(?:\.(\d+))?$")
_POINT_PLAIN = re.compile(r"^(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class Number:
    value: int | float
    number_format: str  # Excel format code ("General" when nothing needs showing)


def _core(s: str, convention: str) -> tuple[str, str, bool] | None:
    """Digits of ``s`` in one convention: (integer digits, decimal digits, grouped) or None."""
    if convention == "comma":
        m = _COMMA_GROUPED.match(s)
        if m:
            return m.group(1) + re.sub(r"\D", "", m.group(2)), m.group(4) or "", True
        m = _COMMA_PLAIN.match(s)
        if m:
            return m.group(1), m.group(2) or "", False
        return None
    m = _POINT_GROUPED.match(s)
    if m:
        return m.group(1) + m.group(2).replace(",", ""), m.group(3) or "", True
    m = _POINT_PLAIN.match(s)
    if m:
        return m.group(1), m.group(2) or "", False
    return None


def parse_number(text: str, language: str) -> Number | None:
    """The number ``text`` writes in ``language``'s convention, or None if it is not exactly one
    plain number (see the module docstring)."""
    s = unicodedata.normalize("NFKC", text).strip()
    if not s or len(s) > 40 or "\n" in s:
        return None
    s = s.replace("\u2212", "-").replace("\u2013", "-")
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1].strip()
    pct = False
    if s.endswith("%"):
        pct, s = True, s[:-1].rstrip(_SPACES)
    sign = ""
    if s[:1] in ("+", "-"):
        sign, s = s[0], s[1:].lstrip(_SPACES)
    prefix = suffix = ""
    m = _CUR_PREFIX.match(s)
    if m and not pct:
        prefix, s = m.group(1) + m.group(2), s[m.end() :]
        if not sign and s[:1] in ("+", "-"):
            sign, s = s[0], s[1:]
    else:
        m2 = _CUR_SUFFIX.search(s)
        if m2 and not pct and m2.start() > 0:
            suffix, s = m2.group(1) + m2.group(2), s[: m2.start()]
    if not s or not s[0].isdigit() or not s[-1].isdigit():
        return None
    if language in DECIMAL_COMMA:
        got = _core(s, "comma")
    elif language in DECIMAL_POINT:
        got = _core(s, "point")
    else:
        a, b = _core(s, "comma"), _core(s, "point")
        # unknown locale: accept only what both conventions read as the same number
        got = (a if _value(a) == _value(b) else None) if a and b else a or b
    if got is None:
        return None
    ints, decs, grouped = got
    if (len(ints) > 1 and ints[0] == "0") or len(ints.lstrip("0") + decs) > 15:
        return None
    value = _value(got)
    if value is None:
        return None
    if sign == "-" or negative:
        value = -value
    if pct:
        value = value / 100
    fmt = ("#,##0" if grouped else "0") + ("." + "0" * len(decs) if decs else "")
    if pct:
        fmt = "0" + ("." + "0" * len(decs) if decs else "") + "%"
    elif prefix or suffix:
        fmt = (f'"{prefix}"' if prefix else "") + fmt + (f'"{suffix}"' if suffix else "")
    elif not grouped and not decs:
        fmt = "General"
    if negative:
        fmt = f"{fmt};({fmt})"
    number: int | float = int(value) if (not decs and not pct) else float(value)
    return Number(number, fmt)


def _value(got: tuple[str, str, bool] | None) -> Decimal | None:
    if got is None:
        return None
    ints, decs, _ = got
    try:
        return Decimal(ints + ("." + decs if decs else ""))
    except InvalidOperation:
        return None
