"""Small dataclasses shared by the pipeline stages.

Data flows one way: watch -> stability -> journal -> render -> engine -> classify -> route ->
outputs -> archive. Each stage takes and returns these types and never reaches into another
stage's internals.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image


class DocState(enum.StrEnum):
    """Journal states of a document. ``queued -> processing -> done | failed`` (listed in this
    order by ``ocr-daemon status``)."""

    QUEUED = "queued"
    PROCESSING = "processing"
    DONE = "done"
    DUPLICATE = "duplicate"  # same content as an earlier done document, linked to its result
    SUPERSEDED = "superseded"  # replaced by a newer version mid-processing; the new one is its own row
    FAILED = "failed"


@dataclass(frozen=True)
class Candidate:
    """A file the watcher/rescan saw in an inbox; not yet known to be complete."""

    path: Path
    inbox: str


@dataclass
class Document:
    """A journal row as the pipeline sees it."""

    id: int
    path: Path
    inbox: str
    size: int
    mtime: float
    sha256: str
    attempts: int = 0
    state: DocState = DocState.QUEUED

    @property
    def tag(self) -> str:
        """Short id put on every log line about this document."""
        return f"doc-{self.id}"


@dataclass
class RenderOptions:
    """What the render stage needs from the config."""

    longest_edge: int = 1540
    max_dpi: int = 200
    max_pages: int = 500
    max_image_pixels: int = 200_000_000
    autorotate: bool = True
    crop_borders: bool = True
    # Render at this resolution instead of ``longest_edge`` (engines that read best at a given
    # dpi: Tesseract); see daemon/pages/render.py. None: pages at ``longest_edge`` (the VLM).
    dpi: int | None = None


@dataclass
class Page:
    """One rendered page, already at the engine's target size, upright, RGB."""

    index: int  # 0-based position in the document
    image: Image.Image
    rotation: int = 0  # degrees clockwise applied to make the page upright (0/90/180/270)
    cropped: bool = False
    source_size: tuple[int, int] = (0, 0)  # (w, h) in px before resizing/cropping
    script: str = ""  # OSD script ("Latin", "Han", "Japanese"...) when autorotate ran; "" if unknown


@dataclass
class PageText:
    """An engine's answer for one page."""

    index: int
    text: str  # Markdown for VLM engines, plain text for Tesseract
    engine: str
    seconds: float = 0.0
    flags: list[str] = field(default_factory=list)  # e.g. "repetition", "truncated", "banded"
    meta: dict[str, Any] = field(default_factory=dict)
    # where the text came from: "ocr" (an engine read the page image) or "text_layer" (the PDF's
    # own text, see engine.text_layer); the sidecar records it per page
    source: str = "ocr"


@dataclass
class Classification:
    """Language and document type of a document."""

    language: str  # ISO 639-1 among the 11 supported, or "unknown"
    language_confidence: float
    doctype: str  # a key of ``doctypes`` or "other"
    doctype_scores: dict[str, float] = field(default_factory=dict)
    fired: dict[str, list[str]] = field(default_factory=dict)  # doctype -> matchers that fired
    has_table: bool = False
    has_math: bool = False
    doctype_thresholds: dict[str, float] = field(default_factory=dict)  # doctype -> its threshold (explain)
    doc_date: str | None = None  # the date printed on the document, YYYY-MM-DD (daemon/understand/dates.py)


@dataclass
class RouteDecision:
    """The route chosen for a document and what it asks for."""

    name: str
    formats: list[str]
    destination: Path  # folder the outputs go to (template already expanded)
    source_action: str  # keep | archive | delete
    archive_dir: Path | None = None
    csv_bom: bool = False  # CSV files start with a UTF-8 BOM (Excel)


@dataclass
class OcrResult:
    """Everything the output writers need about a processed document."""

    document: Document
    pages: list[PageText]
    page_info: list[dict[str, Any]]  # per page: rotation, cropped, size
    classification: Classification
    route: RouteDecision
    engine: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.pages)
