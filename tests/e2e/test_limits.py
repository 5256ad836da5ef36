"""Limits that protect without refusing books (issue 35): a long born-digital PDF goes through
with the default limits (its pages are read from the text layer, which ``engine.max_ocr_pages``
does not count), and ``once`` never moves the file it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
from conftest import run_cli, write_rules


def make_book(path: Path, n: int) -> Path:
    """A born-digital PDF of ``n`` pages, each with a heading and a sentence of real text."""
    doc = pymupdf.open()
    for i in range(n):
        page = doc.new_page(width=420, height=595)
        page.insert_text((50, 80), f"Chapter {i // 20 + 1}, page {i + 1}", fontsize=14)
        page.insert_text((50, 110), "The quick brown fox jumps over the lazy dog near the river bank.", fontsize=10)
    doc.save(str(path), garbage=3, deflate=True)
    doc.close()
    return path


def test_2000_page_born_digital_pdf_is_done_with_default_limits(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out", "formats": ["txt", "json"]}])
    book = make_book(tmp_path / "book.pdf", 2000)
    before = book.read_bytes()
    r = run_cli("once", "--jsonl", str(book), "--config", str(cfg), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads(r.stdout)
    assert rec["state"] == "done" and rec["pages"] == 2000, rec
    text = (tmp_path / "out" / "book.txt").read_text(encoding="utf-8")
    assert "page 1999" in text and "page 2000" in text
    side = json.loads((tmp_path / "out" / "book.json").read_text(encoding="utf-8"))
    assert len(side["pages"]) == 2000
    # `once` leaves the file given to it in place, untouched
    assert book.read_bytes() == before and rec["source_now"] is None
