"""Page progress of one document as the pipeline reports it: the log line at most every
``PROGRESS_LOG_EVERY`` seconds, the callback after every page, and ``Progress``'s figures."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from daemon.models import Document, Progress, format_duration
from daemon.service import pipeline


def test_progress_rate_eta_and_short_form() -> None:
    p = Progress.compute(doc_id=7, path=Path("/in/big.pdf"), inbox="in", pages_done=120, pages_total=300,
                         done_this_attempt=100, started=1000.0, now=1050.0)
    assert (p.resumed, p.pages_per_s) == (20, 2.0)
    assert p.eta_s == 90.0  # 180 pages left at 2 pages/s
    assert p.short() == "doc-7 120/300 2.00 p/s ETA 1m30s"
    assert Progress.compute(doc_id=1, path=Path("x"), inbox="i", pages_done=0, pages_total=None,
                            done_this_attempt=0, started=0, now=5).short() == "doc-1 0/? 0.00 p/s"
    assert [format_duration(s) for s in (4.4, 61, 3600 * 2 + 5 * 60)] == ["4s", "1m01s", "2h05m"]


def test_meter_logs_at_most_every_interval_and_calls_back_every_page(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pipeline, "PROGRESS_LOG_EVERY", 0.2)
    seen: list[Progress] = []
    doc = Document(id=3, path=Path("/in/scan.pdf"), inbox="in", size=1, mtime=0.0, sha256="x")
    caplog.set_level(logging.INFO, logger=pipeline.__name__)
    m = pipeline._Meter(doc, total=12, callback=seen.append)
    m.start(resumed=2)  # the Recognizer tells it, once the journal's pages are known
    for _ in range(10):
        time.sleep(0.05)
        m.page()
    lines = [r.getMessage() for r in caplog.records if "progress" in r.getMessage()]
    assert 1 <= len(lines) <= 3, lines  # 0.5 s of pages, a line at most every 0.2 s, none for the last page
    assert lines[0].startswith("doc-3 progress: ") and "/12 " in lines[0] and "p/s" in lines[0]
    assert [p.pages_done for p in seen] == list(range(2, 13))  # at start (resumed) and after each page
    assert seen[-1].resumed == 2 and seen[-1].pages_total == 12
