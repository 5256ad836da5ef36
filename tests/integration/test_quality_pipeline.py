"""The quality check in the pipeline's finishing stage (real journal, render pool and files): a
page of symbol soup is flagged, the document routed by ``match.review``, its sidecar says why,
and ``/metrics`` counts the flagged page and the review document. The engine is a stand-in that
only answers what finishing reads of it (a VLM's name and Markdown output); the pages are what
a VLM returns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pagerecords import ocr_page

from daemon.config import Config
from daemon.journal.store import Journal
from daemon.pagerecord import PageGeometry
from daemon.service.metrics import METRICS
from daemon.service.pipeline import Pipeline
from daemon.service.timings import Timings

GOOD = ("Dear Ms Okafor,\n\nThank you for your letter of 4 March. The repairs to the roof will start on "
        "Monday and should be finished within two weeks.\n\nYours sincerely,\nPeter Lang")
SOUP = "i1l |' ~~ ,. _=- rnnl Wwvv. 'l, ;: | il1 :! %% .,' -_- Ii| mrnm ~-- ;. ||| ~~~ _-_ .:. ,,"


class _Engine:
    name = "vllm"
    output_is_markdown = True
    max_in_flight = 64


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[Pipeline]:
    cfg = Config.model_validate({
        "daemon": {"state_dir": str(tmp_path / "state"), "failed_dir": str(tmp_path / "failed")},
        "inboxes": [{"path": str(tmp_path / "inbox")}],
        "routes": [
            {"name": "needs-review", "match": {"review": True}, "formats": ["txt", "json"],
             "destination": str(tmp_path / "review")},
            {"name": "all", "formats": ["txt", "json"], "destination": str(tmp_path / "out")},
        ],
    })
    (tmp_path / "inbox").mkdir()
    journal = Journal(cfg.daemon.state_dir)
    p = Pipeline(cfg, journal, _Engine(), render_workers=1)  # type: ignore[arg-type]
    yield p
    p.close()
    journal.close()


def _finish(pipe: Pipeline, name: str, texts: list[str]) -> Path:
    src = Path(pipe.cfg.inboxes[0].path) / name
    src.write_bytes(b"%PDF-1.4 " + name.encode())
    adm = pipe.journal.admit(src, "inbox")
    assert adm.document is not None
    doc = pipe.journal.claim(adm.document.id)
    assert doc is not None
    geometry = PageGeometry(size=(1176, 1540), source_size=(1176, 1540), script="Latin")
    pages = [ocr_page(i, t, "vllm", markdown=True, geometry=geometry) for i, t in enumerate(texts)]
    out = pipe._finish(doc, src, pages, Timings(ocr=1.0), 0.0)
    assert out.state == "done" and out.outputs
    return next(p for p in out.outputs if p.suffix == ".json")


def _counter(name: str, **labels: str) -> float:
    return METRICS.registry.get_sample_value(name, labels) or 0.0


def test_a_junk_page_is_flagged_routed_for_review_and_counted(pipe: Pipeline, tmp_path: Path) -> None:
    flagged0 = _counter("ocr_daemon_pages_flagged_total", flag="low_confidence")
    review0 = _counter("ocr_daemon_documents_review_total")
    side = json.loads(_finish(pipe, "mixed.pdf", [GOOD, SOUP]).read_text(encoding="utf-8"))
    assert side["route"] == "needs-review" and side["review"] is True
    good, bad = side["pages"]
    assert good["flags"] == [] and good["confidence"]["value"] > 90
    assert bad["flags"] == ["low_confidence"] and bad["confidence"]["wordlike"] < 0.3
    assert side["review_reasons"] == [f"page 2: low_confidence (conf {bad['confidence']['value']:.0f})"]
    assert all(c["ok"] for c in good["checks"])  # the txt holds both pages' words
    assert _counter("ocr_daemon_pages_flagged_total", flag="low_confidence") == flagged0 + 1
    assert _counter("ocr_daemon_documents_review_total") == review0 + 1


def test_a_clean_document_is_not_flagged_nor_counted(pipe: Pipeline, tmp_path: Path) -> None:
    review0 = _counter("ocr_daemon_documents_review_total")
    path = _finish(pipe, "letter.pdf", [GOOD])
    side = json.loads(path.read_text(encoding="utf-8"))
    assert path.parent == tmp_path / "out" and side["route"] == "all"
    assert side["review"] is False and side["review_reasons"] == [] and side["pages"][0]["flags"] == []
    assert _counter("ocr_daemon_documents_review_total") == review0
