"""The gate corpus: a seeded set of varied documents over the 11 languages, for the CI gate
(tests/e2e/test_gate.py) that runs every output format over all of them (issue 24, item 5).

Contract:

- ``build(folder, seed=SEED, only=None) -> list[GateDoc]`` writes the documents into ``folder``
  and returns their manifest, in a fixed order. The same seed gives the same bytes (PNG, JPEG,
  TIFF and PDF; PDFs are saved without the random trailer /ID), so a failure reproduces:
  ``build(folder, only={"17-ruled_table-de.png"})`` writes that one document again, identical
  (every document draws from its own ``random.Random(f"{seed}:{name}")``).
- ``GateDoc``: ``name`` (file name), ``kind`` (``KINDS``), ``language`` (ISO 639-1),
  ``pages`` (the input's page count), ``words`` (words or CJK phrases printed on it that a
  working OCR reads back), ``table`` (a table the daemon must find is on it: a ruled table,
  with or without spanning cells, or one drawn with horizontal rules only, or a whitespace-only
  item list of an invoice), ``text`` (it has text at all).

Kinds (``KINDS``, with how many of each): rules and underlines (an underlined heading, a short
rule above a total, a signature line), ruled tables with a row- and a column-spanning cell,
tables with grey horizontal rules only, unruled invoice tables, a coloured stamp over text, a
photo-like noise patch beside text, light grey print, tiny print (7 pt), pages turned
90/180/270 degrees, pages skewed 2-5 degrees, two-column pages, one-line images (320x40 and
640x80), born-digital PDFs (text layer; with a vector-ruled spanning table), scanned PDFs
(image only) and multi-page TIFFs; PNG and JPEG at 150, 200 and 300 dpi. Pages are drawn in
a 150 dpi layout (A4 = 1240 x 1754 px) scaled to the document's dpi.

Built on tests/docgen.py (``SAMPLES``, ``SAMPLE_WORDS``, ``text_image``, ``font_for``,
``make_pdf``; multi-page TIFFs are saved as ``make_multipage_tiff`` saves them, with the
page's dpi); 66 documents, 51 MB, in about 8 s of CPU.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from pathlib import Path

import docgen
import numpy as np
import pymupdf
from PIL import Image, ImageDraw, ImageOps

SEED = 24
LANGS = ("zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da")
A4 = (1240, 1754)  # px at 150 dpi, the layout's coordinates

#: Per language: table header (item, quantity, amount), three item names, "total", "signature",
#: a stamp word. The header and item words are the table's expected words.
VOCAB: dict[str, tuple[tuple[str, str, str], tuple[str, str, str], str, str, str]] = {
    "en": (("Item", "Quantity", "Amount"), ("Paper", "Toner", "Service"), "Total", "Signature", "PAID"),
    "de": (("Artikel", "Menge", "Betrag"), ("Papier", "Toner", "Wartung"), "Summe", "Unterschrift", "BEZAHLT"),
    "fr": (("Article", "Quantité", "Montant"), ("Papier", "Toner", "Entretien"), "Total", "Signature", "PAYÉ"),
    "es": (("Artículo", "Cantidad", "Importe"), ("Papel", "Tóner", "Servicio"), "Total", "Firma", "PAGADO"),
    "it": (("Articolo", "Quantità", "Importo"), ("Carta", "Toner", "Assistenza"), "Totale", "Firma", "PAGATO"),
    "nl": (("Artikel", "Aantal", "Bedrag"), ("Papier", "Toner", "Onderhoud"), "Totaal", "Handtekening", "BETAALD"),
    "pt": (("Artigo", "Quantidade", "Valor"), ("Papel", "Toner", "Manutenção"), "Total", "Assinatura", "PAGO"),
    "sv": (("Artikel", "Antal", "Belopp"), ("Papper", "Toner", "Service"), "Summa", "Underskrift", "BETALD"),
    "da": (("Vare", "Antal", "Beløb"), ("Papir", "Toner", "Service"), "I alt", "Underskrift", "BETALT"),
    "zh": (("项目", "数量", "金额"), ("打印纸", "墨粉", "服务"), "合计", "签名", "已付款"),
    "ja": (("品目", "数量", "金額"), ("用紙", "トナー", "保守"), "合計", "署名", "支払済"),
}


@dataclass(frozen=True)
class GateDoc:
    name: str
    kind: str
    language: str
    pages: int
    words: tuple[str, ...]
    table: bool = False
    text: bool = True

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


# -- drawing on a page ------------------------------------------------------------------------


class Sheet:
    """A white page in the 150 dpi layout's coordinates, drawn at ``dpi`` (``k`` = dpi / 150)."""

    def __init__(self, dpi: int = 150, size: tuple[int, int] = A4) -> None:
        self.k = dpi / 150
        self.dpi = dpi
        self.img = Image.new("RGB", (self.px(size[0]), self.px(size[1])), "white")
        self.draw = ImageDraw.Draw(self.img)

    def px(self, v: float) -> int:
        return round(v * self.k)

    def text(self, x: float, y: float, text: str, lang: str, *, size: int = 30, width: float = 1040,
             fill: tuple[int, int, int] = (0, 0, 0)) -> int:
        """``text`` wrapped to ``width`` at (x, y) (docgen.text_image, its ink pasted in ``fill``);
        returns the y under it, in layout units."""
        block = docgen.text_image(text, width=self.px(width), font_size=self.px(size), lang=lang, height=1, margin=0)
        ink = ImageOps.invert(block.convert("L"))
        self.img.paste(fill, (self.px(x), self.px(y)), ink)
        return round(y + block.height / self.k)

    def line(self, x0: float, y0: float, x1: float, y1: float, width: float = 2, fill: object = (0, 0, 0)) -> None:
        self.draw.line([(self.px(x0), self.px(y0)), (self.px(x1), self.px(y1))], fill=fill,  # type: ignore[arg-type]
                       width=max(1, self.px(width)))

    def label(self, x: float, y: float, text: str, lang: str, size: int = 28) -> None:
        """One line of text, no wrapping (table cells, totals)."""
        self.draw.text((self.px(x), self.px(y)), text, font=docgen.font_for(text, self.px(size), lang), fill=(0, 0, 0))

    def label_width(self, text: str, lang: str, size: int = 28) -> float:
        return docgen.font_for(text, self.px(size), lang).getlength(text) / self.k


