"""Hypothesis strategies and settings shared by the property-based tests of the pipeline's
stages (tests/unit/test_stage_properties.py, tests/integration/test_stage_properties_ocr.py).

- ``PROPS``: the settings every such test uses: derandomized and without an example database,
  so CI runs the same examples on every run and machine and a failure reproduces (a test
  lowers ``max_examples`` with ``@settings(PROPS, max_examples=n)`` where each example is dear).
- ``random_page(kind, width, height, seed)`` and ``page_images(edge, kinds)``: grayscale page
  images (white, black, noise, rules, short rules, grids with spans, ruled tables, blobs,
  words) of any size from 1 px.
- ``layouts(has_words)``: ``PageLayout``s of words as an engine reports them, and worse:
  empty words, zero-size, inverted and huge boxes, words lined up in a grid (so that the table
  geometry goes deep) among others.
- ``PAGE_TEXTS``: engine page texts: Markdown with pipe and HTML tables (spans), math, control
  characters, right-to-left text and bidi controls, CJK, emoji, empty pages.
"""

from __future__ import annotations

import docgen
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from daemon.models import PageLayout, TextBox, TextLine

#: Kinds of ``random_page``.
RANDOM_PAGE_KINDS = ("white", "black", "noise", "rules", "short_rules", "grid", "table", "blobs", "text")


