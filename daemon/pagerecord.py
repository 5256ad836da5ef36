"""The typed page records that travel pages -> engine -> pipeline -> journal -> writers.

Contract:

One record per phase, each a tagged union (the type says which kind of page it is; no optional
field stands in for a kind):

- ``PageGeometry``: where the engine's image came from (its size, the decoded page's size, the
  upright turn, the border crop, the deskew turn, the OSD script). The one place page geometry is
  declared: the render stage makes it, the sidecar and the searchable PDF read it.
- Render: ``RenderedPage = ImagePage | LayerPage``. ``ImagePage``: an image for the engine with
  its ``geometry``, the read-first band, ``lines`` (layout-analysis line boxes when the searchable
  PDF needs them and the engine gives no word boxes), why the PDF's text layer was not used.
  ``LayerPage``: a PDF page read from its own text layer: ``LayerBlocks`` (the document-model
  blocks built from the layer, ``daemon.document.layout.layer_page``, and the same blocks as
  Markdown for the raw file and the JSON's page texts) and the verdict's measurements. Both
  carry the optional render-side stages that failed on them (``degraded``). Module-level and
  picklable (they cross the render worker's process boundary).
- Finished page: ``PageResult``, frozen, whose ``content`` is ``EngineText | LayerBlocks``
  (``EngineText``: the engine's text, whether it is Markdown, the geometry of the image read
  and the word/line boxes on it); engine, seconds, flags, engine facts (``meta``, the sidecar's
  ``pages[].meta``), why a text layer was not used, every degraded stage, and the quality check's
  confidence figure and output checks (daemon.quality; not journaled). ``text``, ``source``,
  ``markdown``, ``geometry``, ``layout`` and ``blocks`` are views on the content. The journal
  stores it (``to_record``/``from_record``; a record it cannot read is read again, never
  trusted) and the writers read it (``daemon.writers.pdf``, the sidecar's ``pages``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from PIL import Image

from daemon.document.model import Block, block_from_dict, block_to_dict
from daemon.models import PageLayout, PageText, TextBox, TextLine
from daemon.stages import Degraded

PageSource = Literal["ocr", "text_layer"]

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class PageGeometry:
    """The engine image of a page and how it was made from the decoded page (px)."""

    size: tuple[int, int]  # the engine image (w, h)
    source_size: tuple[int, int]  # the decoded page (w, h) before crop and resize
    rotation: int = 0  # degrees clockwise turned to make the page upright (0/90/180/270)
    cropped: bool = False
    crop_box: Box | None = None  # kept by the border crop, in source px
    script: str = ""  # OSD script ("Latin", "Han", ...), "" when unknown
    skew: float = 0.0  # degrees the lines rose by before the deskew turn (0: not turned)
    unskewed_size: tuple[int, int] | None = None  # the upright image before that turn

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "size": list(self.size), "source_size": list(self.source_size), "rotation": self.rotation,
            "cropped": self.cropped, "script": self.script,
        }
        if self.crop_box is not None:
            out["crop_box"] = list(self.crop_box)
        if self.skew:
            out["skew"] = self.skew
            out["unskewed_size"] = list(self.unskewed_size or self.size)
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PageGeometry:
        crop = d.get("crop_box")
        return cls(
            size=_pair(d["size"]), source_size=_pair(d["source_size"]), rotation=int(d.get("rotation") or 0),
            cropped=bool(d.get("cropped")), crop_box=_box(crop) if crop else None, script=str(d.get("script") or ""),
            skew=float(d.get("skew") or 0.0), unskewed_size=_pair(d["unskewed_size"]) if d.get("unskewed_size") else None,
        )


@dataclass(frozen=True)
class ImagePage:
    """The render stage's answer for a page the engine reads: its image (RGB, upright, at the
    engine's size) and how it was made from the decoded page."""

    index: int
    image: Image.Image
    geometry: PageGeometry
    degraded: tuple[Degraded, ...] = ()  # optional render stages that failed (crop, orientation, deskew)
    # the read-first upright check's English band (text, mean confidence) on the page as it is
    # (``RenderOptions.read_first``, not turned): the Tesseract engine's language probe reuses it
    band: tuple[str, float] | None = None
    lines: PageLayout | None = None  # layout-analysis line boxes (the searchable PDF of a VLM page)
    text_layer_note: str = ""  # a PDF page whose layer was not used: why ("no text layer", ...)
    seconds: float = 0.0


@dataclass(frozen=True)
class LayerBlocks:
    """A PDF page's own text: its blocks and the same blocks as Markdown."""

    blocks: tuple[Block, ...]
    markdown: str


