"""Runs of ink in a page image's mask: the primitives both rule finders share.

Contract (numpy only; a mask is a 2-D boolean array, a page image's ink below ``INK``):

- ``_runs(mask, min_len)``: (line index, start, end) of the True runs of at least ``min_len``
  along axis 1.
- ``closed_gaps(mask)`` / ``closed_gaps_down(mask)``: a copy with its 1 px gaps along axis 1 /
  axis 0 filled (broken scanned lines, a slight skew's steps).
- ``stroke_width(ink, below)``: the typical thickness of the page's ink strokes (the median ink
  run shorter than ``below`` px).
- ``INK``, ``MIN_RULE_SHARE``, ``MIN_RULE_STROKES``: what a dark rule is (see each).

Used by the dark rules of ``daemon.pages.scantables.image_segments`` and the light ones of
``daemon.pages.scanrules``; here so that neither imports the other for them.
"""

from __future__ import annotations

import numpy as np

#: A rule on a page image is a dark run at least this share of the page's shorter edge long
#: (at 1540 px, an A4 page is ~1090 px wide: 33 px, shorter than any table column we saw, longer
#: than the strokes of the largest letters in the test scans, 32 px body text ~ 20 px strokes).
MIN_RULE_SHARE = 0.03
#: Gray level below which a pixel is ink (rules are printed black; scans' paper is > 200).
INK = 140
#: ... and a rule is at least this many times as long as the page's strokes are thick
#: (``stroke_width``): one line of text brought up to 1540 px (a 320x40 px image is scaled 4.8x)
#: has letters whose strokes are far longer than ``MIN_RULE_SHARE`` of its short edge, and a
#: "4", an "E" or an "H" made ruled grids whose cells read as a table, in place of the text.
#: Measured (generated one-line images 320x40 and 640x80 at 1540 px, DejaVu Sans, 6 lines): the
#: longest letter stroke is at most 7.9 stroke widths (regular; bold 5.6); the shortest rule of
#: the test scans' ruled tables 58 (at 1540 px and 300 dpi), and on an A4 page at 1540 px
#: ``MIN_RULE_SHARE`` alone asks for 10.7 (32 px at its 3 px strokes): pages are not affected.
MIN_RULE_STROKES = 10


def _runs(mask: np.ndarray, min_len: int) -> list[tuple[int, int, int]]:
    """(line index, start, end) of True runs of at least ``min_len`` along axis 1."""
    rows = np.flatnonzero(mask.sum(axis=1) >= min_len)  # only lines with enough ink at all
    if rows.size == 0:
        return []
    m = mask[rows].astype(np.int8)
    pad = np.zeros((m.shape[0], 1), dtype=np.int8)
    d = np.diff(np.concatenate([pad, m, pad], axis=1), axis=1)
    width = d.shape[1]
    starts = np.flatnonzero(d == 1)  # row-major: each row's starts and ends alternate
    ends = np.flatnonzero(d == -1)
    keep = (ends - starts) >= min_len
    starts, ends = starts[keep], ends[keep]
    return [(int(rows[s // width]), int(s % width), int(e % width) if e % width else width)
            for s, e in zip(starts, ends, strict=True)]


def closed_gaps(mask: np.ndarray) -> np.ndarray:
    """A copy of a 2-D mask with its 1 px gaps along axis 1 filled (a pixel between two set
    ones is set): broken scanned lines, a slight skew's steps."""
    out = mask.copy()
    out[:, 1:-1] |= mask[:, :-2] & mask[:, 2:]
    return out


def closed_gaps_down(mask: np.ndarray) -> np.ndarray:
    """``closed_gaps(mask.T).T`` (1 px gaps along axis 0 filled) without the transposed copy's
    strided reads: 0.007 s against 0.08 s on a 300 dpi page (issue 32)."""
    out = mask.copy()
    out[1:-1, :] |= mask[:-2, :] & mask[2:, :]
    return out


def _run_lengths(mask: np.ndarray) -> np.ndarray:
    """Lengths of the True runs along axis 1 of a 2-D mask."""
    pad = np.zeros((mask.shape[0], 1), dtype=np.int8)
    d = np.diff(np.concatenate([pad, mask.astype(np.int8), pad], axis=1), axis=1)
    return np.flatnonzero(d == -1) - np.flatnonzero(d == 1)


def stroke_width(ink: np.ndarray, below: int) -> float:
    """The typical thickness of the ink strokes of a page image's mask ``ink``: the median
    length of its ink runs shorter than ``below`` px (rules and filled areas left out) along
    about 256 sampled rows and as many columns; 0 when there is no ink."""
    step = max(1, min(ink.shape) // 256)
    runs = np.concatenate([_run_lengths(ink[::step]), _run_lengths(ink[:, ::step].T)])
    runs = runs[runs < below]
    return float(np.median(runs)) if runs.size else 0.0