def random_page(kind: str, width: int, height: int, seed: int) -> Image.Image:
    """A grayscale ("L") page image for property tests, the same for the same arguments:
    ``white``/``black`` (all one colour), ``noise`` (random pixels), ``rules`` (random
    horizontal and vertical rules: thin, thick, grey, partly off the page), ``short_rules``
    (lines of words with short rules under some: underlines, a rule above a total, a signature
    line), ``grid`` (rules on a grid, some stopping short or missing: spanning cells, a few
    numbers), ``table`` (a ruled table of words; its first header cell spans two columns, the
    first column's cell of rows 1-2 two rows), ``blobs``
    (ink ellipses) or ``text`` (words of random sizes at random places). ``img.info["made_by"]``
    is the call that makes the image again (for a property test's failure report)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w, h = width, height
    if kind == "noise":
        img = Image.fromarray(rng.integers(0, 256, (h, w), dtype=np.uint8), "L")
    else:
        img = Image.new("L", (w, h), 0 if kind == "black" else 255)
    img.info["made_by"] = f"propgen.random_page({kind!r}, {width}, {height}, {seed})"
    if kind in ("noise", "white", "black"):
        return img
    d = ImageDraw.Draw(img)

    def word() -> str:
        return str(rng.choice(["Total", "Item", "12.50", "Paper", "Datum", "合计", "x", "—", "Invoice", "7"]))

    def font() -> ImageFont.FreeTypeFont:
        return ImageFont.truetype(str(docgen.NOTO_CJK), int(rng.integers(8, 48)), index=2)

    def at() -> tuple[int, int]:
        return int(rng.integers(0, max(1, w))), int(rng.integers(0, max(1, h)))

    if kind == "rules":
        for _ in range(int(rng.integers(1, 30))):
            x0, x1 = sorted(rng.integers(-10, w + 10, 2).tolist())
            y0, y1 = sorted(rng.integers(-10, h + 10, 2).tolist())
            shape = [(x0, y0), (x1, y0)] if rng.integers(0, 2) else [(x0, y0), (x0, y1)]
            d.line(shape, fill=int(rng.choice([0, 90, 200, 220])), width=int(rng.integers(1, 6)))
    elif kind == "short_rules":
        y = int(rng.integers(0, 40))
        while y < h:
            f = font()
            x = int(rng.integers(0, max(1, w // 3)))
            line = " ".join(word() for _ in range(int(rng.integers(1, 6))))
            d.text((x, y), line, font=f, fill=0)
            if rng.random() < 0.6:
                ry = y + int(f.size * 1.3) if rng.random() < 0.5 else y - 4
                d.line([(x, ry), (x + int(rng.integers(20, max(21, w // 2))), ry)], fill=0, width=int(rng.integers(1, 4)))
            y += int(f.size * rng.uniform(1.5, 4))
    elif kind in ("grid", "table"):
        n_c, n_r = int(rng.integers(2, 7)), int(rng.integers(2, 10))
        if kind == "table":  # even columns and rows, as printed
            row_h = max(1, min(int(rng.integers(30, 90)), (h - 20) // n_r))
            xs = np.linspace(10, max(11, w - 10), n_c + 1).astype(int).tolist()
            ys = (10 + row_h * np.arange(n_r + 1)).tolist()
        else:
            xs = np.sort(rng.choice(np.arange(max(n_c + 1, w)), n_c + 1, replace=False)).tolist()
            ys = np.sort(rng.choice(np.arange(max(n_r + 1, h)), n_r + 1, replace=False)).tolist()
        for i, y in enumerate(ys):  # a rule may stop short (a spanning cell) or be missing
            if kind == "table" or rng.random() < 0.85:
                start = xs[1] if kind == "table" and i == 2 else xs[0]  # first-column cell spans rows 1-2
                d.line([(start, y), (xs[-1] if kind == "table" else int(rng.choice(xs[1:])), y)], fill=0, width=2)
        for i, x in enumerate(xs):
            if kind == "table" or rng.random() < 0.85:
                top = ys[1] if kind == "table" and i == 1 else ys[0]  # the header's first cell spans two columns
                d.line([(x, top), (x, ys[-1] if kind == "table" else int(rng.choice(ys[1:])))], fill=0, width=2)
        for r in range(n_r):
            for c in range(n_c):
                if kind == "table" or rng.random() < 0.3:
                    text, cell_w, cell_h = word(), max(1, xs[c + 1] - xs[c]), max(1, ys[r + 1] - ys[r])
                    size = max(6, min(40, int(cell_h * 0.5), int(cell_w / (0.7 * len(text) + 1))))
                    f = ImageFont.truetype(str(docgen.NOTO_CJK), size, index=2)
                    d.text((xs[c] + 4, ys[r] + max(2, (cell_h - size) // 3)), text, font=f, fill=0)
    elif kind == "blobs":
        for _ in range(int(rng.integers(1, 15))):
            x, y = at()
            r = int(rng.integers(1, max(2, min(w, h) // 3)))
            d.ellipse([x - r, y - r, x + r, y + r], fill=int(rng.integers(0, 200)))
    elif kind == "text":
        for _ in range(int(rng.integers(1, 40))):
            d.text(at(), word(), font=font(), fill=0)
    return img


#: Derandomized (the examples are a function of the test's source), no example database: the
#: same examples on every run and machine. No explain phase: on a failure it re-ran the shrunk
#: example ~100 times (15 s for the writers' test) for a list of lines already in the traceback.
PROPS = settings(derandomize=True, database=None, deadline=None, max_examples=40, print_blob=True,
                 phases=[Phase.explicit, Phase.generate, Phase.shrink],
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

EDGE = st.one_of(st.integers(1, 4), st.integers(5, 400), st.integers(401, 1800))


@st.composite
def page_images(draw: st.DrawFn, edge: st.SearchStrategy[int] = EDGE,
                kinds: tuple[str, ...] = RANDOM_PAGE_KINDS) -> Image.Image:
    """A ``random_page`` of one of ``kinds``, each edge drawn from ``edge``."""
    return random_page(draw(st.sampled_from(kinds)), draw(edge), draw(edge), draw(st.integers(0, 2**32 - 1)))


COORD = st.one_of(st.integers(-50, 2000), st.sampled_from([0, -1, 10**6]))
WORD_TEXT = st.one_of(
    st.sampled_from(["", " ", "Total", "12.50", "•", "1.", "(3)", "...", "x = 1;", "∑", "発票", "a", "|", "\n"]),
    st.text(max_size=12),
)


@st.composite
def text_boxes(draw: st.DrawFn) -> TextBox:
    x0, y0 = draw(COORD), draw(COORD)
    # zero-size, inverted, ordinary and huge boxes
    w = draw(st.one_of(st.just(0), st.integers(-20, -1), st.integers(1, 300), st.just(10**6)))
    h = draw(st.one_of(st.just(0), st.integers(-5, -1), st.integers(1, 60)))
    return TextBox(draw(WORD_TEXT), (x0, y0, x0 + w, y0 + h))


@st.composite
def grid_words(draw: st.DrawFn) -> list[TextBox]:
    """Words that line up in rows and columns (so the table geometry goes deep), with noise."""
    n_rows, n_cols = draw(st.integers(1, 8)), draw(st.integers(1, 6))
    x0, y0 = draw(st.integers(-20, 500)), draw(st.integers(-20, 500))
    pitch, colw = draw(st.integers(0, 60)), draw(st.integers(0, 400))
    hgt = draw(st.integers(0, 40))
    cells = draw(st.lists(st.sampled_from(["Item", "12", "4.50", "Paper", "•", "1.", "x", "Total due", "合计", ""]),
                          min_size=n_rows * n_cols, max_size=n_rows * n_cols))
    out = [TextBox(t, (x0 + c * colw, y0 + r * pitch, x0 + c * colw + 11 * max(1, len(t)), y0 + r * pitch + hgt))
           for k, t in enumerate(cells) for r, c in [divmod(k, n_cols)]]
    return out + draw(st.lists(text_boxes(), max_size=5))


@st.composite
def layouts(draw: st.DrawFn, has_words: bool | None = None) -> PageLayout:
    words = draw(st.one_of(grid_words(), st.lists(text_boxes(), max_size=30)))
    per_line = draw(st.integers(1, 6))
    lines = []
    for i in range(0, len(words), per_line):
        chunk = words[i:i + per_line]
        box = (min(w.box[0] for w in chunk), min(w.box[1] for w in chunk), max(w.box[2] for w in chunk),
               max(w.box[3] for w in chunk))
        lines.append(TextLine(box, chunk if has_words is not False else [], block=draw(st.integers(0, 3))))
    size = draw(st.sampled_from([(1240, 1754), (1, 1), (0, 0), (320, 40)]))
    return PageLayout(size, lines, has_words=bool(lines) if has_words is None else has_words)


#: Characters an engine or a text layer may hand over that a writer must survive: C0 and C1
#: controls, XML's non-characters, bidi controls, right-to-left scripts, combining marks,
#: zero-width and tag characters, astral CJK and emoji.
HOSTILE = ["\x00", "\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\x9b", "\ufffe", "\uffff", "\ufeff", "\u200b",
           "\u200f", "\u202e", "\u2066", "שלום", "مرحبا", "e\u0301", "\U000e0041", "\U00020000", "🙂", "\U0010ffff"]

SPANS = ["", ' rowspan="2"', ' colspan="3"', ' rowspan="2" colspan="2"', ' rowspan="0"', ' colspan="-1"',
         ' rowspan="999999"', ' colspan="x"', " colspan=2"]
CELL_TEXT = st.one_of(st.sampled_from(["", "Item", "12,50", "合计", "**b**", "$x$", "a<br>b", "|"]),
                      st.sampled_from(HOSTILE).map(lambda c: f"a{c}b"), st.text(max_size=6))


@st.composite
def html_tables(draw: st.DrawFn) -> str:
    """An HTML table as a VLM writes them, with any spans (zero, negative, huge, not numbers),
    ragged rows, header cells anywhere, sometimes unclosed."""
    rows = draw(st.lists(st.lists(st.tuples(st.sampled_from(["td", "th"]), st.sampled_from(SPANS), CELL_TEXT),
                                  max_size=5), max_size=6))
    body = "".join("<tr>" + "".join(f"<{t}{sp}>{x}</{t}>" for t, sp, x in row) + "</tr>" for row in rows)
    head = draw(st.sampled_from(["", "<thead>", "<caption>c</caption>", "<tbody>"]))
    return f"<table>{head}{body}" + draw(st.sampled_from(["</table>", "", "</tbody></table>"]))


@st.composite
def pipe_tables(draw: st.DrawFn) -> str:
    """A Markdown pipe table with ragged rows."""
    rows = draw(st.lists(st.lists(CELL_TEXT.map(lambda c: c.replace("\n", " ")), min_size=1, max_size=5),
                         min_size=1, max_size=6))
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])


PAGE_TEXT_PIECES = [
    "Invoice", "total", "12,50 €", "发票号码", "請求書", "שלום", "مرحبا", "\u200f", "\u202e", "\x00", "\x07", "\x0c",
    "\t", "\n", "\n\n", " ", "# ", "| a | b |\n|---|---|\n| 1 | 2 |", '<table><tr><td rowspan="2">x</td></tr></table>',
    "<!-- c -->", "![i](p.png)", "[l](u)", "**", "$x^2$", "$$\\frac{1}{2}$$", "\\", "<", ">", "&amp;", "🙂",
]
#: Engine page texts: pieces of Markdown, HTML tables, pipe tables, hostile characters, any text.
PAGE_TEXTS = st.one_of(
    st.lists(st.one_of(st.sampled_from(PAGE_TEXT_PIECES + HOSTILE), html_tables(), pipe_tables()), max_size=20)
    .map("".join),
    st.text(max_size=200),
    st.just(""),
)
