"""``ocr-daemon run --engine vllm`` end to end on the GPU: real PDFs and images in, outputs and
sidecars out, journal states right, the Pixtral patch in the daemon's engine core, and a kill -9
mid-run followed by a restart loses nothing: every page of every document comes back once."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from PIL import Image, ImageDraw

from daemon.engines.pixtral_patch import read_marks, resolve_mode
from gpu.gpushare import gpu_slice  # tests/ is on sys.path (tests/conftest.py)

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]


def make_pdf(path: Path, pages: int, label: str) -> None:
    import pymupdf

    doc = pymupdf.open()
    for i in range(pages):
        p = doc.new_page(width=595, height=842)
        for k in range(30):
            p.insert_text((50, 60 + k * 24), f"{label} page {i + 1} line {k}: invoice total 1.234,56 EUR", fontsize=11)
    doc.save(str(path))


def make_image(path: Path, label: str, fmt: str, frames: int = 1) -> None:
    ims = []
    for f in range(frames):
        im = Image.new("RGB", (1240, 1754), "white")
        d = ImageDraw.Draw(im)
        for k in range(40):
            d.text((60, 60 + k * 40), f"{label} frame {f} line {k} Rechnung Betrag", fill="black")
        ims.append(im)
    if frames > 1:
        ims[0].save(path, format=fmt, save_all=True, append_images=ims[1:])
    else:
        ims[0].save(path, format=fmt)


def write_config(tmp: Path, model: Path) -> Path:
    cfg = {
        "daemon": {"state_dir": str(tmp / "state"), "failed_dir": str(tmp / "failed"), "workers": 4,
                   "render_workers": 2, "rescan_interval": 5, "log_level": "INFO", "http": None},
        "engine": {"kind": "vllm", "model": str(model), "sampling": {"max_tokens": 32}, "text_layer": "ocr",
                   "vllm": {"load_format": "dummy", **gpu_slice(), "hang_timeout": 120},
                   "debug": {"pixtral_marker": str(tmp / "pixtral.jsonl")}},
        "inboxes": [{"path": str(tmp / "inbox"), "stability_delay": 0.5}],
        "routes": [{"name": "all", "formats": ["txt", "md", "json"], "destination": str(tmp / "out")}],
    }
    for d in ("inbox", "out", "state", "failed"):
        (tmp / d).mkdir(exist_ok=True)
    p = tmp / "rules.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


class Daemon:
    def __init__(self, conf: Path, log: Path) -> None:
        self.log = log
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        self.fh = open(log, "a")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(conf), "--engine", "vllm"],
                                     cwd=str(ROOT), env=env, stdout=self.fh, stderr=subprocess.STDOUT, start_new_session=True)
        self.mark = log.stat().st_size if log.exists() else 0

    def wait_ready(self, timeout: float = 600) -> None:
        end = time.time() + timeout
        while time.time() < end:
            if "initial scan" in self.log.read_text()[self.mark:]:
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited {self.proc.returncode}:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.5)
        raise AssertionError("daemon not ready in time")

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)  # the whole service (daemon + engine core + renderers)
        self.proc.wait(30)
        self.fh.close()

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(180)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = -9
        self.fh.close()
        return rc


def sidecars(out: Path) -> dict[str, dict]:
    res = {}
    for p in out.rglob("*.json"):
        res[p.stem] = json.loads(p.read_text())
    return res


def wait_for(pred, timeout: float, what: str, log: Path) -> None:  # type: ignore[no-untyped-def]
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.5)
    raise AssertionError(f"timeout waiting for {what}\n{log.read_text()[-4000:]}")


def journal_states(tmp: Path) -> dict[str, str]:
    con = sqlite3.connect(tmp / "state" / "journal.sqlite3")
    try:
        return {Path(p).name: s for p, s in con.execute("select path, state from documents")}
    finally:
        con.close()


def check_document(out: Path, stem: str, source: Path, pages: int) -> None:
    """The outputs of one document: its sidecar names this very file (sha256), every page once,
    in order, rendered at the engine's size, each with the engine's (non-empty) text."""
    car = json.loads((out / f"{stem}.json").read_text())
    assert car["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest(), f"{stem}: the sidecar is not this file's"
    assert str(car["engine"]).startswith("vllm:"), car["engine"]
    assert [p["index"] for p in car["pages"]] == list(range(pages)), f"{stem}: pages {[p['index'] for p in car['pages']]}"
    assert all(max(p["size"]) <= 1540 for p in car["pages"]), car["pages"]
    texts = car["page_texts"]
    assert len(texts) == pages and all(t.strip() for t in texts), f"{stem}: an empty page text"
    assert (out / f"{stem}.md").read_text().strip() and (out / f"{stem}.txt").exists()


def test_daemon_vllm_end_to_end_and_kill9(tmp_path: Path, dummy_model: Path) -> None:
    conf = write_config(tmp_path, dummy_model)
    log = tmp_path / "daemon.log"
    inbox, out = tmp_path / "inbox", tmp_path / "out"
    stage = tmp_path / "stage"
    stage.mkdir()
    make_pdf(stage / "report.pdf", 3, "report")
    make_pdf(stage / "letter.pdf", 1, "letter")
    make_image(stage / "scan.png", "scan", "PNG")
    make_image(stage / "photo.jpg", "photo", "JPEG")
    make_image(stage / "fax.tif", "fax", "TIFF", frames=2)
    expect_pages = {"report": 3, "letter": 1, "scan": 1, "photo": 1, "fax": 2}

    d = Daemon(conf, log)
    try:
        d.wait_ready()
        for p in stage.iterdir():
            os.rename(p, inbox / p.name)
        wait_for(lambda: set(sidecars(out)) >= set(expect_pages), 600, "first batch outputs", log)
        cars = sidecars(out)
        for stem, n in expect_pages.items():
            car = cars[stem]
            assert str(car["engine"]).startswith("vllm:"), car
            assert len(car["pages"]) == n if isinstance(car["pages"], list) else car["pages"] == n
            assert (out / f"{stem}.md").read_text().strip()
            assert (out / f"{stem}.txt").exists()
        states = journal_states(tmp_path)
        assert {states[n] for n in ("report.pdf", "letter.pdf", "scan.png", "photo.jpg", "fax.tif")} == {"done"}
        # the daemon's engine core (not the daemon process) ran the patched Pixtral encoder
        marks = read_marks(tmp_path / "pixtral.jsonl")
        assert marks and {m.mode for m in marks} == {resolve_mode("varlen")}, marks
        assert d.proc.pid not in {m.pid for m in marks}

        # second batch: kill -9 the whole service once the first of these documents is out
        batch = {f"big{i}": 6 for i in range(12)}
        for stem, n in batch.items():
            make_pdf(stage / f"{stem}.pdf", n, stem)
        for stem in batch:
            os.rename(stage / f"{stem}.pdf", inbox / f"{stem}.pdf")
        wait_for(lambda: any(s in sidecars(out) for s in batch), 600, "first big output", log)
        done_before = [s for s in batch if s in sidecars(out)]
        d.kill9()
        assert len(done_before) < len(batch), "everything finished before the kill; the test proves nothing"
    finally:
        if d.proc.poll() is None:
            d.kill9()

    d2 = Daemon(conf, log)
    try:
        d2.wait_ready()
        wait_for(lambda: set(sidecars(out)) >= set(batch) | set(expect_pages), 900, "all outputs after restart", log)
        # nothing processed twice: one sidecar per source, no suffixed duplicates
        names = sorted(p.name for p in out.iterdir())
        assert len([n for n in names if n.endswith(".json")]) == len(batch) + len(expect_pages), names
        states = journal_states(tmp_path)
        assert all(states[f"{s}.pdf"] == "done" for s in batch), states
        for s, n in batch.items():
            check_document(out, s, inbox / f"{s}.pdf", n)
        for s, n in expect_pages.items():
            src = next(inbox.glob(f"{s}.*"))
            check_document(out, s, src, n)
    finally:
        rc = d2.stop()
    assert rc == 0, log.read_text()[-3000:]
    assert not any((tmp_path / "failed").iterdir())
