"""Turned pages OSD cannot place, and vertical CJK, on real Tesseract (issue 32).

Pages are drawn with PIL (DejaVu Sans for Latin, Noto Sans CJK for Chinese and Japanese) from
prose written for these tests: a dense two-column Danish page turned 90/270 (OSD names it
"Tamil" or is unsure, so the orientation probe decides), an Italian page turned 180, PDF pages
with their content turned and with a wrong /Rotate, a vertical Japanese letter (tategaki) and a
Chinese page with code lines. The searchable PDF is written and read back with PyMuPDF and
pdftotext: every page shown upright, its words in reading order.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import docgen
import pymupdf
import pytest
from PIL import Image, ImageDraw, ImageFont
from renderopts import render_opts

from daemon.config import EngineCfg
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine
from daemon.pagerecord import ImagePage, PageResult
from daemon.pages.orient import detect_orientation, probe_turn, tessdata_dir
from daemon.pages.probe import page_count
from daemon.pages.textlayer import read_or_render
from daemon.writers.pdf import PdfInput, write_pdf_input

DA = [
    "Programmet læser en liste over filer fra standardinput og skriver dem til et arkiv på disken. "
    "Hvis der ikke angives nogen indstillinger, bruges standardværdierne fra konfigurationsfilen i "
    "hjemmemappen, og systemadministratoren kan ændre dem for alle brugere på maskinen.",
    "Når programmet afsluttes, returneres en statuskode, som fortæller, om alle filer blev behandlet "
    "korrekt. En fejl i en enkelt fil stopper ikke behandlingen af de øvrige filer, men den noteres "
    "i logfilen sammen med tidspunktet og filens navn.",
    "Manualsiden beskriver også, hvordan man gendanner et arkiv fra en sikkerhedskopi, hvilke "
    "rettigheder der kræves for at skrive i mappen, og hvordan gamle arkiver slettes automatisk "
    "efter et antal dage, som man selv vælger.",
    "Skolens tjenere starter om morgenen, før eleverne kommer. Lærerne logger ind med deres eget "
    "brugernavn, og hjemmemapperne ligger på filserveren, så de samme filer findes på alle "
    "maskiner i klasselokalerne og på biblioteket.",
    "Printere tilføjes gennem webgrænsefladen. Vælg den rigtige driver, giv printeren et navn, som "
    "alle kan forstå, og skriv, hvor den står. Udskrifter, der ikke hentes inden for en uge, "
    "fjernes fra køen uden varsel.",
]
IT = [
    "Il programma legge un elenco di file dall'ingresso standard e li scrive in un archivio sul "
    "disco. Se non viene indicata alcuna opzione, si usano i valori predefiniti del file di "
    "configurazione nella cartella personale.",
    "Quando il programma termina, restituisce un codice di uscita che indica se tutti i file sono "
    "stati elaborati correttamente. Un errore in un singolo file non ferma l'elaborazione degli "
    "altri, ma viene annotato nel registro insieme all'ora.",
    "La pagina di manuale spiega anche come ripristinare un archivio da una copia di sicurezza e "
    "quali permessi servono per scrivere nella cartella di destinazione scelta dall'utente.",
]
JA_LETTER = (
    "拝啓　春暖の候、皆様にはますますご清祥のこととお喜び申し上げます。"
    "平素は格別のお引き立てをいただき、厚く御礼申し上げます。"
    "さて、このたび弊社は本社事務所を下記の住所へ移転することになりました。"
    "新しい事務所は駅から徒歩五分の便利な場所にあり、皆様のご来訪を心よりお待ちしております。"
    "これを機に社員一同、より一層の努力を重ねてまいりますので、今後とも変わらぬご支援を賜りますよう"
    "お願い申し上げます。まずは略儀ながら書中をもってご案内申し上げます。敬具"
)
ZH_TEXT = [
    "本章介绍如何在命令行中使用软件包管理工具。下面的例子展示了安装、升级和删除软件包的基本方法。",
    "在执行这些命令之前，请确认您拥有管理员权限，并且系统已经连接到网络。",
    "如果命令执行失败，系统会显示错误信息。请仔细阅读这些信息，然后根据提示修改配置文件。",
]
CODE = ["$ sudo apt-get update", "$ sudo apt-get install tesseract-ocr", "for f in *.png; do tesseract $f out; done"]

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
MONO = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
NOTO_CJK = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"


def two_columns(paragraphs: list[str], *, w: int = 1654, h: int = 2339, size: int = 22) -> Image.Image:
    """A dense two-column page (A4 at 200 dpi, ~8 pt type), filled with ``paragraphs`` in turn."""
    img = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(DEJAVU, size)
    margin, gap, step = 100, 60, int(size * 1.35)
    col_w = (w - 2 * margin - gap) // 2
    lines: list[str] = []
    per = (h - 2 * margin) // step
    k = 0
    while len(lines) < 2 * per:
        lines += textwrap.wrap(paragraphs[k % len(paragraphs)], int(col_w / (size * 0.56))) + [""]
        k += 1
    for c in range(2):
        for i, ln in enumerate(lines[c * per:(c + 1) * per]):
            draw.text((margin + c * (col_w + gap), margin + i * step), ln, font=font, fill="black")
    return img


def vertical_letter(text: str, *, w: int = 1240, h: int = 1754, size: int = 40) -> Image.Image:
    """Japanese set in columns, top to bottom, right to left (tategaki)."""
    img = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(img)
    font = ImageFont.truetype(NOTO_CJK, size, index=0)  # face 0: JP
    margin, step = 120, int(size * 1.1)
    per = (h - 2 * margin) // step
    x, i = w - margin - size, 0
    while i < len(text):
        for k in range(per):
            if i >= len(text):
                break
            ch, y = text[i], margin + k * step
            i += 1
            if ch in "、。":  # vertical punctuation sits top right of its cell
                draw.text((x + size * 0.5, y - size * 0.4), ch, font=font, fill="black")
            else:
                draw.text((x, y), ch, font=font, fill="black")
        x -= int(size * 1.8)
    return img


def chinese_with_code() -> Image.Image:
    img = Image.new("RGB", (1240, 1754), "white")
    draw = ImageDraw.Draw(img)
    zh, mono = ImageFont.truetype(NOTO_CJK, 30, index=2), ImageFont.truetype(MONO, 28)
    y = 120
    for block in (ZH_TEXT[:2], CODE, ZH_TEXT[2:], CODE[:2]):
        for t in block:
            cjk = bool(re.search(r"[\u4e00-\u9fff]", t))
            while t:
                n = 34 if cjk else len(t)
                draw.text((100, y), t[:n], font=zh if cjk else mono, fill="black")
                t, y = t[n:], y + (48 if cjk else 42)
        y += 30
    return img


def words_of(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]{2,}", text.lower())


def recall(expected: list[str], got: str) -> float:
    have = set(words_of(got))
    return sum(w in have for w in expected) / max(1, len(expected))


def pairs_in_order(expected: str, got: str) -> float:
    """Share of the expected text's adjacent word pairs that the other text has adjacent too
    (word order kept; a line read backwards has none)."""
    a, b = words_of(expected), words_of(got)
    want = list(zip(a, a[1:], strict=False))
    have = set(zip(b, b[1:], strict=False))
    return sum(p in have for p in want) / max(1, len(want))


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract={"threads": 1}))
    eng.start()
    yield eng
    eng.close()


def ocr(src: Path, engine: TesseractEngine) -> list[PageResult]:
    """The pages as the daemon reads them with Tesseract: rendered (upright turn included, read
    first: ``orient.upright_by_reading``), recognised with the render stage's script and band."""
    opts = render_opts(text_layer="ocr", dpi=300, read_first=True)
    out = []
    for i in range(page_count(src, opts)):
        pg = read_or_render(src, i, opts)
        assert isinstance(pg, ImagePage)
        answer = engine.recognize([PageRequest(f"doc-{src.stem}", i, pg.image, script=pg.geometry.script, band=pg.band)])[0]
        out.append(PageResult.from_engine(pg, answer, engine_markdown=False))
    return out


