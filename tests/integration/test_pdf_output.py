"""The searchable PDF (daemon.writers.pdf) on real files: render stage + Tesseract + the writer,
checked with poppler (pdftotext, pdfinfo), pikepdf and PyMuPDF.

Sources: scanned PDFs (German and Chinese pages), a sideways PNG, an EXIF-rotated JPEG with a
dark scanner border, a multi-page TIFF (Latin and Japanese), a born-digital PDF with one scanned
page inserted, and pages drawn with a known layout (every word's box known) in several geometries.
"""

from __future__ import annotations

import math
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import docgen
import pikepdf
import pymupdf
import pytest
from PIL import Image, ImageDraw
from renderopts import render_opts

from daemon.config import EngineCfg
from daemon.document.model import Document, Heading, Page
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.pagerecord import EngineText, ImagePage, LayerBlocks, PageGeometry, PageResult
from daemon.pages.probe import page_count
from daemon.pages.render import render_page
from daemon.pages.textlayer import read_or_render
from daemon.tessapi import find_lines
from daemon.writers.pdf import PdfInput, write_pdf, write_pdf_input
from daemon.writers.pdflayout import place_text

pytestmark = pytest.mark.skipif(
    subprocess.run(["which", "pdftotext"], capture_output=True).returncode != 0, reason="poppler-utils missing"
)

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract={"threads": 1}))
    eng.start()
    yield eng
    eng.close()


def ocr(src: Path, engine: TesseractEngine) -> list[PageResult]:
    """The pages as the daemon reads them: every page rendered (its text layer not used, so
    born-digital pages are OCR'd too), recognised, with the render geometry."""
    opts = render_opts(text_layer="ocr")
    out = []
    for i in range(page_count(src, opts)):
        pg = read_or_render(src, i, opts)
        assert isinstance(pg, ImagePage)
        answer = engine.recognize([PageRequest("doc-t", i, pg.image, script=pg.geometry.script)])[0]
        out.append(PageResult.from_engine(pg, answer, engine_markdown=False))
    return out


def turns(pages: list[PageResult]) -> list[int]:
    """The upright turn the render stage gave each page."""
    return [p.geometry.rotation if p.geometry is not None else 0 for p in pages]


def titled(title: str = "", language: str = "unknown") -> Document:
    """A document whose title (its first heading) and language the PDF takes."""
    return Document([Page(1, [Heading(1, title)] if title else [])], language)


def make_pdf_output(src: Path, engine: TesseractEngine, tmp: Path, *, title: str = "", language: str = "unknown",
                    pdfa: bool = False) -> tuple[Path, list[PageResult], dict]:
    pages = ocr(src, engine)
    out = write_pdf(titled(title, language), pages, src, markdown=False, pdfa=pdfa)
    path = tmp / (src.stem + ".out.pdf")
    path.write_bytes(out.data)
    return path, pages, out.report.to_json()


