"""Filing and dates (issue 32 item 6), with the shipped rules.yaml: letters in the 11 languages,
time sheets and forms that are not contracts, citations that do not make a paper, a quarterly
report that is not a bank statement, the document date in each language's written forms (birth
dates left out), the document model's plain text as what classification reads, and the
confident-filing gate of routes that move or delete the original.

The documents are tests/data/filing_docs.yaml (written for this issue; the figures of the whole
set, before and after, are bench/eval_filing.py's).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from daemon.config import Config, load_config, parse_config_text
from daemon.dates import document_date, find_dates, starts_with_date
from daemon.document.parse import parse_document
from daemon.models import Classification
from daemon.understand.classify import classify
from daemon.understand.route import choose_route, confidence

ROOT = Path(__file__).resolve().parents[2]
DOCS: dict[str, dict[str, Any]] = yaml.safe_load((ROOT / "tests/data/filing_docs.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def cfg() -> Config:
    return load_config(ROOT / "rules.yaml")


def _classify(cfg: Config, text: str, *, markdown: bool = False) -> Classification:
    """As the daemon does (service.outputs.prepare_outputs): the document model's plain text."""
    plain = parse_document([text], markdown=markdown).text()
    return classify(text, cfg=cfg, filename="scan.pdf", pages=1, markdown=markdown, plain=plain)


@pytest.mark.parametrize("name", sorted(DOCS))
def test_doctype_language_and_date(cfg: Config, name: str) -> None:
    d = DOCS[name]
    c = _classify(cfg, d["text"])
    assert (c.language, c.doctype, c.doc_date) == (d["lang"], d["doctype"], d["date"]), c.fired


def test_every_language_has_a_letter() -> None:
    langs = {d["lang"] for d in DOCS.values() if d["doctype"] == "letter"}
    assert langs == {"zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"}


def test_letter_parts_each_count(cfg: Config) -> None:
    """Salutation, closing, subject line and address block are each letter evidence."""
    c = _classify(cfg, DOCS["letter_de"]["text"])
    fired = " ".join(c.fired["letter"])
    # the regexes (each line as a whole): salutation, closing, address block's postcode and town
    assert "('Sehr geehrte Frau" in fired and "('Mit freundlichem Gruß')" in fired and "('04109 Leipzig')" in fired
    c = _classify(cfg, DOCS["letter_nl"]["text"])
    assert any("Betreft:" in f for f in c.fired["letter"]) and any("3512 AB Utrecht" in f for f in c.fired["letter"])


def test_a_salutation_and_a_closing_alone_make_a_letter(cfg: Config) -> None:
    text = "Sehr geehrte Damen und Herren,\n\nbitte senden Sie mir die Unterlagen erneut zu.\n\nMit freundlichen Grüßen\nJonas Weber"
    c = _classify(cfg, text)
    assert c.doctype == "letter" and c.doctype_scores["letter"] >= 3


def test_employer_and_signature_lines_are_no_contract(cfg: Config) -> None:
    c = _classify(cfg, DOCS["timesheet_de"]["text"])
    assert c.doctype != "contract" and c.doctype_scores["contract"] < 3
    # the same words in a text with contract language are a contract
    assert _classify(cfg, DOCS["contract_de"]["text"]).doctype == "contract"


def test_citations_alone_are_no_paper(cfg: Config) -> None:
    for name in ("citations_en", "citations_de"):
        c = _classify(cfg, DOCS[name]["text"])
        assert c.doctype != "scientific_paper" and c.doctype_scores["scientific_paper"] < 3.5, name
    assert _classify(cfg, DOCS["paper_en"]["text"]).doctype == "scientific_paper"


def test_umsatz_and_a_table_are_no_bank_statement(cfg: Config) -> None:
    for name in ("quarterly_de", "quarterly_de_plain"):
        c = _classify(cfg, DOCS[name]["text"])
        assert c.has_table and c.doctype != "bank_statement" and c.doctype_scores["bank_statement"] < 3, name
    assert _classify(cfg, DOCS["bank_statement_de"]["text"]).doctype == "bank_statement"


