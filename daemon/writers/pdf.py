"""The ``pdf`` output: the source's own pages with an invisible, positioned text layer.

Contract:

``write_pdf(doc, pages, source, markdown=..., pdfa=...) -> PdfOutput``: the PDF of ``source``
with the text of the page records ``pages`` (``daemon.pagerecord.PageResult``: their text, boxes
and geometry) placed on its pages, its title and language from the document ``doc``
(``pdf_title``, ``doc.language``); it prepares the writer's ``PdfInput`` and calls
``write_pdf_input(inp: PdfInput) -> PdfOutput``: ``data`` is a PDF with one page per source page, in
order, and ``report`` (``daemon.writers.pdfreport.PdfReport``, the sidecar's ``pdf``: ``to_json()``) what the sidecar records (``pages``: per page how its text was placed --
``words``, ``lines``, ``blocks``, ``page``, ``none`` (no text), ``text_layer`` (left untouched:
the page's text came from its own text layer, or a PDF page that already has text); ``pdfa``:
``"PDF/A-2b"`` or the error that kept the plain PDF). It reads ``inp.source`` (never writes it),
raises ``InputError`` only when the source cannot be opened as the pages the daemon read, and
is deterministic for the same input (no timestamps or random ids in the bytes).

- PDF source: every page kept as it is (content streams, resources, annotations; /Rotate but for
  the daemon's upright turn, below). A page that gets a text layer gets two more content
  streams, ``q`` before its own and
  ``Q q <matrix> cm /OCR<n> Do Q`` after, where the form XObject holds the text; its own
  stream's bytes are unchanged. Pages left untouched are not modified at all.
- Image source (PNG, JPEG, TIFF frames, ...): each frame wrapped into a page by img2pdf (the
  library OCRmyPDF uses for the same job): JPEG and most PNG/TIFF data copied without
  re-encoding, page size from the image's DPI (img2pdf's default of 96 dpi when it has none),
  EXIF orientation as the page's /Rotate (an alpha channel becomes a soft mask).
  Images img2pdf refuses (mirrored EXIF orientations, modes it cannot store) are decoded with
  Pillow, turned by EXIF, put on white and stored losslessly.
- Both: the daemon's own upright turn (``PageGeometry.rotation``: OSD, the orientation probe, the
  engine's upside-down re-read) is added to the page's /Rotate, so every page shows upright, as
  the engine read it, and its text layer runs the way the page reads.
- Text: OCRmyPDF's text-layer renderer (``ocrmypdf.fpdf_renderer``, fpdf2; imported without the
  package's ``__init__``, ``_load_renderer``) draws each page's
  lines and words in text render mode 3 (invisible) with OCRmyPDF's bundled fonts only (Noto
  Sans for Latin, the glyphless Occulta for everything else, CJK included), whose ToUnicode maps
  make search and copy return the recognised characters; not the fonts of the machine, so the
  output is the same everywhere and no large CJK font is embedded. Words are stretched to their
  boxes. Positions come from ``daemon.writers.pdflayout.place_text``. Boxes, known on the
  engine's image (cropped, resized, turned upright), are mapped back onto the source page by
  one affine matrix per page (undo the turn, the resize, the crop; page points; the page's
  /Rotate and crop box).
- Metadata: title (the first heading, else the source's name), language (``/Lang``), producer
  ``ocr-daemon``, in the document info and XMP.
- PDF/A (``inp.pdfa``): the plain PDF goes through Ghostscript's pdfwrite with OCRmyPDF's
  PDF/A-2 settings and pdfmark (sRGB output intent; JPEGs passed through, other images Flate),
  then pikepdf declares PDF/A and sets the metadata, and pikepdf's PDF/A validator
  (``pikepdf.pdfa.check``) must pass; on any failure the plain PDF is written and
  ``report.pdfa_error`` says why.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import logging
import os
import shutil
import subprocess
import tempfile
import time
import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image, ImageOps

from daemon.document.inline import plain_text
from daemon.document.model import Document, Heading, Paragraph
from daemon.errors import InputError
from daemon.models import TextBox
from daemon.pagerecord import EngineText, PageGeometry, PageResult
from daemon.pages.deskew import unskew_point
from daemon.pages.probe import mupdf
from daemon.stages import Degraded, Stage, optional
from daemon.writers.pdflayout import PlacedLine, Placement, place_text
from daemon.writers.pdfreport import PdfPageReport, PdfReport

if TYPE_CHECKING:
    import pikepdf

log = logging.getLogger(__name__)

PRODUCER = "ocr-daemon"


@dataclass(frozen=True)
class PdfInput:
    source: Path
    pages: Sequence[PageResult]  # every page of the source, in order: its text, boxes and geometry
    markdown: bool  # page texts are engine Markdown (VLM) rather than plain text
    language: str = "unknown"
    title: str = ""
    pdfa: bool = False


@dataclass
class PdfOutput:
    data: bytes
    report: PdfReport = field(default_factory=PdfReport)


def pdf_suffix(src: Path, destination: Path) -> str:
    """``.ocr.pdf`` when ``<stem>.pdf`` would land beside a PDF source of that name, else ``.pdf``."""
    try:
        beside = os.path.realpath(destination) == os.path.realpath(src.parent)
    except OSError:
        beside = False
    return ".ocr.pdf" if beside and src.suffix.lower() == ".pdf" else ".pdf"


def pdf_title(doc: Document, src: Path) -> str:
    """The document's title: its first heading, else its first line when that is short, else
    the source's name."""
    for page in doc.pages:
        for b in page.blocks:
            if isinstance(b, Heading) and b.text.strip():
                return plain_text(b.text).strip()[:200]
    for page in doc.pages:
        for b in page.blocks:
            if isinstance(b, Paragraph) and b.text.strip():
                first = plain_text(b.text.strip().split("\n")[0]).strip()
                return first if len(first) <= 100 else src.stem
    return src.stem


