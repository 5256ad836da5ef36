"""The typed page records that travel pages -> engine -> pipeline -> journal -> writers.

Contract:

- ``PageGeometry``: where the engine's image came from (its size, the decoded page's size, the
  upright turn, the border crop, the OSD script). Only pages an engine read have one.
- ``LayerPage``: a PDF page read from its own text layer: the document-model blocks built from
  the layer (``daemon.document.layout.layer_blocks``) and the same blocks as Markdown (for the
  raw file and the JSON's page texts). The blocks go to the writers as they are: no round trip
  through Markdown.
- ``RenderedPage``: what the render stage returns for one page, whatever it found: an image for
  the engine (``image`` and ``geometry``; ``lines``: layout-analysis line boxes when the
  searchable PDF needs them and the engine gives no word boxes), or the page's text layer
  (``layer``); ``degraded``: optional render-side stages that failed on it. Module-level and
  picklable (it crosses the render worker's process boundary).
- ``PageResult``: one finished page, frozen: text and its source (``ocr`` | ``text_layer``),
  engine, seconds, geometry, word/line boxes, text-layer blocks, flags, engine facts
  (``meta``), why a text layer was not used, every degraded stage, and the quality check's
  confidence figure and output checks (daemon.quality; not journaled). The journal stores it
  (``to_record``/``from_record``; a record it cannot read is read again, never trusted) and the
  writers read it (``daemon.writers.pdf.pdf_pages``, the sidecar's ``pages``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
class LayerPage:
    """A PDF page's own text: its blocks and the same blocks as Markdown."""

    blocks: tuple[Block, ...]
    markdown: str
    meta: Mapping[str, Any] = field(default_factory=dict)  # the verdict's measurements


@dataclass(frozen=True)
class RenderedPage:
    """The render stage's answer for one page (see the module docstring)."""

    index: int
    image: Image.Image | None = None
    geometry: PageGeometry | None = None
    layer: LayerPage | None = None
    lines: PageLayout | None = None
    text_layer_note: str = ""  # a PDF page whose layer was not used: why ("no text layer", ...)
    degraded: tuple[Degraded, ...] = ()
    seconds: float = 0.0
    band: tuple[str, float] | None = None  # ``daemon.models.Page.band``: the engine's probe reuses it


@dataclass(frozen=True)
class PageResult:
    """One finished page (see the module docstring)."""

    index: int
    text: str  # Markdown when ``markdown``, else plain OCR text
    engine: str
    source: PageSource = "ocr"
    markdown: bool = False
    seconds: float = 0.0
    geometry: PageGeometry | None = None
    layout: PageLayout | None = None  # word boxes (Tesseract) or line boxes (layout analysis)
    blocks: tuple[Block, ...] | None = None  # text-layer pages, scanned pages with tables: the model blocks, used as they are
    flags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    text_layer: str = ""
    degraded: tuple[Degraded, ...] = ()
    # the quality check's (daemon.quality), worked out again at every finish, never journaled:
    # the page's confidence figure and its outputs' checks (``CheckResult.to_json()``)
    confidence: Mapping[str, Any] | None = None
    checks: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_layer(cls, page: RenderedPage, layer: LayerPage) -> PageResult:
        return cls(
            index=page.index, text=layer.markdown, engine="text_layer", source="text_layer", markdown=True,
            seconds=page.seconds, blocks=layer.blocks, meta=dict(layer.meta), degraded=page.degraded,
        )

    @classmethod
    def from_engine(cls, page: RenderedPage, answer: PageText, engine_markdown: bool) -> PageResult:
        layout = answer.layout if answer.layout is not None else page.lines
        geometry = page.geometry
        turned = int(answer.meta.get("turned") or 0) % 360
        if turned and geometry is not None:
            # the engine read the page turned further (its upside-down re-read) and its boxes lie
            # on that page: the page's rotation is the whole turn (sidecar, searchable PDF). A
            # half turn keeps the size; a deskew's turn about the centre commutes with it.
            from dataclasses import replace

            size = geometry.size if turned == 180 else (geometry.size[1], geometry.size[0])
            geometry = replace(geometry, rotation=(geometry.rotation + turned) % 360, size=size)
        return cls(
            index=page.index, text=answer.text, engine=answer.engine, source="ocr",
            markdown=engine_markdown or bool(answer.meta.get("markdown")), seconds=answer.seconds,
            geometry=geometry, layout=layout, blocks=answer.blocks, flags=tuple(answer.flags), meta=dict(answer.meta),
            text_layer=page.text_layer_note, degraded=(*page.degraded, *answer.degraded),
        )

    def without_layout(self) -> PageResult:
        """The page without its boxes (kept only when the searchable PDF is written)."""
        from dataclasses import replace

        return replace(self, layout=None)

    def with_degraded(self, extra: Sequence[Degraded]) -> PageResult:
        from dataclasses import replace

        return self if not extra else replace(self, degraded=(*self.degraded, *extra))

    # -- the sidecar's page entry ----------------------------------------------------------------

    def sidecar(self) -> dict[str, Any]:
        """The sidecar's ``pages[]`` entry (daemon/service/sidecar.py, docs/outputs.md)."""
        out: dict[str, Any] = {"index": self.index}
        if self.geometry is not None:
            g = self.geometry.to_json()
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
        return json.dumps({
            "v": RECORD_VERSION,
            "markdown": self.markdown,
            "geometry": None if self.geometry is None else self.geometry.to_json(),
            "layout": None if self.layout is None else _layout_to_json(self.layout),
            "blocks": None if self.blocks is None else [block_to_dict(b) for b in self.blocks],
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
        kind: PageSource
        if source == "ocr":
            kind = "ocr"
        elif source == "text_layer":
            kind = "text_layer"
        else:
            raise ValueError(f"unknown page source {source!r}")
        geo = d.get("geometry")
        lay = d.get("layout")
        blocks = d.get("blocks")
        return cls(
            index=index, text=text, engine=engine, source=kind, markdown=bool(d["markdown"]),
            seconds=seconds, geometry=None if geo is None else PageGeometry.from_json(geo),
            layout=None if lay is None else _layout_from_json(lay),
            blocks=None if blocks is None else tuple(block_from_dict(b) for b in blocks),
            flags=tuple(str(f) for f in flags), meta=dict(meta), text_layer=str(d.get("text_layer") or ""),
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
