"""Real test documents, made on the fly: text pages as images, PDFs, scans, and bad inputs.

Shared by every test module (and the benchmarks); keep the signatures stable. Everything here
writes real files that real tools (PyMuPDF, Pillow, Tesseract) read, nothing is mocked.

Fonts: DejaVu Sans for Latin text, Noto Sans CJK for Chinese/Japanese (Debian packages
``fonts-dejavu-core`` and ``fonts-noto-cjk``; both are in the apt list of ``tests/run.sh``).

Main helpers:

- ``text_image(text, width=1240, font_size=32, lang=None)``: a white page (A4 proportions at
  150 dpi by default) with ``text`` drawn in black, word-wrapped (CJK wrapped per character).
  Blank lines in ``text`` separate paragraphs.
- ``make_pdf(path, pages, scanned=False)``: a real PDF, one page per string; ``scanned=True``
  puts each page in as an image only (no text layer, like a scanner's PDF), otherwise real text
  is written with ``insert_textbox`` (CJK through PyMuPDF's built-in Droid Sans Fallback).
- ``make_image(path, text, fmt="png", rotate=0, ...)``: a one-page scan in any input format,
  optionally rotated (content turned clockwise by ``rotate`` degrees, as a sideways scan), with
  an EXIF orientation tag, or a dark scanner border.
- ``make_multipage_tiff(path, pages)``.
- Bad inputs: ``make_encrypted_pdf``, ``make_png_bomb`` (tiny file, huge header size),
  ``make_pdf_image_bomb`` (a PDF page embedding an image that claims 30000x30000 px),
  ``truncate_copy`` (first part of a real file), ``make_blank_pdf`` (many pages, cheap).
- ``SAMPLES``: a short realistic paragraph per language (ISO 639-1 keys, the 11 languages),
  plus ``SAMPLE_WORDS``: words of each sample that an OCR engine must find.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pymupdf
from PIL import Image, ImageDraw, ImageFont, ImageOps

DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
# Face index inside NotoSansCJK-Regular.ttc: 0 JP, 1 KR, 2 SC, 3 TC, 4 HK.
_CJK_FACE = {"ja": 0, "zh": 2, "zh_tw": 3}

SAMPLES: dict[str, str] = {
    "en": (
        "Invoice number 2024-0042\n"
        "Thank you for your order. Please pay the total amount within thirty days.\n\n"
        "The delivery includes three boxes of printer paper and one service contract."
    ),
    "de": (
        "Rechnung Nummer 2024-0042\n"
        "Vielen Dank für Ihre Bestellung. Bitte überweisen Sie den Gesamtbetrag innerhalb "
        "von dreißig Tagen.\n\n"
        "Die Lieferung enthält drei Kartons Druckerpapier und einen Wartungsvertrag."
    ),
    "fr": (
        "Facture numéro 2024-0042\n"
        "Merci pour votre commande. Veuillez régler le montant total dans un délai de "
        "trente jours.\n\n"
        "La livraison comprend trois cartons de papier et un contrat de maintenance."
    ),
    "es": (
        "Factura número 2024-0042\n"
        "Gracias por su pedido. Por favor, pague el importe total en un plazo de treinta "
        "días.\n\n"
        "La entrega incluye tres cajas de papel para impresora y un contrato de servicio."
    ),
    "it": (
        "Fattura numero 2024-0042\n"
        "Grazie per il vostro ordine. Si prega di pagare l'importo totale entro trenta "
        "giorni.\n\n"
        "La consegna comprende tre scatole di carta per stampante e un contratto di assistenza."
    ),
    "nl": (
        "Factuur nummer 2024-0042\n"
        "Hartelijk dank voor uw bestelling. Gelieve het totaalbedrag binnen dertig dagen "
        "te betalen.\n\n"
        "De levering bevat drie dozen printerpapier en een onderhoudscontract."
    ),
    "pt": (
        "Fatura número 2024-0042\n"
        "Obrigado pela sua encomenda. Por favor, pague o valor total no prazo de trinta "
        "dias.\n\n"
        "A entrega inclui três caixas de papel para impressora e um contrato de manutenção."
    ),
    "sv": (
        "Faktura nummer 2024-0042\n"
        "Tack för din beställning. Vänligen betala det totala beloppet inom trettio "
        "dagar.\n\n"
        "Leveransen innehåller tre lådor skrivarpapper och ett serviceavtal."
    ),
    "da": (
        "Faktura nummer 2024-0042\n"
        "Tak for din bestilling. Venligst betal det samlede beløb inden for tredive "
        "dage.\n\n"
        "Leveringen indeholder tre kasser printerpapir og en serviceaftale på året."
    ),
    "zh": (
        "发票号码 2024-0042\n"
        "感谢您的订购。请在三十天内支付全部金额。\n\n"
        "本次交货包括三箱打印纸和一份服务合同。"
    ),
    "ja": (
        "請求書番号 2024-0042\n"
        "ご注文ありがとうございます。合計金額を三十日以内にお支払いください。\n\n"
        "お届け物には、プリンター用紙三箱とサービス契約書が含まれています。"
    ),
}

#: Words (or CJK phrases) of each sample that a working OCR engine must read back.
SAMPLE_WORDS: dict[str, list[str]] = {
    "en": ["Invoice", "order", "delivery", "printer", "contract"],
    "de": ["Rechnung", "Bestellung", "Gesamtbetrag", "Lieferung", "Wartungsvertrag"],
    "fr": ["Facture", "commande", "livraison", "cartons", "maintenance"],
    "es": ["Factura", "pedido", "entrega", "impresora", "contrato"],
    "it": ["Fattura", "ordine", "consegna", "stampante", "contratto"],
    "nl": ["Factuur", "bestelling", "levering", "printerpapier", "onderhoudscontract"],
    "pt": ["Fatura", "encomenda", "entrega", "impressora", "contrato"],
    "sv": ["Faktura", "beställning", "Leveransen", "skrivarpapper", "serviceavtal"],
    "da": ["Faktura", "bestilling", "Leveringen", "printerpapir", "serviceaftale"],
    "zh": ["发票", "感谢", "金额", "打印纸", "服务合同"],
    "ja": ["請求書", "ご注文", "合計金額", "プリンター", "サービス"],
}


def is_cjk(text: str) -> bool:
    """True if ``text`` contains Han, kana or Hangul characters."""
    return any(
        "\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af"
        for ch in text
    )


def _has_kana(text: str) -> bool:
    return any("\u3040" <= ch <= "\u30ff" for ch in text)


def font_for(text: str, font_size: int, lang: str | None = None) -> ImageFont.FreeTypeFont:
    """DejaVu Sans for Latin text, the right Noto Sans CJK face for Chinese/Japanese."""
    if lang in _CJK_FACE or (lang is None and is_cjk(text)):
        face = _CJK_FACE.get(lang or ("ja" if _has_kana(text) else "zh"), 2)
        return ImageFont.truetype(str(NOTO_CJK), font_size, index=face)
    return ImageFont.truetype(str(DEJAVU), font_size)


def _wrap(text: str, font: ImageFont.FreeTypeFont, max_width: float) -> list[str]:
    """Wrap each line of ``text`` to ``max_width`` px; words for Latin, characters for CJK."""
    out: list[str] = []
    for para_line in text.split("\n"):
        if not para_line.strip():
            out.append("")
            continue
        cjk = is_cjk(para_line)
        tokens = list(para_line) if cjk else para_line.split(" ")
        sep = "" if cjk else " "
        line = ""
        for tok in tokens:
            cand = tok if not line else line + sep + tok
            if line and font.getlength(cand) > max_width:
                out.append(line)
                line = tok
            else:
                line = cand
        out.append(line)
    return out


def text_image(
    text: str,
    *,
    width: int = 1240,
    font_size: int = 32,
    lang: str | None = None,
    height: int | None = None,
    margin: int | None = None,
) -> Image.Image:
    """A white RGB page with ``text`` drawn in black, wrapped to the page width.

    ``height`` defaults to A4 proportions (width * 1.414) or more if the text needs it.
    ``lang`` ("zh", "ja", "zh_tw", or a Latin language) picks the font; by default the script
    of the text decides.
    """
    font = font_for(text, font_size, lang)
    margin = margin if margin is not None else max(20, width // 12)
    lines = _wrap(text, font, width - 2 * margin)
    line_h = int(font_size * 1.5)
    need = 2 * margin + line_h * len(lines)
    h = max(height or int(width * 1.414), need)
    img = Image.new("RGB", (width, h), "white")
    draw = ImageDraw.Draw(img)
    y = margin
    for line in lines:
        if line:
            draw.text((margin, y), line, font=font, fill="black")
        y += line_h
    return img


def _image_bytes(img: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def make_pdf(
    path: Path,
    pages: list[str],
    *,
    scanned: bool = False,
    page_size: tuple[float, float] = (595.0, 842.0),
    font_size: float = 11.0,
    lang: str | None = None,
    scan_width: int = 1240,
) -> Path:
    """Write a real PDF with one page per string of ``pages``; returns ``path``.

    ``scanned=False``: real text (a text layer) set with ``insert_textbox``; CJK text uses
    PyMuPDF's built-in CJK font. ``scanned=True``: each page is a ``text_image`` of
    ``scan_width`` px placed over the whole page (image only, no text layer).
    ``page_size`` is in points (1/72 inch; A4 by default).
    """
    doc = pymupdf.open()
    w, h = page_size
    for text in pages:
        page = doc.new_page(width=w, height=h)
        if scanned:
            img = text_image(text, width=scan_width, lang=lang, height=int(scan_width * h / w))
            page.insert_image(page.rect, stream=_image_bytes(img, "PNG"))
            continue
        cjk = lang in ("zh", "ja", "zh_tw") or is_cjk(text)
        fontname = ("japan" if (lang == "ja" or _has_kana(text)) else "china-s") if cjk else "helv"
        font = pymupdf.Font(fontname)
        margin = 56.0
        # insert_textbox only breaks at spaces: pre-wrap CJK lines per character ourselves.
        lines: list[str] = []
        for raw in text.split("\n"):
            if not cjk:
                lines.append(raw)
                continue
            line = ""
            for ch in raw:
                if line and font.text_length(line + ch, fontsize=font_size) > w - 2 * margin:
                    lines.append(line)
                    line = ch
                else:
                    line += ch
            lines.append(line)
        rect = pymupdf.Rect(margin, margin, w - margin, h - margin)
        rc = page.insert_textbox(rect, "\n".join(lines), fontsize=font_size, fontname=fontname)
        if rc < 0:
            raise ValueError(f"text does not fit on the page ({rc:.0f} pt short)")
    doc.save(str(path))
    doc.close()
    return path


def make_blank_pdf(path: Path, n_pages: int, page_size: tuple[float, float] = (595.0, 842.0)) -> Path:
    """A PDF of ``n_pages`` empty pages (cheap way to exceed a page limit)."""
    doc = pymupdf.open()
    for _ in range(n_pages):
        doc.new_page(width=page_size[0], height=page_size[1])
    doc.save(str(path))
    doc.close()
    return path


def add_dark_border(img: Image.Image, border: int | tuple[int, int, int, int], shade: int = 20) -> Image.Image:
    """Surround ``img`` with a near-black frame, as a flatbed scanner does around a small page.

    ``border`` is px on every side or (left, top, right, bottom).
    """
    left, top, right, bottom = (border,) * 4 if isinstance(border, int) else border
    return ImageOps.expand(img, border=(left, top, right, bottom), fill=(shade, shade, shade))


def make_image(
    path: Path,
    text: str,
    fmt: str = "png",
    rotate: int = 0,
    *,
    lang: str | None = None,
    width: int = 1240,
    font_size: int = 32,
    exif_orientation: int | None = None,
    dark_border: int | tuple[int, int, int, int] = 0,
    mode: str = "RGB",
) -> Path:
    """Write a one-page scan of ``text`` as ``fmt`` (png, jpeg, tiff, webp, bmp).

    - ``rotate``: the page content is turned *clockwise* by 0/90/180/270 degrees (a page put on
      the scanner sideways or upside down); the render stage must turn it back.
    - ``exif_orientation``: store the pixels turned and tag them with this EXIF Orientation
      (JPEG/TIFF/WebP/PNG), so that applying the tag gives the upright page (3 = 180,
      6 = viewer turns 90 cw, 8 = viewer turns 90 ccw).
    - ``dark_border``: px of near-black frame around the page.
    - ``mode``: "RGB", "L", "RGBA" (transparent background) or "1".
    """
    img = text_image(text, width=width, font_size=font_size, lang=lang)
    if dark_border:
        img = add_dark_border(img, dark_border)
    if rotate:
        img = img.rotate(-rotate, expand=True, fillcolor="white")  # PIL rotates counter-clockwise
    exif = None
    if exif_orientation:
        # Store pixels so that the viewer's transform (per the tag) restores the upright page.
        inverse = {
            2: Image.Transpose.FLIP_LEFT_RIGHT,
            3: Image.Transpose.ROTATE_180,
            4: Image.Transpose.FLIP_TOP_BOTTOM,
            5: Image.Transpose.TRANSPOSE,
            6: Image.Transpose.ROTATE_90,  # viewer turns 90 cw, so store turned 90 ccw
            7: Image.Transpose.TRANSVERSE,
            8: Image.Transpose.ROTATE_270,
        }[exif_orientation]
        img = img.transpose(inverse)
        exif = Image.Exif()
        exif[0x0112] = exif_orientation
    if mode == "RGBA":
        gray = img.convert("L")
        rgba = Image.new("RGBA", img.size, (0, 0, 0, 0))
        rgba.putalpha(gray.point(lambda v: 255 - v))  # ink opaque, paper transparent
        img = rgba
    elif mode != "RGB":
        img = img.convert(mode)
    pil_fmt = {"jpg": "JPEG", "jpeg": "JPEG", "tif": "TIFF", "tiff": "TIFF"}.get(fmt.lower(), fmt.upper())
    kwargs: dict[str, object] = {}
    if exif is not None:
        kwargs["exif"] = exif
    if pil_fmt == "JPEG":
        kwargs["quality"] = 85
    img.save(path, format=pil_fmt, **kwargs)
    return path


def make_multipage_tiff(path: Path, pages: list[str], *, width: int = 1240, lang: str | None = None) -> Path:
    """A multi-page TIFF (deflate), one page per string."""
    imgs = [text_image(t, width=width, lang=lang) for t in pages]
    imgs[0].save(path, format="TIFF", save_all=True, append_images=imgs[1:], compression="tiff_adobe_deflate")
    return path


def make_encrypted_pdf(path: Path, user_password: str = "secret") -> Path:
    """A real AES-256 encrypted PDF that needs ``user_password`` to open."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Confidential", fontsize=14)
    doc.save(
        str(path),
        encryption=pymupdf.PDF_ENCRYPT_AES_256,
        user_pw=user_password,
        owner_pw=user_password + "-owner",
    )
    doc.close()
    return path