# --------------------------------------------------------------------------- geometry


def _affine(src: list[tuple[float, float]], dst: list[tuple[float, float]]) -> tuple[float, ...]:
    """The PDF matrix (a b c d e f) taking three points ``src`` to ``dst``."""
    (x1, y1), (x2, y2), (x3, y3) = src
    det = x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2)
    if abs(det) < 1e-12:
        raise ValueError("degenerate points")

    def solve(v1: float, v2: float, v3: float) -> tuple[float, float, float]:
        a = (v1 * (y2 - y3) + v2 * (y3 - y1) + v3 * (y1 - y2)) / det
        b = (x1 * (v2 - v3) + x2 * (v3 - v1) + x3 * (v1 - v2)) / det
        c = (x1 * (y2 * v3 - y3 * v2) + x2 * (y3 * v1 - y1 * v3) + x3 * (y1 * v2 - y2 * v1)) / det
        return a, b, c

    ax, bx, cx = solve(*(p[0] for p in dst))
    ay, by, cy = solve(*(p[1] for p in dst))
    # x' = ax x + bx y + cx ; y' = ay x + by y + cy  ->  PDF [a b c d e f] = [ax ay bx by cx cy]
    return (ax, ay, bx, by, cx, cy)


def _page_box(page: pikepdf.Page) -> tuple[float, float, float, float]:
    box = page.obj.get("/CropBox") or page.mediabox
    x0, y0, x1, y1 = (float(v) for v in box)
    mb = [float(v) for v in page.mediabox]
    # MuPDF (the renderer) shows the crop box clipped to the media box
    x0, y0, x1, y1 = max(min(x0, x1), mb[0]), max(min(y0, y1), mb[1]), min(max(x0, x1), mb[2]), min(max(y0, y1), mb[3])
    return x0, y0, x1, y1


def _page_rotate(page: pikepdf.Page) -> int:
    try:
        return int(page.obj.get("/Rotate", 0)) % 360
    except (TypeError, ValueError):
        return 0


def text_matrix(p: PageGeometry, box: tuple[float, float, float, float], rotate: int) -> tuple[float, ...]:
    """Matrix from the text layer's space (engine image px as points, y up) to the user space
    of a page with crop ``box`` and /Rotate ``rotate`` that the daemon rendered to ``p``."""
    we, he = p.size
    r = p.rotation % 360
    wp, hp = (we, he) if r in (0, 180) else (he, we)  # the image before the upright turn
    bx0, by0, bx1, by1 = box
    bw, bh = bx1 - bx0, by1 - by0
    wd, hd = (bw, bh) if rotate in (0, 180) else (bh, bw)  # the page as displayed, points
    sw, sh = p.source_size
    if sw <= 0 or sh <= 0:
        sw, sh = we, he
    if (sw > sh) != (wd > hd) and sw != sh and abs(wd - hd) > 1e-6:
        sw, sh = sh, sw  # an image's size before its EXIF turn
    cx0, cy0, cx1, cy1 = p.crop_box or (0, 0, sw, sh)

    def f(u: float, v: float) -> tuple[float, float]:
        xe, ye = u, he - v
        if r == 90:
            x, y = ye, hp - xe
        elif r == 180:
            x, y = wp - xe, hp - ye
        elif r == 270:
            x, y = wp - ye, xe
        else:
            x, y = xe, ye
        x = cx0 + x * (cx1 - cx0) / wp
        y = cy0 + y * (cy1 - cy0) / hp
        dx, dy = x * wd / sw, y * hd / sh  # displayed page, points, top-left origin
        if rotate == 90:
            return bx0 + dy, by0 + dx
        if rotate == 180:
            return bx1 - dx, by0 + dy
        if rotate == 270:
            return bx1 - dy, by1 - dx
        return bx0 + dx, by1 - dy

    pts = [(0.0, 0.0), (float(we), 0.0), (0.0, float(he))]
    return _affine(pts, [f(*q) for q in pts])


