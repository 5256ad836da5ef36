"""daemon.pages.deskew: the skew of a page's lines measured, the page turned straight, and
points of the straightened page mapped back onto the scan (what the searchable PDF relies on)."""

from __future__ import annotations

import docgen
import numpy as np
import pytest
from PIL import Image, ImageDraw

from daemon.pages.deskew import MIN_SKEW, deskew, skew_angle, unskew_point


@pytest.fixture(scope="module")
def page() -> Image.Image:
    return docgen.text_image(docgen.SAMPLES["en"] + "\n\n" + docgen.SAMPLES["de"], width=1240, font_size=28)


def _turned(img: Image.Image, degrees: float) -> Image.Image:
    """``img`` turned counter-clockwise (as seen) by ``degrees``: its lines rise by as much."""
    return img.rotate(degrees, expand=True, fillcolor="white", resample=Image.Resampling.BICUBIC)


@pytest.mark.parametrize("degrees", [-7.0, -3.2, -1.5, 1.5, 4.4, 9.0])
def test_the_skew_of_a_text_page_is_measured(page: Image.Image, degrees: float) -> None:
    assert skew_angle(_turned(page, degrees)) == pytest.approx(degrees, abs=0.2)


def test_straight_blank_and_barely_skewed_pages_are_left(page: Image.Image) -> None:
    assert skew_angle(page) == 0.0
    assert skew_angle(Image.new("RGB", (1240, 1754), "white")) == 0.0
    assert skew_angle(_turned(page, MIN_SKEW / 2)) == 0.0  # below MIN_SKEW: not worth a resample


def test_a_photo_without_lines_is_left() -> None:
    rnd = np.random.default_rng(7)
    noise = rnd.integers(0, 255, (900, 700), dtype=np.uint8)  # a busy picture, half of it dark
    blobs = Image.new("L", (1200, 900), 255)
    d = ImageDraw.Draw(blobs)
    for _ in range(60):
        x, y, r = (int(v) for v in rnd.integers(0, 1200, 3) % (1200, 900, 60))
        d.ellipse([x, y, x + r + 5, y + r + 5], fill=int(rnd.integers(0, 120)))
    assert skew_angle(Image.fromarray(noise)) == 0.0
    assert skew_angle(blobs) == 0.0


def test_deskew_straightens_and_points_map_back_onto_the_scan(page: Image.Image) -> None:
    scan = _turned(page, -4.0).convert("RGB")
    ImageDraw.Draw(scan).rectangle([300, 400, 306, 406], fill=(255, 0, 0))
    straight, angle = deskew(scan)
    assert angle == pytest.approx(-4.0, abs=0.2)
    assert skew_angle(straight) == 0.0 and straight.width > scan.width  # expanded: no corner cut
    a = np.asarray(straight).astype(int)
    ys, xs = np.nonzero((a[:, :, 0] > 200) & (a[:, :, 1] < 80) & (a[:, :, 2] < 80))
    x, y = unskew_point(float(xs.mean()), float(ys.mean()), angle, straight.size, scan.size)
    assert (x, y) == (pytest.approx(303, abs=1.5), pytest.approx(403, abs=1.5))
    same, none = deskew(page)
    assert same is page and none == 0.0
    assert unskew_point(10, 20, 0.0, (5, 5), (9, 9)) == (10, 20)
