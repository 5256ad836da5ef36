"""Writers md/txt/json through ``render_outputs`` on the fixture set of model-style outputs."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from daemon.convert import split_raw_pages
from daemon.docmodel import Document, MathBlock, Table, parse_document, plain_text
from daemon.writers import render_outputs
from daemon.writers.text import display_width, table_text

FIXTURES = Path(__file__).parent / "fixtures" / "model_outputs"
FIXTURE_FILES = sorted(FIXTURES.glob("*.md"))
LANG = {"invoice_de": "de", "paper_en": "en", "report_zh": "zh", "receipt_ja": "ja", "letter_fr": "fr", "stats_nordic": "sv"}


def load(path: Path) -> tuple[list[str], str]:
    return split_raw_pages(path.read_text(encoding="utf-8")), LANG.get(path.stem, "en")


def render(path: Path, formats: list[str], sidecar: dict | None = None) -> tuple[dict[str, bytes], Document]:
    pages, lang = load(path)
    out = render_outputs(
        pages, formats=formats, stem=path.stem, language=lang, sidecar=sidecar or {"source": path.name}, markdown=True
    )
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
    out = render_outputs([page], formats=["md", "txt", "json"], stem="s", language="de", sidecar={}, markdown=False)
    txt = out["s.txt"].decode()
    assert txt == page + "\n"
    md_doc = parse_document(split_raw_pages(out["s.md"].decode()))
    assert [plain_text(b.text) for b in md_doc.pages[0].blocks] == page.split("\n\n")  # type: ignore[union-attr]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="docx"):
        render_outputs(["x"], formats=["docx"], stem="s", language="en", sidecar={}, markdown=True)


def test_table_text_of_spanned_header() -> None:
    doc = parse_document([(FIXTURES / "paper_en.md").read_text(encoding="utf-8").split("<!-- page 2 -->")[0]])
    t = next(b for b in doc.pages[0].blocks if isinstance(b, Table))
    lines = table_text(t).split("\n")
    # "CIFAR-10" spans Top-1/Top-5 below it: it starts in the column of the first "Top-1"
    assert _column_starts(lines[0], ["Method", "CIFAR-10", "ImageNet"])[1] == _column_starts(lines[1], ["Top-1"])[0]