def _sample(lang: str) -> str:
    return docgen.SAMPLES[lang]


def _heading(lang: str) -> str:
    return _sample(lang).split("\n")[0]


def _body(lang: str) -> str:
    return _sample(lang).split("\n", 1)[1]


#: A table of cells (row, col, rowspan, colspan, text): a title spanning all four columns, a
#: header row, and a group cell spanning two rows in the first column.
Cells = list[tuple[int, int, int, int, str]]


def span_table(lang: str, rnd: random.Random) -> Cells:
    head, items, *_ = VOCAB[lang]
    amounts = [f"{rnd.randint(10, 999)}.{rnd.randint(0, 99):02d}" for _ in items]
    cells: Cells = [(0, 0, 1, 4, _heading(lang)), (1, 0, 1, 1, "#"), (1, 1, 1, 1, head[0]), (1, 2, 1, 1, head[1]),
                    (1, 3, 1, 1, head[2]), (2, 0, 2, 1, "A"), (4, 0, 1, 1, "B")]
    for r, (item, amount) in enumerate(zip(items, amounts, strict=True), start=2):
        cells += [(r, 1, 1, 1, item), (r, 2, 1, 1, str(rnd.randint(1, 20))), (r, 3, 1, 1, amount)]
    return cells


TABLE_COLS = (120, 400, 240, 240)  # layout px
TABLE_ROW_H = 66


