"""Ruled-table geometry (daemon.pages.tables.find_grids): rules -> rows, columns, merged cells."""

from __future__ import annotations

from daemon.pages.tables import Seg, find_grids


def _h(y: float, x0: float, x1: float) -> Seg:
    return Seg(x0, y, x1, y)


def _v(x: float, y0: float, y1: float) -> Seg:
    return Seg(x, y0, x, y1)


def test_full_grid() -> None:
    h = [_h(y, 0, 300) for y in (0, 20, 40, 60)]
    v = [_v(x, 0, 60) for x in (0, 100, 200, 300)]
    (g,) = find_grids(h, v, tol=2)
    assert (g.n_rows, g.n_cols) == (3, 3)
    assert [(c.row, c.col, c.rowspan, c.colspan) for c in g.cells] == [(r, c, 1, 1) for r in range(3) for c in range(3)]


def test_merged_header_and_missing_outer_verticals() -> None:
    # header row: one cell over columns 1-2 (no rule at x=200 in the first row); no outer
    # vertical rules at all (x=0 and x=300 come from the horizontal rules' ends)
    h = [_h(y, 0, 300) for y in (0, 20, 40, 60)]
    v = [_v(100, 0, 60), _v(200, 20, 60)]
    (g,) = find_grids(h, v, tol=2)
    assert g.xs == [0, 100, 200, 300]
    cells = [(c.row, c.col, c.rowspan, c.colspan) for c in g.cells]
    assert cells[:2] == [(0, 0, 1, 1), (0, 1, 1, 2)]
    assert len(cells) == 2 + 3 + 3


def test_frames_are_not_tables() -> None:
    # a listing frame drawn twice, 1.5 pt apart, and a column of stacked boxes
    h = [_h(y, 53.7, 569.9) for y in (189.0, 202.9)] + [_h(y, 56.7, 566.9) for y in (190.5, 201.4)]
    v = [_v(x, 190.5, 201.4) for x in (55.2, 56.7, 566.9, 568.4)]
    assert find_grids(h, v, tol=2, min_size=4) == []
    h2 = [_h(y, 0, 300) for y in (0, 20, 40, 60)]
    v2 = [_v(x, 0, 60) for x in (0, 300)]
    assert find_grids(h2, v2, tol=2) == []


def test_two_tables_apart() -> None:
    h = [_h(y, 0, 200) for y in (0, 20, 40)] + [_h(y, 0, 200) for y in (300, 320, 340)]
    v = [_v(x, 0, 40) for x in (0, 100, 200)] + [_v(x, 300, 340) for x in (0, 100, 200)]
    grids = find_grids(h, v, tol=2)
    assert [(g.n_rows, g.n_cols, g.ys[0]) for g in grids] == [(2, 2, 0), (2, 2, 300)]


def test_a_grids_cells_against_the_page_read() -> None:
    """A grid's cells against the page read's words over it (``region_tokens`` +
    ``tablecheck.check``): cut words and lost rows count, a word the grid's edge cuts counts,
    CJK characters count one by one, words outside do not."""
    from daemon.layerrecords import Grid as _Grid
    from daemon.models import PageLayout, TextBox, TextLine
    from daemon.pages.scantables import region_tokens
    from daemon.pages.tablecheck import check, tokens

    def words_lost(g: _Grid, layout: PageLayout) -> float:
        v = check([t for c in g.cells for t in tokens(c.text)], region_tokens(g, layout))
        return round(1 - v.coverage, 4)
    from daemon.layerrecords import Grid, GridCell

    def line(y: int, *words: tuple[int, str]) -> TextLine:
        boxes = [TextBox(t, (x, y, x + 12 * len(t), y + 20)) for x, t in words]
        return TextLine((boxes[0].box[0], y, boxes[-1].box[2], y + 20), boxes)

    layout = PageLayout((1000, 1000), [
        line(50, (100, "Outside"), (300, "words")),
        line(110, (100, "vim"), (300, "éditeur"), (420, "de"), (460, "texte")),
        line(160, (100, "gpm"), (300, "couper-coller"), (480, "上海明")),
        line(210, (100, "w3m"), (560, "navigateurs")),  # its second word crosses the grid's right edge
    ], has_words=True)

    def grid(*texts: str) -> Grid:
        cells = [GridCell(r, c, 1, 1, (100 + 200 * c, 100 + 50 * r, 300 + 200 * c, 150 + 50 * r), t)
                 for (r, c), t in zip([(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)], texts, strict=True)]
        return Grid([100.0, 300.0, 600.0], [100.0, 150.0, 200.0, 250.0], cells, filled=True)

    whole = grid("vim", "éditeur de texte", "gpm", "couper-coller 上海 明", "w3m", "navigateurs")
    assert words_lost(whole, layout) == 0.0
    cut = grid("vim", "éditeur de te", "gpm", "couper-coller 上海", "w3m", "naviga")
    assert words_lost(cut, layout) == round(3 / 12, 4)  # texte, 明, navigateurs of 12 page words
    assert words_lost(grid("", "", "", "", "", ""), layout) == 1.0
    assert not check(tokens("vim"), tokens("vim gpm w3m texte")).ok  # three of 4 words lost
    assert check(tokens("vim gpm"), tokens("vim gpm w3m texte")).ok  # two: a cell read empty
    many = [f"w{k}" for k in range(100)]
    assert check(many[:95], many).ok and check(many[:95], many).coverage == 0.95
    assert not check(many[:94], many).ok  # 94 % of 100 words
    assert check([*many[:90], *(w + "x" for w in many[90:])], many).ok  # read a little differently
    doubled = check(tokens("vim gpm gpm w3m"), tokens("vim gpm w3m"))
    assert not doubled.ok and doubled.repeated == 1 and "twice" in doubled.reason
    assert words_lost(grid(*[""] * 6), PageLayout((1000, 1000))) == 0.0