def make_pdf_image_bomb(path: Path, width: int = 30000, height: int = 30000) -> Path:
    """A one-page scanned PDF whose image dictionary claims ``width`` x ``height`` pixels.

    The stream stays small (it does not match the claim); the render stage must refuse the page
    from the dictionary before MuPDF tries to decode it.
    """
    make_pdf(path, ["bomb"], scanned=True, scan_width=200)
    doc = pymupdf.open(str(path))
    xref = doc[0].get_images(full=True)[0][0]
    doc.xref_set_key(xref, "Width", str(width))
    doc.xref_set_key(xref, "Height", str(height))
    doc.save(str(path) + ".tmp")
    doc.close()
    Path(str(path) + ".tmp").replace(path)
    return path


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def make_png_bomb(path: Path, width: int = 20000, height: int = 20000) -> Path:
    """A valid 1-bit PNG of ``width`` x ``height`` white pixels in a file of a few tens of KiB.

    Decoding it would need ``width * height`` bytes or more once converted; the render stage
    must refuse it from the header alone.
    """
    row = b"\x00" + b"\xff" * ((width + 7) // 8)  # filter byte + packed bits
    comp = zlib.compressobj(9)
    parts = [comp.compress(row) for _ in range(height)]
    parts.append(comp.flush())
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit grayscale
    data = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", b"".join(parts))
    data += _png_chunk(b"IEND", b"")
    Path(path).write_bytes(data)
    return path


def truncate_copy(src: Path, dst: Path, keep: float = 0.5) -> Path:
    """Copy the first ``keep`` fraction of ``src`` to ``dst`` (a file cut off mid-transfer)."""
    data = Path(src).read_bytes()
    Path(dst).write_bytes(data[: max(1, int(len(data) * keep))])
    return dst


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate: Levenshtein distance / len(reference), whitespace ignored."""
    ref = "".join(reference.split())
    hyp = "".join(hypothesis.split())
    if not ref:
        return 0.0 if not hyp else 1.0
    prev = list(range(len(hyp) + 1))
    for i, rc in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, hc in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (rc != hc))
        prev = cur
    return prev[-1] / len(ref)