def draw_ruled_table(s: Sheet, x0: float, y0: float, cells: Cells, lang: str) -> float:
    """Each cell's own rectangle (so a spanning cell has no rule inside it); returns the bottom y."""
    edges = [x0]
    for w in TABLE_COLS:
        edges.append(edges[-1] + w)
    bottom = y0
    for r, c, rs, cs, text in cells:
        left, right = edges[c], edges[c + cs]
        top, low = y0 + r * TABLE_ROW_H, y0 + (r + rs) * TABLE_ROW_H
        s.draw.rectangle([s.px(left), s.px(top), s.px(right), s.px(low)], outline=(0, 0, 0), width=max(1, s.px(3)))
        s.label(left + 14, top + (low - top - 28) / 2 - 4, text, lang)
        bottom = max(bottom, low)
    return bottom


def table_words(lang: str) -> tuple[str, ...]:
    head, items, *_ = VOCAB[lang]
    return (*head, *items)


# -- page kinds: (rnd, lang, dpi) -> (pages, expected words, has a table) -------------------------

Made = tuple[list[Image.Image], tuple[str, ...], bool]


def page_rules(rnd: random.Random, lang: str, dpi: int) -> Made:
    """Underlined heading, body, a short rule above a total, a signature line."""
    s = Sheet(dpi)
    _, _, total, sign, _ = VOCAB[lang]
    head = _heading(lang)
    s.label(100, 110, head, lang, size=34)
    s.line(100, 158, 100 + s.label_width(head, lang, 34), 158, width=2)
    y = s.text(100, 210, _body(lang), lang)
    amount = f"{rnd.randint(100, 9999)}.{rnd.randint(0, 99):02d}"
    s.line(820, y + 60, 1140, y + 60, width=2)
    s.label(820, y + 76, f"{total} {amount}", lang)
    s.line(100, y + 300, 100 + rnd.randint(280, 420), y + 300, width=2)
    s.label(100, y + 314, sign, lang, size=24)
    return [s.img], (*docgen.SAMPLE_WORDS[lang], total.split()[-1], sign), False


def page_ruled_table(rnd: random.Random, lang: str, dpi: int) -> Made:
    s = Sheet(dpi)
    y = s.text(100, 110, _body(lang).split("\n")[0], lang)
    bottom = draw_ruled_table(s, 100, y + 60, span_table(lang, rnd), lang)
    s.text(100, bottom + 80, _body(lang).split("\n")[-1], lang)
    return [s.img], table_words(lang), True


def page_rules_only_table(rnd: random.Random, lang: str, dpi: int) -> Made:
    """Header and three rows separated by light grey horizontal rules (none above the header)."""
    s = Sheet(dpi)
    head, items, *_ = VOCAB[lang]
    y = s.text(100, 110, _heading(lang), lang) + 80
    rows = [list(head)] + [[it, str(rnd.randint(1, 20)), f"{rnd.randint(10, 999)}.{rnd.randint(0, 99):02d}"]
                           for it in items]
    row_h = 72
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            s.label(100 + c * 340, y + r * row_h + 18, cell, lang)
        s.line(90, y + (r + 1) * row_h, 1150, y + (r + 1) * row_h, width=2, fill=(205, 205, 205))
    return [s.img], table_words(lang), True


def page_unruled_table(rnd: random.Random, lang: str, dpi: int) -> Made:
    """An invoice's item list aligned by whitespace alone (amounts right-aligned), a total under it."""
    s = Sheet(dpi)
    head, items, total, _, _ = VOCAB[lang]
    y = s.text(100, 110, _heading(lang), lang) + 120
    rows = [[head[0], "Nr", head[1], head[2]]]
    rows += [[it, f"{rnd.randint(100, 999)}", str(rnd.randint(1, 20)), f"{rnd.randint(10, 999)}.{rnd.randint(0, 99):02d}"]
             for it in items]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            x = (100, 420)[c] if c < 2 else (760, 1080)[c - 2] - s.label_width(cell, lang)
            s.label(x, y + r * 46, cell, lang)
    s.label(100, y + len(rows) * 46 + 60, f"{total} {rnd.randint(100, 999)}.00", lang)
    return [s.img], table_words(lang), True