# --------------------------------------------------------------------------- base pages


def _wrap_images(path: Path) -> bytes:
    """The image file's frames as PDF pages (see the contract: img2pdf, else Pillow)."""
    import img2pdf

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bytes(img2pdf.convert(str(path)))
    except Exception as e:  # mirrored EXIF, odd modes: decode and store losslessly
        log.debug("img2pdf refused %s (%s); storing decoded frames", path.name, e)
    frames: list[bytes] = []
    try:
        with Image.open(path) as im:
            n = getattr(im, "n_frames", 1)
            for k in range(n):
                im.seek(k)
                fr = ImageOps.exif_transpose(im)
                if fr.mode in ("RGBA", "LA", "P", "PA"):
                    rgba = fr.convert("RGBA")
                    bg = Image.new("RGB", rgba.size, "white")
                    bg.paste(rgba, mask=rgba.getchannel("A"))
                    fr = bg
                elif fr.mode not in ("RGB", "L", "1"):
                    fr = fr.convert("RGB")
                buf = io.BytesIO()
                dpi = im.info.get("dpi")
                fr.save(buf, format="PNG", dpi=dpi if dpi else (96, 96))
                frames.append(buf.getvalue())
        return bytes(img2pdf.convert(frames))
    except Exception as e:
        raise InputError(f"cannot wrap the image into a PDF page ({type(e).__name__}: {e})") from e


def _has_own_text(fz: Any, index: int) -> bool:
    """A PDF page that already carries text (born digital, or OCRed before): left as it is."""
    try:
        return len(fz[index].get_text("text").strip()) >= 8
    except Exception:
        return False


# --------------------------------------------------------------------------- text layer


def _placed_tree(t: EngineText, markdown: bool) -> tuple[Placement, Any]:
    """The page's text placed on it, and the OCR tree OCRmyPDF's renderer draws (None: no line)."""
    g = t.geometry
    placed = place_text(t.text, t.layout, markdown, g.size)
    drawn = placed if not g.skew else _unskewed(placed, g)
    return placed, (_ocr_tree(_as_drawn(g), drawn) if drawn.lines else None)


def _as_drawn(p: PageGeometry) -> PageGeometry:
    """The page as its text layer is drawn: a deskewed page's layer goes on the page as it was
    scanned (askew), in the coordinates of the image before the deskew turn."""
    if not p.skew or p.unskewed_size is None:
        return p
    return dataclasses.replace(p, size=p.unskewed_size, skew=0.0, unskewed_size=None)


def _unskewed(placed: Placement, p: PageGeometry) -> Placement:
    """The lines of a deskewed page moved back onto the askew scan as upright lines: each word
    at its own x there, the line at the height of its middle. Not turned lines: poppler
    (pdftotext, evince's search) splits text drawn a few degrees off the horizontal into single
    letters out of order (a page turned 4 degrees: "Example" came out as "le p m a x E"); nor
    each word at its own height: poppler then breaks the lines into pieces ("Tak for din" /
    "tredive" / "bestilling. Venligst"). Upright lines read as the lines they are; a word at a
    line's end is off its ink by up to half the line's rise (a 1000 px line at 4 degrees: 35 px)."""
    size, before = p.size, p.unskewed_size or p.size
    lines = []
    for ln in placed.lines:
        if not ln.words:
            continue
        centres = [unskew_point((w.box[0] + w.box[2]) / 2, (w.box[1] + w.box[3]) / 2, p.skew, size, before)
                   for w in ln.words]
        mid = sum(c[1] for c in centres) / len(centres)
        words = []
        for w, (cx, _cy) in zip(ln.words, centres, strict=True):
            hw, hh = (w.box[2] - w.box[0]) / 2, (w.box[3] - w.box[1]) / 2
            words.append(TextBox(w.text, (round(cx - hw), round(mid - hh), round(cx + hw), round(mid + hh))))
        box = (min(b.box[0] for b in words), min(b.box[1] for b in words),
               max(b.box[2] for b in words), max(b.box[3] for b in words))
        lines.append(PlacedLine(box, words))
    return Placement(placed.how, lines)


