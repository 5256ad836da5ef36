"""Small dataclasses shared by the pipeline stages.

Data flows one way: watch -> stability -> journal -> render -> engine -> classify -> route ->
outputs -> archive. Each stage takes and returns these types and never reaches into another
stage's internals.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from daemon.document.model import Block
from daemon.stages import Degraded


class DocState(enum.StrEnum):
    """Journal states of a document. ``queued -> processing -> done | failed`` (listed in this
    order by ``ocr-daemon status``)."""

    QUEUED = "queued"
    PROCESSING = "processing"
    DONE = "done"
    DUPLICATE = "duplicate"  # same content as an earlier done document, linked to its result
    SUPERSEDED = "superseded"  # replaced by a newer version mid-processing; the new one is its own row
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A file the watcher/rescan saw in an inbox; not yet known to be complete. (Slots: the
    stability tracker holds up to ``TRACK_MAX`` of them during a big drop.)"""

    path: Path
    inbox: str
    # when the watcher saw it (monotonic): the stability wait is measured from here
    seen: float = field(default_factory=time.monotonic, compare=False)


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
    """What the render stage needs from the config: built by ``daemon.config.options.render_options``
    only (no defaults of its own, so no value can drift from the config's)."""

    longest_edge: int  # engine.render_longest_edge
    max_pages: int  # engine.max_pages: pages in all
    max_ocr_pages: int  # engine.max_ocr_pages: pages without a usable text layer
    max_image_pixels: int  # engine.max_image_pixels
    autorotate: bool
    crop_borders: bool
    deskew: bool
    # engine.text_layer: auto | any | ocr (daemon.pages.textlayer); math_to_engine: the engine is a
    # VLM, so pages whose text layer holds math as glyph fragments go to it
    text_layer: str
    math_to_engine: bool
    # Render at this resolution instead of ``longest_edge`` (engines that read best at a given
    # dpi: Tesseract); see daemon/pages/render.py. None: pages at ``longest_edge`` (the VLM).
    dpi: int | None
    # Turn pages upright by reading first (the Tesseract engine, daemon.pages.orient
    # ``upright_by_reading``): OSD only for pages whose English text band does not read upright.
    read_first: bool


@dataclass
class TextBox:
    """A word (or any run of text) and its box on the engine's page image: (x0, y0, x1, y1) px,
    top-left origin."""

    text: str
    box: tuple[int, int, int, int]
    conf: float = -1.0  # the engine's confidence in the word, 0-100 (-1: not known)


@dataclass
class TextLine:
    """One line of a page in reading order: its box, its words when known, and its block (the
    layout analysis' text region, numbered from 0 in reading order)."""

    box: tuple[int, int, int, int]
    words: list[TextBox] = field(default_factory=list)
    block: int = 0


@dataclass
class PageLayout:
    """Where text sits on the engine's page image (``size`` = that image's (w, h) px): lines in
    reading order. From Tesseract: the recognised words (``has_words``). From layout analysis
    alone (VLM pages): line boxes without words, to which the searchable PDF aligns the text."""

    size: tuple[int, int]
    lines: list[TextLine] = field(default_factory=list)
    has_words: bool = False
    # Tesseract's word confidences (0-100), each weighted by the word's length; None when unknown
    # (line boxes alone, a layout read back from the journal). daemon.quality.confidence uses it.
    confidence: float | None = None