@pytest.mark.parametrize(
    ("lang", "text", "want"),
    [
        ("de", "Leipzig\n12. März 2018\n", "2018-03-12"),
        ("en", "London, 12th October 2022", "2022-10-12"),
        ("en", "1st March 2024", "2024-03-01"),
        ("en", "the 2nd of May 2024", "2024-05-02"),
        ("en", "October 22nd, 2022", "2022-10-22"),
        ("fr", "12 mars 2018", "2018-03-12"),
        ("fr", "le 1er avril 2018", "2018-04-01"),
        ("es", "12 de marzo de 2018", "2018-03-12"),
        ("it", "12 marzo 2018", "2018-03-12"),
        ("nl", "12 maart 2018", "2018-03-12"),
        ("pt", "12 de março de 2018", "2018-03-12"),
        ("sv", "12 mars 2018", "2018-03-12"),
        ("da", "12. marts 2018", "2018-03-12"),
        ("zh", "2018年3月12日", "2018-03-12"),
        ("ja", "2018年3月12日", "2018-03-12"),
    ],
)
def test_written_dates(lang: str, text: str, want: str) -> None:
    assert document_date(text, lang) == want


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Name: John Smith\nDate of birth: 1970-01-01\nSigned 12th October 2022"),
        ("en", "DOB 01/01/1970\n12th October 2022"),
        ("de", "Name: Erika Beispiel\nGeburtsdatum: 01.01.1970\nLeipzig, 12. Oktober 2022"),
        ("de", "Geburtsdatum\n01.01.1970\nDatum\n12.10.2022"),  # a form: the label above its field
        ("de", "Erika Beispiel, geb. 01.01.1970, Leipzig, 12.10.2022"),
        ("fr", "née le 1er janvier 1970\nParis, le 12 octobre 2022"),
        ("es", "Fecha de nacimiento: 01/01/1970\nMadrid, 12 de octubre de 2022"),
        ("it", "nato il 01/01/1970\nMilano, 12 ottobre 2022"),
        ("nl", "Geboortedatum: 01-01-1970\nUtrecht, 12 oktober 2022"),
        ("pt", "Data de nascimento: 01/01/1970\nPorto, 12 de outubro de 2022"),
        ("sv", "Född: 1970-01-01\nStockholm 12 oktober 2022"),
        ("da", "Fødselsdato: 01-01-1970\nAarhus, 12. oktober 2022"),
        ("zh", "出生日期：1970年1月1日\n2022年10月12日"),
        ("ja", "生年月日 1970年1月1日\n2022年10月12日"),
    ],
)
def test_a_birth_date_is_not_the_documents_date(lang: str, text: str) -> None:
    assert document_date(text, lang) == "2022-10-12"
    assert [d.birth for d in find_dates(text, lang)] == [True, False]


def test_a_birth_date_alone_gives_no_date() -> None:
    assert document_date("Antrag\nGeburtsdatum: 01.01.1970\n", "de") is None


def test_a_date_line_that_markdown_reads_as_a_list_item_is_kept(cfg: Config) -> None:
    """ "12. März 2018" alone on a line is item 12 of an ordered list to Markdown; the document
    model's plain text keeps the number, so the date is found (issue 32)."""
    md = "Erika Beispiel\n\n12. März 2018\n\nSehr geehrte Frau Sommer,\n\nbitte rufen Sie mich an.\n\nMit freundlichen Grüßen\n"
    doc = parse_document([md], markdown=True)
    assert "12. März 2018" in doc.text()
    c = _classify(cfg, md, markdown=True)
    assert (c.doctype, c.doc_date) == ("letter", "2018-03-12")


# ----------------------------------------------------------------------------- confident filing

ROUTES = """
doctypes: {contract: {keywords: {de: {Vertrag: 2.5, Unterschrift: 0.5, Kündigung: 1.5}}}}
routes:
  - {name: contracts, match: {doctype: contract}, destination: /out/c, source: archive, archive_to: /arch/c}
  - {name: drop-other, match: {doctype: other}, destination: /out/o, source: delete, min_margin: 1.0}
  - {name: rest, destination: /out/r, source: keep}
"""


def _route_cfg() -> Config:
    return parse_config_text("inboxes: [{path: /in, name: in}]\n" + ROUTES)