#: A line box this many times taller than wide, with CJK text, is a vertical column.
VERTICAL_LINE_RATIO = 2.0


def _is_cjk(text: str) -> bool:
    return any(0x3040 <= ord(c) <= 0x30FF or 0x3400 <= ord(c) <= 0x9FFF or 0xF900 <= ord(c) <= 0xFAFF for c in text)


def _ocr_tree(p: PageGeometry, placed: Placement) -> Any:
    _load_renderer()
    from ocrmypdf.models.ocr_element import BoundingBox, OcrClass, OcrElement

    we, he = p.size

    def bb(b: tuple[int, int, int, int]) -> BoundingBox:
        x0, y0 = max(0, min(b[0], we)), max(0, min(b[1], he))
        return BoundingBox(x0, y0, max(x0, min(b[2], we)), max(y0, min(b[3], he)))

    lines = []
    for ln in placed.lines:
        words = [OcrElement(ocr_class=OcrClass.WORD, bbox=bb(w.box), text=w.text) for w in ln.words if w.text]
        lbox = bb(ln.box)
        if words and lbox.height > 0 and lbox.width > 0:
            # a column of vertical CJK (tategaki, read with the _vert models) is drawn top to
            # bottom (hOCR's textangle, counter-clockwise): drawn as a horizontal line squeezed
            # into the column's box its text was lost (a vertical letter gave 3 characters)
            down = lbox.height > VERTICAL_LINE_RATIO * lbox.width and any(_is_cjk(w.text or "") for w in words)
            lines.append(OcrElement(ocr_class=OcrClass.LINE, bbox=lbox, children=words,
                                    textangle=-90.0 if down else None))
    return OcrElement(ocr_class=OcrClass.PAGE, bbox=BoundingBox(0, 0, we, he), children=lines, dpi=72.0)


@functools.cache
def _load_renderer() -> Path:
    """Import OCRmyPDF's fpdf2 renderer (``ocrmypdf.fpdf_renderer``, ``ocrmypdf.font``,
    ``ocrmypdf.models.ocr_element``) without running the package's ``__init__``, which imports
    its whole API (pipelines, plugins, pdfinfo: 0.3-0.5 s of CPU in each render worker that writes
    a PDF, bench/cpu_profile_2026-12-03.md); those three modules import nothing of the package but
    each other. The package's module object stands in sys.modules, not executed, only while
    they are imported: a later ``import ocrmypdf`` (the PDF/A step) runs the real package,
    which takes the submodules already loaded. Returns the package's folder of fonts."""
    import importlib.util
    import sys

    if "ocrmypdf" in sys.modules:  # the real package is loaded already (or being imported)
        import ocrmypdf

        return Path(ocrmypdf.__file__).parent / "data"
    spec = importlib.util.find_spec("ocrmypdf")
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        raise ImportError("ocrmypdf is not installed")
    sys.modules["ocrmypdf"] = importlib.util.module_from_spec(spec)  # its __path__, no code run
    try:
        import ocrmypdf.font  # noqa: F401
        import ocrmypdf.fpdf_renderer  # noqa: F401
        import ocrmypdf.models.ocr_element  # noqa: F401
    finally:
        del sys.modules["ocrmypdf"]
    return Path(spec.origin).parent / "data"


def _render_layers(trees: list[tuple[int, Any]], tmp: Path) -> pikepdf.Pdf:
    """All text pages as one PDF (fonts shared), by OCRmyPDF's renderer."""
    import pikepdf

    font_dir = _load_renderer()
    from ocrmypdf.font import MultiFontManager
    from ocrmypdf.font.font_provider import BuiltinFontProvider
    from ocrmypdf.fpdf_renderer import Fpdf2MultiPageRenderer

    fonts = MultiFontManager(font_provider=BuiltinFontProvider(font_dir))
    out = tmp / "layers.pdf"
    logging.getLogger("ocrmypdf").setLevel(logging.ERROR)  # its per-word font notes are noise here
    logging.getLogger("fpdf").setLevel(logging.ERROR)
    Fpdf2MultiPageRenderer(pages_data=[(i, t, 72.0) for i, t in trees], multi_font_manager=fonts).render(out)
    return pikepdf.open(out)