def page_stamp(rnd: random.Random, lang: str, dpi: int) -> Made:
    """Body text with a red, turned, half-transparent stamp over it."""
    s = Sheet(dpi)
    s.text(100, 110, _sample(lang) + "\n\n" + _body(lang), lang)
    word = VOCAB[lang][4]
    layer = Image.new("RGBA", (s.px(520), s.px(200)), (0, 0, 0, 0))
    d = ImageDraw.Draw(layer)
    red = (200, 30, 30, 170)
    d.rectangle([s.px(8), s.px(8), s.px(512), s.px(192)], outline=red, width=s.px(8))
    d.text((s.px(40), s.px(50)), word, font=docgen.font_for(word, s.px(80), lang), fill=red)
    layer = layer.rotate(rnd.uniform(-25, 25), expand=True, resample=Image.Resampling.BICUBIC)
    page = s.img.convert("RGBA")
    page.alpha_composite(layer, (s.px(rnd.randint(300, 600)), s.px(rnd.randint(150, 300))))
    return [page.convert("RGB")], tuple(docgen.SAMPLE_WORDS[lang][3:]), False


def page_photo(rnd: random.Random, lang: str, dpi: int) -> Made:
    """Body text above a photo-like patch: smooth random colour fields plus pixel noise."""
    s = Sheet(dpi)
    y = s.text(100, 110, _sample(lang), lang)
    gen = np.random.default_rng(rnd.randrange(2**32))
    w, h = s.px(rnd.randint(400, 700)), s.px(rnd.randint(300, 500))
    coarse = Image.fromarray(gen.integers(0, 256, (9, 12, 3), dtype=np.uint8)).resize((w, h), Image.Resampling.BICUBIC)
    noisy = np.asarray(coarse, dtype=np.int16) + gen.normal(0, 28, (h, w, 3)).astype(np.int16)
    s.img.paste(Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)), (s.px(100), s.px(y + 60)))
    return [s.img], tuple(docgen.SAMPLE_WORDS[lang]), False


def page_grey(rnd: random.Random, lang: str, dpi: int) -> Made:
    s = Sheet(dpi)
    g = rnd.randint(140, 170)
    s.text(100, 110, _sample(lang), lang, fill=(g, g, g))
    return [s.img], tuple(docgen.SAMPLE_WORDS[lang]), False


def page_tiny(rnd: random.Random, lang: str, dpi: int) -> Made:
    """7 pt print (15 px at 150 dpi): a footnote's size."""
    s = Sheet(dpi)
    s.text(100, 110, _sample(lang) + "\n\n" + _body(lang), lang, size=15, width=700)
    return [s.img], tuple(docgen.SAMPLE_WORDS[lang]), False


def page_columns(rnd: random.Random, lang: str, dpi: int) -> Made:
    s = Sheet(dpi)
    s.text(100, 110, _heading(lang), lang, size=36)
    for x in (100, 650):
        s.text(x, 220, _body(lang) + "\n\n" + _body(lang), lang, size=26, width=490)
    return [s.img], tuple(docgen.SAMPLE_WORDS[lang][1:]), False


def page_plain(rnd: random.Random, lang: str, dpi: int) -> Made:
    s = Sheet(dpi)
    s.text(100, 110, _sample(lang), lang)
    return [s.img], tuple(docgen.SAMPLE_WORDS[lang]), False


def turned(make: Callable[[random.Random, str, int], Made], degrees: float) -> Callable[[random.Random, str, int], Made]:
    """``make``'s pages turned clockwise by ``degrees`` (90/180/270: a sideways scan; a few: skew)."""
    def made(rnd: random.Random, lang: str, dpi: int) -> Made:
        pages, words, table = make(rnd, lang, dpi)
        resample = Image.Resampling.NEAREST if degrees % 90 == 0 else Image.Resampling.BICUBIC
        return [p.rotate(-degrees, expand=True, fillcolor="white", resample=resample) for p in pages], words, table
    return made