@dataclass(frozen=True)
class LayerPage:
    """The render stage's answer for a PDF page read from its own text layer (no engine)."""

    index: int
    content: LayerBlocks
    meta: Mapping[str, Any] = field(default_factory=dict)  # the verdict's measurements
    degraded: tuple[Degraded, ...] = ()
    seconds: float = 0.0


#: What the render stage returns for one page.
RenderedPage = ImagePage | LayerPage


@dataclass(frozen=True)
class EngineText:
    """What an engine read on a page image: the text (Markdown when ``markdown``, else plain
    OCR text), the geometry of the image it read, and its word or line boxes on that image."""

    text: str
    markdown: bool
    geometry: PageGeometry
    layout: PageLayout | None = None  # word boxes (Tesseract) or line boxes (layout analysis)
    # the page as document-model blocks when the engine built them (Tesseract's scanned tables,
    # daemon.pages.scantables); ``text`` is then the same page as Markdown
    blocks: tuple[Block, ...] | None = None


#: A finished page's text: read by an engine, or the PDF's own text layer.
PageContent = EngineText | LayerBlocks


@dataclass(frozen=True)
class PageResult:
    """One finished page (see the module docstring)."""

    index: int
    engine: str
    content: PageContent
    seconds: float = 0.0
    flags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    text_layer: str = ""
    degraded: tuple[Degraded, ...] = ()
    # the quality check's (daemon.quality), worked out again at every finish, never journaled:
    # the page's confidence figure and its outputs' checks (``CheckResult.to_json()``)
    confidence: Mapping[str, Any] | None = None
    checks: tuple[Mapping[str, Any], ...] = ()

    # -- views on the content ----------------------------------------------------------------------

    @property
    def text(self) -> str:
        """The page's text: the engine's, or the text layer's Markdown."""
        return self.content.text if isinstance(self.content, EngineText) else self.content.markdown

    @property
    def source(self) -> PageSource:
        return "ocr" if isinstance(self.content, EngineText) else "text_layer"

    @property
    def markdown(self) -> bool:
        """Whether ``text`` is Markdown (a text-layer page always is)."""
        return self.content.markdown if isinstance(self.content, EngineText) else True

    @property
    def geometry(self) -> PageGeometry | None:
        return self.content.geometry if isinstance(self.content, EngineText) else None

    @property
    def layout(self) -> PageLayout | None:
        return self.content.layout if isinstance(self.content, EngineText) else None

    @property
    def blocks(self) -> tuple[Block, ...] | None:
        return self.content.blocks

    # -- made from the render stage's and the engine's records -------------------------------------

    @classmethod
    def from_layer(cls, page: LayerPage) -> PageResult:
        return cls(
            index=page.index, engine="text_layer", content=page.content, seconds=page.seconds, meta=dict(page.meta),
            degraded=page.degraded,
        )

    @classmethod
    def from_engine(cls, page: ImagePage, answer: PageText, engine_markdown: bool) -> PageResult:
        layout = answer.layout if answer.layout is not None else page.lines
        geometry = page.geometry
        turned = answer.turned % 360
        if turned:
            # the engine read the page turned further (its upside-down re-read) and its boxes lie
            # on that page: the page's rotation is the whole turn (sidecar, searchable PDF). A
            # half turn keeps the size; a deskew's turn about the centre commutes with it.
            size = geometry.size if turned == 180 else (geometry.size[1], geometry.size[0])
            geometry = replace(geometry, rotation=(geometry.rotation + turned) % 360, size=size)
        meta = dict(answer.meta)
        if answer.markdown:  # the sidecar's engine details say so (a plain-text engine's page of tables)
            meta = _with_markdown_flag(meta)
        return cls(
            index=page.index, engine=answer.engine,
            content=EngineText(answer.text, engine_markdown or answer.markdown, geometry, layout, answer.blocks),
            seconds=answer.seconds, flags=tuple(answer.flags), meta=meta, text_layer=page.text_layer_note,
            degraded=(*page.degraded, *answer.degraded),
        )

    def without_layout(self) -> PageResult:
        """The page without its boxes (kept only when the searchable PDF is written)."""
        if isinstance(self.content, EngineText) and self.content.layout is not None:
            return replace(self, content=replace(self.content, layout=None))
        return self

    def with_degraded(self, extra: Sequence[Degraded]) -> PageResult:
        return self if not extra else replace(self, degraded=(*self.degraded, *extra))

    # -- the sidecar's page entry ----------------------------------------------------------------

    def sidecar(self) -> dict[str, Any]:
        """The sidecar's ``pages[]`` entry (daemon/service/sidecar.py, docs/outputs.md)."""
        out: dict[str, Any] = {"index": self.index}
        if isinstance(self.content, EngineText):
            g = self.content.geometry.to_json()
            out.update(rotation=g["rotation"], cropped=g["cropped"], script=g["script"], size=g["size"],
                       source_size=g["source_size"])
            if "crop_box" in g:
                out["crop_box"] = g["crop_box"]
        out["source"] = self.source
        if self.text_layer:
            out["text_layer"] = self.text_layer
        out["seconds"] = round(self.seconds, 3)
        out["flags"] = list(self.flags)
        if self.confidence is not None:
            out["confidence"] = dict(self.confidence)
        if self.checks:
            out["checks"] = [dict(c) for c in self.checks]
        if self.meta:
            out["meta"] = dict(self.meta)
        out["degraded"] = [d.to_json() for d in self.degraded]
        return out

    # -- the journal's record (page-level resume) --------------------------------------------------

    def to_record(self) -> str:
        """JSON for the journal's ``pages.info`` column (the text, engine and source have columns
        of their own)."""
        c = self.content
        return json.dumps({
            "v": RECORD_VERSION,
            "markdown": c.markdown if isinstance(c, EngineText) else True,
            "geometry": c.geometry.to_json() if isinstance(c, EngineText) else None,
            "layout": _layout_to_json(c.layout) if isinstance(c, EngineText) and c.layout is not None else None,
            "blocks": None if c.blocks is None else [block_to_dict(b) for b in c.blocks],
            "text_layer": self.text_layer,
            "degraded": [d.to_json() for d in self.degraded],
        }, ensure_ascii=False)

    @classmethod
    def from_record(
        cls, *, index: int, text: str, engine: str, source: str, seconds: float, flags: Sequence[str],
        meta: Mapping[str, Any], info: str,
    ) -> PageResult:
        """The page ``to_record`` stored; ``ValueError`` (or ``KeyError``/``TypeError``) for a
        record of another version or a damaged one."""
        d = json.loads(info)
        if not isinstance(d, dict) or d.get("v") != RECORD_VERSION:
            raise ValueError("page record of another version")
        content: PageContent
        if source == "ocr":
            geo, lay = d.get("geometry"), d.get("layout")
            if geo is None:
                raise ValueError("OCR page record without geometry")
            got = d.get("blocks")
            content = EngineText(text, bool(d["markdown"]), PageGeometry.from_json(geo),
                                 None if lay is None else _layout_from_json(lay),
                                 None if got is None else tuple(block_from_dict(b) for b in got))
        elif source == "text_layer":
            blocks = d.get("blocks")
            if blocks is None:
                raise ValueError("text-layer page record without blocks")
            content = LayerBlocks(tuple(block_from_dict(b) for b in blocks), text)
        else:
            raise ValueError(f"unknown page source {source!r}")
        return cls(
            index=index, engine=engine, content=content, seconds=seconds, flags=tuple(str(f) for f in flags),
            meta=dict(meta), text_layer=str(d.get("text_layer") or ""),
            degraded=tuple(Degraded.from_json(x) for x in d.get("degraded") or ()),
        )


