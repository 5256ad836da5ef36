"""Table rows and rules without OCR: wrapped cells (daemon.pages.tablerows), short unruled blocks
(daemon.pages.unruled), light grey and skewed rules on page images (daemon.pages.scanrules)."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from daemon.pages import scanrules, tablerows, unruled
from daemon.pages.tables import text_grid

SIZE = 10.0


def _words(y: float, cells: list[tuple[float, str]]) -> list[tablerows.Word]:
    out = []
    for x, text in cells:
        for w in text.split():
            out.append((x, y, x + 6 * len(w), y + SIZE, w, SIZE))
            x += 6 * len(w) + 3
    return out


def _rows(g) -> list[list[str]]:  # type: ignore[no-untyped-def]
    rows = [["" for _ in range(g.n_cols)] for _ in range(g.n_rows)]
    for c in g.cells:
        rows[c.row][c.col] = c.text
    return rows


def test_a_wrapped_cell_stays_one_row() -> None:
    # rows 22 units apart, the second line of a wrapped description 12 below its first
    lines = [_words(0, [(0, "Date"), (100, "Description"), (300, "Amount")]),
             _words(22, [(0, "02/10"), (100, "Salary from"), (300, "2950.00")]),
             _words(34, [(100, "Atelier Lumiere")]),
             _words(56, [(0, "03/10"), (100, "Bakery"), (300, "8.40")]),
             _words(78, [(0, "05/10"), (100, "Rent"), (300, "845.00")])]
    words = [w for ln in lines for w in ln]
    g = text_grid(words, (-1, -1, 400, 100))
    assert g is not None and _rows(g) == [["Date", "Description", "Amount"], ["02/10", "Salary from Atelier Lumiere", "2950.00"],
                                          ["03/10", "Bakery", "8.40"], ["05/10", "Rent", "845.00"]]


def test_lines_evenly_apart_are_rows_each() -> None:
    words = [w for k in range(5) for w in _words(16 * k, [(0, f"r{k}"), (100, "item"), (300, str(k))])]
    g = text_grid(words, (-1, -1, 400, 100))
    assert g is not None and g.n_rows == 5


def test_numbers_and_headers() -> None:
    assert all(tablerows.numeric(t) for t in ["2.980,00", "€ 12", "14.11.2026", "K-40211", "250克", "-3.04", "17 %"])
    assert not any(tablerows.numeric(t) for t in ["Item 1", "Rechnungsnr.", "", "Invoice no.", "Linden Avenue 7"])
    assert tablerows.header_by_content([["Qty", "Item"], ["2", "Rope"], ["5", "Fender"]])
    assert not tablerows.header_by_content([["2026-1", "Rope"], ["2", "Rope"], ["5", "Fender"]])


def test_an_address_block_beside_invoice_details_is_no_table() -> None:
    lines = [(0, "Hofmann Bakery", "Invoice", "2026-1187"), (1, "Anna Hofmann", "Date", "14.11.2026"),
             (2, "Linden Avenue 7", "Customer", "K-40211"), (3, "80331 Munich", "Delivery", "12.11.2026")]
    words = [w for k, a, b, c in lines for w in _words(14 * k, [(0, a), (300, b), (450, c)])]
    assert unruled.unruled_grids(words, []) == []
    # the same block with a header row over a column of numbers is a table
    head = _words(-14, [(0, "Name"), (300, "Field"), (450, "Amount")])
    body = [w for k, a, b, _ in lines for w in _words(14 * k, [(0, a), (300, b), (450, f"{k + 1}.00")])]
    assert len(unruled.unruled_grids(head + body, [])) == 1


def _grey_grid(skew: float, noise: float) -> Image.Image:
    img = Image.new("L", (1200, 900), 236)
    d = ImageDraw.Draw(img)
    xs, ys = [100, 300, 700, 1000], [200, 260, 320, 380, 440]
    for y in ys:
        d.line([(xs[0], y), (xs[-1], y)], fill=185, width=2)
    for x in xs:
        d.line([(x, ys[0]), (x, ys[-1])], fill=185, width=2)
    d.rectangle([100, 600, 1000, 650], fill=200)  # a shaded band: no rules
    for k, y in enumerate(ys[:-1]):
        d.text((xs[0] + 12, y + 20), f"row {k}", fill=40)
    img = img.rotate(skew, fillcolor=236)
    a = np.asarray(img, dtype=np.float32) + np.random.default_rng(3).normal(0, noise, (900, 1200))
    return Image.fromarray(a.clip(0, 255).astype(np.uint8))


def test_a_light_grey_grid_on_a_skewed_noisy_scan() -> None:
    img = _grey_grid(skew=0.7, noise=6.0)
    (g,) = scanrules.light_grids(img, [])
    assert (g.n_rows, g.n_cols) == (4, 3)
    assert scanrules.light_grids(img, [g.bbox]) == []  # where a dark grid is, no light one
    h, _ = scanrules.light_segments(img)
    assert not any(590 < s.y0 < 660 for s in h)  # the shaded band's edges are no rules


def test_erased_rules_leave_the_text() -> None:
    img = _grey_grid(skew=0.0, noise=0.0)
    a = np.asarray(scanrules.erase_rules(img))
    assert a[260, 500] > 225 and a[300, 300] > 225  # a rule's pixel and a crossing, painted over
    assert np.asarray(img)[215:235, 110:160].min() < 100 and a[215:235, 110:160].min() < 100  # "row 0" kept


def test_a_rule_that_text_touches_is_one_rule() -> None:
    """Letters sitting on a thin rule make it thick where they touch: it stays one rule across
    the table (the Debian reference's package list lost its row rules under links, issue 26)."""
    img = Image.new("L", (1200, 600), 255)
    d = ImageDraw.Draw(img)
    d.line([(100, 300), (1100, 300)], fill=0, width=1)
    for x in range(140, 1060, 50):  # descenders touching the rule from above
        d.rectangle([x, 286, x + 10, 299], fill=0)
    d.line([(400, 298), (600, 298)], fill=0, width=1)  # an underlined link 2 px above it
    h, _ = scanrules.light_segments(img)
    along = [s for s in h if 295 <= s.y0 <= 305]
    assert [(round(s.x0), round(s.x1)) for s in along] == [(100, 1101)]
    # the same marks with no rule under them make none
    img2 = Image.new("L", (1200, 600), 255)
    d2 = ImageDraw.Draw(img2)
    for x in range(140, 1060, 50):
        d2.rectangle([x, 286, x + 10, 299], fill=0)
    d2.line([(400, 298), (600, 298)], fill=0, width=1)
    assert not [s for s in scanrules.light_segments(img2)[0] if 280 <= s.y0 <= 305]


def test_wrapped_cells_on_a_skewed_scan_stay_in_their_rows() -> None:
    """Rows drifting 10 px over their width (a scan 0.7 degrees askew): the gaps between whole
    lines' boxes are no wider than a wrapped cell's, the gaps between the words over each other
    are."""
    def line(y: float, words: list[tuple[float, float, str]], drift: float = 10.0) -> list[tablerows.Word]:
        return [(a, y - drift * a / 1000, b, y + 14 - drift * a / 1000, t, 17.0) for a, b, t in words]

    rows = [
        line(340, [(75, 135, "01 Nov"), (176, 380, "Balance brought forward"), (930, 1000, "1,204.18")]),
        line(373, [(75, 135, "06 Nov"), (176, 520, "Faster payment from K Hughes"), (930, 1000, "1,580.51")]),
        line(392, [(176, 262, "November")], drift=1.0),
        line(427, [(75, 135, "10 Nov"), (176, 510, "Standing order Harbour"), (930, 1000, "767.87")]),
        line(446, [(176, 257, "mortgage")], drift=1.0),
        line(481, [(75, 135, "14 Nov"), (176, 370, "Cash withdrawal"), (930, 1000, "727.87")]),
    ]
    cols = [[75.0, 135.0], [176.0, 520.0], [930.0, 1000.0]]
    got = tablerows.join_wrapped(rows, 17.0, 3, lambda w: next(k for k, c in enumerate(cols) if w[0] >= c[0] - 1))
    assert [[w[4] for w in r] for r in got] == [
        ["01 Nov", "Balance brought forward", "1,204.18"],
        ["06 Nov", "Faster payment from K Hughes", "1,580.51", "November"],
        ["10 Nov", "Standing order Harbour", "767.87", "mortgage"],
        ["14 Nov", "Cash withdrawal", "727.87"],
    ]
