"""Writers md/txt/json through ``render_outputs`` on the fixture set of model-style outputs."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from daemon.document.inline import plain_text
from daemon.document.model import Document, MathBlock, Table
from daemon.document.parse import parse_document
from daemon.writers import render_outputs
from daemon.writers.convert import split_raw_pages
from daemon.writers.text import display_width, table_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model_outputs"
FIXTURE_FILES = sorted(FIXTURES.glob("*.md"))
LANG = {"invoice_de": "de", "paper_en": "en", "report_zh": "zh", "receipt_ja": "ja", "letter_fr": "fr", "stats_nordic": "sv"}


def load(path: Path) -> tuple[list[str], str]:
    return split_raw_pages(path.read_text(encoding="utf-8")), LANG.get(path.stem, "en")


def render(path: Path, formats: list[str], sidecar: dict | None = None) -> tuple[dict[str, bytes], Document]:
    pages, lang = load(path)
    out = render_outputs(parse_document(pages, markdown=True, language=lang), formats=formats, stem=path.stem, sidecar=sidecar or {"source": path.name})
    return out, parse_document(pages, language=lang)


def test_fixture_set_covers_the_cases() -> None:
    """The fixtures hold every case the writers must handle (guards against a thinned-out set)."""
    raw = "\n".join(p.read_text(encoding="utf-8") for p in FIXTURE_FILES)
    docs = [render(p, [])[1] for p in FIXTURE_FILES]
    tables = [t for d in docs for _, _, t in d.tables()]
    assert any(c.rowspan > 1 for t in tables for c in t.cells)
    assert any(c.colspan > 1 for t in tables for c in t.cells)
    assert any(c.rowspan > 1 and t.header_rows > 1 for t in tables for c in t.cells)
    assert any("**" in c.text and "*" in c.text.replace("**", "") for t in tables for c in t.cells)  # nested
    for needle in ("1.234,56", "1,234,567.89", "12 345,67", "\\$x^2", "\\(", "\\[", "$$", "<sup>", "%", "&", "_", "#"):
        assert needle in raw, needle
    assert any(unicodedata.east_asian_width(ch) == "W" for ch in raw)
    assert any(b for d in docs for p in d.pages for b in p.blocks if isinstance(b, MathBlock))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_render_is_deterministic_and_names_files(fixture: Path) -> None:
    a, doc = render(fixture, ["md", "txt", "json"])
    b, _ = render(fixture, ["md", "txt", "json"])
    assert a == b
    assert sorted(a) == sorted(f"{fixture.stem}.{e}" for e in ("md", "txt", "json"))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_md_reparses_to_the_same_model(fixture: Path) -> None:
    """The written Markdown carries the whole model: parsing it again gives the same document
    (tables with spans stay HTML, the rest become pipe tables; math, lists, headings intact)."""
    out, doc = render(fixture, ["md"])
    md = out[f"{fixture.stem}.md"].decode("utf-8")
    again = parse_document(split_raw_pages(md), language=doc.language)
    assert again == doc
    for _, _, t in doc.tables():
        if t.has_spans:
            assert "rowspan" in md or "colspan" in md
    # math normalised: no \( \[ or escaped-dollar math left in the Markdown
    assert "\\(" not in md and "\\[" not in md
    assert md.count("<!-- page ") == len(doc.pages)


def test_md_pipe_tables_only_without_spans() -> None:
    out, doc = render(FIXTURES / "paper_en.md", ["md"])
    md = out["paper_en.md"].decode()
    assert "| Symbol | Meaning | Value |" in md
    assert "| `T` | iterations | 10,000 |" in md
    assert '<th rowspan="2">Method</th>' in md and '<th colspan="2">CIFAR-10</th>' in md
    assert "<b>Adam <i>(ours)</i></b>" in md
    assert "$x^2 + y^2 = r^2$" in md and "$\\alpha$" in md and "$\\eta_t = \\eta_0/\\sqrt{t}$" in md
    assert "cost ~ \\$3 per run, and 50\\$ per month" in md


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_txt_has_every_cell_and_page_breaks(fixture: Path) -> None:
    out, doc = render(fixture, ["txt"])
    txt = out[f"{fixture.stem}.txt"].decode("utf-8")
    assert txt.count("\f") == len(doc.pages) - 1
    for _, _, t in doc.tables():
        for cell in t.cells:
            for line in cell.plain.split("\n"):
                assert line in txt
    assert "**" not in txt and "<b>" not in txt and "<td" not in txt


def _column_starts(line: str, texts: list[str]) -> list[int]:
    """Display column where each of ``texts`` starts in ``line``."""
    cols, pos = [], 0
    for t in texts:
        k = line.index(t, pos)
        cols.append(display_width(line[:k]))
        pos = k + len(t)
    return cols


def test_txt_table_columns_align_with_cjk_double_width() -> None:
    doc = parse_document(["<table><tr><th>品名</th><th>数量</th><th>x</th></tr>"
                          "<tr><td>コーヒー豆</td><td>2</td><td>a</td></tr>"
                          "<tr><td>tea</td><td>10</td><td>b</td></tr></table>"])
    lines = table_text(doc.tables()[0][2]).split("\n")
    assert display_width("コーヒー豆") == 10
    starts = [_column_starts(lines[0], ["品名", "数量", "x"]), _column_starts(lines[2], ["コーヒー豆", "2", "a"]),
              _column_starts(lines[3], ["tea", "10", "b"])]
    assert starts[0][0] == starts[1][0] == starts[2][0] == 0
    assert starts[0][2] == starts[1][2] == starts[2][2]  # third column lines up
    # the numeric column is right-aligned: "2" and "10" end in the same display column
    assert starts[1][1] + 1 == starts[2][1] + 2


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_json_has_sidecar_keys_and_the_model(fixture: Path) -> None:
    sidecar = {"source": f"/in/{fixture.stem}.pdf", "sha256": "ab" * 32, "language": "xx", "pages": 9, "outputs": []}
    out, doc = render(fixture, ["json"], sidecar)
    data = json.loads(out[f"{fixture.stem}.json"])
    for k, v in sidecar.items():
        assert data[k] == v  # sidecar keys win, untouched
    assert Document.from_dict(data["document"]) == doc
    tables = [b for p in data["document"]["pages"] for b in p["blocks"] if b["type"] == "table"]
    assert len(tables) == len(doc.tables())
    for t in tables:
        assert all({"row", "col", "rowspan", "colspan", "text", "plain", "header"} <= set(c) for c in t["cells"])


def test_plain_text_input_keeps_specials_in_every_writer() -> None:
    page = "Rabatt 50% & mehr_hier #1 {x} ~ ^ \\ $5 and $10 *not bold*\n\nzweiter Absatz"
    out = render_outputs(parse_document([page], markdown=False, language="de"), formats=["md", "txt", "json"], stem="s", sidecar={})
    txt = out["s.txt"].decode()
    assert txt == page + "\n"
    md_doc = parse_document(split_raw_pages(out["s.md"].decode()))
    assert [plain_text(b.text) for b in md_doc.pages[0].blocks] == page.split("\n\n")  # type: ignore[union-attr]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="docx"):
        render_outputs(parse_document(["x"], markdown=True, language="en"), formats=["docx"], stem="s", sidecar={})


def test_table_text_of_spanned_header() -> None:
    doc = parse_document([(FIXTURES / "paper_en.md").read_text(encoding="utf-8").split("<!-- page 2 -->")[0]])
    t = next(b for b in doc.pages[0].blocks if isinstance(b, Table))
    lines = table_text(t).split("\n")
    # "CIFAR-10" spans Top-1/Top-5 below it: it starts in the column of the first "Top-1"
    assert _column_starts(lines[0], ["Method", "CIFAR-10", "ImageNet"])[1] == _column_starts(lines[1], ["Top-1"])[0]


# --- tex ------------------------------------------------------------------------------------


def compile_tex(tex: bytes, tmp_path: Path, name: str = "doc") -> str:
    """Compile with xelatex (as CI does); returns the log. Fails -- never skips -- without
    xelatex: tests/run.sh installs TeX Live."""
    import shutil
    import subprocess

    xelatex = shutil.which("xelatex")
    assert xelatex, "xelatex missing: tests/run.sh installs texlive-xetex, texlive-lang-cjk, texlive-lang-chinese"
    d = tmp_path / name
    d.mkdir()
    (d / f"{name}.tex").write_bytes(tex)
    p = subprocess.run(
        [xelatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{name}.tex"],
        cwd=d, capture_output=True, timeout=300,
    )
    log = (d / f"{name}.log").read_text(encoding="utf-8", errors="replace") if (d / f"{name}.log").exists() else ""
    assert p.returncode == 0, log[-3000:] or p.stdout.decode(errors="replace")[-3000:]
    assert (d / f"{name}.pdf").stat().st_size > 0
    return log


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_tex_compiles_with_xelatex(fixture: Path, tmp_path: Path) -> None:
    out, doc = render(fixture, ["tex"])
    tex = out[f"{fixture.stem}.tex"]
    log = compile_tex(tex, tmp_path, fixture.stem)
    src = tex.decode("utf-8")
    assert src.count("\\newpage") == len(doc.pages) - 1
    assert "Missing character" not in log  # every glyph found (CJK via xeCJK, Greek via math)
    for _, _, t in doc.tables():
        assert "\\begin{longtable}" in src
        if any(c.rowspan > 1 for c in t.cells):
            assert "\\multirow{" in src
        if any(c.colspan > 1 for c in t.cells):
            assert "\\multicolumn{" in src
    if any("\u3040" <= ch <= "\u9fff" for ch in src):
        assert "\\usepackage{xeCJK}" in src and "Noto Serif CJK" in src


def test_tex_keeps_math_and_escapes_specials() -> None:
    out, _ = render(FIXTURES / "paper_en.md", ["tex"])
    src = out["paper_en.tex"].decode()
    assert "\\(\\eta_t = \\eta_0/\\sqrt{t}\\)" in src
    assert "\\(x^2 + y^2 = r^2\\)" in src  # repaired escaped dollars
    assert "\\begin{aligned}" in src and "\\begin{align}" not in src
    assert "95\\% of runs converge \\& the rest" in src
    assert "my\\_var\\_name, issue \\#42" in src
    assert "\\$3 per run, and 50\\$ per month" in src
    assert "code \\{data\\} and 100\\% reproducibility" in src
    assert "\\textbf{Adam \\textit{(ours)}}" in src or "\\textbf{Adam }\\textbf{\\textit{(ours)}}" in src


# --- csv ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_csv_one_file_per_table_spans_expanded(fixture: Path) -> None:
    import csv
    import io

    out, doc = render(fixture, ["csv"])
    tables = doc.tables()
    assert sorted(out) == sorted(f"{fixture.stem}.table-{p}-{n}.csv" for p, n, _ in tables)
    for page, n, t in tables:
        data = out[f"{fixture.stem}.table-{page}-{n}.csv"]
        assert not data.startswith(b"\xef\xbb\xbf")
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        assert len(rows) == t.n_rows and all(len(r) == t.n_cols for r in rows)
        for cell in t.cells:  # every covered slot holds the anchor's text
            for r in range(cell.row, cell.row + cell.rowspan):
                for c in range(cell.col, cell.col + cell.colspan):
                    assert rows[r][c] == plain_text(cell.text)


def test_csv_bom_option_and_span_values() -> None:
    import csv
    import io

    from daemon.writers import WriterOptions

    pages, _ = load(FIXTURES / "paper_en.md")
    out = render_outputs(parse_document(pages, markdown=True, language="en"), formats=["csv"], stem="p", sidecar={}, options=WriterOptions(csv_bom=True))
    data = out["p.table-1-1.csv"]
    assert data.startswith(b"\xef\xbb\xbf")
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert rows[0] == ["Method", "CIFAR-10", "CIFAR-10", "ImageNet", "ImageNet"]
    assert rows[1] == ["Method", "Top-1", "Top-5", "Top-1", "Top-5"]
    assert rows[2][0] == rows[3][0] == "SGD"
    assert rows[3][3:] == ["n/a", "n/a"]
    assert rows[4] == ["Adam (ours)", "93.4", "99.6", "$78.1 \\pm 0.2$", "94.2"]


# --- xlsx -----------------------------------------------------------------------------------


def _load_xlsx(data: bytes):  # type: ignore[no-untyped-def]
    import io

    import openpyxl

    return openpyxl.load_workbook(io.BytesIO(data))


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.stem)
def test_xlsx_cell_by_cell(fixture: Path) -> None:
    from daemon.writers.numbers import parse_number

    out, doc = render(fixture, ["xlsx"])
    wb = _load_xlsx(out[f"{fixture.stem}.xlsx"])
    tables = doc.tables()
    assert wb.sheetnames == [f"p{p}-t{n}" for p, n, _ in tables]
    for page, n, t in tables:
        ws = wb[f"p{page}-t{n}"]
        merged = {str(r) for r in ws.merged_cells.ranges}
        from openpyxl.utils import get_column_letter

        want_merged = {
            f"{get_column_letter(c.col + 1)}{c.row + 1}:{get_column_letter(c.col + c.colspan)}{c.row + c.rowspan}"
            for c in t.cells if c.rowspan > 1 or c.colspan > 1
        }
        assert merged == want_merged
        for cell in t.cells:
            v = ws.cell(row=cell.row + 1, column=cell.col + 1).value
            num = None if cell.header else parse_number(cell.plain, doc.language)
            if num is not None:
                assert isinstance(v, (int, float)) and not isinstance(v, bool)
                assert v == pytest.approx(num.value)
            else:
                assert (v or "") == cell.plain
                assert v is None or isinstance(v, str)


def test_xlsx_numbers_follow_the_document_locale() -> None:
    out, _ = render(FIXTURES / "invoice_de.md", ["xlsx"])
    ws = _load_xlsx(out["invoice_de.xlsx"])["p1-t1"]
    assert ws["C2"].value == 1200 and isinstance(ws["C2"].value, int)  # "1.200" in German
    assert ws["D2"].value == pytest.approx(0.85) and "€" in ws["D2"].number_format
    assert ws["E6"].value == pytest.approx(1278.06)
    assert ws["D5"].value == pytest.approx(0.19) and ws["D5"].number_format.endswith("%")
    assert ws["B3"].value == "Sauerteig-Starter\n(Bio)"
    assert ws["A1"].font.b
    out, _ = render(FIXTURES / "report_zh.md", ["xlsx"])
    ws = _load_xlsx(out["report_zh.xlsx"])["p1-t1"]
    assert ws["B2"].value == pytest.approx(1234567.89)  # "1,234,567.89" in Chinese
    assert ws["D2"].value == pytest.approx(0.125)
    assert ws["B6"].value == 12345678 and "¥" in ws["B6"].number_format
    out, _ = render(FIXTURES / "stats_nordic.md", ["xlsx"])
    ws = _load_xlsx(out["stats_nordic.xlsx"])["p1-t1"]
    assert ws["B2"].value == pytest.approx(12345.67) and ws["B3"].value == pytest.approx(8765.40)


def test_xlsx_without_tables_and_formula_text() -> None:
    out = render_outputs(parse_document(["no tables here"], markdown=True, language="en"), formats=["xlsx", "csv"], stem="s", sidecar={})
    assert list(out) == ["s.xlsx"]  # no csv file for a document without tables
    assert _load_xlsx(out["s.xlsx"]).sheetnames == ["no tables"]
    out = render_outputs(parse_document(["<table><tr><td>=SUM(A1:A2)</td><td>007</td></tr></table>"], markdown=True, language="en"), formats=["xlsx"], stem="s", sidecar={})
    ws = _load_xlsx(out["s.xlsx"])["p1-t1"]
    assert ws["A1"].value == "=SUM(A1:A2)" and ws["A1"].data_type == "s"
    assert ws["B1"].value == "007"