#: Version of ``PageResult.to_record``'s JSON: records of another version are read again.
RECORD_VERSION = 3


def _pair(v: Any) -> tuple[int, int]:
    return int(v[0]), int(v[1])


def _box(v: Any) -> Box:
    return int(v[0]), int(v[1]), int(v[2]), int(v[3])


def _layout_to_json(layout: PageLayout) -> dict[str, Any]:
    return {
        "size": list(layout.size), "has_words": layout.has_words,
        "lines": [
            {"box": list(ln.box), "block": ln.block, "words": [[w.text, *w.box] for w in ln.words]}
            for ln in layout.lines
        ],
    }


def _layout_from_json(d: Mapping[str, Any]) -> PageLayout:
    lines = [
        TextLine(_box(ln["box"]), [TextBox(str(w[0]), _box(w[1:5])) for w in ln["words"]], int(ln["block"]))
        for ln in d["lines"]
    ]
    return PageLayout(_pair(d["size"]), lines, bool(d["has_words"]))


#: The engine details a page's ``markdown`` flag follows in the sidecar: the place the Tesseract
#: engine wrote it when the flag was a ``meta`` key, kept so that sidecars stay byte-identical.
_BEFORE_MARKDOWN = ("languages", "script", "confidence", "word_confidence", "low_words", "ink_ppm")


def _with_markdown_flag(meta: dict[str, Any]) -> dict[str, Any]:
    head = {k: v for k, v in meta.items() if k in _BEFORE_MARKDOWN}
    return {**head, "markdown": True, **{k: v for k, v in meta.items() if k not in head}}
