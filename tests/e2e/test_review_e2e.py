"""The quality check end to end (issue 32), real Tesseract through ``ocr-daemon once``: a page
read as junk (a page of text under heavy noise) is flagged ``low_confidence`` with its figure,
its document says ``review: true`` with the reason, and ``match.review`` routes it to a "needs
review" folder; a clean page is not flagged, its outputs' checks pass and it goes the usual way."""

from __future__ import annotations

import json
from pathlib import Path

import qualitygen
from conftest import run_cli, write_rules
from corpus import DOCTYPE_TEXTS

LETTER = DOCTYPE_TEXTS["letter"]["en"]


def test_a_junk_page_is_flagged_and_routed_for_review_a_clean_one_is_not(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[
        {"name": "needs-review", "match": {"review": True}, "destination": "review", "formats": ["txt", "json", "pdf"]},
        {"name": "all", "destination": "out", "formats": ["txt", "json", "pdf"]},
    ])
    inbox = tmp_path / "inbox"
    qualitygen.page(LETTER, "noise", seed=2).save(inbox / "noisy.png")
    qualitygen.page(LETTER, "clean", seed=1).save(inbox / "clean.png")
    r = run_cli("once", str(inbox / "noisy.png"), str(inbox / "clean.png"), "--config", str(cfg))
    assert r.returncode == 0, r.stderr

    noisy = json.loads((tmp_path / "review" / "noisy.json").read_text(encoding="utf-8"))
    assert noisy["route"] == "needs-review" and noisy["review"] is True
    [page] = noisy["pages"]
    assert "low_confidence" in page["flags"] and page["confidence"]["value"] < 50
    assert noisy["review_reasons"][0] == f"page 1: low_confidence (conf {page['confidence']['value']:.0f})"
    assert "needs review: page 1: low_confidence" in r.stderr  # and in the log

    clean = json.loads((tmp_path / "out" / "clean.json").read_text(encoding="utf-8"))
    assert clean["route"] == "all" and clean["review"] is False and clean["review_reasons"] == []
    [page] = clean["pages"]
    assert page["flags"] == [] and page["confidence"]["value"] >= 80
    # every output of the clean page was checked, and holds its words
    assert {c["check"] for c in page["checks"]} == {"pdf_text", "txt_text"}
    assert all(c["ok"] for c in page["checks"])
    assert clean["pdf"]["pages"][0]["placement"] == "words" and clean["pdf"]["pages"][0]["text_found"] >= 0.9
    assert "checks" in clean["timings"]