def _graft(pdf: pikepdf.Pdf, page: pikepdf.Page, layer: pikepdf.Page, matrix: tuple[float, ...], n: int) -> None:
    """The text page ``layer`` drawn on ``page`` through ``matrix`` as a form XObject."""
    import pikepdf

    w, h = (float(v) for v in layer.mediabox[2:4])
    c = layer.obj.Contents
    form = _flate(pdf, b"\n".join(s.read_bytes() for s in c) if isinstance(c, pikepdf.Array) else c.read_bytes())
    form.Type = pikepdf.Name.XObject
    form.Subtype = pikepdf.Name.Form
    form.BBox = pikepdf.Array([0, 0, w, h])
    res = layer.obj.get("/Resources")
    if res is not None:
        form.Resources = pdf.copy_foreign(res)
    name = pikepdf.Name(f"/OCR{n}")
    page.add_resource(form, pikepdf.Name.XObject, name)
    m = " ".join(f"{v:.6f}".rstrip("0").rstrip(".") if "." in f"{v:.6f}" else f"{v}" for v in matrix)
    page.contents_add(pdf.make_stream(b"q\n"), prepend=True)
    page.contents_add(_flate(pdf, b"Q\nq " + m.encode() + b" cm " + str(name).encode() + b" Do Q\n"))


def _flate(pdf: pikepdf.Pdf, data: bytes) -> pikepdf.Stream:
    """A stream of ours, compressed here: the file is saved without touching the source's streams."""
    import pikepdf

    s = pdf.make_stream(zlib.compress(data, 9))
    s.Filter = pikepdf.Name.FlateDecode
    return s


def _set_metadata(pdf: pikepdf.Pdf, title: str, language: str) -> None:
    import pikepdf

    lang = None if language in ("", "unknown") else language
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:title"] = title
        meta["pdf:Producer"] = PRODUCER
        meta["xmp:CreatorTool"] = PRODUCER
        if lang:
            meta["dc:language"] = [lang]
    pdf.docinfo["/Title"] = title
    pdf.docinfo["/Producer"] = PRODUCER
    if lang:
        pdf.Root.Lang = pikepdf.String(lang)


def _save(pdf: pikepdf.Pdf) -> bytes:
    import pikepdf

    buf = io.BytesIO()
    # The source's streams are written as they are (compress_streams=False: not even an
    # uncompressed one is compressed, so a page's content stays byte-identical); object streams
    # pack the dictionaries (fonts, pages) that would otherwise cost a few KB per document.
    # deterministic_id: the same input gives the same bytes.
    pdf.save(
        buf, deterministic_id=True, compress_streams=False, stream_decode_level=pikepdf.StreamDecodeLevel.none,
        object_stream_mode=pikepdf.ObjectStreamMode.generate,
    )
    return buf.getvalue()


def write_pdf(
    doc: Document, pages: Sequence[PageResult], source: Path, *, markdown: bool, pdfa: bool = False,
) -> PdfOutput:
    """The searchable PDF of ``source`` with the text of ``pages`` (see the module contract).
    ``markdown``: the page texts are engine Markdown (VLM) rather than plain text."""
    return write_pdf_input(PdfInput(
        source, pages, markdown, language=doc.language, title=pdf_title(doc, source), pdfa=pdfa,
    ))