def pdftotext(path: Path, page: int | None = None) -> str:
    args = ["pdftotext", "-enc", "UTF-8"] + (["-f", str(page), "-l", str(page)] if page else []) + [str(path), "-"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def words(text: str) -> Counter[str]:
    """Latin words and single CJK characters (CJK has no spaces to split on)."""
    out: Counter[str] = Counter()
    for w in text.split():
        for piece in re.findall(r"[\u3040-\u30ff\u3400-\u9fff]|[^\u3040-\u30ff\u3400-\u9fff]+", w):
            out[piece] += 1
    return out


def found_share(ocr_text: str, extracted: str) -> float:
    want = words(ocr_text)
    have = words(extracted)
    return sum(min(n, have[w]) for w, n in want.items()) / max(1, sum(want.values()))


def displayed_sizes(path: Path) -> list[tuple[float, float]]:
    """Page sizes as a viewer shows them (crop box, /Rotate applied), in points."""
    with pymupdf.open(path) as doc:
        return [(round(p.rect.width, 1), round(p.rect.height, 1)) for p in doc]


def image_page_size(path: Path, k: int, turned: int) -> tuple[float, float]:
    """A frame's physical size in points (its DPI, else 96 as img2pdf assumes), EXIF applied,
    then the daemon's own upright turn."""
    with Image.open(path) as im:
        im.seek(k)
        w, h = im.size
        dpi = im.info.get("dpi") or (96, 96)
        if min(dpi) < 2:  # a TIFF without a resolution unit says 1: img2pdf takes 96 then
            dpi = (96, 96)
        orient = im.getexif().get(0x0112, 1)
    if orient in (5, 6, 7, 8):
        w, h = h, w
    if turned in (90, 270):
        w, h = h, w
    return round(w * 72 / float(dpi[0]), 1), round(h * 72 / float(dpi[1]), 1)


# --------------------------------------------------------------------------- the sources


def _sources(tmp: Path) -> dict[str, Path]:
    s = docgen.SAMPLES
    return {
        "scanned_pdf": docgen.make_pdf(tmp / "scan.pdf", [s["de"], s["zh"]], scanned=True),
        "sideways_png": docgen.make_image(tmp / "side.png", s["en"], rotate=90),
        "exif_jpeg": docgen.make_image(tmp / "exif.jpg", s["fr"], "jpeg", exif_orientation=6, dark_border=40),
        "tiff": docgen.make_multipage_tiff(tmp / "multi.tiff", [s["sv"], s["ja"], s["it"]]),
    }


@pytest.mark.parametrize("kind", ["scanned_pdf", "sideways_png", "exif_jpeg", "tiff"])
def test_pages_sizes_and_text(kind: str, engine: TesseractEngine, tmp_path: Path) -> None:
    src = _sources(tmp_path)[kind]
    out, texts, report = make_pdf_output(src, engine, tmp_path, language="de", title="t")
    n = len(texts)
    assert len(pikepdf.open(out).pages) == n
    if src.suffix == ".pdf":
        assert displayed_sizes(out) == displayed_sizes(src)
    else:
        turned = turns(texts)
        assert displayed_sizes(out) == [image_page_size(src, k, turned[k]) for k in range(n)]
    assert [p["placement"] for p in report["pages"]] == ["words"] * n
    for k, t in enumerate(texts):
        assert t.text.strip()
        extracted = pdftotext(out, k + 1)
        assert found_share(t.text, extracted) >= 0.95, (t.text, extracted)
        if CJK.search(t.text):
            # copy-paste round trip: the CJK characters come back as recognised, in order
            assert "".join(CJK.findall(extracted)) == "".join(CJK.findall(t.text))


def test_sideways_image_is_turned_upright(engine: TesseractEngine, tmp_path: Path) -> None:
    src = docgen.make_image(tmp_path / "side.png", docgen.SAMPLES["en"], rotate=90)
    out, _, _ = make_pdf_output(src, engine, tmp_path)
    with pymupdf.open(out) as doc:
        page = doc[0]
        assert page.rect.height > page.rect.width  # shown upright (portrait), as the daemon read it
        first = page.get_text("words")[0]
        assert first[4] == "Invoice" and first[1] < page.rect.height / 4


def content_streams(page: pikepdf.Page) -> list[bytes]:
    c = page.obj.Contents
    return [x.read_raw_bytes() for x in c] if isinstance(c, pikepdf.Array) else [c.read_raw_bytes()]


def test_born_digital_pages_untouched(engine: TesseractEngine, tmp_path: Path) -> None:
    s = docgen.SAMPLES
    digital = docgen.make_pdf(tmp_path / "digital.pdf", [s["en"], s["es"], s["nl"]])
    scan = docgen.make_pdf(tmp_path / "scanpage.pdf", [s["pt"]], scanned=True)
    doc = pymupdf.open(digital)
    doc.insert_pdf(pymupdf.open(scan), start_at=1)  # page 2 of 4 is a scan
    src = tmp_path / "mixed.pdf"
    doc.save(src)
    doc.close()
    out, texts, report = make_pdf_output(src, engine, tmp_path)
    assert [p["placement"] for p in report["pages"]] == ["text_layer", "words", "text_layer", "text_layer"]
    with pikepdf.open(src) as a, pikepdf.open(out) as b:
        assert len(a.pages) == len(b.pages) == 4
        for k in (0, 2, 3):
            pa, pb = a.pages[k], b.pages[k]
            assert content_streams(pa) == content_streams(pb)  # byte for byte, none added
            assert sorted(pa.Resources.keys()) == sorted(pb.Resources.keys())
        # the scanned page keeps its own streams as they were; the layer comes in added streams
        orig, now = content_streams(a.pages[1]), content_streams(b.pages[1])
        assert len(now) == len(orig) + 2 and now[1:-1] == orig
    assert found_share(texts[1].text, pdftotext(out, 2)) >= 0.95
    assert displayed_sizes(out) == displayed_sizes(src)


def test_text_layer_source_pages_left_alone(engine: TesseractEngine, tmp_path: Path) -> None:
    """A page whose text came from the PDF's own text layer (``LayerBlocks`` content) gets no
    layer: it has no render geometry."""
    src = docgen.make_pdf(tmp_path / "scan.pdf", [docgen.SAMPLES["de"], docgen.SAMPLES["en"]], scanned=True)
    pages = ocr(src, engine)
    layer_shaped = replace(pages[0], engine="text_layer", content=LayerBlocks((), pages[0].text))
    for first in (layer_shaped,):
        out = write_pdf_input(PdfInput(src, [first, pages[1]], markdown=False))
        assert [p.placement for p in out.report.pages] == ["text_layer", "words"]
        path = tmp_path / "o.pdf"
        path.write_bytes(out.data)
        assert pdftotext(path, 1).strip() == ""
        assert "Invoice" in pdftotext(path, 2)


# --------------------------------------------------------------------------- known layout


def known_page(lines: list[str], *, width: int = 1240, font_size: int = 30) -> tuple[Image.Image, list[tuple[str, tuple[int, int, int, int]]]]:
    """A page with ``lines`` drawn at known places; returns it and every word's ink box (px)."""
    height = int(width * 1.414)
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    boxes: list[tuple[str, tuple[int, int, int, int]]] = []
    y = 120
    for line in lines:
        font = docgen.font_for(line, font_size)
        x = 100
        for w in line.split():
            bx = draw.textbbox((x, y), w, font=font)
            draw.text((x, y), w, font=font, fill="black")
            boxes.append((w, (int(bx[0]), int(bx[1]), int(bx[2]), int(bx[3]))))
            x = bx[2] + int(font.getlength(" "))
        y += int(font_size * 1.8)
    return img, boxes


LAYOUT_LINES = [
    "Invoice number 2024-0042 from Example Supplies",
    "Thank you for your order of printer paper",
    "Please pay the total amount within thirty days",
    "Bank transfer to the account given below",
    "Questions about this invoice: call our office",
    "The delivery includes three boxes and one contract",
]


def bbox_words(path: Path) -> list[tuple[str, float, float, float, float, float, float]]:
    """pdftotext -bbox-layout words: (text, x0, y0, x1, y1, page w, page h) in points."""
    xml = subprocess.run(["pdftotext", "-bbox-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout
    pw, ph = (float(v) for v in re.search(r'<page width="([\d.]+)" height="([\d.]+)"', xml).groups())  # type: ignore[union-attr]
    out = []
    for m in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', xml):
        out.append((m.group(5), float(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)), pw, ph))
    return out


def share_in_box(path: Path, boxes: list[tuple[str, tuple[int, int, int, int]]], img_size: tuple[int, int],
                 yslack: float = 0.0) -> float:
    """Share of known words whose extracted box's centre lies inside the word's drawn box
    (scaled from the upright page image to the displayed page; ``yslack`` px more above and
    below)."""
    got = bbox_words(path)
    (pw, ph), = displayed_sizes(path)  # poppler's <page> gives the unrotated size, its words are as shown
    got = [(t, a0, b0, a1, b1, pw, ph) for t, a0, b0, a1, b1, _, _ in got]
    w0, h0 = img_size
    hits = 0
    for text, (x0, y0, x1, y1) in boxes:
        for t, a0, b0, a1, b1, pw, ph in got:
            sx, sy = pw / w0, ph / h0
            cx, cy = (a0 + a1) / 2, (b0 + b1) / 2
            pad = 4 * sx  # px of slack for anti-aliased ink edges
            ypad = pad + yslack * sy
            if t.strip(".,:") == text.strip(".,:") and x0 * sx - pad <= cx <= x1 * sx + pad and y0 * sy - ypad <= cy <= y1 * sy + ypad:
                hits += 1
                break
    return hits / len(boxes)


def turned_boxes(boxes: list[tuple[str, tuple[int, int, int, int]]], size: tuple[int, int], degrees: float,
                 new: tuple[int, int]) -> list[tuple[str, tuple[int, int, int, int]]]:
    """The boxes of a page that ``Image.rotate(degrees, expand=True)`` turned (counter-clockwise
    as seen): each box's corners turned about the centre, their bounding box."""
    a = math.radians(degrees)
    out = []
    for t, (x0, y0, x1, y1) in boxes:
        pts = []
        for x, y in ((x0, y0), (x1, y0), (x0, y1), (x1, y1)):
            dx, dy = x - size[0] / 2, y - size[1] / 2
            pts.append((new[0] / 2 + dx * math.cos(a) + dy * math.sin(a), new[1] / 2 - dx * math.sin(a) + dy * math.cos(a)))
        out.append((t, (int(min(p[0] for p in pts)), int(min(p[1] for p in pts)),
                        int(max(p[0] for p in pts)) + 1, int(max(p[1] for p in pts)) + 1)))
    return out


@pytest.mark.parametrize("geometry", ["png", "sideways", "exif8_border", "scanned_pdf"])
def test_words_land_in_their_boxes(geometry: str, engine: TesseractEngine, tmp_path: Path) -> None:
    img, boxes = known_page(LAYOUT_LINES)
    upright = img
    if geometry == "png":
        src = tmp_path / "k.png"
        img.save(src)
    elif geometry == "sideways":
        src = tmp_path / "k.png"
        img.rotate(-90, expand=True).save(src)  # scanned sideways; the daemon turns it back
    elif geometry == "exif8_border":
        framed = docgen.add_dark_border(img, (60, 30, 40, 50))
        upright = framed
        boxes = [(t, (b[0] + 60, b[1] + 30, b[2] + 60, b[3] + 30)) for t, b in boxes]
        exif = Image.Exif()
        exif[0x0112] = 8
        src = tmp_path / "k.jpg"
        framed.transpose(Image.Transpose.ROTATE_270).save(src, quality=90, exif=exif)
    else:
        src = tmp_path / "k.pdf"
        doc = pymupdf.open()
        page = doc.new_page(width=595, height=842)
        buf = tmp_path / "k.png"
        img.save(buf)
        page.insert_image(page.rect, filename=str(buf))
        doc.save(src)
        doc.close()
    out, texts, report = make_pdf_output(src, engine, tmp_path)
    assert report["pages"][0]["placement"] == "words"
    assert share_in_box(out, boxes, upright.size) >= 0.90


def test_a_skewed_scan_is_read_straightened_and_its_text_layer_lies_on_the_askew_page(engine: TesseractEngine, tmp_path: Path) -> None:
    """A page fed 4 degrees askew: the deskew stage reads it straight; the PDF keeps the scan as
    it was and puts each line's words over their ink, as upright lines that poppler reads as
    lines (a turned text layer comes out of pdftotext as single letters)."""
    img, boxes = known_page(LAYOUT_LINES)
    askew = img.rotate(4, expand=True, fillcolor="white", resample=Image.Resampling.BICUBIC)
    src = tmp_path / "k.png"
    askew.save(src)
    out, pages, report = make_pdf_output(src, engine, tmp_path)
    g = pages[0].geometry
    assert g is not None and g.skew == pytest.approx(4, abs=0.3) and g.unskewed_size is not None
    assert g.unskewed_size[0] / g.unskewed_size[1] == pytest.approx(askew.width / askew.height, rel=0.01)  # the scan, resized
    assert report["pages"][0]["placement"] == "words"
    text = " ".join(pdftotext(out).split())
    for line in LAYOUT_LINES:  # every line whole, in order
        assert line in text, text
    # a word's middle is over its ink across the line, and within half the line's rise of it
    # in height (the line is drawn upright through its middle); ~28 px for these 800 px lines
    rise = 0.5 * max(b[2] for _, b in boxes) * math.tan(math.radians(4))
    assert share_in_box(out, turned_boxes(boxes, img.size, 4, askew.size), askew.size, yslack=rise) >= 0.90


# --------------------------------------------------------------------------- VLM alignment


def test_vlm_text_aligned_to_lines(tmp_path: Path) -> None:
    """A VLM's Markdown (no positions) placed on the line boxes of layout analysis: each word on
    its own line's height, none dropped."""
    img, boxes = known_page(LAYOUT_LINES)
    layout = find_lines(img)
    assert len(layout.lines) >= len(LAYOUT_LINES) - 1
    md = "# " + LAYOUT_LINES[0] + "\n\n" + " ".join(LAYOUT_LINES[1:3]) + "\n\n" + "\n".join(f"**{ln}**" for ln in LAYOUT_LINES[3:])
    placed = place_text(md, layout, True, img.size)
    assert placed.how == "lines"
    put = [w for ln in placed.lines for w in ln.words]
    assert Counter(w.text for w in put) == Counter(w for ln in LAYOUT_LINES for w in ln.split())
    # the word's placed box is on the same line (its vertical centre inside the drawn word's)
    by_word: dict[str, list[tuple[int, int, int, int]]] = {}
    for t, b in boxes:
        by_word.setdefault(t, []).append(b)
    on_line = sum(
        any(b[1] - 6 <= (w.box[1] + w.box[3]) / 2 <= b[3] + 6 for b in by_word[w.text]) for w in put
    )
    assert on_line / len(put) >= 0.9


def test_vlm_fallbacks_never_drop_text(tmp_path: Path) -> None:
    img, _ = known_page(LAYOUT_LINES)
    layout = find_lines(img)
    long_text = " ".join(["Lorem ipsum dolor sit amet"] * 200)  # far more text than six lines hold
    placed = place_text(long_text, layout, True, img.size)
    assert placed.how == "blocks"
    assert sum(len(w.text.split()) for ln in placed.lines for w in ln.words) == 1000
    blank = Image.new("RGB", img.size, "white")
    placed = place_text("# 标题\n\n本次交貨包括三箱打印紙", find_lines(blank), True, blank.size)
    assert placed.how == "page"
    assert "".join(w.text for ln in placed.lines for w in ln.words) == "标题本次交貨包括三箱打印紙"


def test_vlm_pdf_cjk_round_trip(tmp_path: Path) -> None:
    """The whole VLM path on a Chinese scan: text layer from Markdown, copy gives it back."""
    text = docgen.SAMPLES["zh"]
    src = docgen.make_image(tmp_path / "zh.png", text, lang="zh")
    pg = render_page(src, 0, render_opts())
    md = "\n\n".join(p.strip() for p in text.split("\n\n"))
    g = pg.geometry
    geometry = PageGeometry(size=pg.image.size, source_size=g.source_size, rotation=g.rotation)
    page = PageResult(index=0, engine="vllm", content=EngineText(md, True, geometry, find_lines(pg.image)))
    out = write_pdf_input(PdfInput(src, [page], markdown=True, language="zh"))
    assert out.report.pages[0].placement == "lines"
    time.sleep(1.1)  # img2pdf would stamp a new time: the same input still gives the same bytes
    assert write_pdf_input(PdfInput(src, [page], markdown=True, language="zh")).data == out.data
    path = tmp_path / "zh.pdf"
    path.write_bytes(out.data)
    assert "".join(CJK.findall(pdftotext(path))) == "".join(CJK.findall(text))


# --------------------------------------------------------------------------- PDF/A and size


def test_pdfa(engine: TesseractEngine, tmp_path: Path) -> None:
    from pikepdf.pdfa import check

    src = docgen.make_pdf(tmp_path / "scan.pdf", [docgen.SAMPLES["de"]], scanned=True)
    out, texts, report = make_pdf_output(src, engine, tmp_path, pdfa=True, title="Rechnung 42", language="de")
    assert report["pdfa"] == "PDF/A-2b" and "pdfa_error" not in report
    with pikepdf.open(out) as pdf:
        assert check(pdf, "2b").passed  # pikepdf's PDF/A validator (veraPDF's rules, from PyPI)
        meta = pdf.open_metadata()
        assert meta.pdfa_status == "2B"
        assert meta["dc:title"] == "Rechnung 42"
        assert str(pdf.Root.Lang) == "de"
        assert str(pdf.docinfo["/Producer"]) == "ocr-daemon"
        assert len(pdf.Root.OutputIntents) == 1
    assert found_share(texts[0].text, pdftotext(out)) >= 0.95


def test_pdfa_failure_keeps_plain_pdf(engine: TesseractEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = docgen.make_pdf(tmp_path / "scan.pdf", [docgen.SAMPLES["de"]], scanned=True)
    monkeypatch.setenv("PATH", str(tmp_path))  # no Ghostscript on the PATH
    out, texts, report = make_pdf_output(src, engine, tmp_path, pdfa=True)
    assert "pdfa" not in report and "Ghostscript" in report["pdfa_error"]
    with pikepdf.open(out) as pdf:
        assert not pdf.open_metadata().pdfa_status
    monkeypatch.undo()
    assert found_share(texts[0].text, pdftotext(out)) >= 0.95


def scan_like(text: str, seed: int = 0) -> Image.Image:
    """A page as a 300 dpi A4 greyscale scanner gives it: paper grain and a slight blur."""
    import numpy as np
    from PIL import ImageFilter

    img = docgen.text_image(text, width=2480, font_size=56).convert("L").filter(ImageFilter.GaussianBlur(0.8))
    rng = np.random.default_rng(seed)
    a = np.asarray(img, dtype=np.float32) * 0.92 + 12 + rng.normal(0, 6, (img.height, img.width))
    return Image.fromarray(a.clip(0, 255).astype(np.uint8), "L")


@pytest.mark.parametrize("fmt", ["jpeg", "png", "pdf"])
def test_size_ratio(fmt: str, engine: TesseractEngine, tmp_path: Path) -> None:
    """Images are not recompressed: the PDF is at most 10 % bigger than the scan."""
    img = scan_like(docgen.SAMPLES["nl"] + "\n\n" + docgen.SAMPLES["da"])
    if fmt == "pdf":
        jpg = tmp_path / "s.jpg"
        img.save(jpg, quality=80, dpi=(300, 300))
        src = tmp_path / "s.pdf"
        doc = pymupdf.open()
        doc.new_page(width=595, height=842).insert_image(pymupdf.Rect(0, 0, 595, 842), filename=str(jpg))
        doc.save(src)
        doc.close()
    else:
        src = tmp_path / f"s.{fmt}"
        img.save(src, dpi=(300, 300), **({"quality": 80} if fmt == "jpeg" else {}))
    out, _, report = make_pdf_output(src, engine, tmp_path)
    assert report["pages"][0]["placement"] == "words"
    assert out.stat().st_size / src.stat().st_size <= 1.1


def test_rotated_and_cropped_pdf_pages(engine: TesseractEngine, tmp_path: Path) -> None:
    """PDF pages shown turned (/Rotate 90 over an upright scan; a sideways scan; the daemon turns
    both upright; a crop box that starts off the media box's origin): the layer lands on the
    words, the same place on each."""
    img = docgen.text_image(docgen.SAMPLES["en"])
    up, side = tmp_path / "up.png", tmp_path / "side.png"
    img.save(up)
    img.rotate(-90, expand=True).save(side)
    doc = pymupdf.open()
    p = doc.new_page(width=595, height=842)
    p.insert_image(p.rect, filename=str(up))
    p.set_rotation(90)
    doc.new_page(width=842, height=595).insert_image(pymupdf.Rect(0, 0, 842, 595), filename=str(side))
    p = doc.new_page(width=700, height=950)
    p.insert_image(pymupdf.Rect(50, 50, 645, 892), filename=str(up))
    p.set_cropbox(pymupdf.Rect(50, 50, 645, 892))
    src = tmp_path / "turned.pdf"
    doc.save(src)
    doc.close()
    out, texts, report = make_pdf_output(src, engine, tmp_path)
    assert [p["placement"] for p in report["pages"]] == ["words"] * 3
    # the pages shown sideways (the /Rotate 90 and the sideways scan) are shown upright, the way
    # the daemon read them (issue 32); the upright one as it was
    before = displayed_sizes(src)
    assert displayed_sizes(out) == [(before[0][1], before[0][0]), (before[1][1], before[1][0]), before[2]]
    # MuPDF's words: relative to the crop box, in the page's unrotated orientation
    with pymupdf.open(out) as o:
        boxes = [next(tuple(w[:4]) for w in pg.get_text("words") if w[4] == "Invoice") for pg in o]
    x0, y0, x1, y1 = boxes[2]  # upright page: the word as drawn, top left (text_image's margin)
    assert 45 < x0 < 60 and 45 < y0 < 60
    assert boxes[0] == pytest.approx(boxes[2], abs=2.0)  # /Rotate 90 over the upright scan: same place unrotated
    assert boxes[1] == pytest.approx((842 - y1, x0, 842 - y0, x1), abs=2.0)  # the sideways scan: (x, y) -> (842 - y, x)


def test_prepare_outputs_names_pdf_and_survives_its_failure(engine: TesseractEngine, tmp_path: Path) -> None:
    """The pipeline's finishing step: ``<stem>.ocr.pdf`` beside a PDF source, ``<stem>.pdf`` in
    another folder; a PDF that cannot be made (here: the geometry of the wrong page count) is
    reported in the sidecar's ``pdf.error`` (and as the degraded ``pdf`` stage) while the other
    outputs are still written."""
    from datetime import datetime

    from conftest import write_rules

    from daemon.config import load_config
    from daemon.service.outputs import prepare_outputs

    (tmp_path / "inbox").mkdir()
    src = docgen.make_pdf(tmp_path / "inbox" / "scan.pdf", [docgen.SAMPLES["de"]], scanned=True)
    pages = ocr(src, engine)
    for dest, name in (("beside", "scan.ocr.pdf"), (str(tmp_path / "out"), "scan.pdf")):
        cfg = load_config(write_rules(tmp_path, routes=[{"name": "r", "formats": ["pdf", "txt"], "destination": dest}]))
        prep = prepare_outputs(cfg, pages, src, "inbox", False, datetime.now())
        assert set(prep.body) == {name, "scan.txt"}
        assert prep.pdf_report is not None and prep.pdf_report.pages[0].placement == "words"
        assert prep.degraded == []
    two = [pages[0], replace(pages[0], index=1)]  # two pages for a one-page file
    prep = prepare_outputs(cfg, two, src, "inbox", False, datetime.now())
    assert set(prep.body) == {"scan.txt"}
    assert prep.pdf_report is not None and "1 pages" in (prep.pdf_report.error or "")
    assert [d.stage for d in prep.degraded] == ["pdf"] and "1 pages" in prep.degraded[0].error


@pytest.mark.parametrize("variant", ["mirrored_exif", "alpha_png"])
def test_images_img2pdf_cannot_copy(variant: str, engine: TesseractEngine, tmp_path: Path) -> None:
    """A mirrored EXIF orientation, which img2pdf refuses, is decoded, turned and stored
    losslessly instead; an alpha channel goes in with a soft mask: same page, text in place."""
    if variant == "mirrored_exif":
        src = docgen.make_image(tmp_path / "m.jpg", docgen.SAMPLES["es"], "jpeg", exif_orientation=5)
    else:
        src = docgen.make_image(tmp_path / "a.png", docgen.SAMPLES["it"], mode="RGBA")
    out, texts, report = make_pdf_output(src, engine, tmp_path)
    assert report["pages"][0]["placement"] == "words"
    assert displayed_sizes(out) == [image_page_size(src, 0, turns(texts)[0])]
    assert found_share(texts[0].text, pdftotext(out)) >= 0.95
    with pymupdf.open(out) as doc:  # upright: the first word is at the top left, as printed
        first = doc[0].get_text("words")[0]
        assert first[4] in ("Factura", "Fattura") and first[0] < doc[0].rect.width / 3 and first[1] < doc[0].rect.height / 4
