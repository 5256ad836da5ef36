"""No paragraph left behind (issue 32, item 4): ink where Tesseract's read found no words is read
again on its own and merged in reading order (``daemon.engines.tessrecover``).

Real Tesseract on real page images: a scanned page of prose (the GPL's preamble, set as a word
processor would, rendered at 300 dpi, 1 degree askew, noisy; ``tests/prosegen.py``) and a photo
of a diary page written in a script font on ruled paper. A lost paragraph is made by taking a
block out of the page's real read (the state a read that dropped it leaves); the diary page
loses lines to the engine's own binarisation.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import prosegen  # noqa: E402

from daemon.engines.tesseract import INK_LUT, THRESHOLDING_METHOD, tidy_text  # noqa: E402
from daemon.engines.tessrecover import merge_text, missing_regions, recover  # noqa: E402
from daemon.models import PageLayout  # noqa: E402
from daemon.pages.orient import tessdata_dir  # noqa: E402
from daemon.tessapi import (
    PSM,  # noqa: E402
    word_layout,  # noqa: E402
)


def _words(s: str) -> list[str]:
    return re.findall(r"[a-z]{3,}", s.lower())


@pytest.fixture(scope="module")
def scan_page(tmp_path_factory: pytest.TempPathFactory) -> Image.Image:
    folder = tmp_path_factory.mktemp("prose")
    prosegen.prose_pdf(folder / "prose.pdf")
    prosegen.scan_pdf(folder / "prose.pdf", folder / "scan.pdf", dpi=300, skew=-1.0, noise=6.0)
    with pymupdf.open(folder / "scan.pdf") as doc:
        pix = doc[0].get_pixmap(dpi=300, colorspace=pymupdf.csGRAY)
    return Image.frombytes("L", (pix.width, pix.height), pix.samples).point(INK_LUT)


@pytest.fixture(scope="module")
def api():  # type: ignore[no-untyped-def]
    from daemon.tessapi import OEM, ApiSpec, new_api

    a = new_api(ApiSpec(tessdata_dir(), "eng", PSM.AUTO, OEM.LSTM_ONLY, (("thresholding_method", THRESHOLDING_METHOD),)))
    yield a
    a.end()


@pytest.fixture(scope="module")
def read(scan_page: Image.Image, api) -> tuple[str, PageLayout]:  # type: ignore[no-untyped-def]
    api.set_image(scan_page)
    text = tidy_text(api.text())
    layout = word_layout(api, scan_page.size)
    api.clear()
    return text, layout


def test_a_page_read_in_full_has_nothing_missing(scan_page: Image.Image, read: tuple[str, PageLayout]) -> None:
    assert missing_regions(scan_page, read[1]) == []


def test_a_lost_paragraph_is_read_again_and_put_back_in_order(
    scan_page: Image.Image, read: tuple[str, PageLayout], api,  # type: ignore[no-untyped-def]
) -> None:
    text, layout = read
    blocks = sorted({ln.block for ln in layout.lines})
    lost = blocks[len(blocks) // 2]  # a paragraph in the middle of the page
    lost_lines = [ln for ln in layout.lines if ln.block == lost]
    assert len(lost_lines) >= 3
    lost_words = [w.text for ln in lost_lines for w in ln.words]
    kept = PageLayout(layout.size, [ln for ln in layout.lines if ln.block != lost], True)
    lost_text = "\n".join(" ".join(w.text for w in ln.words) for ln in lost_lines)
    paras = text.split("\n\n")
    para_text = "\n\n".join(p for p in paras if p not in lost_text and lost_text not in p)
    assert len(para_text) < len(text)

    regions = missing_regions(scan_page, kept)
    assert len(regions) == 1, regions
    x0, y0, x1, y1 = regions[0]
    assert y0 <= lost_lines[0].box[1] + 20 and y1 >= lost_lines[-1].box[3] - 20

    merged, recovered = recover(api, scan_page, kept, regions, THRESHOLDING_METHOD)
    back = [w.text for k in sorted(recovered) for w in merged.lines[k].words]
    got = set(_words(" ".join(back)))
    want = _words(" ".join(lost_words))
    assert sum(w in got for w in want) >= 0.95 * len(want), (back, lost_words)
    # in reading order: the recovered lines sit where the lost ones were, in the layout ...
    start = layout.lines.index(lost_lines[0])
    assert sorted(recovered) == list(range(start, start + len(recovered))), (start, recovered)
    # ... and in the text, which reads as the full read did
    new_text = merge_text(para_text, merged, recovered)
    ratio = difflib.SequenceMatcher(None, _words(new_text), _words(text), autojunk=False).ratio()
    assert ratio >= 0.97, new_text


def test_the_api_is_left_as_the_page_read_needs_it(scan_page: Image.Image, read, api) -> None:  # type: ignore[no-untyped-def]
    """After a recovery the API reads a page with PSM AUTO and the engine's threshold again."""
    text, layout = read
    kept = PageLayout(layout.size, layout.lines[: len(layout.lines) // 2], True)
    recover(api, scan_page, kept, missing_regions(scan_page, kept), THRESHOLDING_METHOD)
    assert api.variable("thresholding_method") == THRESHOLDING_METHOD
    assert api.psm() == PSM.AUTO
    api.set_image(scan_page)
    assert _words(tidy_text(api.text())) == _words(text)
    api.clear()


def test_a_photo_is_not_read_as_text(api) -> None:  # type: ignore[no-untyped-def]
    """Ink that is no text (a photo: smooth shading; a ruled form's empty lines) is left alone."""
    import numpy as np

    rng = np.random.default_rng(3)
    page = np.full((1600, 1200), 230, dtype=np.float32)
    yy, xx = np.mgrid[0:600, 0:800]
    page[200:800, 200:1000] = 120 + 60 * np.sin(xx / 70) * np.cos(yy / 50) + rng.normal(0, 4, (600, 800))
    for y in range(950, 1500, 60):  # an empty ruled form
        page[y:y + 3, 150:1050] = 40
    img = Image.fromarray(np.clip(page, 0, 255).astype(np.uint8)).point(INK_LUT)
    regions = missing_regions(img, PageLayout(img.size, [], True))
    merged, recovered = recover(api, img, PageLayout(img.size, [], True), regions, THRESHOLDING_METHOD)
    assert not recovered, [[w.text for w in ln.words] for ln in merged.lines]


def test_the_engine_reads_every_line_of_the_diary_page(tmp_path: Path) -> None:
    """The whole engine on a photo of a handwritten-style diary page on ruled paper."""
    from daemon.config import EngineCfg, TesseractCfg
    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    path = tmp_path / "diary.jpg"
    lines = prosegen.diary_page(path)
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1)))
    eng.start()
    try:
        img = Image.open(path).convert("RGB")
        page = eng.submit(PageRequest("diary", 0, img, script="Latin")).result(300)
    finally:
        eng.close(5)
    got = set(_words(page.text))
    read = [ln for ln in lines if sum(w in got for w in _words(ln)) >= 0.8 * len(_words(ln))]
    assert len(read) >= 8, page.text
    pdf_words = {w.text.lower() for ln in page.layout.lines for w in ln.words}  # type: ignore[union-attr]
    assert sum(w in pdf_words for w in _words(" ".join(lines))) >= 0.8 * len(_words(" ".join(lines)))


