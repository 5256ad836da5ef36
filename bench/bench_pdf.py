"""CPU cost of the searchable PDF (the ``pdf`` output) per page, and its size against the scan.

Measures, on scan-like pages (A4 at 300 dpi, greyscale, paper grain, slight blur; de en fr sv zh ja):

- Tesseract path: ``write_pdf`` with the engine's word boxes (the word boxes themselves are read
  from the recognised page inside the engine: ``word_layout``, timed separately here);
- VLM path: ``find_lines`` (Tesseract layout analysis, no recognition) on the 1540 px engine
  image, plus ``write_pdf`` aligning Markdown text (the known page text, as a VLM returns it) to
  those lines; and from that, the CPU cores one GPU's 8 pages/s needs for it;
- size ratio output/input without PDF/A for JPEG and PNG scans and a scanned PDF (JPEG pages),
  and with PDF/A (informational: Ghostscript rewrites the file).

CPU time is ``time.process_time()`` of this single-threaded process (what a page costs on one
free core; the VM is shared, wall time is noisy). Usage:

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_pdf.py [--pages 6] [--out bench/results/2026-12-01/bench_pdf.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import docgen  # noqa: E402
import numpy as np  # noqa: E402
import pymupdf  # noqa: E402
from PIL import Image, ImageFilter  # noqa: E402
from renderopts import render_opts  # noqa: E402

from daemon.config import EngineCfg  # noqa: E402
from daemon.document.model import Document  # noqa: E402
from daemon.engines.base import PageRequest  # noqa: E402
from daemon.engines.tesseract import TesseractEngine  # noqa: E402
from daemon.pagerecord import EngineText, ImagePage, PageResult  # noqa: E402
from daemon.pages.orient import tessdata_dir  # noqa: E402
from daemon.pages.probe import page_count  # noqa: E402
from daemon.pages.textlayer import read_or_render  # noqa: E402
from daemon.tessapi import find_lines, word_layout  # noqa: E402
from daemon.writers.pdf import write_pdf  # noqa: E402
from daemon.writers.pdflayout import _tokens, place_text  # noqa: E402

LANGS = ["de", "en", "fr", "sv", "zh", "ja"]
GPU_PAGES_PER_S = 8.0


def scan_like(text: str, seed: int) -> Image.Image:
    img = docgen.text_image(text, width=2480, font_size=48).convert("L").filter(ImageFilter.GaussianBlur(0.8))
    rng = np.random.default_rng(seed)
    a = np.asarray(img, dtype=np.float32) * 0.92 + 12 + rng.normal(0, 6, (img.height, img.width))
    return Image.fromarray(a.clip(0, 255).astype(np.uint8), "L")


def page_text(lang: str) -> str:
    base = docgen.SAMPLES[lang]
    return "\n\n".join([base] * 4)  # a fuller page: ~4 paragraphs


def alignment_share(img_size: tuple[int, int], text: str, layout: object, engine_size: tuple[int, int]) -> float:
    """Share of the text's tokens (words; CJK characters) that ``place_text`` puts on the line
    where ``docgen.text_image`` (width 2480, 48 px font) drew them: the placed box's vertical
    centre inside that line's band. The text goes in as a VLM gives it: one line per paragraph."""
    font = docgen.font_for(text, 48)
    margin, line_h = max(20, 2480 // 12), int(48 * 1.5)
    truth: list[tuple[str, int]] = []
    for k, line in enumerate(docgen._wrap(text, font, 2480 - 2 * margin)):
        truth += [(t, k) for t in _tokens(line)]
    md = "\n\n".join(" ".join(p.split("\n")) for p in text.split("\n\n"))
    placed = place_text(md, layout, True, engine_size)  # type: ignore[arg-type]
    got = [(t, (w.box[1] + w.box[3]) / 2) for ln in placed.lines for w in ln.words for t in _tokens(w.text)]
    assert [t for t, _ in got] == [t for t, _ in truth], "tokens lost or reordered"
    scale = engine_size[1] / img_size[1]
    hits = sum((margin + k * line_h) * scale <= y <= (margin + (k + 1) * line_h) * scale
               for (_, y), (_, k) in zip(got, truth, strict=True))
    return hits / len(truth)


def cpu(fn, *a, **k):  # type: ignore[no-untyped-def]
    t0 = time.process_time()
    r = fn(*a, **k)
    return r, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=6)
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/2026-12-01/bench_pdf.json")
    args = ap.parse_args()
    langs = (LANGS * 4)[: args.pages]
    tmp = Path(tempfile.mkdtemp(prefix="bench-pdf-"))
    opts = render_opts(text_layer="ocr")  # every page rendered and recognised
    eng = TesseractEngine(EngineCfg(tesseract={"threads": 1}))
    eng.start()
    results: dict[str, object] = {"pages": args.pages, "languages": langs, "cpus": os.cpu_count()}
    try:
        # sources: one JPEG and one PNG file per page, and one scanned PDF of the JPEGs
        jpgs, pngs = [], []
        for k, lang in enumerate(langs):
            img = scan_like(page_text(lang), k)
            j, p = tmp / f"p{k}.jpg", tmp / f"p{k}.png"
            img.save(j, quality=80, dpi=(300, 300))
            img.save(p, dpi=(300, 300))
            jpgs.append(j)
            pngs.append(p)
        spdf = tmp / "scan.pdf"
        doc = pymupdf.open()
        for j in jpgs:
            doc.new_page(width=595, height=842).insert_image(pymupdf.Rect(0, 0, 595, 842), filename=str(j))
        doc.save(spdf)
        doc.close()

        def read(src: Path) -> tuple[list[PageResult], list[Image.Image]]:
            """The finished pages as the pipeline has them (render geometry, word boxes) and
            the engine images."""
            pages, imgs = [], []
            for i in range(page_count(src, opts)):
                pg = read_or_render(src, i, opts)
                assert isinstance(pg, ImagePage)
                answer = eng.recognize([PageRequest("doc-b", i, pg.image, script=pg.geometry.script)])[0]
                pages.append(PageResult.from_engine(pg, answer, engine_markdown=False))
                imgs.append(pg.image)
            return pages, imgs

        write_pdf(Document([]), read(jpgs[0])[0], jpgs[0], markdown=False)  # warm imports and fonts

        # --- Tesseract path: the writer, per page, on the scanned PDF
        texts, imgs = read(spdf)
        runs = []
        for _ in range(3):
            out, secs = cpu(write_pdf, Document([]), texts, spdf, markdown=False)
            runs.append(secs / len(texts))
        results["tesseract_write_pdf_cpu_s_per_page"] = round(statistics.median(runs), 4)
        results["tesseract_placement"] = sorted({p["placement"] for p in out.report["pages"]})

        # word boxes read from a recognised page (inside the engine's pass)
        from daemon.tessapi import ApiSpec, new_api

        wl = []
        api = new_api(ApiSpec(tessdata_dir(), "eng+deu+fra+swe"))
        try:
            for im in imgs:
                if langs[imgs.index(im)] in ("zh", "ja"):
                    continue
                api.set_image(im.convert("L"))
                api.text()
                _, secs = cpu(word_layout, api, im.size)
                wl.append(secs)
        finally:
            api.end()
        results["tesseract_word_boxes_cpu_s_per_page"] = round(statistics.median(wl), 4)

        # --- VLM path: layout analysis + alignment + writer
        fl = []
        vlm_pages = []
        for k, (im, lang) in enumerate(zip(imgs, langs, strict=True)):
            layout, secs = cpu(find_lines, im)
            fl.append(secs)
            md = "# " + page_text(lang).replace("\n\n", "\n\n", 1)
            geometry = texts[k].geometry
            assert geometry is not None
            vlm_pages.append(PageResult(index=k, engine="vllm", content=EngineText(md, True, geometry, layout)))
        runs = []
        for _ in range(3):
            out, secs = cpu(write_pdf, Document([]), vlm_pages, spdf, markdown=True)
            runs.append(secs / len(vlm_pages))
        # how well the text lands on its own line (known layout: where text_image drew each line)
        shares = {}
        for k, (im, lang) in enumerate(zip(imgs, langs, strict=True)):
            src_size = Image.open(jpgs[k]).size
            shares[lang] = round(alignment_share(src_size, page_text(lang), vlm_pages[k].layout, im.size), 3)
        results["vlm_tokens_on_their_line"] = shares
        results["vlm_find_lines_cpu_s_per_page"] = round(statistics.median(fl), 4)
        results["vlm_write_pdf_cpu_s_per_page"] = round(statistics.median(runs), 4)
        results["vlm_placement"] = [p["placement"] for p in out.report["pages"]]
        per_page = statistics.median(fl) + statistics.median(runs)
        results["vlm_total_cpu_s_per_page"] = round(per_page, 4)
        results["cores_for_8_pages_per_s"] = round(per_page * GPU_PAGES_PER_S, 2)

        # --- size ratio
        ratios: dict[str, object] = {}
        for name, files in (("jpeg", jpgs), ("png", pngs)):
            rs = []
            for f in files:
                t, _ = read(f)
                rs.append(len(write_pdf(Document([]), t, f, markdown=False).data) / f.stat().st_size)
            ratios[name] = {"min": round(min(rs), 4), "max": round(max(rs), 4), "median": round(statistics.median(rs), 4)}
        plain = write_pdf(Document([]), texts, spdf, markdown=False)
        ratios["scanned_pdf"] = round(len(plain.data) / spdf.stat().st_size, 4)
        pdfa, secs = cpu(write_pdf, Document([]), texts, spdf, markdown=False, pdfa=True)
        ratios["scanned_pdf_pdfa"] = round(len(pdfa.data) / spdf.stat().st_size, 4)
        ratios["pdfa_result"] = pdfa.report.get("pdfa") or pdfa.report.get("pdfa_error")
        results["size_ratio"] = ratios
        results["input_bytes"] = {"jpeg_median": int(statistics.median(f.stat().st_size for f in jpgs)),
                                  "png_median": int(statistics.median(f.stat().st_size for f in pngs)),
                                  "scanned_pdf": spdf.stat().st_size}
    finally:
        eng.close()
    results["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
