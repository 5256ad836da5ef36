"""Random engine-like output: every writer survives it, and the .tex still compiles; tables with
any spans and text with any characters (propgen.PAGE_TEXTS) make readable CSV and XLSX files."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook
from propgen import PAGE_TEXTS, PROPS

from daemon.document.parse import parse_document
from daemon.writers import FORMATS, WriterOptions, render_outputs
from tests.integration.test_writers import compile_tex

PIECES = [
    "# ", "## ", "- ", "1. ", "  - ", "| a | b |\n|---|---|\n| 1 | 2 |", "$", "$$", "\\(", "\\)", "\\[", "\\]",
    "\\$", "x^2", "_", "^", "{", "}", "\\frac{1}{2}", "\\alpha", "\\begin{aligned}", "\\end{aligned}", "&",
    "\\\\", "%", "#", "~", "**", "*", "`", "<b>", "</b>", "<i>", "<br>", "<sup>", "</sup>",
    "<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", '<td rowspan="2">', '<td colspan="3">',
    "<thead>", "</thead>", "&amp;", "&lt;", "€ 1.234,56", "1,234.56", "12 %", "中文", "かな", "Ⅰ", "μ", "—",
    "é", "ß", "\n", "\n\n", " ", "text", "word", "[", "]", "(", ")", "![img](a.png)", "<!-- page 2 -->",
    "```", "---", "\\left(", "\\right)", "\\text{", "\\sqrt", "'", '"', "<", ">", "|", "\t", "\x0c",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), min_size=1, max_size=3), st.booleans())
def test_writers_never_fail(pages: list[str], markdown: bool) -> None:
    fmts = [f for f in FORMATS if f != "pdf"]  # pdf is made from the source file (daemon.writers.pdf)
    out = render_outputs(parse_document(pages, markdown=markdown, language="de"), formats=fmts, stem="f", sidecar={"k": 1})
    assert {"f.txt", "f.md", "f.json", "f.tex", "f.xlsx"} <= set(out)
    assert out == render_outputs(parse_document(pages, markdown=markdown, language="de"), formats=fmts, stem="f", sidecar={"k": 1})


@settings(PROPS, max_examples=80)
@given(st.lists(PAGE_TEXTS, min_size=1, max_size=3), st.booleans(), st.booleans(),
       st.sampled_from(["de", "en", "zh", "ja", "unknown"]))
def test_tables_and_any_characters_make_readable_files(pages: list[str], markdown: bool, bom: bool, language: str) -> None:
    """HTML tables with zero, negative, huge and non-numeric spans, ragged pipe tables, and
    control characters, XML's non-characters, bidi controls, RTL, CJK and emoji in cells and
    text: every format is written, one CSV per table of the document model, each CSV parses,
    the workbook opens with one sheet per table, the JSON keeps the page texts."""
    fmts = [f for f in FORMATS if f != "pdf"]
    out = render_outputs(parse_document(pages, markdown=markdown, language=language), formats=fmts, stem="f", sidecar={}, options=WriterOptions(csv_bom=bom))
    n_tables = len(parse_document(pages, markdown=markdown, language=language).tables())
    csvs = sorted(n for n in out if n.endswith(".csv"))
    assert len(csvs) == n_tables
    for n in csvs:
        list(csv.reader(io.StringIO(out[n].decode("utf-8-sig"), newline="")))
    sheets = load_workbook(io.BytesIO(out["f.xlsx"]), read_only=True).sheetnames
    assert len(sheets) == max(1, n_tables)
    assert json.loads(out["f.json"])["page_texts"] == pages


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_pages_compile(seed: int, tmp_path: Path) -> None:
    rnd = random.Random(seed)
    pages = ["".join(rnd.choice(PIECES) for _ in range(400)) for _ in range(2)]
    out = render_outputs(parse_document(pages, markdown=True, language="zh" if seed % 2 else "en"), formats=["tex"], stem="r", sidecar={})
    compile_tex(out["r.tex"], tmp_path, f"random{seed}")


MATH_TOKENS = [
    "x", "y", "2", "^", "_", "{", "}", "{", "}", "\\frac", "\\sqrt", "\\left(", "\\right)", "\\left.", "\\right|",
    "\\begin{pmatrix}", "\\end{pmatrix}", "&", "\\\\", "\\text{a b}", "'", "\\alpha", "\\hat", "\\sum", "\\limits",
    "\\mathbb{R}", "\\big(", "\\big)", "|", "+", "=", "1", "\\,", "\\operatorname{tr}", "\\begin{cases}",
    "\\end{cases}", "\\overset", "\\\\[2pt]", "\\int", "\\infty", "\\cdot", "\\ldots", "\\mathrm", "\\vec",
    "\\begin{aligned}", "\\end{aligned}", "\\tag{1}", "\\label{a}", "\\quad", "\\Big[", "\\Big]", "\\not", "<",
    "\\leq", "\\prime", "\\mathbf", "\\boldsymbol", "\\underbrace", "\\overline", "\\binom", "\\dfrac",
    "\\displaystyle", "!", ",", ";", "(", ")", "[", "]", "\\{", "\\}", "\\|", "\\over", "\\choose", "\\atop",
    "\\hline", "\\begin{array}{cc}", "\\end{array}", "\\mathcal{L}", "\\unknowncmd", "\\%", "%", "#", "~",
]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_math_compiles(seed: int, tmp_path: Path) -> None:
    """Random token soup inside $…$ and $$…$$: whatever the check lets through compiles (the
    rest is printed verbatim). Found: x^\\sqrt, x' ', two \\over in a group, \\limits after a
    non-operator, mathtools breaking '& \\operatorname{tr}' at the end of aligned."""
    rnd = random.Random(seed)
    formulas = [" ".join(rnd.choice(MATH_TOKENS) for _ in range(rnd.randint(1, 12))) for _ in range(80)]
    page_inline = "\n\n".join(f"F: ${f}$ end." for f in formulas)
    page_display = "\n\n".join(f"$$\n{f}\n$$" for f in formulas)
    out = render_outputs(parse_document([page_inline, page_display], markdown=True, language="en"), formats=["tex"], stem="m", sidecar={})
    compile_tex(out["m.tex"], tmp_path, f"math{seed}")
