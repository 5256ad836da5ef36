"""Does a table keep the words? The check every table passes before it is written as a table
(issue 32: a scanned timesheet's grid read as junk after its fourth row, a born-digital one
split into 15 overlapping tables that repeated its rows, while a plain read had every word).

Contract:

- ``tokens(text) -> list[str]``: the words of a text as the check counts them: letters and
  digits only, case folded, each CJK character a word of its own.
- ``check(cells, region, repeated_share) -> Verdict``: the cells' words (``cells``: token lists) against the words
  a plain read of the table's region holds (``region``): ``coverage`` the share of the region's
  words that the cells hold (as multisets; a word read a little differently by a second OCR pass,
  ``_close``, counts as held), ``repeated`` the region's words that the cells hold at least twice
  as often as the region (a row written twice). ``Verdict.ok`` when coverage >= ``MIN_COVERAGE`` (or at most ``MAX_LOST_SMALL`` words lost)
  and no more than ``repeated_share`` of the region's words are repeated; ``Verdict.reason`` says why not, with the figures (the sidecar's
  words). Pure, never raises.
- ``overlapping(boxes) -> list[int]``: indexes of boxes that overlap an earlier kept one (a
  table found twice, or its tail found again, must not be written twice).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher

#: A table is written as a table only when its cells hold at least this share of the words a
#: plain read of its region holds (issue 32: ">= 95 %"); below, the region stays plain text.
MIN_COVERAGE = 0.95
#: A region word not held exactly counts as held when an unused cell word is this similar to it
#: (difflib ratio): the cells of a scanned table are a second Tesseract pass over the same pixels,
#: which reads a "1" the page read took for an "l" (never a word that is not there).
CLOSE_RATIO = 0.75
#: A table may always lose this many words, whatever its size (one word of 10 is 10 %): a cell
#: that reads nothing (the bold "Pos" of the grey-ruled test invoice, which Tesseract's Sauvola
#: binarisation loses) is a reading matter, not the table's.
MAX_LOST_SMALL = 2
#: On a scan the page read is a noisy reference too: it drops words that the cells, read one by
#: one, have (the Debian package list at 150 dpi: "text" and "editor" 5 times in 53 words; the
#: table set's scanned English invoice 6 in 45, cell F1 0.87). A ruled grid's cells are read from
#: boxes that do not overlap, so no word of the page is read twice: repeats are not counted there.
SCAN_REPEATED_SHARE = float("inf")

_CJK = r"[\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_TOKEN = re.compile(rf"{_CJK}|(?:(?!{_CJK})[^\W_])+")


def tokens(text: str) -> list[str]:
    """See the module docstring."""
    return _TOKEN.findall(text.casefold())


@dataclass(frozen=True)
class Verdict:
    coverage: float  # share of the region's words the cells hold
    region_words: int
    repeated: int  # region words the cells hold at least twice as often
    ok: bool
    reason: str
    missing: tuple[str, ...] = ()  # the region's words the cells do not hold (the debug log's)


def _close(a: str, b: str) -> bool:
    if a.isdigit() != b.isdigit() and min(len(a), len(b)) > 2:
        return False
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= CLOSE_RATIO


def _counted(word: str) -> bool:
    """A word the check counts: not a lone Latin letter (what OCR makes of a speck or a rule's
    remains, which a table's cells rightly leave out)."""
    return not (len(word) == 1 and word.isalpha() and word.isascii())


def check(cells: list[str], region: list[str], repeated_share: float = 0.0, seen: list[str] | None = None) -> Verdict:
    """See the module docstring. ``repeated_share``: the share of the region's words that may
    be held twice as often: 0 for a text layer (its words are exact), ``SCAN_REPEATED_SHARE``
    for a scan. ``seen``: the words the repeats are counted against when not ``region`` (a scan's
    page read at any confidence, where ``region`` holds its sure words only)."""
    page, got = Counter(filter(_counted, region)), Counter(filter(_counted, cells))
    n = sum(page.values())
    if n == 0:
        return Verdict(1.0, 0, 0, True, "")
    missing = page - got
    spare = list((got - page).elements())
    lost: list[str] = []
    for word in missing.elements():
        k = next((i for i, s in enumerate(spare) if _close(word, s)), None)
        if k is None:
            lost.append(word)
        else:
            spare.pop(k)
    coverage = 1.0 - len(lost) / n
    ref = page if seen is None else Counter(filter(_counted, seen))
    repeated = sum(got[w] - ref[w] for w in ref if got[w] >= 2 * ref[w])
    enough = len(lost) <= MAX_LOST_SMALL or coverage >= MIN_COVERAGE
    ok = enough and (repeated_share == float("inf") or repeated <= repeated_share * sum(ref.values()))
    reason = "" if ok else (
        f"its cells hold {coverage:.2f} of the {n} words a plain read of its region has"
        + (f" and {repeated} of them twice" if repeated else "")
        + f" (at least {MIN_COVERAGE:.2f} wanted{', none twice' if repeated_share == 0 else ''})"
        + (f"; not held: {' '.join(lost[:12])}" if lost else ""))
    return Verdict(round(coverage, 4), n, repeated, ok, reason, tuple(lost))


def overlapping(boxes: list[tuple[float, float, float, float]]) -> list[int]:
    """See the module docstring: boxes are taken in the order given (the caller's preferred
    first); one that overlaps a kept box by more than a tenth of the smaller one's area is out."""
    kept: list[tuple[float, float, float, float]] = []
    out: list[int] = []
    for i, b in enumerate(boxes):
        area = max(1e-9, (b[2] - b[0]) * (b[3] - b[1]))
        if any(_inter(b, k) > 0.1 * min(area, max(1e-9, (k[2] - k[0]) * (k[3] - k[1]))) for k in kept):
            out.append(i)
        else:
            kept.append(b)
    return out


def _inter(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0