def write_pdf_input(inp: PdfInput) -> PdfOutput:
    """The searchable PDF of ``inp`` (see the module contract)."""
    import pikepdf

    src = Path(inp.source)
    try:
        with open(src, "rb") as fh:
            is_pdf = b"%PDF-" in fh.read(1024)  # as the render stage sniffs it
    except OSError as e:
        raise InputError(f"cannot read the source for the PDF output ({e.strerror})") from e
    try:
        data = src.read_bytes() if is_pdf else _wrap_images(src)
        pdf = pikepdf.open(io.BytesIO(data))
        fz = mupdf().open(stream=data, filetype="pdf") if is_pdf else None
    except pikepdf.PdfError as e:
        raise InputError(f"the source does not open as a PDF for the PDF output ({e})") from e
    if len(pdf.pages) != len(inp.pages):
        raise InputError(f"the source has {len(pdf.pages)} pages, the daemon read {len(inp.pages)}")
    report = PdfReport()
    trees: list[tuple[int, Any]] = []
    drawn: dict[int, PageGeometry] = {}  # page index -> the geometry its text layer is drawn in
    with tempfile.TemporaryDirectory(prefix="ocr-daemon-pdf-") as tmpd:
        tmp = Path(tmpd)
        for p in inp.pages:
            page = pdf.pages[p.index]
            t = p.content
            if not isinstance(t, EngineText) or (fz is not None and _has_own_text(fz, p.index)):
                report.pages.append(PdfPageReport(p.index + 1, "text_layer"))
                continue
            # Placing the text on the page is an optional stage (daemon.stages): a page whose
            # placement fails keeps its image, without a text layer, and says so in the report.
            degraded: list[Degraded] = []
            placed_tree = optional(
                Stage.PDF_ALIGNMENT, functools.partial(_placed_tree, t, inp.markdown),
                lambda: (Placement("none", []), None), degraded,
            )
            placed, tree = placed_tree
            report.pages.append(PdfPageReport(p.index + 1, placed.how, len(placed.lines), degraded))
            rotation = t.geometry.rotation
            if rotation % 360:
                # shown as the engine read it, upright: an image page and a PDF page alike (a PDF
                # page scanned sideways stayed sideways in the output, issue 32)
                page.obj.Rotate = (_page_rotate(page) + rotation) % 360
            if tree is not None:
                trees.append((p.index, tree))
                drawn[p.index] = t.geometry
        if fz is not None:
            fz.close()
        layers = _render_layers(trees, tmp) if trees else None
        if layers is not None:
            for k, (i, _tree) in enumerate(trees):
                g = drawn[i]
                page = pdf.pages[i]
                rot = (_page_rotate(page) - g.rotation) % 360  # the rotation the daemon saw (before its turn)
                _graft(pdf, page, layers.pages[k], text_matrix(_as_drawn(g), _page_box(page), rot), k)
        title = inp.title or src.stem
        if not is_pdf:
            # img2pdf stamps the time and a time-based /ID: the scan's own mtime and an ID from
            # the content instead, so that the same file gives the same bytes
            when = pikepdf.String(time.strftime("D:%Y%m%d%H%M%SZ", time.gmtime(src.stat().st_mtime)))
            pdf.docinfo["/CreationDate"] = when
            pdf.docinfo["/ModDate"] = when
            if "/ID" in pdf.trailer:
                del pdf.trailer["/ID"]
        _set_metadata(pdf, title, inp.language)
        plain = _save(pdf)  # reads the layers' streams (copied lazily): close them only now
        if layers is not None:
            layers.close()
        pdf.close()
        if inp.pdfa:
            try:
                out = to_pdfa(plain, tmp, title, inp.language)
                report.pdfa = "PDF/A-2b"
                return PdfOutput(out, report)
            except Exception as e:  # any failure keeps the plain PDF and says why
                report.pdfa_error = f"PDF/A conversion failed, the plain PDF was written instead: {e}"
                log.warning("PDF/A conversion of %s failed: %s", src.name, e)
        return PdfOutput(plain, report)


# --------------------------------------------------------------------------- PDF/A


def to_pdfa(plain: bytes, tmp: Path, title: str, language: str) -> bytes:
    """PDF/A-2b of ``plain`` through Ghostscript, as OCRmyPDF makes it; raises on failure."""
    import pikepdf
    from ocrmypdf._exec import ghostscript
    from ocrmypdf.pdfa import generate_pdfa_ps
    from pikepdf.pdfa import check, prepare

    if shutil.which("gs") is None:
        raise RuntimeError("Ghostscript (gs) is not installed (Debian: apt-get install ghostscript)")
    src = tmp / "plain.pdf"
    src.write_bytes(plain)
    ps = generate_pdfa_ps(tmp / "pdfa.ps")
    out = tmp / "pdfa.pdf"
    try:
        ghostscript.generate_pdfa(
            [ps, src], out, compression="lossless", color_conversion_strategy="LeaveColorUnchanged", pdfa_part="2",
        )
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"Ghostscript failed (exit {e.returncode})") from e
    with pikepdf.open(out) as pdf:
        prepare(pdf, "2b", output_intent=None)  # keeps Ghostscript's sRGB output intent
        _set_metadata(pdf, title, language)  # after prepare, which names pikepdf as the producer
        report = check(pdf, "2b")
        if not report.passed:
            raise RuntimeError(f"the result is not valid PDF/A-2b: {report}"[:500])
        return _save(pdf)
