"""``ocr-daemon once --jsonl``: one JSON object per file on stdout, for batch scripts."""

from __future__ import annotations

import json
from pathlib import Path

import docgen
from conftest import run_cli, write_rules

KEYS = {"source", "state", "language", "doctype", "route", "outputs", "pages", "seconds", "error", "id", "source_now"}


def test_once_jsonl_prints_one_object_per_file(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out"}])
    good = docgen.make_pdf(tmp_path / "inbox" / "letter.pdf",
                           ["Dear Mr Smith,\nThank you for your letter of 3 March.\nYours sincerely,\nJane Doe"] * 2,
                           scanned=True)
    bad = tmp_path / "inbox" / "broken.pdf"
    bad.write_bytes(b"this is not a PDF\n" * 10)
    missing = tmp_path / "inbox" / "missing.pdf"
    r = run_cli("once", "--jsonl", str(good), str(bad), str(missing), "--config", str(cfg))
    assert r.returncode == 1, r.stderr  # some failed
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [set(x) for x in recs] == [KEYS] * 3, r.stdout
    ok, failed, gone = recs
    assert ok["source"] == str(good) and ok["state"] == "done" and ok["error"] is None
    # no doctypes: section in the config, so the shipped doctypes apply: a letter
    assert (ok["language"], ok["doctype"], ok["route"], ok["pages"]) == ("en", "letter", "all", 2)
    assert sorted(Path(o).name for o in ok["outputs"]) == ["letter.json", "letter.md", "letter.txt"]
    assert all(Path(o).is_file() for o in ok["outputs"]) and ok["seconds"] > 0
    assert failed["state"] == "failed" and "not a PDF" in failed["error"]
    # `once` leaves the files given to it in place (--apply-source-action moves them as the daemon does)
    assert failed["source_now"] is None and bad.is_file() and not (tmp_path / "failed").exists()
    assert gone["state"] == "missing" and gone["error"] == "no such file" and gone["outputs"] == []

    # Done already: the same outputs, nothing OCRed again.
    r = run_cli("once", "--jsonl", str(good), "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    again = json.loads(r.stdout)
    assert again["state"] == "done" and again["outputs"] == ok["outputs"] and again["id"] == ok["id"]