def _decide(text: str) -> tuple[Classification, Any]:
    cfg = _route_cfg()
    c = classify(text, cfg=cfg, filename="x.pdf", pages=1, markdown=False)
    decision, _ = choose_route(cfg, path=Path("/in/x.pdf"), inbox="in", cls=c, pages=1, when=datetime(2026, 1, 1))
    return c, decision


def test_an_unsure_doctype_keeps_the_source_and_asks_for_review() -> None:
    c, d = _decide("Hinweis zum Vertrag\nUnterschrift bitte bis Freitag.")  # 3.0 against threshold 3
    assert c.doctype == "contract" and d.name == "contracts"
    assert d.source_action == "keep" and d.archive_dir is None
    assert d.classification == {"doctype": "contract", "score": 3.0, "threshold": 3.0, "margin": 0.0,
                                "min_margin": 1.5, "confident": False}
    assert len(d.review_reasons) == 1 and "unsure" in d.review_reasons[0] and "archive" in d.review_reasons[0]
    assert d.destination == Path("/out/c")  # the outputs still go where the route says


def test_a_confident_doctype_archives() -> None:
    c, d = _decide("Vertrag\n§ 1 Kündigung\nUnterschrift")  # 4.5: 1.5 over
    assert d.source_action == "archive" and d.archive_dir == Path("/arch/c") and d.review_reasons == []
    assert d.classification is not None and d.classification["confident"] and d.classification["margin"] == 1.5


def test_other_near_a_threshold_is_unsure_too() -> None:
    _, d = _decide("Unterschrift und Kündigung")  # other: contract 2.0, 1.0 below its threshold
    assert d.name == "drop-other" and d.source_action == "delete"  # min_margin 1.0 there: sure enough
    cfg = _route_cfg()
    cfg.routes[1].min_margin = 1.5
    c = classify("Unterschrift und Kündigung", cfg=cfg, filename="x.pdf", pages=1, markdown=False)
    d2, _ = choose_route(cfg, path=Path("/in/x.pdf"), inbox="in", cls=c, pages=1, when=datetime(2026, 1, 1))
    assert d2.source_action == "keep" and d2.review_reasons


def test_routes_that_keep_or_ignore_the_doctype_are_not_gated() -> None:
    cfg = parse_config_text(
        "inboxes: [{path: /in, name: in}]\n"
        "doctypes: {contract: {keywords: {de: {Vertrag: 3}}}}\n"
        "routes: [{name: all, destination: /out, source: archive, archive_to: /arch}]\n"
    )
    c = classify("Vertrag", cfg=cfg, filename="x.pdf", pages=1, markdown=False)  # margin 0
    d, _ = choose_route(cfg, path=Path("/in/x.pdf"), inbox="in", cls=c, pages=1, when=datetime(2026, 1, 1))
    assert d.source_action == "archive" and d.review_reasons == []
    assert d.classification is not None and not d.classification["confident"]


def test_confidence_without_scores_is_not_weighed() -> None:
    got = confidence(Classification(language="de", language_confidence=1.0, doctype="invoice"), 1.5)
    assert got["margin"] is None and got["confident"]


@pytest.mark.parametrize(
    ("line", "want"),
    [("12. März 2018", True), ("1er mars 2024", True), ("3 de mayo de 2024", True), ("12th October 2022", True),
     ("1. Mai 2024", True), ("1. Februar", True), ("12. Einleitung", False), ("3. Mietzeit und Kündigung", False), ("2) Maybe later", False),
     ("1. Marseille", False), ("3. Set up the server", False), ("4. Out of scope", False), ("2. May I ask", False),
     ("5. Mars and Venus", False)],
)
def test_a_line_starting_with_a_date_is_no_list_item(line: str, want: bool) -> None:
    """A text layer's "12. März 2018" line stays a line (daemon.document.layout), not item 12."""
    assert starts_with_date(line) is want


def test_an_address_line_is_one_line(cfg: Config) -> None:
    """A number ending a line and a capitalised word starting the next is no "postcode town"
    (a Debian manual page: "1482\\nA text-mode ..." scored as an address block)."""
    c = _classify(cfg, "See bug 1482\nA text-mode full-screen editor\n\n04109 Leipzig")
    hits = [f for f in c.fired["letter"] if "04109" in f or "1482" in f]
    assert len(hits) == 1 and "('04109 Leipzig')" in hits[0]
