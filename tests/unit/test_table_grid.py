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