def test_recovered_lines_go_where_they_belong_in_text_and_layout() -> None:
    """Merging alone: a line above everything goes first, one between two paragraphs between
    them, in the layout's order and as its own paragraph in the text."""
    from daemon.engines.tessrecover import merge_layout
    from daemon.models import TextBox, TextLine

    def line(text: str, y: int, block: int = 0) -> TextLine:
        words = [TextBox(w, (100 + 80 * k, y, 170 + 80 * k, y + 30)) for k, w in enumerate(text.split())]
        return TextLine((100, y, 100 + 80 * len(words), y + 30), words, block)

    read = PageLayout((1000, 1000), [line("alpha beta", 200, 0), line("gamma delta", 240, 0),
                                     line("epsilon zeta", 500, 1)], True)
    text = "alpha beta\ngamma delta\n\nepsilon zeta"
    merged, recovered = merge_layout(read, [line("title words", 50), line("middle line here", 350)])
    assert [" ".join(w.text for w in ln.words) for ln in merged.lines] == [
        "title words", "alpha beta", "gamma delta", "middle line here", "epsilon zeta"]
    assert recovered == {0, 3}
    assert [ln.block for ln in merged.lines] == [0, 1, 1, 2, 3]
    assert merge_text(text, merged, recovered) == (
        "title words\n\nalpha beta\ngamma delta\n\nmiddle line here\n\nepsilon zeta")
    assert merge_text("", *merge_layout(PageLayout((1000, 1000), [], True), [line("only this", 50)])) == "only this"
