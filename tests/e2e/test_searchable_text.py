"""Text people can search, through the real pipeline (``ocr-daemon once``, Tesseract, PyMuPDF):
ligatures come out as letters, an address and a signature block keep their lines (txt: lines;
md: hard breaks that CommonMark renders), prose lines are joined, the bank name on a dark
letterhead band at the top of a scanned page is not cut off as scanner border, and a yen sign
the Japanese model reads as a backslash comes back as ``¥`` (issue 26 item 3). The functions
themselves: tests/unit/test_text_lines.py."""

from __future__ import annotations

import io
import json
from pathlib import Path

import docgen
import pymupdf
from conftest import run_cli, write_rules
from markdown_it import MarkdownIt
from PIL import Image, ImageDraw, ImageFont

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
DEJAVU_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
BANK = "Banco Lusitano de Poupança"
ADDRESS = ["Avenida da Liberdade 110", "1250-146 Lisboa"]
SIGNATURE = ["Atenciosamente,", "Maria Fernandes", "Gestora de Conta"]
PROSE = (
    "Caro cliente, junto enviamos o extrato da sua conta à ordem referente ao mês de março. "
    "Por favor verifique os movimentos e contacte-nos em caso de dúvida sobre qualquer lançamento."
)
LIGATURE_PROSE = (
    "The di\ufb00erences between the \ufb01rst and the second o\ufb03ce are small, and the sta\ufb00 "
    "re\ufb02ect on them in a \ufb01nal report that every branch receives."
)


def _born_digital_letter(path: Path) -> Path:
    """A one-page letter with a text layer (DejaVu Sans, which has the ligature glyphs): the
    sender's address, a paragraph with ligatures, a signature block."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_font(fontname="dv", fontfile=DEJAVU)
    y = 72.0
    for line in [BANK, *ADDRESS]:
        page.insert_text((56, y), line, fontname="dv", fontsize=10)
        y += 13
    page.insert_textbox(pymupdf.Rect(56, y + 30, 539, y + 130), LIGATURE_PROSE, fontname="dv", fontsize=10)
    y += 150
    for line in SIGNATURE:
        page.insert_text((56, y), line, fontname="dv", fontsize=10)
        y += 13
    doc.save(str(path))
    doc.close()
    return path


def _letterhead_page(first: bool) -> Image.Image:
    """A 150 dpi scan of a statement page; the first has the bank's name in white on a dark band
    that touches the top edge of the page, as printed letterheads do."""
    img = Image.new("RGB", (1240, 1754), "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(DEJAVU, 28)
    y = 200
    if first:
        d.rectangle([0, 0, 1240, 110], fill=(25, 40, 90))
        d.text((100, 30), BANK, font=ImageFont.truetype(DEJAVU_BOLD, 44), fill="white")
        for line in ADDRESS:
            d.text((100, y), line, font=font, fill="black")
            y += 42
        y += 40
    for line in docgen._wrap(PROSE, font, 1040):
        d.text((100, y), line, font=font, fill="black")
        y += 42
    y += 40
    for line in SIGNATURE:
        d.text((100, y), line, font=font, fill="black")
        y += 42
    return img


def _scanned_statement(path: Path) -> Path:
    doc = pymupdf.open()
    for first in (True, False):
        buf = io.BytesIO()
        _letterhead_page(first).save(buf, "PNG")
        doc.new_page(width=595, height=842).insert_image(pymupdf.Rect(0, 0, 595, 842), stream=buf.getvalue())
    doc.save(str(path))
    doc.close()
    return path


def _has_lines(text: str, lines: list[str]) -> bool:
    return "\n".join(lines) + "\n" in text + "\n"


def test_outputs_carry_letters_and_keep_address_lines(tmp_path: Path) -> None:
    cfg = write_rules(tmp_path, routes=[{"name": "all", "destination": "out", "formats": ["txt", "md", "json"]}],
                      engine={"kind": "tesseract", "tesseract": {"threads": 2, "languages": ["en", "pt", "ja"]}})
    inbox = tmp_path / "inbox"
    letter = _born_digital_letter(inbox / "letter.pdf")
    scan = _scanned_statement(inbox / "statement.pdf")
    yen = docgen.make_image(inbox / "seikyu.png", "合計金額: ¥12,000 (税込)\n送料: ¥800\n\nご注文ありがとうございました。",
                            lang="ja")
    r = run_cli("once", "--jsonl", str(letter), str(scan), str(yen), "--config", str(cfg), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert [json.loads(x)["state"] for x in r.stdout.splitlines()] == ["done"] * 3, r.stdout
    out = tmp_path / "out"
    md_render = MarkdownIt("commonmark").render

    # born-digital: the text layer's ligatures are letters in every text output
    txt = (out / "letter.txt").read_text(encoding="utf-8")
    md = (out / "letter.md").read_text(encoding="utf-8")
    sidecar = json.loads((out / "letter.json").read_text(encoding="utf-8"))
    assert [p["source"] for p in sidecar["pages"]] == ["text_layer"], sidecar["pages"]
    for text in (txt, md, json.dumps(sidecar, ensure_ascii=False)):
        assert "differences between the first and the second office" in " ".join(text.split()), text
        assert not any("\ufb00" <= c <= "\ufb06" for c in text)
    # ... the address and the signature keep their lines, the paragraph is one
    assert _has_lines(txt, [BANK, *ADDRESS]) and _has_lines(txt, SIGNATURE), txt
    assert "Caro" not in txt and "\nre\ufb02ect" not in txt
    assert " ".join(LIGATURE_PROSE.replace("\ufb00", "ff").replace("\ufb01", "fi").replace("\ufb02", "fl")
                    .replace("\ufb03", "ffi").split()) in txt
    html = md_render(md)
    assert f"{BANK}<br />\n{ADDRESS[0]}<br />\n{ADDRESS[1]}" in html, (md, html)
    assert "<br />\n".join(SIGNATURE) in html, (md, html)
    assert "  \n" not in txt

    # scanned: page 1's bank name on its dark band is read (it was cut off as scanner border)
    txt = (out / "statement.txt").read_text(encoding="utf-8")
    page1, page2 = txt.split("\f")
    assert BANK in page1, page1
    assert _has_lines(page1, ADDRESS) and _has_lines(page1, SIGNATURE) and _has_lines(page2, SIGNATURE), txt
    # the prose's wrapped lines are joined into one paragraph line
    assert "contacte-nos em caso de dúvida" in page1 and "lançamento." in page1
    prose_line = next(ln for ln in page1.splitlines() if ln.startswith("Caro cliente"))
    assert prose_line.endswith("lançamento."), page1
    md = (out / "statement.md").read_text(encoding="utf-8")
    html = md_render(md)
    assert "<br />\n".join(SIGNATURE) in html and f"{ADDRESS[0]}<br />\n{ADDRESS[1]}" in html, (md, html)

    # Japanese: the yen the jpn model reads as a backslash
    txt = (out / "seikyu.txt").read_text(encoding="utf-8")
    assert "¥12,000" in txt and "¥800" in txt and "\\" not in txt, txt
