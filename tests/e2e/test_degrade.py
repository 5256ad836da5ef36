"""Degrade, don't fail: a forced failure of each optional stage leaves the document done, with its
text, every output written, and the stage recorded as degraded (daemon/stages.py).

Each test runs the real ``ocr-daemon once --jsonl`` (Tesseract, render workers, writers) with
``$OCR_DAEMON_FAIL_STAGES`` naming one optional stage, so that stage raises inside the process
that runs it (render worker, engine thread or finishing worker). One test runs the daemon and
reads the log line and the ``/metrics`` counter of a degraded stage.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import docgen
import layoutgen
import pytest
from conftest import REPO, daemon_env, http_url, sidecars, wait_for, with_http, write_rules

from daemon.stages import OPTIONAL, Stage

EVERY_FORMAT = ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]

#: Per optional stage: the document that makes the pipeline run it, and where the record lands
#: ("page": ``pages[].degraded``; "document": the sidecar's ``degraded``).
CASES: dict[Stage, tuple[str, str]] = {
    Stage.TABLES: ("table_scan", "page"),
    Stage.ORIENTATION: ("sideways_scan", "page"),
    Stage.CROP: ("bordered_scan", "page"),
    Stage.DESKEW: ("skewed_scan", "page"),
    Stage.LANGUAGE_REREAD: ("german_scan", "page"),
    Stage.LOST_TEXT: ("scanned_pdf", "page"),
    Stage.TEXT_LAYER_TABLES: ("born_digital", "page"),
    Stage.TEXT_LAYER_LAYOUT: ("born_digital", "page"),
    Stage.PDF_ALIGNMENT: ("scanned_pdf", "page"),
    Stage.PDF: ("scanned_pdf", "document"),
    Stage.DATES: ("born_digital", "document"),
    Stage.CLASSIFY: ("born_digital", "document"),
    Stage.PDF_TEXT: ("scanned_pdf", "page"),
    Stage.QUALITY: ("scanned_pdf", "document"),
}


def test_every_optional_stage_has_a_case() -> None:
    assert set(CASES) == set(OPTIONAL)


def _make(kind: str, folder: Path) -> tuple[Path, list[str]]:
    """The document of ``kind`` and words its text must hold whatever stage fails."""
    de = docgen.SAMPLES["de"]
    if kind == "table_scan":
        img = layoutgen.ruled_table_image(
            [["Artikel", "Menge", "Preis"], ["Papier", "3", "12,50"], ["Toner", "1", "89,00"]]
        )
        path = folder / "tabelle.png"
        img.save(path)
        return path, ["Papier", "Toner"]
    if kind == "sideways_scan":
        return docgen.make_image(folder / "sideways.png", docgen.SAMPLES["en"], rotate=90), ["invoice"]
    if kind == "bordered_scan":
        return docgen.make_image(folder / "border.png", docgen.SAMPLES["en"], dark_border=60), ["invoice"]
    if kind == "skewed_scan":  # 3 degrees askew: read well enough either way, so the words hold
        return docgen.make_image(folder / "askew.png", docgen.SAMPLES["en"], rotate=3), ["invoice"]
    if kind == "german_scan":
        return docgen.make_image(folder / "brief.png", de), ["Rechnung", "Bestellung"]
    if kind == "born_digital":
        return docgen.make_pdf(folder / "born.pdf", [de + "\n\nDatum: 12.03.2024", docgen.SAMPLES["fr"]]), ["Rechnung", "Facture"]
    if kind == "scanned_pdf":
        return docgen.make_pdf(folder / "scan.pdf", [docgen.SAMPLES["en"]], scanned=True), ["invoice"]
    raise AssertionError(kind)


def _once(cfg: Path, files: list[Path], fail: str) -> list[dict[str, Any]]:
    env = daemon_env()
    env["OCR_DAEMON_FAIL_STAGES"] = fail
    r = subprocess.run(
        [sys.executable, "-m", "daemon", "once", "--jsonl", *map(str, files), "--config", str(cfg)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.mark.parametrize("stage", sorted(CASES, key=lambda s: s.value), ids=lambda s: s.value)
def test_forced_failure_of_an_optional_stage_degrades(stage: Stage, tmp_path: Path) -> None:
    kind, level = CASES[stage]
    cfg = write_rules(tmp_path, routes=[{"name": "all", "formats": EVERY_FORMAT, "destination": "out"}])
    src, words = _make(kind, tmp_path / "inbox")
    (rec,) = _once(cfg, [src], stage.value)
    assert rec["state"] == "done", rec
    names = {Path(o).suffix for o in rec["outputs"]}
    want = {".txt", ".md", ".json", ".xlsx", ".tex"} | ({".pdf"} if stage != Stage.PDF else set())
    assert want <= names, rec["outputs"]
    text = (tmp_path / "out" / f"{src.stem}.txt").read_text(encoding="utf-8")
    assert all(w.lower() in text.lower() for w in words), text  # the document kept its text
    (side,) = [s for s in sidecars(tmp_path / "out") if s["source"] == str(src)]
    recorded = [d for p in side["pages"] for d in p["degraded"]] if level == "page" else side["degraded"]
    assert any(d["stage"] == stage.value and "forced failure" in d["error"] for d in recorded), side
    if stage == Stage.PDF:
        assert "could not be made" in side["pdf"]["error"]
    if stage == Stage.CLASSIFY:
        assert (side["language"], side["doctype"]) == ("unknown", "other")
    if stage == Stage.DATES:
        assert side["doc_date"] is None and side["language"] == "de"
    if stage in (Stage.PDF_TEXT, Stage.QUALITY):  # an output check that could not run is never a silent pass
        assert side["review"] is True and side["review_reasons"], side


def test_nothing_degraded_without_faults(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[{"name": "all", "formats": EVERY_FORMAT, "destination": "out"}])
    files = [_make(k, tmp_path / "inbox")[0] for k in ("born_digital", "scanned_pdf", "table_scan")]
    recs = _once(cfg, files, "")
    assert [r["state"] for r in recs] == ["done"] * 3
    for side in sidecars(tmp_path / "out"):
        assert side["degraded"] == [] and all(p["degraded"] == [] for p in side["pages"]), side


def test_daemon_logs_and_counts_a_degraded_stage(tmp_path: Path, start_daemon: Any, monkeypatch: Any) -> None:
    """The log names the document and the page; /metrics counts the stage."""
    monkeypatch.setenv("OCR_DAEMON_FAIL_STAGES", "tables")
    cfg = with_http(write_rules(tmp_path, routes=[{"name": "all", "formats": ["txt", "json"], "destination": "out"}]))
    d = start_daemon(cfg)
    d.wait_ready()
    url = http_url(d)
    (tmp_path / "stage").mkdir()
    src, _ = _make("table_scan", tmp_path / "stage")
    src.rename(tmp_path / "inbox" / src.name)
    wait_for(lambda: (tmp_path / "out" / "tabelle.json").exists(), 120, "the outputs")
    d.wait_log("page 1: tables stage degraded: InjectedFault")
    assert "doc-1 page 1: tables stage degraded" in d.log()
    metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    assert 'ocr_daemon_degraded_total{stage="tables"} 1.0' in metrics, metrics
    assert 'ocr_daemon_degraded_total{stage="orientation"} 0.0' in metrics
    d.stop()