@dataclass
class PageText:
    """An engine's answer for one page."""

    index: int
    text: str  # Markdown for VLM engines, plain text for Tesseract
    engine: str
    seconds: float = 0.0
    flags: list[str] = field(default_factory=list)  # e.g. "repetition", "truncated", "banded"
    meta: dict[str, Any] = field(default_factory=dict)  # engine details for the sidecar (never read back)
    # the text is Markdown though the engine writes plain text (Tesseract's scanned tables as
    # inline Markdown and HTML); a VLM engine's text is Markdown anyway (``Engine.output_is_markdown``)
    markdown: bool = False
    # degrees the engine turned the page on top of the render stage's turn (Tesseract's upside-down
    # re-read); ``layout`` lies on the turned page (``daemon.pagerecord.PageResult.from_engine``)
    turned: int = 0
    # where the text sits on the engine's page image, for the searchable PDF: Tesseract's words
    # (with words); None for engines that give no positions (VLMs)
    layout: PageLayout | None = None
    # optional engine-side stages that failed on this page (tables, re-reads: daemon.stages)
    degraded: list[Degraded] = field(default_factory=list)
    # the page as document-model blocks when the engine built them (Tesseract's scanned tables:
    # daemon.pages.scantables); ``text`` is then the same page as Markdown
    blocks: tuple[Block, ...] | None = None


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
    doc_date: str | None = None  # the date printed on the document, YYYY-MM-DD (daemon/dates.py)


#: What happens to the source file once its outputs are written (a route's ``source``).
SourceAction = Literal["keep", "archive", "delete"]


@dataclass
class RouteDecision:
    """The route chosen for a document and what it asks for."""

    name: str
    formats: list[str]
    destination: Path  # folder the outputs go to (template already expanded)
    source_action: SourceAction
    archive_dir: Path | None = None
    csv_bom: bool = False  # CSV files start with a UTF-8 BOM (Excel)
    # How sure the doctype the route went by is (``daemon.understand.route.confidence``): the
    # sidecar's ``classification``.
    classification: dict[str, Any] | None = None
    # Why the document wants a person's look (the sidecar's ``review_reasons``); an unsure
    # classification under a route that would archive or delete the source adds one.
    review_reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Progress:
    """How far one document in processing is (``Journal.progress()``; shown by ``ocr-daemon
    status``, the systemd ``STATUS=`` line, the log and the HTTP endpoint).

    ``pages_done`` counts every recorded page, including those an earlier, interrupted attempt
    finished (``resumed``); ``pages_per_s`` is this attempt's rate (pages it finished / seconds
    since it began), and ``eta_s`` the pages left at that rate (None until a page is done or while
    the page count is unknown).
    """

    doc_id: int
    path: Path
    inbox: str
    pages_done: int
    pages_total: int | None  # None until the document is opened
    resumed: int  # pages done by earlier attempts, reused by this one
    started: float  # wall-clock time this attempt began
    pages_per_s: float
    eta_s: float | None

    @property
    def tag(self) -> str:
        return f"doc-{self.doc_id}"

    @classmethod
    def compute(
        cls, *, doc_id: int, path: Path, inbox: str, pages_done: int, pages_total: int | None,
        done_this_attempt: int, started: float, now: float,
    ) -> Progress:
        elapsed = max(1e-6, now - started)
        rate = done_this_attempt / elapsed if done_this_attempt else 0.0
        left = None if pages_total is None else max(0, pages_total - pages_done)
        eta = None if left is None or rate <= 0 else left / rate
        return cls(doc_id, path, inbox, pages_done, pages_total, pages_done - done_this_attempt, started, rate, eta)

    def short(self) -> str:
        """``doc-7 12/300 1.1 p/s ETA 4m23s`` (STATUS= line, log)."""
        total = "?" if self.pages_total is None else str(self.pages_total)
        eta = "" if self.eta_s is None else f" ETA {format_duration(self.eta_s)}"
        return f"{self.tag} {self.pages_done}/{total} {self.pages_per_s:.2f} p/s{eta}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.doc_id, "path": str(self.path), "inbox": self.inbox, "pages_done": self.pages_done,
            "pages_total": self.pages_total, "resumed": self.resumed, "started": round(self.started, 3),
            "pages_per_s": round(self.pages_per_s, 3), "eta_s": None if self.eta_s is None else round(self.eta_s, 1),
        }


def format_duration(seconds: float) -> str:
    """``42s``, ``4m23s``, ``2h05m``: for ETAs."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
