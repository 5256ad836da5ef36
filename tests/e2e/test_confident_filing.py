"""Confident filing end to end (issue 32 item 6): ``ocr-daemon once`` with a route that archives
contracts. A document that only just reaches the contract threshold keeps its source in the
inbox and its sidecar says ``review: true`` with the reason; a real contract is archived.
Born-digital PDFs (a text layer): real files, the real pipeline, no OCR time."""

from __future__ import annotations

import json
from pathlib import Path

import docgen
from conftest import run_cli, write_rules

UNSURE = "Hinweis zum Vertrag\n\nBitte senden Sie das Blatt bis Freitag zurück.\nUnterschrift: ______"
CONTRACT = (
    "Mietvertrag\n\nzwischen Herrn Paul Roth (nachfolgend Vermieter) und Frau Erika Beispiel (nachfolgend Mieter)\n"
    "§ 1 Mietsache\nVermietet wird die Wohnung im 3. OG links.\n§ 2 Mietzeit und Kündigung\n"
    "Das Mietverhältnis beginnt am 1. April und läuft auf unbestimmte Zeit.\n"
    "Leipzig\n12. März 2018\nUnterschrift Vermieter     Unterschrift Mieter"
)


def test_unsure_classification_keeps_the_source_and_sets_review(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[
        {"name": "contracts", "match": {"doctype": "contract"}, "formats": ["txt", "json"],
         "destination": str(tmp_path / "out"), "source": "archive", "archive_to": str(tmp_path / "archive")},
        {"name": "rest", "formats": ["txt", "json"], "destination": str(tmp_path / "rest")},
    ])
    unsure = docgen.make_pdf(tmp_path / "inbox" / "hinweis.pdf", [UNSURE])
    sure = docgen.make_pdf(tmp_path / "inbox" / "mietvertrag.pdf", [CONTRACT])
    # --apply-source-action: the route's archive applies, as in the daemon (once leaves its files otherwise)
    r = run_cli("once", "--jsonl", "--apply-source-action", str(unsure), str(sure), "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    recs = {Path(x["source"]).name: x for x in map(json.loads, r.stdout.splitlines())}
    assert recs["hinweis.pdf"]["doctype"] == recs["mietvertrag.pdf"]["doctype"] == "contract"
    assert recs["hinweis.pdf"]["route"] == recs["mietvertrag.pdf"]["route"] == "contracts"

    # just at the threshold: the source stays where it was dropped, the sidecar asks for review
    assert unsure.is_file() and not (tmp_path / "archive" / "hinweis.pdf").exists()
    side = json.loads((tmp_path / "out" / "hinweis.json").read_text(encoding="utf-8"))
    assert side["archived_to"] is None and side["review"] is True
    assert len(side["review_reasons"]) == 1 and "unsure" in side["review_reasons"][0]
    assert side["classification"] == {"doctype": "contract", "score": 3.0, "threshold": 3.0, "margin": 0.0,
                                      "min_margin": 1.5, "confident": False}

    # a contract with contract language: archived as the route says, nothing to review
    assert not sure.exists() and (tmp_path / "archive" / "mietvertrag.pdf").is_file()
    side = json.loads((tmp_path / "out" / "mietvertrag.json").read_text(encoding="utf-8"))
    assert side["review"] is False and side["review_reasons"] == []
    assert side["classification"]["confident"] is True and side["classification"]["margin"] >= 1.5
    assert side["doc_date"] == "2018-03-12"  # "12. März 2018" alone on a line of the text layer
