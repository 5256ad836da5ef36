"""Scoring of extracted tables against the truth set (pure functions, no I/O; used by run.py).

A table is a list of rows of cell strings (None counts as ""). Before comparing:

- every cell is normalised (``norm``): NFKC, dashes (‐ ‑ ‒ – — −) as "-", curly quotes as straight
  ones, and all whitespace removed (a reader that keeps a line break or adds a space between CJK
  characters has the same cell);
- rows and columns with no text at all are dropped from the extracted table (a column of flag
  pictures, a spacer column between two rules).

Cell F1 of one extracted table against one expected table: the extracted table is laid over the
expected one at the (row offset, column offset) with the most equal cells; an expected cell
counts when it is not empty and the cell over it is equal. Recall = equal cells / non-empty
expected cells, precision = equal cells / non-empty extracted cells, F1 their harmonic mean.
Merged cells: only the merged cell's first slot is scored; the other slots it covers are left out
of both counts when the extracted table has "" or the merged text there (readers differ in which
they write). Exact match: after the normalisation, the same number of rows and columns and
every slot equal (a merged cell's other slots: "" or its text).

Tables of a page are paired greedily by cell F1 (best pair first, each table once, F1 > 0); an
expected table without a partner scores 0. On a page whose labels are complete, an extracted
table without a partner is a false positive.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

Rows = list[list[str]]

_DASH = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'})
_WS = re.compile(r"\s+")


def norm(s: str | None) -> str:
    if not s:
        return ""
    s = unicodedata.normalize("NFKC", s)
    return _WS.sub("", _DASH.sub("-", s).translate(_QUOTES))


def prepare(rows: list[list[str | None]]) -> Rows:
    """Normalised cells, rectangular, without empty rows and columns."""
    width = max((len(r) for r in rows), default=0)
    grid = [[norm(c) for c in r] + [""] * (width - len(r)) for r in rows]
    grid = [r for r in grid if any(r)]
    keep = [k for k in range(width) if any(r[k] for r in grid)]
    return [[r[k] for k in keep] for r in grid]


@dataclass
class Expected:
    rows: Rows  # normalised (``prepare`` keeps them: expected tables have no empty row or column)
    followers: dict[tuple[int, int], str]  # slots covered by a merged cell (not its first) -> its text

    @classmethod
    def make(cls, rows: list[list[str]], spans: list[list[int]] | None = None) -> Expected:
        grid = [[norm(c) for c in r] for r in rows]
        followers = {}
        for r, c, rs, cs in spans or []:
            for rr in range(r, r + rs):
                for cc in range(c, c + cs):
                    if (rr, cc) != (r, c):
                        followers[(rr, cc)] = grid[r][c]
        return cls(grid, followers)


@dataclass
class Score:
    f1: float
    precision: float
    recall: float
    exact: bool
    offset: tuple[int, int] = (0, 0)


def cell_score(exp: Expected, got: Rows) -> Score:
    """``got`` (prepared) against ``exp`` (see the module docstring)."""
    where: dict[str, list[tuple[int, int]]] = {}
    for r, row in enumerate(exp.rows):
        for c, v in enumerate(row):
            if v and (r, c) not in exp.followers:
                where.setdefault(v, []).append((r, c))
    votes: Counter[tuple[int, int]] = Counter()
    for r, row in enumerate(got):
        for c, v in enumerate(row):
            for er, ec in where.get(v, ()):
                votes[(er - r, ec - c)] += 1
    n_exp = sum(len(v) for v in where.values())
    if not votes or not n_exp:
        return Score(0.0, 0.0, 0.0, _exact(exp, got))
    (dr, dc), hits = max(votes.items(), key=lambda kv: (kv[1], -abs(kv[0][0]) - abs(kv[0][1])))
    n_got = 0
    for r, row in enumerate(got):
        for c, v in enumerate(row):
            if not v:
                continue
            fol = exp.followers.get((r + dr, c + dc))
            if fol is not None and v == fol:
                continue  # a merged cell's text repeated in the slots it covers
            n_got += 1
    p = hits / n_got if n_got else 0.0
    rec = hits / n_exp
    f1 = 2 * p * rec / (p + rec) if p + rec else 0.0
    return Score(f1, p, rec, _exact(exp, got), (dr, dc))


def _exact(exp: Expected, got: Rows) -> bool:
    if len(got) != len(exp.rows) or any(len(r) != len(exp.rows[0]) for r in got):
        return False
    for r, row in enumerate(exp.rows):
        for c, want in enumerate(row):
            have = got[r][c]
            fol = exp.followers.get((r, c))
            if fol is not None:
                if have not in ("", fol):
                    return False
            elif have != want:
                return False
    return True


def pair(expected: list[Expected], got: list[Rows]) -> tuple[list[Score | None], list[int]]:
    """Scores of the expected tables (None: no partner) and the indexes of extracted tables
    without a partner."""
    pairs = sorted(((cell_score(e, g), i, j) for i, e in enumerate(expected) for j, g in enumerate(got)),
                   key=lambda t: (-t[0].f1, -t[0].exact, t[1], t[2]))
    out: list[Score | None] = [None] * len(expected)
    used: set[int] = set()
    for s, i, j in pairs:
        if s.f1 <= 0 or out[i] is not None or j in used:
            continue
        out[i] = s
        used.add(j)
    return out, [j for j in range(len(got)) if j not in used]
