"""Render stage on real files: PDFs from PyMuPDF, images from Pillow, real Tesseract OSD."""

from __future__ import annotations

import concurrent.futures as cf
import json
import pickle
import subprocess
import sys
from pathlib import Path

import docgen
import numpy as np
import pymupdf
import pytest
from PIL import Image
from renderopts import render_opts

from daemon.errors import InputError
from daemon.pages import render
from daemon.pages.probe import page_count, probe
from daemon.pages.render import crop_dark_borders, render_page

PLAIN = render_opts(autorotate=False, crop_borders=False)
FULL = render_opts()
EN = docgen.SAMPLES["en"]


def diff(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute grey-level difference of two images (b resized to a's size)."""
    b = b.resize(a.size) if b.size != a.size else b
    return float(np.abs(np.asarray(a.convert("L"), dtype=np.int16) - np.asarray(b.convert("L"), dtype=np.int16)).mean())


@pytest.fixture(scope="module")
def upright(tmp_path_factory: pytest.TempPathFactory) -> Image.Image:
    p = docgen.make_image(tmp_path_factory.mktemp("up") / "up.png", EN)
    return render_page(p, 0, PLAIN).image


# ----------------------------------------------------------------------------- PDFs


def test_pdf_pages_render_at_longest_edge(tmp_path: Path) -> None:
    pdf = docgen.make_pdf(tmp_path / "a.pdf", [EN, docgen.SAMPLES["zh"], docgen.SAMPLES["ja"]])
    assert probe(pdf) is None
    assert page_count(pdf, FULL) == 3
    pages = [render_page(pdf, i, FULL) for i in range(3)]
    assert [p.index for p in pages] == [0, 1, 2]
    for p in pages:
        assert p.image.mode == "RGB"
        assert max(p.image.size) == 1540
        assert p.image.height > p.image.width  # A4 portrait stays portrait
        assert p.geometry.rotation == 0 and not p.geometry.cropped
    # Text actually drawn: the page is not blank.
    assert np.asarray(pages[1].image.convert("L")).min() < 100


def test_scanned_pdf_renders(tmp_path: Path, upright: Image.Image) -> None:
    pdf = docgen.make_pdf(tmp_path / "s.pdf", [EN], scanned=True)
    page = render_page(pdf, 0, PLAIN)
    assert max(page.image.size) == 1540
    assert diff(page.image, upright) < 12  # same drawing, rendered through a PDF


def test_small_pdf_page_not_upscaled_past_max_dpi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An 80 mm x 120 mm receipt: at 200 dpi that is 630 x 945 px, well under 1540.
    pdf = docgen.make_pdf(tmp_path / "r.pdf", ["Receipt\nTotal 12.50"], page_size=(226.8, 340.2))
    assert render.MAX_DPI == 200
    for dpi, want in ((200, (630, 945)), (100, (315, 472.5))):
        monkeypatch.setattr(render, "MAX_DPI", dpi)
        size = render_page(pdf, 0, render_opts()).image.size
        assert abs(size[0] - want[0]) <= 1 and abs(size[1] - want[1]) <= 1, (dpi, size)


def test_pdf_page_too_large_to_render(tmp_path: Path) -> None:
    pdf = docgen.make_blank_pdf(tmp_path / "big.pdf", 1, page_size=(3000, 3000))
    with pytest.raises(InputError, match="page too large to render"):
        render_page(pdf, 0, render_opts(longest_edge=5000, max_image_pixels=10_000_000))


def test_pdf_rotate_attribute_is_honoured(tmp_path: Path) -> None:
    import pymupdf

    pdf = docgen.make_pdf(tmp_path / "r.pdf", [EN])
    doc = pymupdf.open(str(pdf))
    doc[0].set_rotation(90)
    doc.save(str(tmp_path / "r90.pdf"))
    page = render_page(tmp_path / "r90.pdf", 0, PLAIN)
    assert page.image.width > page.image.height  # landscape as the viewer shows it


def test_encrypted_pdf_is_refused_with_reason(tmp_path: Path) -> None:
    pdf = docgen.make_encrypted_pdf(tmp_path / "e.pdf")
    assert probe(pdf) == "encrypted PDF (password protected)"
    with pytest.raises(InputError) as ei:
        page_count(pdf, FULL)
    assert "encrypted" in ei.value.reason and "password" in ei.value.reason


def test_too_many_pages(tmp_path: Path) -> None:
    pdf = docgen.make_blank_pdf(tmp_path / "many.pdf", 12)
    assert probe(pdf) is None  # a valid PDF; the limit is a policy, not corruption
    assert page_count(pdf, render_opts(max_pages=12)) == 12
    with pytest.raises(InputError, match=r"too many pages: 12 > limit 10 \(engine.max_pages\)"):
        page_count(pdf, render_opts(max_pages=10))
    tif = docgen.make_multipage_tiff(tmp_path / "m.tif", ["a", "b", "c"], width=200)
    with pytest.raises(InputError, match=r"too many pages: 3 > limit 2"):
        page_count(tif, render_opts(max_pages=2))
    # every page of an image is a page to OCR
    with pytest.raises(InputError, match=r"too many pages to OCR: 3 pages .*> limit 2 \(engine.max_ocr_pages"):
        page_count(tif, render_opts(max_ocr_pages=2))


def test_ocr_page_limit_counts_only_pages_without_text(tmp_path: Path) -> None:
    """engine.max_ocr_pages: pages read from a PDF's text layer do not count against it; pages
    with no text do, and the reason names the key to raise."""
    text = docgen.make_pdf(tmp_path / "text.pdf", [f"Chapter {i}. Some words on this page." for i in range(6)])
    assert page_count(text, render_opts(max_ocr_pages=2)) == 6
    doc = pymupdf.open(str(text))
    for _ in range(3):
        doc.new_page()  # three pages with nothing on them: to OCR
    mixed = tmp_path / "mixed.pdf"
    doc.save(str(mixed))
    doc.close()
    assert page_count(mixed, render_opts(max_ocr_pages=3)) == 9
    with pytest.raises(InputError, match=r"too many pages to OCR: 3 of 9 pages .*> limit 2 \(engine.max_ocr_pages"):
        page_count(mixed, render_opts(max_ocr_pages=2))
    with pytest.raises(InputError, match=r"too many pages to OCR: 9 pages"):  # every page is OCRed
        page_count(mixed, render_opts(max_ocr_pages=2, text_layer="ocr"))


# ----------------------------------------------------------------------------- content sniffing


def test_png_named_pdf(tmp_path: Path) -> None:
    p = docgen.make_image(tmp_path / "scan.pdf", EN, "png")
    assert probe(p) == "not a PDF: the file is a PNG image"
    with pytest.raises(InputError, match="not a PDF: the file is a PNG image"):
        page_count(p, FULL)


def test_html_named_pdf_and_pdf_named_jpg(tmp_path: Path) -> None:
    h = tmp_path / "download.pdf"
    h.write_text("<html><body>Login required</body></html>")
    assert probe(h) == "not a PDF (starts with '<html')"
    pdf = docgen.make_pdf(tmp_path / "x.pdf", [EN])
    jpg = tmp_path / "photo.jpg"
    jpg.write_bytes(pdf.read_bytes())
    with pytest.raises(InputError, match="not a JPEG image: the file is a PDF"):
        page_count(jpg, FULL)


def test_jpeg_named_png_is_decoded(tmp_path: Path) -> None:
    p = docgen.make_image(tmp_path / "photo.png", EN, "jpeg")
    assert probe(p) is None
    assert max(render_page(p, 0, PLAIN).image.size) == 1540


def test_empty_and_unknown_files(tmp_path: Path) -> None:
    e = tmp_path / "e.pdf"
    e.write_bytes(b"")
    assert probe(e) == "empty file"
    with pytest.raises(InputError, match="empty file"):
        page_count(e, FULL)
    z = tmp_path / "doc.png"
    z.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    assert probe(z) == "not a PNG image: the file is a ZIP archive (or Office document)"
    assert probe(tmp_path / "missing.pdf") == "file not found"


# ----------------------------------------------------------------------------- images


@pytest.mark.parametrize("fmt", ["png", "jpeg", "tiff", "webp", "bmp"])
def test_each_image_format(tmp_path: Path, fmt: str, upright: Image.Image) -> None:
    p = docgen.make_image(tmp_path / f"scan.{fmt}", EN, fmt)
    assert probe(p) is None
    assert page_count(p, FULL) == 1
    page = render_page(p, 0, PLAIN)
    assert page.image.mode == "RGB"
    assert max(page.image.size) == 1540
    assert page.geometry.source_size == (1240, 1753)
    assert diff(page.image, upright) < 6


@pytest.mark.parametrize("mode", ["L", "1", "RGBA"])
def test_image_modes_become_rgb_on_white(tmp_path: Path, mode: str, upright: Image.Image) -> None:
    p = docgen.make_image(tmp_path / "m.png", EN, "png", mode=mode)
    page = render_page(p, 0, PLAIN)
    assert page.image.mode == "RGB"
    # Transparent paper must come out white, not black.
    assert np.asarray(page.image.convert("L")).mean() > 200
    assert diff(page.image, upright) < 10


def test_small_image_is_upscaled_to_target(tmp_path: Path) -> None:
    p = docgen.make_image(tmp_path / "small.png", "Tiny receipt", width=500, font_size=20)
    page = render_page(p, 0, PLAIN)
    assert max(page.image.size) == 1540
    assert page.geometry.source_size == (500, 707)


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_exif_orientation_applied(tmp_path: Path, orientation: int, upright: Image.Image) -> None:
    p = docgen.make_image(tmp_path / "phone.jpg", EN, "jpeg", exif_orientation=orientation)
    with Image.open(p) as raw:
        stored_landscape = raw.width > raw.height
    assert stored_landscape == (orientation in (6, 8))
    page = render_page(p, 0, PLAIN)
    assert page.image.height > page.image.width
    assert diff(page.image, upright) < 6
    assert diff(page.image, upright.rotate(180)) > 2 * diff(page.image, upright)


def test_multipage_tiff(tmp_path: Path) -> None:
    p = docgen.make_multipage_tiff(tmp_path / "m.tif", [EN, docgen.SAMPLES["de"], docgen.SAMPLES["zh"]])
    assert probe(p) is None
    assert page_count(p, FULL) == 3
    pages = [render_page(p, i, PLAIN) for i in range(page_count(p, PLAIN))]
    assert len(pages) == 3
    assert all(max(pg.image.size) == 1540 for pg in pages)
    assert diff(pages[0].image, pages[2].image) > 1  # really different pages
    with pytest.raises(IndexError):
        render_page(p, 3, PLAIN)


# ----------------------------------------------------------------------------- orientation + crop


@pytest.mark.parametrize(("lang", "turned"), [("en", 90), ("en", 180), ("en", 270), ("de", 90), ("ja", 270)])
def test_rotated_scan_turned_upright(tmp_path: Path, lang: str, turned: int) -> None:
    text = docgen.SAMPLES[lang]
    ref = render_page(docgen.make_image(tmp_path / "ref.png", text), 0, PLAIN).image
    p = docgen.make_image(tmp_path / "rot.png", text, "png", rotate=turned)
    page = render_page(p, 0, FULL)
    assert page.geometry.rotation == (360 - turned) % 360
    assert page.image.size == ref.size
    assert diff(page.image, ref) < 6
    # Switched off, the page stays as scanned.
    off = render_page(p, 0, render_opts(autorotate=False))
    assert off.geometry.rotation == 0
    assert diff(off.image, ref) > 2 * diff(page.image, ref)


@pytest.mark.parametrize(("lang", "turned"), [("en", 180), ("de", 90)])
def test_rotated_scan_turned_upright_reading_first(tmp_path: Path, lang: str, turned: int) -> None:
    """The Tesseract render reads the page's band first (``read_first``): a turned page's band
    does not read upright, so OSD and its checks turn it as before (and no band is passed on)."""
    text = docgen.SAMPLES[lang]
    ref = render_page(docgen.make_image(tmp_path / "ref.png", text), 0, PLAIN).image
    p = docgen.make_image(tmp_path / "rot.png", text, "png", rotate=turned)
    page = render_page(p, 0, render_opts(read_first=True))
    assert page.geometry.rotation == (360 - turned) % 360 and page.band is None
    assert diff(page.image, ref) < 6


def test_upright_cjk_page_reading_first_goes_to_osd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Chinese page's English band reads poorly: OSD judges it as before (and is not turned)."""
    from daemon.pages import orient

    calls: list[int] = []
    real_osd = orient.detect_orientation
    monkeypatch.setattr(orient, "detect_orientation", lambda im: calls.append(1) or real_osd(im))
    p = docgen.make_image(tmp_path / "zh.png", docgen.SAMPLES["zh"], lang="zh")
    page = render_page(p, 0, render_opts(read_first=True))
    assert calls and page.geometry.rotation == 0
    assert page.band is not None and page.band[1] < orient.UPRIGHT_MIN_CONF  # read, passed on


def test_upright_and_textless_pages_are_not_turned(tmp_path: Path) -> None:
    p = docgen.make_image(tmp_path / "up.png", docgen.SAMPLES["zh"])
    assert render_page(p, 0, FULL).geometry.rotation == 0
    blank = tmp_path / "blank.png"
    Image.new("RGB", (1240, 1753), "white").save(blank)
    assert render_page(blank, 0, FULL).geometry.rotation == 0
    noise = tmp_path / "noise.png"
    Image.effect_noise((1240, 1753), 60).save(noise)
    assert render_page(noise, 0, FULL).geometry.rotation == 0


def test_dark_border_cropped(tmp_path: Path, upright: Image.Image) -> None:
    p = docgen.make_image(tmp_path / "b.jpg", EN, "jpeg", dark_border=(80, 50, 120, 90))
    page = render_page(p, 0, FULL)
    assert page.geometry.cropped
    assert page.geometry.source_size == (1240 + 200, 1753 + 140)
    g = np.asarray(page.image.convert("L"))
    for edge in (g[:4], g[-4:], g[:, :4], g[:, -4:]):
        assert edge.mean() > 200, "a dark edge survived the crop"
    assert max(page.image.size) == 1540
    assert diff(page.image, upright) < 12
    off = render_page(p, 0, render_opts(crop_borders=False))
    assert not off.geometry.cropped
    assert np.asarray(off.image.convert("L"))[:4].mean() < 60


def test_border_crop_leaves_clean_and_dark_pages_alone(tmp_path: Path) -> None:
    clean = docgen.text_image(EN)
    out, cropped = crop_dark_borders(clean)
    assert not cropped and out.size == clean.size
    # A dark slide with light text: "border" everywhere, which is content, not a border.
    slide = Image.new("RGB", (1200, 800), (15, 15, 15))
    out, cropped = crop_dark_borders(slide)
    assert not cropped and out.size == slide.size


def test_letterhead_band_at_the_edge_is_no_border() -> None:
    """White letters on a dark band that touches the page's top edge (a printed letterhead) are
    content: the crop took them for scanner border and the bank's name was lost (issue 26.3).
    The same band without letters, and a real border, are still cropped."""
    from PIL import ImageDraw, ImageFont

    def page(letters: bool) -> Image.Image:
        img = docgen.text_image(EN, margin=200)
        d = ImageDraw.Draw(img)
        d.rectangle([0, 0, img.width, 110], fill=(25, 40, 90))
        if letters:
            d.text((100, 30), "Banco Lusitano de Poupança", fill="white",
                   font=ImageFont.truetype(str(docgen.DEJAVU), 44))
        return img

    out, cropped = crop_dark_borders(page(True))
    assert not cropped and out.size == page(True).size
    out, cropped = crop_dark_borders(page(False))
    assert cropped and out.size[1] < page(False).size[1] - 100
    bordered = docgen.add_dark_border(page(True), (0, 0, 0, 60))
    out, cropped = crop_dark_borders(bordered)
    assert cropped and out.size[1] <= bordered.size[1] - 60  # the bottom border only


def test_scanned_pdf_with_border_is_cropped(tmp_path: Path) -> None:
    import io

    import pymupdf

    img = docgen.add_dark_border(docgen.text_image(EN), 60)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    doc = pymupdf.open()
    page = doc.new_page(width=595 * img.width / 1240, height=595 * img.width / 1240 * img.height / img.width)
    page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(str(tmp_path / "b.pdf"))
    out = render_page(tmp_path / "b.pdf", 0, FULL)
    assert out.geometry.cropped
    assert max(out.image.size) == 1540
    assert np.asarray(out.image.convert("L"))[:, :4].mean() > 200


# ----------------------------------------------------------------------------- truncation, bombs


@pytest.mark.parametrize(
    ("fmt", "reason"),
    [("pdf", "truncated PDF"), ("jpeg", "truncated JPEG"), ("png", "truncated PNG"), ("tiff", "truncated TIFF"),
     ("webp", "truncated WebP"), ("bmp", "truncated BMP")],
)
def test_truncated_files(tmp_path: Path, fmt: str, reason: str) -> None:
    if fmt == "pdf":
        full = docgen.make_pdf(tmp_path / "full.pdf", [EN, EN], scanned=True)
    elif fmt == "tiff":
        full = docgen.make_multipage_tiff(tmp_path / "full.tiff", [EN, EN])
    else:
        full = docgen.make_image(tmp_path / f"full.{fmt}", EN, fmt)
    assert probe(full) is None
    cut = docgen.truncate_copy(full, tmp_path / f"cut{full.suffix}", keep=0.6)
    assert probe(cut) is not None and probe(cut).startswith(reason)  # type: ignore[union-attr]
    with pytest.raises(InputError):
        page_count(cut, FULL)


def test_png_bomb_refused_from_header(tmp_path: Path) -> None:
    bomb = docgen.make_png_bomb(tmp_path / "bomb.png", 20000, 20000)
    assert bomb.stat().st_size < 200_000
    assert probe(bomb) is None  # a valid PNG; the size limit is the render stage's call
    with pytest.raises(InputError, match=r"too large: 20000x20000 = 400 Mpx > limit 100 Mpx"):
        page_count(bomb, render_opts(max_image_pixels=100_000_000))
    with pytest.raises(InputError, match="too large"):
        render_page(bomb, 0, render_opts(max_image_pixels=100_000_000))


def test_pdf_embedding_huge_image_refused(tmp_path: Path) -> None:
    pdf = docgen.make_pdf_image_bomb(tmp_path / "b.pdf", 30000, 30000)
    assert probe(pdf) is None
    assert page_count(pdf, FULL) == 1
    with pytest.raises(InputError, match=r"embeds a 30000x30000 image = 900 Mpx > limit 100 Mpx"):
        render_page(pdf, 0, render_opts(max_image_pixels=100_000_000))


def test_png_bomb_refused_without_decoding(tmp_path: Path) -> None:
    """Memory, not time: refusing the bomb must not allocate its pixels (>= 50 MB packed)."""
    bomb = docgen.make_png_bomb(tmp_path / "bomb.png", 20000, 20000)
    code = (
        "import resource, json, sys\n"
        "from pathlib import Path\n"
        "from daemon.pages.probe import page_count\nfrom daemon.pages.render import render_page\n"
        "from daemon.config import EngineCfg\nfrom daemon.config.options import render_options\n"
        "from daemon.errors import InputError\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "o = render_options(EngineCfg(max_image_pixels=100_000_000), '', False)\n"
        "errs = []\n"
        "for f in (page_count, lambda p, o: render_page(p, 0, o)):\n"
        "    try:\n"
        "        f(Path(sys.argv[1]), o)\n"
        "    except InputError as e:\n"
        "        errs.append(e.reason)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(json.dumps({'grew_kb': after - before, 'errs': errs}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(res["errs"]) == 2
    assert res["grew_kb"] < 20_000, res


# ----------------------------------------------------------------------------- process pool


def test_render_page_in_process_pool(tmp_path: Path) -> None:
    pdf = docgen.make_pdf(tmp_path / "a.pdf", [EN, docgen.SAMPLES["fr"]])
    with cf.ProcessPoolExecutor(max_workers=1) as pool:
        pages = list(pool.map(render_page, [pdf, pdf], [0, 1], [PLAIN, PLAIN]))
    assert [p.index for p in pages] == [0, 1]
    assert all(max(p.image.size) == 1540 for p in pages)
    again = pickle.loads(pickle.dumps(pages[1]))
    assert again.image.tobytes() == pages[1].image.tobytes()
