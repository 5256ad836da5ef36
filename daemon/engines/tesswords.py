"""Tesseract's recognised words with their boxes, as the pipeline's ``PageLayout``.

Contract: ``word_layout(api, size)`` reads the words of the page ``api`` has just recognised
(grouped by line in Tesseract's reading order, blocks numbered from 0), leaving out empty words
(tesserocr raises "No text returned" for some; a word without a box); ``turned_half(layout)``
puts every box of a page read upside down back where it lies on the page as rendered. Used by
the Tesseract engine (the searchable PDF's words, the table search) and the scanned-table reader
(``daemon.pages.scantables``). Split out of tesseract.py, which keeps the engine.
"""

from __future__ import annotations

from typing import Any

from daemon.models import PageLayout, TextBox, TextLine


def word_layout(api: Any, size: tuple[int, int]) -> PageLayout:
    """The words of the page ``api`` has just recognised, with their boxes, grouped by line in
    Tesseract's reading order (blocks numbered from 0). Empty words (Tesseract reports some for
    image regions, and one without any box for an image with no text: a crop of nothing but
    fill-in lines) are left out; a line without any word is dropped. Never raises for what
    Tesseract found on the image (the scanned-table reader's crops come through here too)."""
    from tesserocr import RIL, iterate_level

    lines: list[TextLine] = []
    block = -1
    it = api.GetIterator()
    if it is None:
        return PageLayout(size=size, has_words=True)
    for w in iterate_level(it, RIL.WORD):
        if w.IsAtBeginningOf(RIL.BLOCK) or block < 0:
            block += 1
        if w.IsAtBeginningOf(RIL.TEXTLINE) or not lines:
            lbox = w.BoundingBox(RIL.TEXTLINE)
            if lbox is None:
                continue
            lines.append(TextLine(box=tuple(lbox), block=block))
        try:
            text = (w.GetUTF8Text(RIL.WORD) or "").strip()
        except RuntimeError:  # tesserocr's "No text returned" (Tesseract's NULL) for an empty word
            continue
        wbox = w.BoundingBox(RIL.WORD)
        if text and wbox is not None:
            lines[-1].words.append(TextBox(text=text, box=tuple(wbox), conf=float(w.Confidence(RIL.WORD))))
    return PageLayout(size=size, lines=[ln for ln in lines if ln.words], has_words=True)


def turned_half(layout: PageLayout) -> PageLayout:
    """``layout`` of a page read upside down (the engine's own half turn), with every box put
    back where it lies on the page as the render stage gave it (x -> w - x, y -> h - y)."""
    w, h = layout.size

    def flip(b: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        return (w - b[2], h - b[3], w - b[0], h - b[1])

    lines = [
        TextLine(flip(ln.box), [TextBox(wd.text, flip(wd.box), wd.conf) for wd in ln.words], ln.block) for ln in layout.lines
    ]
    return PageLayout(layout.size, lines, layout.has_words)
