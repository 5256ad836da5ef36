"""The document's own date (issue 15 item 7): printed dates in the 11 languages' formats, the
labelled one first, and the route template fields built from it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.config.templates import expand_template
from daemon.dates import document_date
from daemon.understand.classify import classify
from daemon.understand.route import template_fields

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("lang", "text", "want"),
    [
        ("en", "Invoice date: March 14, 2024\nDue: April 13, 2024", "2024-03-14"),
        ("en", "Issued 03/04/2024", "2024-03-04"),  # month first in English
        ("en", "Statement 14/03/2024", "2024-03-14"),  # ...unless that is no date
        ("de", "Rechnung Nr. 2024-117 vom 14.03.2024", "2024-03-14"),
        ("de", "Berlin, den 1. Februar 2023", "2023-02-01"),
        ("fr", "Paris, le 1er mars 2024", "2024-03-01"),
        ("es", "Madrid, 14 de marzo de 2024", "2024-03-14"),
        ("it", "Milano, 14 marzo 2024", "2024-03-14"),
        ("nl", "Amsterdam, 14 maart 2024", "2024-03-14"),
        ("pt", "Lisboa, 14 de março de 2024", "2024-03-14"),
        ("sv", "Stockholm 14 mars 2024", "2024-03-14"),
        ("da", "København, 14. marts 2024", "2024-03-14"),
        ("zh", "开票日期：2024年03月14日", "2024-03-14"),
        ("ja", "令和6年3月14日", "2024-03-14"),
        ("ja", "発行日 2024/3/14", "2024-03-14"),
        # the labelled date wins over an earlier period
        ("de", "Kontoauszug 01.06.2024 - 30.06.2024\nDatum: 02.07.2024", "2024-07-02"),
    ],
)
def test_document_date(lang: str, text: str, want: str) -> None:
    assert document_date(text, lang) == want


@pytest.mark.parametrize(
    "text",
    ["Version 1.2.3, Preis 12.03 EUR", "Tel. 030-12-2024", "Kundennummer 2024-117", "31.02.2024", "14.03.1850"],
)
def test_not_dates(text: str) -> None:
    assert document_date(text, "de") is None


def test_template_fields_from_the_printed_date() -> None:
    cfg = load_config(ROOT / "rules.yaml")
    text = "Rechnung\nRechnungsdatum: 14.03.2024\nRechnungsnummer 117\nGesamtbetrag 183,26 EUR\nzahlbar bis 28.03.2024"
    cls = classify(text, cfg=cfg, filename="r.pdf", pages=1, markdown=False)
    assert cls.doc_date == "2024-03-14"
    fields = template_fields(path=Path("/in/r.pdf"), inbox="in", cls=cls, when=datetime(2026, 12, 1))
    assert expand_template("archive/{doctype}/{doc_yyyy}/{doc_mm}", fields) == Path("archive/invoice/2024/03")
    assert fields["yyyy"] == "2026"
    cls = classify("Hallo Welt, ohne Datum hier.", cfg=cfg, filename="x.pdf", pages=1, markdown=False)
    fields = template_fields(path=Path("/in/x.pdf"), inbox="in", cls=cls, when=datetime(2026, 12, 1))
    assert fields["doc_date"] == "undated"