def one_line(size: tuple[int, int]) -> Callable[[random.Random, str, int], Made]:
    def made(rnd: random.Random, lang: str, dpi: int) -> Made:
        _, _, total, _, _ = VOCAB[lang]
        text = f"{total} {rnd.randint(10, 999)}.{rnd.randint(0, 99):02d}"
        img = Image.new("RGB", size, "white")
        font = docgen.font_for(text, int(size[1] * 0.6), lang)
        ImageDraw.Draw(img).text((size[1] // 5, size[1] // 6), text, font=font, fill=(0, 0, 0))
        return [img], (total.split()[-1],), False
    return made


# -- files ----------------------------------------------------------------------------------------


def _save_image(img: Image.Image, path: Path, dpi: int) -> None:
    if path.suffix == ".jpg":
        img.save(path, format="JPEG", quality=88, dpi=(dpi, dpi))
    else:
        img.save(path, format="PNG", dpi=(dpi, dpi))


def _fixed_id(path: Path) -> None:
    """Rewrite the PDF without the random trailer /ID PyMuPDF gives every new file: same bytes
    for the same seed."""
    doc = pymupdf.open(path)
    doc.xref_set_key(-1, "ID", "null")
    data = doc.tobytes(no_new_id=True, garbage=1)
    doc.close()
    path.write_bytes(data)


def scanned_pdf(path: Path, pages: list[Image.Image]) -> None:
    """Each page image over a whole A4 page, image only (no text layer)."""
    doc = pymupdf.open()
    for img in pages:
        page = doc.new_page(width=595, height=842)
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(str(path))
    doc.close()
    _fixed_id(path)


def born_digital_table_pdf(path: Path, lang: str, rnd: random.Random) -> None:
    """A paragraph, ``span_table`` drawn as vector rules (one rectangle per cell) and a line under it."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    cjk = lang in ("zh", "ja")
    font = {"zh": "china-s", "ja": "japan"}.get(lang, "helv")
    page.insert_textbox(pymupdf.Rect(56, 56, 539, 160), _body(lang).split("\n")[0], fontsize=11, fontname=font)
    x0, top, row_h = 56.0, 180.0, 24.0
    edges = [x0]
    for w in TABLE_COLS:
        edges.append(edges[-1] + w * 0.4)
    bottom = top
    for r, c, rs, cs, text in span_table(lang, rnd):
        rect = pymupdf.Rect(edges[c], top + r * row_h, edges[c + cs], top + (r + rs) * row_h)
        page.draw_rect(rect, width=0.6)
        page.insert_text((rect.x0 + 4, rect.y0 + (rect.height + 8) / 2), text, fontsize=10 if not cjk or r else 9,
                         fontname=font)
        bottom = max(bottom, rect.y1)
    page.insert_textbox(pymupdf.Rect(56, bottom + 30, 539, bottom + 120), _body(lang).split("\n")[-1], fontsize=11,
                        fontname=font)
    doc.save(str(path))
    doc.close()
    _fixed_id(path)


# -- the corpus -----------------------------------------------------------------------------------

#: kind -> (how many, page maker or None for a born-digital PDF, container, dpi choices).
#: Containers: "img" (one PNG/JPEG), "tiff" (multi-page), "scanpdf", "textpdf", "tablepdf".
KINDS: dict[str, tuple[int, Callable[[random.Random, str, int], Made] | None, str, tuple[int, ...]]] = {
    "rules": (5, page_rules, "img", (150, 200)),
    "ruled_table": (6, page_ruled_table, "img", (150, 200, 300)),
    "rules_only_table": (4, page_rules_only_table, "img", (150, 200)),
    "unruled_table": (4, page_unruled_table, "img", (150, 200)),
    "stamp": (4, page_stamp, "img", (150, 200)),
    "photo": (4, page_photo, "img", (150, 200)),
    "light_grey": (4, page_grey, "img", (150, 200)),
    "tiny_print": (3, page_tiny, "img", (300,)),
    "rotated_90": (2, turned(page_plain, 90), "img", (150,)),
    "rotated_180": (2, turned(page_plain, 180), "img", (150,)),
    "rotated_270": (2, turned(page_rules, 270), "img", (150,)),
    "skewed": (4, None, "img", (150, 200)),  # turned(page_plain, 2..5 degrees either way), per document
    "two_columns": (3, page_columns, "img", (150, 200)),
    "one_line_320x40": (2, one_line((320, 40)), "img", (150,)),
    "one_line_640x80": (2, one_line((640, 80)), "img", (150,)),
    "tiff": (3, None, "tiff", (150,)),
    "scanned_pdf": (4, None, "scanpdf", (150,)),
    "born_digital_pdf": (4, None, "textpdf", (150,)),
    "born_digital_table_pdf": (4, None, "tablepdf", (150,)),
}


def _multi_page(rnd: random.Random, lang: str, dpi: int, n: int) -> Made:
    makers = [page_plain, page_rules, page_ruled_table, page_columns]
    pages: list[Image.Image] = []
    words: list[str] = []
    table = False
    for _ in range(n):
        p, w, t = rnd.choice(makers)(rnd, lang, dpi)
        pages += p
        words += [x for x in w if x not in words]
        table |= t
    return pages, tuple(words), table


def plan(seed: int = SEED) -> list[tuple[str, str, str, int]]:
    """(name, kind, language, dpi) of every document, without drawing anything."""
    rnd = random.Random(seed)
    total = sum(k[0] for k in KINDS.values())
    # every language equally often: rounds of the 11 in a shuffled order
    stream: list[str] = []
    while len(stream) < total:
        stream += rnd.sample(LANGS, len(LANGS))
    out = []
    i = 0
    for kind, (count, _, container, dpis) in KINDS.items():
        for _ in range(count):
            lang = stream[i]
            i += 1
            ext = {"tiff": ".tif", "img": rnd.choice((".png", ".jpg"))}.get(container, ".pdf")
            out.append((f"{i:02d}-{kind}-{lang}{ext}", kind, lang, rnd.choice(dpis)))
    return out


def make_doc(folder: Path, name: str, kind: str, lang: str, dpi: int, seed: int = SEED) -> GateDoc:
    """Write one document of the plan into ``folder``."""
    rnd = random.Random(f"{seed}:{name}")
    _, maker, container, _ = KINDS[kind]
    path = folder / name
    if container == "textpdf":
        n = rnd.randint(1, 2)
        texts = [_sample(lang)] + [_body(lang)] * (n - 1)
        docgen.make_pdf(path, texts, lang=lang)
        _fixed_id(path)
        return GateDoc(name, kind, lang, n, tuple(docgen.SAMPLE_WORDS[lang]))
    if container == "tablepdf":
        born_digital_table_pdf(path, lang, rnd)
        return GateDoc(name, kind, lang, 1, table_words(lang), table=True)
    if container in ("tiff", "scanpdf"):
        pages, words, table = _multi_page(rnd, lang, dpi, rnd.randint(2, 3) if container == "tiff" else rnd.randint(1, 2))
    elif kind == "skewed":
        degrees = rnd.choice((-1, 1)) * rnd.uniform(2, 5)
        pages, words, table = turned(page_plain, degrees)(rnd, lang, dpi)
    else:
        assert maker is not None
        pages, words, table = maker(rnd, lang, dpi)
    if container == "tiff":
        pages[0].save(path, format="TIFF", save_all=True, append_images=pages[1:], compression="tiff_adobe_deflate",
                      dpi=(dpi, dpi))
    elif container == "scanpdf":
        scanned_pdf(path, pages)
    else:
        _save_image(pages[0], path, dpi)
    return GateDoc(name, kind, lang, len(pages), tuple(words), table=table)


def build(folder: Path, seed: int = SEED, only: Collection[str] | None = None) -> list[GateDoc]:
    """Write the corpus (or the documents named in ``only``) into ``folder``; the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    return [make_doc(folder, name, kind, lang, dpi, seed) for name, kind, lang, dpi in plan(seed)
            if only is None or name in only]
