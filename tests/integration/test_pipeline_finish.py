"""The pipeline's finishing stage (classify, route, outputs, journal) with its CPU work in a
render worker process (``Pipeline._prepare``), and in the daemon's process when the pool cannot.

Real journal, real render pool (forkserver workers), real files in ``tmp_path``; the engine is a
stand-in that only answers what the finishing stage reads of it (its name, Markdown or not).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pagerecords import ocr_page

from daemon.config import Config
from daemon.journal.store import Journal
from daemon.models import Document
from daemon.pagerecord import PageGeometry, PageResult
from daemon.service.outputs import prepare_outputs
from daemon.service.pipeline import Pipeline
from daemon.service.timings import Timings

PAGES = [
    "# Rechnung Nr. 2024-118\n\nSehr geehrte Damen und Herren, wir berechnen Ihnen die folgenden Leistungen "
    "für den Monat März. Die Zahlung ist innerhalb von vierzehn Tagen ohne Abzug fällig.\n\n"
    "<table><tr><th>Position</th><th>Betrag</th></tr><tr><td>Beratung</td><td>1.200,00 €</td></tr>"
    "<tr><td>Reisekosten</td><td>310,50 €</td></tr></table>\n",
    "Gesamtbetrag: 1.510,50 €, darin enthalten $19\\,\\%$ Umsatzsteuer.\n\nMit freundlichen Grüßen\n",
]


class _Engine:
    name = "vllm"
    output_is_markdown = True
    max_in_flight = 64


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Pipeline]:
    cfg = Config.model_validate({
        "daemon": {"state_dir": str(tmp_path / "state"), "failed_dir": str(tmp_path / "failed")},
        "inboxes": [{"path": str(tmp_path / "inbox")}],
        "routes": [{"name": "all", "formats": ["txt", "md", "json"], "destination": str(tmp_path / "out"),
                    "source": "keep"}],
    })
    (tmp_path / "inbox").mkdir()
    journal = Journal(cfg.daemon.state_dir)
    p = Pipeline(cfg, journal, _Engine(), render_workers=1)  # type: ignore[arg-type]
    yield p
    p.close()
    journal.close()


def _claim(pipe: Pipeline, name: str, body: bytes) -> Document:
    src = Path(pipe.cfg.inboxes[0].path) / name
    src.write_bytes(body)
    adm = pipe.journal.admit(src, "inbox")
    assert adm.document is not None
    doc = pipe.journal.claim(adm.document.id)
    assert doc is not None
    return doc


def _pages() -> list[PageResult]:
    """``PAGES`` as the VLM's finished pages."""
    geometry = PageGeometry(size=(1176, 1540), source_size=(1176, 1540), script="Latin")
    return [ocr_page(i, t, "vllm", markdown=True, seconds=0.5, geometry=geometry)
            for i, t in enumerate(PAGES)]


def _finish(pipe: Pipeline, doc: Document) -> Any:
    return pipe._finish(doc, doc.path, _pages(), Timings(count=0.5, ocr=1.0), 0.0)


def test_worker_prepares_what_the_daemon_process_would(pipe: Pipeline, caplog: pytest.LogCaptureFixture) -> None:
    doc = _claim(pipe, "rechnung.pdf", b"%PDF-1.4 one")
    caplog.set_level(logging.INFO, logger="daemon.service.pipeline")
    via_worker = pipe._prepare(doc, doc.path, _pages())
    assert "finishing in the daemon's process" not in caplog.text  # the worker ran it
    here = prepare_outputs(pipe.cfg, _pages(), doc.path, doc.inbox, True, datetime.now())
    assert via_worker.cls.language == here.cls.language == "de"
    assert via_worker.cls.has_table and via_worker.decision.name == here.decision.name == "all"
    assert via_worker.body == here.body
    assert sorted(via_worker.body) == ["rechnung.json", "rechnung.md", "rechnung.txt"]
    assert set(via_worker.seconds) == {"classify", "render", "checks"}


def test_finish_writes_named_outputs_and_records_done(pipe: Pipeline) -> None:
    first = _claim(pipe, "scan.pdf", b"%PDF-1.4 first")
    out1 = _finish(pipe, first)
    assert out1.state == "done"
    dest = Path(pipe.cfg.routes[0].destination)
    assert sorted(p.name for p in out1.outputs) == ["scan.json", "scan.md", "scan.txt"]
    assert "Reisekosten" in (dest / "scan.txt").read_text() and "<table" not in (dest / "scan.txt").read_text()
    side = json.loads((dest / "scan.json").read_text())
    # the JSON is rendered again once names are known: it lists the set it belongs to
    assert [Path(p).name for p in side["outputs"]] == ["scan.txt", "scan.md", "scan.json"]
    # those known when the JSON is written, in phase order, rounded to milliseconds
    assert list(side["timings"]) == ["count", "ocr", "classify", "checks"]
    assert all(round(v, 3) == v for v in side["timings"].values()) and side["timings"]["ocr"] == 1.0
    assert side["language"] == "de"
    row = pipe.journal.get(first.id)
    assert row is not None and row.state == "done"
    assert list(row.timings) == ["count", "ocr", "classify", "checks", "write", "total"]
    # a second source with the same stem gets its own names; the first set is untouched
    second = _claim(pipe, "scan.jpg", b"\xff\xd8 second")
    out2 = _finish(pipe, second)
    assert sorted(p.name for p in out2.outputs) == ["scan-1.json", "scan-1.md", "scan-1.txt"]
    assert [Path(p).name for p in json.loads((dest / "scan-1.json").read_text())["outputs"]] == [
        "scan-1.txt", "scan-1.md", "scan-1.json"]
    assert json.loads((dest / "scan.json").read_text())["document_id"] == first.id


def test_finish_falls_back_to_the_daemon_process_when_the_pool_is_gone(
    pipe: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    doc = _claim(pipe, "late.pdf", b"%PDF-1.4 late")
    pipe.pool.close()  # as while the daemon stops: finishing must still complete
    caplog.set_level(logging.INFO, logger="daemon.service.pipeline")
    out = _finish(pipe, doc)
    assert out.state == "done"
    assert "finishing in the daemon's process" in caplog.text
    assert sorted(p.name for p in out.outputs) == ["late.json", "late.md", "late.txt"]
    assert all(p.exists() for p in out.outputs)


def test_render_workers_run_at_the_configured_nice_steps(pipe: Pipeline, tmp_path: Path) -> None:
    assert pipe.pool.nice == 0  # the default: the daemon's own priority
    pinned = Pipeline(pipe.cfg.model_copy(update={"daemon": pipe.cfg.daemon.model_copy(update={"render_nice": 3})}),
                      pipe.journal, _Engine(), render_workers=1)  # type: ignore[arg-type]
    try:
        assert pinned.pool.nice == 3
    finally:
        pinned.close()


def _language_model_loaded() -> bool:
    """Run in a render worker: whether classification's language model is loaded there."""
    import daemon.language

    return daemon.language._identifier is not None


def test_warm_loads_the_language_model_in_the_render_worker(pipe: Pipeline) -> None:
    # one worker (the fixture): what it reports is the state of the worker that finishes documents
    assert pipe.pool.submit(_language_model_loaded).result(timeout=60) is False
    pipe.warm()
    assert pipe.pool.submit(_language_model_loaded).result(timeout=60) is True
