"""Finished page records for tests that need a page an engine read (``PageResult`` with
``EngineText`` content) without rendering one: ``ocr_page(index, text, ...)``. An engine page
always has the geometry of the image it read; ``GEOMETRY`` stands in for an A4-ish page image
at its source size when the test does not care."""

from __future__ import annotations

from typing import Any

from daemon.models import PageLayout
from daemon.pagerecord import EngineText, PageGeometry, PageResult

GEOMETRY = PageGeometry(size=(1000, 1414), source_size=(1000, 1414))


def ocr_page(
    index: int, text: str, engine: str = "tesseract", *, markdown: bool = False,
    geometry: PageGeometry = GEOMETRY, layout: PageLayout | None = None, **fields: Any,
) -> PageResult:
    """An engine's finished page; ``fields``: the other ``PageResult`` fields (seconds, meta ...)."""
    return PageResult(index=index, engine=engine, content=EngineText(text, markdown, geometry, layout), **fields)
