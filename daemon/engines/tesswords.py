"""The Tesseract engine's helpers around a page read: layout direction, text tidying, ink, word
confidences (the words themselves: ``daemon.tessapi.word_layout``).

Contract: ``vertical_share(api,
image)``: the share of the text-line area Tesseract's layout analysis finds written top to
bottom (tategaki columns). ``tidy_text(raw)``: Tesseract's text as the engine returns it (see
the function); ``ink_ppm_of(gray)``: the ink of a page read as next to no words;
``low_word_share(confidences)`` / ``layout_confidences(layout)``: the share of the words read
under ``LOW_WORD_CONF`` (``daemon.quality.signals`` says why; the engine records it per page). Used by
the Tesseract engine (``daemon.engines.tesseract``) and the quality signals.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from daemon.intake.pagescan import ink_ppm
from daemon.tessapi import TessApi


def vertical_share(api: TessApi, image: Any) -> float:
    """Share (0-1) of the area of the text lines Tesseract's layout analysis (no recognition)
    finds on ``image`` that run top to bottom. A vertical Japanese letter: 1.0 (0.15 s on a
    1240 px page); the same text set horizontally: 0.0; a Latin page turned sideways also 1.0,
    so this tells columns from lines only on a page already known to be upright CJK."""
    down = total = 0
    for line in api.layout_lines(image):
        box = line.box
        area = (box[2] - box[0]) * (box[3] - box[1])
        total += area
        if line.vertical:
            down += area
    return down / total if total else 0.0


_CJK_CHAR = r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_SPACE = re.compile(rf"(?<={_CJK_CHAR})[ \t]+(?={_CJK_CHAR})")


def tidy_text(raw: str) -> str:
    """Tesseract output -> plain text: lines kept, paragraphs separated by exactly one blank
    line, trailing spaces and Tesseract's form feeds removed, no spaces between CJK chars."""
    text = raw.replace("\f", "").replace("\r", "")
    text = _CJK_SPACE.sub("", text)
    lines = [ln.rstrip() for ln in text.split("\n")]
    text = "\n".join(lines)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


def ink_ppm_of(gray: Any) -> float:
    """Ink on the page image, per million pixels of its content area (daemon.intake.pagescan's
    blank rule; the page taken as A4 wide): a page read as nothing that has ink is a doubtful
    read, a blank one is not (daemon.quality.confidence)."""
    import numpy as np

    return ink_ppm(np.asarray(gray), gray.width / 210.0)


MIN_WORDS = 20  # Latin words of 3+ letters (or word boxes) before a share is judged
LOW_WORD_CONF = 60.0


def low_word_share(confidences: Iterable[float]) -> float | None:
    """See the module docstring (``confidences``: the page's word confidences, -1 unknown)."""
    known = [c for c in confidences if c >= 0]
    if len(known) < MIN_WORDS:
        return None
    return sum(c < LOW_WORD_CONF for c in known) / len(known)


def layout_confidences(layout: Any) -> list[float]:
    """The word confidences of a ``PageLayout`` (empty without words)."""
    if layout is None or not getattr(layout, "has_words", False):
        return []
    return [w.conf for ln in layout.lines for w in ln.words]