def searchable(src: Path, pages: list[PageResult], tmp: Path) -> Path:
    out = tmp / (src.stem + ".out.pdf")
    out.write_bytes(write_pdf_input(PdfInput(src, pages, markdown=False)).data)
    return out


def pdftotext(path: Path) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def first_word_top(path: Path) -> tuple[str, float, float]:
    """The first word PyMuPDF extracts from page 1, its top as shown, and the page's height."""
    with pymupdf.open(path) as doc:
        page = doc[0]
        w = page.get_text("words", sort=False)[0]
        top = (pymupdf.Rect(w[:4]) * page.rotation_matrix).y0
        return w[4], top, page.rect.height


# --------------------------------------------------------------------------- item 1: turned pages


@pytest.mark.parametrize("turned", [90, 270])
def test_sideways_two_column_page_osd_cannot_place(turned: int, engine: TesseractEngine, tmp_path: Path) -> None:
    page = two_columns(DA)
    src = tmp_path / f"da{turned}.png"
    page.rotate(-turned, expand=True).save(src)
    small = Image.open(src).convert("L")
    small = small.resize((small.width * 1540 // max(small.size), small.height * 1540 // max(small.size)))
    osd = detect_orientation(small)
    # the case of the issue: OSD gives no usable answer (no text script, or too unsure)
    assert osd is None or osd.script not in ("Latin",) or osd.confidence < 1.5, osd
    assert probe_turn(small) == (360 - turned) % 360
    pages = ocr(src, engine)
    assert pages[0].geometry is not None and pages[0].geometry.rotation == (360 - turned) % 360
    expected = words_of(" ".join(DA))
    assert recall(expected, pages[0].text) >= 0.9, pages[0].text[:400]
    out = searchable(src, pages, tmp_path)
    with pymupdf.open(out) as doc:
        assert doc[0].rect.height > doc[0].rect.width  # shown upright (portrait)
    assert recall(expected, pdftotext(out)) >= 0.9
    word, top, height = first_word_top(out)
    assert word == "Programmet" and top < height / 8


def test_upside_down_page_rotation_180_and_pdf_reads_in_order(engine: TesseractEngine, tmp_path: Path) -> None:
    text = "\n\n".join(IT * 2)
    src = tmp_path / "it180.png"
    docgen.text_image(text, width=1654, font_size=30).rotate(180).save(src)
    pages = ocr(src, engine)
    g = pages[0].geometry
    assert g is not None and g.rotation == 180  # the sidecar's rotation: the turn applied
    assert recall(words_of(text), pages[0].text) >= 0.95
    out = searchable(src, pages, tmp_path)
    with pymupdf.open(out) as doc:
        assert doc[0].rotation == 180  # shown upright
        extracted = doc[0].get_text()
    assert pairs_in_order(text, extracted) >= 0.9, extracted[:300]
    assert pairs_in_order(text, pdftotext(out)) >= 0.9
    word, top, height = first_word_top(out)
    assert word == "Il" and top < height / 8


def test_pdf_pages_turned_come_out_upright(engine: TesseractEngine, tmp_path: Path) -> None:
    """A scanned PDF: page 1's content scanned sideways (turned 90), page 2 an upright scan
    with a wrong /Rotate 180 (shown upside down). Both are shown upright in the output."""
    text = "\n\n".join(IT)
    img = docgen.text_image(text, width=1654, font_size=30)
    side, up = tmp_path / "side.png", tmp_path / "up.png"
    img.rotate(-90, expand=True).save(side)
    img.save(up)
    doc = pymupdf.open()
    doc.new_page(width=842, height=595).insert_image(pymupdf.Rect(0, 0, 842, 595), filename=str(side))
    p = doc.new_page(width=595, height=842)
    p.insert_image(p.rect, filename=str(up))
    p.set_rotation(180)
    src = tmp_path / "turned.pdf"
    doc.save(src)
    doc.close()
    pages = ocr(src, engine)
    assert [pg.geometry.rotation if pg.geometry else None for pg in pages] == [270, 180]
    out = searchable(src, pages, tmp_path)
    with pymupdf.open(out) as o:
        for k, page in enumerate(o):
            assert page.rect.height > page.rect.width, k  # portrait, as the text stands
            words = page.get_text("words", sort=False)
            top = (pymupdf.Rect(words[0][:4]) * page.rotation_matrix).y0
            assert words[0][4] == "Il" and top < page.rect.height / 8, (k, words[:3])
            assert pairs_in_order(text, page.get_text()) >= 0.9


# --------------------------------------------------------------------------- item 2: vertical CJK


def _vert_models() -> bool:
    return all(Path(tessdata_dir(), f"{m}.traineddata").is_file() for m in ("jpn_vert", "chi_sim_vert", "chi_tra_vert"))


@pytest.mark.skipif(not _vert_models(), reason="tesseract-ocr-{jpn,chi-sim,chi-tra}-vert missing (tests/run.sh installs them)")
def test_vertical_japanese_letter_read_with_jpn_vert(engine: TesseractEngine, tmp_path: Path) -> None:
    src = tmp_path / "tategaki.png"
    vertical_letter(JA_LETTER).save(src)
    page = ocr(src, engine)[0]
    assert page.meta["languages"] == ["jpn_vert"] and page.meta.get("vertical") is True
    want = [c for c in JA_LETTER if not c.isspace() and c not in "、。"]
    got = page.text
    assert sum(min(got.count(c), want.count(c)) for c in set(want)) / len(want) >= 0.9, got
    # in reading order: the letter's opening and closing phrases come out whole
    assert "春暖の候" in got and "ご案内申し上げます" in got
    # the searchable PDF draws each column top to bottom: its text comes back whole, in order
    out = searchable(src, [page], tmp_path)
    with pymupdf.open(out) as doc:
        layer = doc[0].get_text().replace("\n", "")
    assert "春暖の候" in layer and "ご案内申し上げます" in layer
    assert sum(min(layer.count(c), want.count(c)) for c in set(want)) / len(want) >= 0.9


def test_chinese_page_with_code_keeps_chinese_models(engine: TesseractEngine, tmp_path: Path) -> None:
    src = tmp_path / "zh-code.png"
    chinese_with_code().save(src)
    page = ocr(src, engine)[0]
    assert "chi_sim" in page.meta["languages"], page.meta
    han = "".join(ZH_TEXT)
    got = page.text
    chars = [c for c in han if "\u4e00" <= c <= "\u9fff"]
    assert sum(c in got for c in chars) / len(chars) >= 0.9
    assert "apt-get" in got and "tesseract" in got


# --------------------------------------------------------------------------- reading first


def test_upright_page_read_first_skips_osd_and_its_band_is_the_language_probe(
    engine: TesseractEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Tesseract render (``read_first``): an upright Italian page's English band reads as
    upright text, so OSD does not run and the page is not turned; the engine takes that band as
    its language probe (no band read of its own) and reads the page once, as Italian (issue 32,
    bench/cpu_profile_2026-12-03.md "Savings, round two")."""
    from daemon.pages import orient

    osd: list[int] = []
    real_osd = orient.detect_orientation
    monkeypatch.setattr(orient, "detect_orientation", lambda im: osd.append(1) or real_osd(im))
    bands: list[str] = []
    real_ocr = engine._ocr

    def ocr_spy(req: PageRequest, langs: list[str], gray: Image.Image, layout: bool = True) -> tuple:
        if not layout:
            bands.append("+".join(langs))
        return real_ocr(req, langs, gray, layout)

    monkeypatch.setattr(engine, "_ocr", ocr_spy)
    text = "\n\n".join(IT)
    src = tmp_path / "it.png"
    docgen.text_image(text, width=1654, font_size=30).save(src)
    pages = ocr(src, engine)
    g = pages[0].geometry
    assert osd == [] and g is not None and g.rotation == 0 and g.script == "Latin"
    assert bands == [] and pages[0].meta["probe"] == [["eng"]], (bands, pages[0].meta)
    assert pages[0].meta["languages"] == ["ita", "eng"] and "first_pass" not in pages[0].meta, pages[0].meta
    assert recall(words_of(text), pages[0].text) >= 0.95
