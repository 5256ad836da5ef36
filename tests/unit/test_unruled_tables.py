"""Unruled tables among a page's recognised words (daemon.pages.scantables.find_unruled_tables):
synthetic word boxes, as Tesseract's pass reports them (font ~20 px, a space ~6 px)."""

from __future__ import annotations

from daemon.models import PageLayout, TextBox, TextLine
from daemon.pages.scantables import find_unruled_tables

H = 20  # word box height in px
CHAR = 11  # px per character


def _line(y: int, cells: list[tuple[int, str]], block: int = 0) -> TextLine:
    """One text line: each (x, text) cell's words laid out from x, a space (6 px) apart."""
    words = []
    for x, text in cells:
        for word in text.split():
            words.append(TextBox(word, (x, y, x + CHAR * len(word), y + H)))
            x += CHAR * len(word) + 6
    return TextLine((words[0].box[0], y, words[-1].box[2], y + H), words, block)


def _layout(lines: list[TextLine]) -> PageLayout:
    return PageLayout(size=(1200, 1700), lines=lines, has_words=True)


INVOICE = [["Qty", "Item", "Price", "Total"], ["2", "Rope", "9.95", "19.90"], ["5", "Fender large", "20.00", "100.00"],
           ["1", "Brush", "19.95", "19.95"]]
XS = (100, 300, 700, 1000)


def _invoice_lines(top: int = 400, *, per_column_blocks: bool = False) -> list[TextLine]:
    if per_column_blocks:  # Tesseract's blocks: one per column, each a stack of one-cell lines
        return [_line(top + r * 32, [(XS[c], row[c])], block=c) for c in range(4) for r, row in enumerate(INVOICE)]
    return [_line(top + r * 32, list(zip(XS, row, strict=True))) for r, row in enumerate(INVOICE)]


def _prose(top: int, n: int, x: int = 100, words: int = 12) -> list[TextLine]:
    text = " ".join(["harbour", "office", "report", "on", "the", "quay", "walls", "and", "cranes"] * 3)
    return [_line(top + k * 28, [(x, " ".join(text.split()[k % 5: k % 5 + words]))]) for k in range(n)]


def _cells(g) -> list[list[str]]:  # type: ignore[no-untyped-def]
    rows: list[list[str]] = [["" for _ in range(g.n_cols)] for _ in range(g.n_rows)]
    for c in g.cells:
        rows[c.row][c.col] = c.text
    return rows


def test_invoice_rows_make_one_table() -> None:
    lines = _prose(100, 3) + _invoice_lines() + _prose(600, 2)
    (g,) = find_unruled_tables(_layout(lines), [])
    assert _cells(g) == INVOICE


def test_columns_read_as_separate_blocks_still_make_rows() -> None:
    (g,) = find_unruled_tables(_layout(_invoice_lines(per_column_blocks=True)), [])
    assert _cells(g) == INVOICE


def test_running_text_is_no_table() -> None:
    assert find_unruled_tables(_layout(_prose(100, 30)), []) == []


def test_three_columns_of_prose_are_no_table() -> None:
    # a page set in three columns lines up in columns too, but its "cells" are whole lines
    lines = [ln for x in (80, 480, 880) for ln in _prose(100, 20, x=x, words=5)]
    assert find_unruled_tables(_layout(lines), []) == []


def test_two_columns_are_not_enough() -> None:
    pairs = [_line(400 + r * 32, [(100, f"Label {r}"), (600, f"value {r}")]) for r in range(6)]
    assert find_unruled_tables(_layout(pairs), []) == []


def test_rows_far_apart_are_not_one_table() -> None:
    # three 3-cell lines, each a paragraph away from the next (a form's lines, not a table's rows)
    lines = [_line(200 + k * 200, [(100, "Name"), (500, "Date"), (900, "Place")]) for k in range(3)]
    assert find_unruled_tables(_layout(lines), []) == []


def test_words_in_a_ruled_table_are_left_to_it() -> None:
    assert find_unruled_tables(_layout(_invoice_lines()), [(50.0, 350.0, 1150.0, 550.0)]) == []


def test_a_page_without_words_has_no_table() -> None:
    assert find_unruled_tables(PageLayout(size=(100, 100)), []) == []
    assert find_unruled_tables(None, []) == []


def test_words_of_a_cell_keep_their_order_when_one_sits_higher() -> None:
    # Tesseract's boxes: "1" in "Item 1" is taller than "Item"'s x-height part, its centre higher;
    # ordering a row's words by centre first wrote "1 Item" (seen on the img2table invoice)
    lines = _invoice_lines()
    for ln in lines:
        for k, w in enumerate(ln.words):
            if k % 2 == 0 and k:  # "large" in "Fender large" among them
                x0, y0, x1, y1 = w.box
                ln.words[k] = TextBox(w.text, (x0, y0 - 4, x1, y1 - 2))
    (g,) = find_unruled_tables(_layout(lines), [])
    assert _cells(g) == INVOICE


def test_table_of_contents_is_no_table() -> None:
    # section numbers, titles, page numbers: three columns of short cells, but no table
    toc = [("1", "Introduction", "1"), ("1.1", "Scope", "2"), ("1.2", "Sources of data", "4"), ("2", "Shipments", "7"),
           ("2.1", "Bulk cargo", "9")]
    lines = [_line(300 + r * 32, [(100, a), (200, b), (1000, c)]) for r, (a, b, c) in enumerate(toc)]
    assert find_unruled_tables(_layout(lines), []) == []
    leaders = [_line(300 + r * 32, [(100, a), (200, b + " . . . . . . . ."), (1000, c)]) for r, (a, b, c) in enumerate(toc)]
    assert find_unruled_tables(_layout(leaders), []) == []


def test_code_listing_is_no_table() -> None:
    code = [("CC", "= gcc", "# the compiler"), ("CFLAGS", "= -O2", "# optimise"), ("LDLIBS", "= -lm", "# maths")]
    lines = [_line(300 + r * 32, [(100, a), (400, b), (700, c)]) for r, (a, b, c) in enumerate(code)]
    assert find_unruled_tables(_layout(lines), []) == []


def test_bulleted_and_numbered_lists_are_no_table() -> None:
    terms = [("Quay", "harbour wall"), ("Crane", "lifts boxes"), ("Pilot", "guides ships")]
    for marks in (["•"] * 3, ["1.", "2.", "3."]):
        lines = [_line(300 + r * 32, [(100, m), (140, t), (500, d)]) for r, (m, (t, d)) in enumerate(zip(marks, terms, strict=True))]
        assert find_unruled_tables(_layout(lines), []) == []


def test_positions_and_a_quantity_of_one_stay_a_table() -> None:
    # an invoice's position numbers and one of each item (no header row) look like a TOC's
    # section and page numbers: still a table
    rows = [["1", "Rope", "9.95", "1"], ["2", "Fender large", "20.00", "1"], ["3", "Brush", "19.95", "1"]]
    lines = [_line(400 + r * 32, list(zip((100, 300, 700, 1000), row, strict=True))) for r, row in enumerate(rows)]
    (g,) = find_unruled_tables(_layout(lines), [])
    assert _cells(g) == rows

