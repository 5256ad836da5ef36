"""Which stages can fail a page, and the one boundary every optional stage runs behind.

Contract:

- ``ESSENTIAL``: open the file, render a page, recognise it (the engine's first read, or the
  PDF's own text layer), write an output. Only these can fail a page, and through it the document
  (bounded retries, then the failed folder: ``daemon.service.pipeline``).
- ``OPTIONAL``: stages that only *add* something to a page or a document. Each runs behind
  ``optional(stage, fn, fallback, sink)``: an exception it raises is caught there, the fallback
  (what the page or document would be without the stage) is used, and a ``Degraded`` record is
  appended to ``sink``. The record travels with the page (``PageResult.degraded``) or the
  document; the pipeline logs it with document and page, counts it in ``/metrics``
  (``ocr_daemon_degraded_total{stage}``) and writes it to the sidecar
  (``pages[].degraded`` / ``degraded``). A stage never costs a document its text.
- ``MemoryError`` is not caught: a render worker over its memory limit is a crash of the
  essential render stage (``WorkerCrash``), not a degraded page.
- Fault injection for tests: ``$OCR_DAEMON_FAIL_STAGES`` (comma-separated stage names, or
  ``all``) makes ``optional`` raise ``InjectedFault`` inside those stages, in every process
  (render workers inherit the environment). The end-to-end tests force each optional stage to
  fail this way and check that the document still comes out with the stage recorded.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Environment variable of the fault-injection hook (see the module docstring).
FAIL_ENV = "OCR_DAEMON_FAIL_STAGES"
#: Longest error text kept in a ``Degraded`` record (a library's message can be a page long).
MAX_ERROR = 300


class Stage(enum.StrEnum):
    # essential: can fail a page
    OPEN = "open"
    RENDER = "render"
    RECOGNISE = "recognise"
    WRITE = "write"
    # optional: only add something
    TABLES = "tables"  # scanned tables found and read cell by cell (Tesseract engine)
    ORIENTATION = "orientation"  # OSD turn of the page, the engine's upside-down re-read
    CROP = "crop"  # the dark scanner-border crop
    DESKEW = "deskew"  # a page fed a few degrees askew turned straight (daemon.pages.deskew)
    LANGUAGE_REREAD = "language_reread"  # Tesseract's re-reads in the page's own language/script
    LOST_TEXT = "lost_text"  # ink the Tesseract read left without words, read again (tessrecover)
    TEXT_LAYER_TABLES = "text_layer_tables"  # tables of a PDF text layer (ruled, rule-only, unruled)
    TEXT_LAYER_LAYOUT = "text_layer_layout"  # headings, lists, paragraphs of a text layer
    PDF_ALIGNMENT = "pdf_alignment"  # line boxes and text placement of the searchable PDF
    PDF = "pdf"  # the searchable PDF as a whole (the text outputs never wait on it)
    PDF_TEXT = "pdf_text"  # the searchable PDF's text layer checked against the page's words (daemon.quality.checks)
    DATES = "dates"  # the date printed on the document
    CLASSIFY = "classify"  # language and document type features (fallback: unknown / other)
    QUALITY = "quality"  # page confidence figures and output checks (daemon.quality): a check that cannot run


ESSENTIAL: frozenset[Stage] = frozenset({Stage.OPEN, Stage.RENDER, Stage.RECOGNISE, Stage.WRITE})
OPTIONAL: frozenset[Stage] = frozenset(s for s in Stage if s not in ESSENTIAL)


@dataclass(frozen=True)
class Degraded:
    """An optional stage that failed: which, and the error it raised (type: message)."""

    stage: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"stage": self.stage, "error": self.error}

    @classmethod
    def from_json(cls, d: Any) -> Degraded:
        return cls(str(d["stage"]), str(d["error"]))


class InjectedFault(RuntimeError):
    """Raised inside an optional stage named in ``$OCR_DAEMON_FAIL_STAGES`` (tests)."""


def _injected(stage: Stage) -> bool:
    names = os.environ.get(FAIL_ENV, "")
    if not names:
        return False
    wanted = {n.strip() for n in names.split(",")}
    return "all" in wanted or stage.value in wanted


def describe(e: BaseException) -> str:
    """``Type: message`` of an exception, on one line, at most ``MAX_ERROR`` characters."""
    text = " ".join(f"{type(e).__name__}: {e}".split())
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "…"


def optional(stage: Stage, fn: Callable[[], T], fallback: Callable[[], T], sink: list[Degraded]) -> T:
    """``fn()``; if it raises (anything but ``MemoryError``), ``fallback()`` with the failure
    recorded in ``sink``. ``stage`` must be optional (an essential stage has no fallback)."""
    if stage not in OPTIONAL:
        raise ValueError(f"{stage} is an essential stage: it has no fallback")
    try:
        if _injected(stage):
            raise InjectedFault(f"forced failure of the {stage} stage (${FAIL_ENV})")
        return fn()
    except MemoryError:
        raise
    except Exception as e:
        sink.append(Degraded(stage.value, describe(e)))
        log.debug("optional stage %s failed: %s", stage, e, exc_info=True)
        return fallback()
