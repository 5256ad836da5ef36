"""Tables keep the words (issue 32, item 3), end to end through ``ocr-daemon once`` with every
text format: a German monthly timesheet (a header and 31 day rows, weekends "Ruhetag") born
digital and scanned at 200 dpi as a JPEG comes out as one CSV of 31 rows under its header, its
rows once each in the txt, its cells holding the page's words; a table read that loses words
stays plain text and the sidecar says why; a two-column table of contents is no table."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import tablegen
from conftest import run_cli, write_rules

from daemon.pages.tablecheck import tokens

FORMATS = ["txt", "md", "csv", "xlsx", "json"]


def _once(tmp: Path, src: Path) -> tuple[dict[str, Any], Path]:
    cfg = write_rules(tmp, routes=[{"name": "all", "destination": "out", "formats": FORMATS}],
                      engine={"kind": "tesseract", "tesseract": {"threads": 1, "languages": ["de", "en", "zh"]}})
    got = shutil.copy(src, tmp / "inbox" / src.name)
    r = run_cli("once", str(got), "--config", str(cfg), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    side = json.loads(next((tmp / "out").glob("*.json")).read_text(encoding="utf-8"))
    return side, tmp / "out"


def _csvs(out: Path) -> list[list[list[str]]]:
    return [list(csv.reader(io.StringIO(p.read_text(encoding="utf-8")))) for p in sorted(out.glob("*.csv"))]


def _timesheet_ok(out: Path, side: dict[str, Any], *, exact: bool) -> None:
    want = tablegen.timesheet_rows()
    tables = _csvs(out)
    assert len(tables) == 1, [t[:2] for t in tables]  # one table on the page: one CSV
    rows = [r for r in tables[0] if any(r)]
    assert rows[0] == want[0] and len(rows) == 32, rows[:3]  # the header kept, 31 day rows
    if exact:
        assert rows == want
    else:  # a scan: the weekdays and the weekends' "Ruhetag" on their rows
        assert [r[1] for r in rows[1:]] == [r[1] for r in want[1:]]
        assert [r[6] == "Ruhetag" for r in rows[1:]] == [r[6] == "Ruhetag" for r in want[1:]]
    # the cells hold the page's words: those of the table's cells, each as often as drawn
    cells = Counter(t for r in rows for c in r for t in tokens(c))
    drawn = Counter(t for r in want for c in r for t in tokens(c))
    assert sum((drawn - cells).values()) <= (0 if exact else 0.05 * sum(drawn.values()))
    # the txt has every day once: no row repeated
    txt = next(out.glob("*.txt")).read_text(encoding="utf-8")
    assert txt.count("Ruhetag") == sum(1 for r in want if r[6] == "Ruhetag")
    for r in want[1:]:
        if exact:
            assert txt.count(r[0]) == 1, r[0]
    assert not [d for p in side["pages"] for d in p["degraded"]]


@pytest.mark.parametrize("style", ["grid", "cells"])
def test_born_digital_timesheet_is_one_table(tmp_path: Path, style: str) -> None:
    pdf = tablegen.timesheet_pdf(tmp_path / f"stundenzettel-{style}.pdf", style)
    side, out = _once(tmp_path, pdf)
    _timesheet_ok(out, side, exact=True)


def test_scanned_timesheet_keeps_its_31_rows(tmp_path: Path) -> None:
    """The ruled form scanned at 200 dpi as a JPEG (0.4 degrees askew, noise): 31 rows under its
    header, every weekday and "Ruhetag" on its row."""
    pdf = tablegen.timesheet_pdf(tmp_path / "form.pdf", "grid")
    jpg = tablegen.scan_of(pdf, tmp_path / "stundenzettel.jpg", dpi=200, skew=0.4, noise=8)
    side, out = _once(tmp_path, jpg)
    _timesheet_ok(out, side, exact=False)


def test_a_table_that_loses_words_stays_text(tmp_path: Path) -> None:
    """Skewed by 1 degree, the grid's cells cut the form's words (a quarter of them lost): no CSV,
    the page read's text in the txt, and the sidecar says which table was left out and why."""
    pdf = tablegen.timesheet_pdf(tmp_path / "form.pdf", "grid")
    jpg = tablegen.scan_of(pdf, tmp_path / "schief.jpg", dpi=200, skew=1.0, noise=8)
    side, out = _once(tmp_path, jpg)
    assert _csvs(out) == []
    why = [d["error"] for p in side["pages"] for d in p["degraded"] if d["stage"] == "tables"]
    assert len(why) == 1 and "rejected" in why[0] and "words a plain read of its region has" in why[0], why
    txt = next(out.glob("*.txt")).read_text(encoding="utf-8")
    assert txt.count("Ruhetag") == 9 and "Samstag" in txt and "Dienstreise" in txt


@pytest.mark.parametrize("scanned", [False, True])
def test_two_column_table_of_contents_is_no_table(tmp_path: Path, scanned: bool) -> None:
    pdf = tablegen.toc_pdf(tmp_path / "inhalt.pdf")
    src = tablegen.scan_of(pdf, tmp_path / "inhalt.png", dpi=200) if scanned else pdf
    side, out = _once(tmp_path, src)
    assert _csvs(out) == []
    txt = next(out.glob("*.txt")).read_text(encoding="utf-8")
    assert "Contents" in txt and "Sales contracts" in txt
