"""Locale-aware number reading for XLSX cells."""

from __future__ import annotations

import pytest

from daemon.writers.numbers import parse_number


@pytest.mark.parametrize(
    ("text", "lang", "value", "fmt"),
    [
        ("1.234,56", "de", 1234.56, "#,##0.00"),
        ("1.200", "de", 1200, "#,##0"),  # German thousands, an int
        ("0,85 €", "de", 0.85, '0.00" €"'),
        ("19 %", "de", 0.19, "0%"),
        ("-3,5 %", "de", -0.035, "0.0%"),
        ("1 234,56 €", "fr", 1234.56, '#,##0.00" €"'),
        ("1\u202f234,56", "fr", 1234.56, "#,##0.00"),  # narrow no-break space grouping
        ("−12,50 €", "fr", -12.5, '0.00" €"'),  # U+2212 minus
        ("12 345,67", "sv", 12345.67, "#,##0.00"),
        ("8 765,40 kr", "sv", 8765.4, '#,##0.00" kr"'),
        ("1.234,50 kr.", "da", 1234.5, '#,##0.00" kr."'),
        ("1.234,56", "es", 1234.56, "#,##0.00"),
        ("1.234,56", "it", 1234.56, "#,##0.00"),
        ("€ 1.234,56", "nl", 1234.56, '"€ "#,##0.00'),
        ("R$ 1.234,56", "pt", 1234.56, '"R$ "#,##0.00'),
        ("1,234.56", "en", 1234.56, "#,##0.00"),
        ("$1,234.56", "en", 1234.56, '"$"#,##0.00'),
        ("(1,234.56)", "en", -1234.56, "#,##0.00;(#,##0.00)"),
        ("1,234,567.89", "zh", 1234567.89, "#,##0.00"),
        ("12.5%", "zh", 0.125, "0.0%"),
        ("￥1,500", "ja", 1500, '"¥"#,##0'),  # full-width yen, NFKC
        ("１２３", "ja", 123, "General"),  # full-width digits
        ("2024", "de", 2024, "General"),
        ("3.14", "unknown", 3.14, "0.00"),  # reads the same in both conventions
        ("1.234,5", "unknown", 1234.5, "#,##0.0"),
    ],
)
def test_numbers_in_locale(text: str, lang: str, value: float, fmt: str) -> None:
    n = parse_number(text, lang)
    assert n is not None
    assert n.value == pytest.approx(value)
    assert isinstance(n.value, int) == (isinstance(value, int) and "%" not in fmt)
    assert n.number_format == fmt


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("1,234.56", "de"),  # the other convention is not a number in German
        ("1.234,56", "en"),
        ("1,5", "en"),
        ("12.03.2024", "de"),  # a date
        ("12 34 56 78", "da"),  # a phone number
        ("007", "en"),  # an identifier: leading zero
        ("1234567890123456", "en"),  # more than 15 digits
        ("DE89 3704 0044", "de"),
        ("1,234", "unknown"),  # ambiguous without a locale
        ("n/a", "en"),
        ("", "en"),
        ("$x$", "en"),
        ("1 2", "en"),
        ("12 €\n13 €", "de"),
    ],
)
def test_not_numbers(text: str, lang: str) -> None:
    assert parse_number(text, lang) is None


def test_a_lone_sign_or_currency_is_not_a_number() -> None:
    # found by tests/integration/test_writer_fuzz.py: a cell "$" left an empty string after the
    # currency, and '"" in "+-"' is true in Python, so the sign check indexed past its end
    for text in ("$", "-", "+", "€ -", "( )", "%"):
        assert parse_number(text, "en") is None
