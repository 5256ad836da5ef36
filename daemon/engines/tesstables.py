"""The Tesseract engine's table pass: a page's tables found on its image and read.

Contract:

- ``page_tables(spec, gray, words, rejected) -> ScannedPage | None``: the page with its tables,
  as blocks and as Markdown (``daemon.pages.scantables.ScannedPage``): ruled tables read cell by
  cell with the API ``spec`` names (this thread's, ``daemon.tessapi.thread_api``), unruled ones
  built from the page read's ``words``; the text around the tables is the page read's own
  words. None when the page image shows no table (nothing is read then). A table whose cells
  lost words stays page text, and why is appended to ``rejected``.
- A failure inside Tesseract discards the thread's API for ``spec`` (rebuilt on next use) and
  is raised: the engine runs this as the optional stage ``tables`` (``daemon.stages``), which
  records it, and the page keeps its text.
"""

from __future__ import annotations

from typing import Any

from daemon.models import PageLayout
from daemon.pages.scanrules import light_segments, rule_runs
from daemon.pages.scantables import (
    ScannedPage,
    find_image_grids,
    find_image_rule_regions,
    find_unruled_tables,
    image_segments,
    read_scanned_page,
)
from daemon.tessapi import ApiSpec, discard, thread_api

__all__ = ["page_tables"]


def page_tables(spec: ApiSpec, gray: Any, words: PageLayout, rejected: list[str] | None = None) -> ScannedPage | None:
    """The page with its tables, as blocks and as Markdown: ruled ones read cell by cell
    (``daemon.pages.tables``), unruled ones from the pass's ``words``; None when the page
    image has no table."""

    # dark runs and thin (light or dark) rules found once for both searches and for painting
    # the rules out before the cells are read (0.1 s each at 300 dpi)
    runs = rule_runs(gray)
    segments, light = image_segments(gray), light_segments(gray, runs)
    grids = find_image_grids(gray, segments, light)
    regions = find_image_rule_regions(gray, grids, segments, light)
    grids += find_unruled_tables(words, [g.bbox for g in grids] + [r.bbox for r in regions])
    if not grids and not regions:
        return None
    try:
        return read_scanned_page(thread_api(spec), gray, grids, regions, words, runs, rejected)
    except Exception:
        discard(spec)  # a failed API may be in a bad state: rebuild it next time
        raise  # the optional stage's boundary (the engine's ``_recognise``) records it; the page keeps its text
