"""The ``pdf`` output with the vLLM engine on the GPU (dummy-weight LightOnOCR-2-1B: the text is
noise, every code path is real): ``ocr-daemon run --engine vllm`` writes a searchable PDF whose
invisible text layer exists, is placed at line level or better (the sidecar's ``pdf.pages``),
and lies on the page's text lines (line boxes from the render workers' layout analysis).

Modelled on test_b_daemon_gpu.py (same daemon wrapper and dummy model fixture).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pymupdf
import pytest
import yaml
from PIL import Image, ImageDraw, ImageFont

from gpu.gpushare import gpu_slice  # tests/ is on sys.path (tests/conftest.py)
from gpu.test_b_daemon_gpu import Daemon, wait_for

pytestmark = pytest.mark.gpu

TOP, STEP, LINES = 120, 60, 20  # where the test pages' text lines are (px of a 1240x1754 page)


def make_scan(path: Path, label: str, frames: int = 1) -> None:
    """Image pages with LINES lines of large text at known heights (no text layer)."""
    try:
        font: ImageFont.ImageFont | ImageFont.FreeTypeFont = ImageFont.truetype("DejaVuSans.ttf", 30)
    except OSError:
        font = ImageFont.load_default(30)
    ims = []
    for f in range(frames):
        im = Image.new("RGB", (1240, 1754), "white")
        d = ImageDraw.Draw(im)
        for k in range(LINES):
            d.text((80, TOP + k * STEP), f"{label} {f} line {k}: Rechnung Betrag total 1.234,56 EUR", fill="black", font=font)
        ims.append(im)
    ims[0].save(path, save_all=frames > 1, append_images=ims[1:], resolution=150.0)


def test_pdf_output_vllm(tmp_path: Path, dummy_model: Path) -> None:
    cfg = {
        "daemon": {"state_dir": str(tmp_path / "state"), "failed_dir": str(tmp_path / "failed"), "workers": 2,
                   "render_workers": 2, "rescan_interval": 5, "http": None},  # no port shared with other GPU tests at once
        # 512 tokens of noise per page, exactly (ignore_eos, page guards off): about as much text as
        # the page's lines hold. With the guards on (device run of 2026-12-01 06:05, e0ec28e) the
        # placement fell back to blocks: the text's length was outside the band pdflayout trusts
        # for the 40-48 lines found, most likely because noise never ends, so every page ran to
        # max_tokens and was banded (its text recognised again in two or more bands); the true
        # text of these pages is 1.7 characters per em of line, well inside the band.
        "engine": {"kind": "vllm", "model": str(dummy_model), "sampling": {"max_tokens": 512},
                   "debug": {"ignore_eos": True, "page_guards": False},
                   "vllm": {"load_format": "dummy", **gpu_slice(), "hang_timeout": 120}},
        "inboxes": [{"path": str(tmp_path / "inbox"), "stability_delay": 0.5}],
        "routes": [{"name": "all", "formats": ["pdf", "json"], "destination": str(tmp_path / "out")}],
    }
    for d in ("inbox", "out", "state", "failed", "stage"):
        (tmp_path / d).mkdir()
    conf = tmp_path / "rules.yaml"
    conf.write_text(yaml.safe_dump(cfg))
    stage, inbox, out = tmp_path / "stage", tmp_path / "inbox", tmp_path / "out"
    make_scan(stage / "scan.png", "scan")
    make_scan(stage / "fax.tif", "fax", frames=2)
    scan_pdf = pymupdf.open()
    page = scan_pdf.new_page(width=595, height=842)
    page.insert_image(page.rect, filename=str(stage / "scan.png"))
    scan_pdf.save(stage / "scanned.pdf")
    scan_pdf.close()
    expect = {"scan": 1, "fax": 2, "scanned": 1}

    log = tmp_path / "daemon.log"
    d = Daemon(conf, log)
    try:
        d.wait_ready()
        for p in stage.iterdir():
            os.rename(p, inbox / p.name)
        wait_for(lambda: all((out / f"{s}.json").exists() for s in expect), 600, "pdf outputs", log)
    finally:
        rc = d.stop()
    assert rc == 0, log.read_text()[-3000:]
    for stem, n in expect.items():
        car = json.loads((out / f"{stem}.json").read_text())
        assert str(car["engine"]).startswith("vllm:")
        placements = [p["placement"] for p in car["pdf"]["pages"]]
        assert len(placements) == n and set(placements) <= {"lines", "words"}, car["pdf"]
        with pymupdf.open(out / f"{stem}.pdf") as doc:
            assert doc.page_count == n
            for pg in doc:
                words = pg.get_text("words")
                assert len(words) >= LINES, f"{stem}: the text layer is missing or thin"
                # every word of the layer lies on the band of the page's drawn text lines
                scale = pg.rect.height / 1754
                top, bottom = (TOP - 10) * scale, (TOP + LINES * STEP + 10) * scale
                inside = sum(top <= (w[1] + w[3]) / 2 <= bottom for w in words)
                assert inside / len(words) >= 0.95, (stem, inside, len(words))
