"""The ``low_confidence`` flag on real Tesseract reads (issue 32 item 5): a contract page scanned at
~60 dpi and blurred (the kind of page bench/bench_flag.py's real set reads at recall < 0.8) is
flagged, with the share of unsure words among its reasons; the same page scanned cleanly is not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from corpus import DOCTYPE_TEXTS
from docgen import text_image
from pagerecords import ocr_page
from PIL import ImageFilter
from scangen import Scan, scan

from daemon.config import EngineCfg, TesseractCfg
from daemon.config.schema import MIN_CONFIDENCE
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.quality import Review
from daemon.quality.run import LOW_CONFIDENCE, assess_pages, with_quality


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1)))
    eng.start()
    yield eng
    eng.close()


def test_a_blurred_low_resolution_page_is_flagged_and_a_clean_one_is_not(engine: TesseractEngine) -> None:
    img = text_image(DOCTYPE_TEXTS["contract"]["en"], lang="en", font_size=20)  # ~10 pt at 150 dpi
    clean = scan(img, seed=1, kind=Scan(skew=0.4))
    bad = scan(img.resize((img.width * 2 // 5, img.height * 2 // 5)), seed=1, kind=Scan(skew=0.4))
    bad = bad.filter(ImageFilter.GaussianBlur(0.9))
    pages = []
    for i, im in enumerate((clean, bad)):
        res = engine.submit(PageRequest("doc-flag", i, im.convert("L"))).result(timeout=300)
        assert "low_words" in res.meta  # the engine records the spread of its word confidences
        pages.append(ocr_page(i, res.text, meta=res.meta))
    review = Review()
    quality = assess_pages(pages, "en", MIN_CONFIDENCE, review)
    good_q, bad_q = quality[0], quality[1]
    assert not good_q.low and good_q.confidence is not None and "signals" not in good_q.confidence
    assert bad_q.low and bad_q.confidence is not None and "low_words" in bad_q.confidence["signals"]
    assert [str(r) for r in review.reasons] == [
        f"page 2: low_confidence (conf {bad_q.confidence['value']:.0f}, {', '.join(bad_q.confidence['signals'])})"]
    assert with_quality(pages, quality)[1].flags == (LOW_CONFIDENCE,)
