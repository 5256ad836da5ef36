"""Typeset a real passage of a source PDF anew, for kinds a set's packages do not have as such.

Used by fetch.py for a document with ``typeset:`` (sources.yaml). The passage is the source PDF's
text (PyMuPDF ``get_text()``) of ``pages`` from the first line holding ``start`` through the line
holding ``end``; wrapped lines are joined (CJK without a space). Three layouts, all drawn with
PyMuPDF (built-in fonts: Helvetica/Times, Droid Sans Fallback for CJK, so no system font matters)
and saved without dates or ids, so the bytes depend only on the PyMuPDF version:

- ``letter``: a business letter: sender block, recipient block, place and date, subject line,
  salutation, the passage as the body, closing and signature. The frame fields (sender,
  recipient, date, subject, salutation, closing, signature) are given in sources.yaml; the body is
  the passage.
- ``vertical``: the passage set in vertical columns (tategaki), right to left, one character at a
  time; long-vowel marks, brackets and Latin letters turned 90 degrees, 、 and 。 in the top right of
  their cell, a paragraph starts a new column indented by one character.
- ``formula``: a title, the passage, a code block (lines of the source given by ``code_start`` /
  ``code_end``) and display formulas given in sources.yaml (``formulas``, HTML with <sup>/<sub>).

The reference text of such a document is the typeset PDF's own text layer (fetch.py's
``reference_pages``), as for every other document.
"""

from __future__ import annotations

import html
import re

import pymupdf

A4 = pymupdf.paper_rect("a4")
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")


def passage(src: pymupdf.Document, spec: dict, start_key: str = "start", end_key: str = "end") -> list[str]:
    """Paragraphs of the passage: a paragraph ends at a blank line or at a line that ends in . 。 : ：
    and is shorter than the passage's long lines (a full line ending in a period runs on)."""
    lines: list[str] = []
    for p in spec.get("pages") or [0]:
        lines += [ln.strip() for ln in src[p].get_text().splitlines()]
    start = next(i for i, ln in enumerate(lines) if spec[start_key] in ln)
    end = next(i for i in range(start, len(lines)) if spec[end_key] in lines[i])
    paras: list[str] = []
    cur = ""
    full = max(len(ln) for ln in lines[start:end + 1])
    for ln in lines[start:end + 1]:
        if not ln:
            if cur:
                paras.append(cur)
            cur = ""
            continue
        if cur and not (_CJK.search(cur[-1]) and _CJK.search(ln[0])):
            cur = cur[:-1] if cur.endswith("-") and not cur.endswith(" -") else cur + " "
        cur += ln
        if ln.endswith((".", "。", ":", "：")) and len(ln) < 0.85 * full:
            paras.append(cur)
            cur = ""
    if cur:
        paras.append(cur)
    return paras


def _save(doc: pymupdf.Document) -> bytes:
    doc.set_metadata({})
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True)


def letter(paras: list[str], spec: dict) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=A4.width, height=A4.height)
    esc = html.escape
    sender = "<br>".join(esc(x) for x in spec["sender"])
    to = "<br>".join(esc(x) for x in spec["recipient"])
    body = "".join(f"<p>{esc(p)}</p>" for p in paras)
    css = ("* {font-family: sans-serif; font-size: 10.5pt; line-height: 1.3;} p {margin: 0 0 8pt 0;} "
           ".s {font-size: 8pt; text-align: right;} .d {text-align: right;} .b {font-weight: bold;}")
    text = (f"<p class='s'>{sender}</p><p style='margin-top: 30pt'>{to}</p>"
            f"<p class='d' style='margin-top: 20pt'>{esc(spec['date'])}</p>"
            f"<p class='b' style='margin-top: 14pt'>{esc(spec['subject'])}</p>"
            f"<p style='margin-top: 10pt'>{esc(spec['salutation'])}</p>{body}"
            f"<p style='margin-top: 6pt'>{esc(spec['closing'])}</p><p style='margin-top: 24pt'>{esc(spec['signature'])}</p>")
    rc = page.insert_htmlbox(pymupdf.Rect(70, 50, A4.width - 60, A4.height - 50), text, css=css)
    if rc[0] < 0:
        raise ValueError("letter: passage does not fit on one page")
    return _save(doc)


_TURN = set("ー～…‥（）「」『』［］〈〉《》【】()[]-–—=/:;<>~") | {chr(c) for c in range(0x21, 0x7F)}


def vertical(paras: list[str], spec: dict) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=A4.width, height=A4.height)
    fs = float(spec.get("font_size", 13))
    font = spec.get("font", "japan")
    top, bottom, right, left = 60.0, A4.height - 60, A4.width - 60, 60.0
    step, col = fs * 1.08, fs * 1.9
    x, y = right - fs, top
    for para in paras:
        para = "\u3000" + para.replace(" ", "")
        for ch in para:
            if y + step > bottom:
                x, y = x - col, top
            if x < left:
                raise ValueError("vertical: passage does not fit on one page")
            if ch == "\u3000":
                y += step
                continue
            if ch in "、。，．":
                page.insert_text((x + fs * 0.55, y + fs * 0.35), ch, fontname=font, fontsize=fs)
            elif ch in _TURN:  # turned a quarter clockwise, as vertical type sets them
                page.insert_text((x + fs * 0.15, y), ch, fontname=font, fontsize=fs, rotate=-90)
            else:
                page.insert_text((x, y + fs * 0.88), ch, fontname=font, fontsize=fs)
            y += step
        x, y = x - col, top
    return _save(doc)


def formula(src: pymupdf.Document, paras: list[str], spec: dict) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page(width=A4.width, height=A4.height)
    esc = html.escape
    code = "\n".join(passage(src, spec, "code_start", "code_end")) if spec.get("code_start") else ""
    if spec.get("code_start"):  # keep the code's own lines
        lines: list[str] = []
        for p in spec.get("pages") or [0]:
            lines += src[p].get_text().splitlines()
        i = next(k for k, ln in enumerate(lines) if spec["code_start"] in ln)
        j = next(k for k in range(i, len(lines)) if spec["code_end"] in lines[k])
        code = "\n".join(lines[i:j + 1])
    forms = "".join(f"<p class='f'>{f}</p>" for f in spec.get("formulas") or [])
    body = "".join(f"<p>{esc(p)}</p>" for p in paras)
    css = ("* {font-size: 11pt; line-height: 1.5;} p {margin: 0 0 8pt 0;} h2 {font-size: 15pt;} "
           "pre {font-family: monospace; font-size: 9.5pt; background: #eeeeee; padding: 6pt;} "
           ".f {text-align: center; font-family: serif; font-style: italic; font-size: 12pt; margin: 10pt 0;}")
    text = f"<h2>{esc(spec.get('title', ''))}</h2>{body}{forms}<pre>{esc(code)}</pre>"
    rc = page.insert_htmlbox(pymupdf.Rect(60, 60, A4.width - 60, A4.height - 60), text, css=css)
    if rc[0] < 0:
        raise ValueError("formula: passage does not fit on one page")
    return _save(doc)


def typeset(spec: dict, raw: bytes) -> bytes:
    """The typeset PDF (one page) of spec's passage of the source PDF ``raw``."""
    with pymupdf.open(stream=raw, filetype="pdf") as src:
        paras = passage(src, spec)
        kind = spec["kind"]
        if kind == "letter":
            return letter(paras, spec)
        if kind == "vertical":
            return vertical(paras, spec)
        if kind == "formula":
            return formula(src, paras, spec)
    raise ValueError(f"unknown typeset kind {kind!r}")
