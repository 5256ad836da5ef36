"""``tex`` writer: a standalone LaTeX document that compiles with ``xelatex``.

Design decisions (each one is about compiling *every* document, whatever the engine wrote):

- Text is escaped (``\\ { } $ & # ^ _ % ~`` and ``[ ]``, so nothing after ``\\\\`` or ``\\item``
  can be taken as an optional argument); control characters are dropped; characters the Latin
  Modern text font lacks (lowercase Greek, arrows, roman numerals, box drawing …) and that are
  not CJK are set in a fallback font (DejaVu Sans, or Noto Sans CJK in CJK documents).
- Math is kept as LaTeX, after a light repair (:func:`prepare_math`) and a structural check
  (:func:`daemon.writers.texmath.check_math`, its own module):
  ``%``/``#`` escaped, ``\\label``/``\\tag`` handled, top-level ``align``/``gather``/``equation``
  environments turned into their inner forms (``aligned``, ``gathered``) inside ``\\[…\\]``,
  Unicode symbols mapped to commands, CJK wrapped in ``\\text``. Math that still fails the check
  (unbalanced braces or environments, unknown environments, too many columns for ``cases`` /
  a matrix / an ``array`` spec, ``\\left`` without ``\\right``, a dangling ``^``, a double
  superscript (primes count), an unbraced argument that is not a single simple token
  (``x^\\sqrt2``), two ``\\over`` in one group, ``\\limits`` after a non-operator, text-mode or TeX
  programming commands, delimiters inside math) is printed verbatim in ``\\texttt`` instead:
  visible, never fatal. The rules come from fuzzing (tests/integration/test_writer_fuzz.py). A command the
  preamble does not know gets a ``\\providecommand`` that prints its name. Packages: amsmath,
  amssymb, bm, cancel -- not mathtools, which breaks ``aligned`` cells ending in
  ``\\operatorname``; ``\\mathscr`` falls back to ``\\mathcal`` (the rsfs fonts are not in the set).
- Tables are ``longtable`` (they may run over a page) with ``p`` columns sized by content,
  ``\\multicolumn`` / ``\\multirow`` for spans, ``\\cline`` where a row span continues, header
  rows in bold and repeated on every page when no span crosses out of them. LaTeX does not grow
  the rows a ``\\multirow`` spans, so a cell with more text than they hold gets its last row
  deepened by an estimate from the column widths (it may leave a blank line; a badly low
  estimate would let the text run over the next row, but it still compiles).
- Fonts: Latin Modern for Latin script (fontspec's default); when the document contains CJK,
  xeCJK with Noto Serif/Sans CJK (``JP`` variants for Japanese, else ``SC``) from Debian's
  fonts-noto-cjk.
- Each page of the source starts on a new page (``\\newpage``).

One module for one output: text escaping with the font fallback, the math repairs and the ``longtable``
layout are all this one output's rules and share the escaper; the part that stands alone, the
math checker, is :mod:`daemon.writers.texmath`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from daemon.document.inline import Run, parse_inline
from daemon.document.model import (
    Block,
    Cell,
    CodeBlock,
    Document,
    Heading,
    Image,
    ListBlock,
    MathBlock,
    Paragraph,
    Rule,
    Table,
)
from daemon.writers.texmath import MathError, check_math, command_names, words
from daemon.writers.text import display_width

# --------------------------------------------------------------------------------------------
# Text escaping

_ESC = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "%": r"\%",
    "~": r"\textasciitilde{}",
    "[": "{[}",
    "]": "{]}",
    "\t": " ",
    "\n": " ",  # a blank line would end the paragraph inside \textbf{…} or a table cell
}
_GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi",
    "ρ": "rho", "σ": "sigma", "ς": "varsigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "χ": "chi",
    "ψ": "psi", "ω": "omega", "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Ξ": "Xi",
    "Π": "Pi", "Σ": "Sigma", "Υ": "Upsilon", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega", "ϕ": "phi",
    "ϵ": "epsilon", "ϑ": "vartheta",
}  # fmt: skip
# Symbols: as math commands (used inside math, and in text where the text font lacks them)
_MATH_SYMBOLS = {
    "≤": r"\leq", "≥": r"\geq", "≠": r"\neq", "≈": r"\approx", "≡": r"\equiv", "∞": r"\infty",
    "∑": r"\sum", "∏": r"\prod", "∫": r"\int", "∮": r"\oint", "√": r"\surd", "∂": r"\partial",
    "∇": r"\nabla", "∈": r"\in", "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "⊃": r"\supset",
    "⊇": r"\supseteq", "∪": r"\cup", "∩": r"\cap", "∀": r"\forall", "∃": r"\exists", "∅": r"\emptyset",
    "→": r"\rightarrow", "←": r"\leftarrow", "↔": r"\leftrightarrow", "⇒": r"\Rightarrow",
    "⇐": r"\Leftarrow", "⇔": r"\Leftrightarrow", "↦": r"\mapsto", "∧": r"\wedge", "∨": r"\vee",
    "¬": r"\neg", "⊕": r"\oplus", "⊗": r"\otimes", "∝": r"\propto", "∼": r"\sim", "≅": r"\cong",
    "∘": r"\circ", "⋅": r"\cdot", "∗": r"\ast", "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}",
    "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}", "ℓ": r"\ell", "ℏ": r"\hbar",
    "⟨": r"\langle", "⟩": r"\rangle", "⌊": r"\lfloor", "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil",
    "∣": r"\mid", "∥": r"\parallel", "⊥": r"\perp", "∠": r"\angle", "△": r"\triangle", "⊢": r"\vdash",
    "≪": r"\ll", "≫": r"\gg", "≺": r"\prec", "≻": r"\succ", "⋯": r"\cdots", "…": r"\dots",
}  # fmt: skip
# In math mode only: characters the text font has but the math fonts do not map
_MATH_ONLY = {"×": r"\times", "÷": r"\div", "±": r"\pm", "∓": r"\mp", "·": r"\cdot", "−": "-", "′": "'",
              "″": "''", "°": r"^{\circ}", "µ": r"\mu", "–": "-", "—": "-", "\u00a0": "~", "\u2009": r"\,",
              "\u202f": r"\,"}  # fmt: skip
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_CJK_RANGES = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3200-\u32ff\u3300-\u33ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003134f"
)
_CJK = re.compile(f"[{_CJK_RANGES}]")
_NONASCII_RUN = re.compile(r"[^\x00-\x7f]+")


# Code points of Latin Modern Roman (fontspec's default text font), from
# ``fc-query --format='%{charset}' lmroman10-regular.otf`` (TeX Live 2022, private use left out).
# Any other character that is not CJK is set in a fallback font (``\\ocrfallback``: DejaVu Sans,
# or Noto Sans CJK in documents that load xeCJK), so lowercase Greek, arrows, box drawing,
# roman numerals, circled numbers … are printed instead of silently dropped.
_LM_CHARSET = (
    "20-7e a0-137 139-148 14a-165 168-17f 18e 192 1a0-1a1 1af-1b0 1cd-1d4 1d7-1dd 1e6-1e7 1ea-1eb 1f0 "
    "1f4-1f5 1fa-201 204-205 208-209 20c-20d 210-211 214-215 218-21b 237 258-259 2be-2bf 2c6-2c7 "
    "2d8-2dd 300-304 306-30c 30f 311 323 326 32e-332 391-3a1 3a3-3a9 e3f 1e0c-1e0f 1e24-1e27 "
    "1e2a-1e2b 1e2e-1e2f 1e36-1e39 1e42-1e47 1e58-1e5d 1e62-1e63 1e6c-1e6f 1e80-1e85 1e92-1e93 1e97 "
    "1ea0-1ef9 2010-2011 2013-2014 2016 2018-201a 201c-201e 2020-2022 2026 2030-2031 2039-203b 203d "
    "203f-2040 2044-2046 2052 2054 20a1 20a4 20a6 20a9 20ab-20ac 20b1 2103 2116-2117 211e 2120 2122 "
    "2126-2127 212e 2190-2193 2212 2215 2217 221a 221e 2222 2300 2329-232a 2422-2423 25e6 266a "
    "26ad-26ae 27e6-27e7 fb00-fb04 "
)


def _charset(spec: str) -> frozenset[int]:
    """``"20-7e a0 …"`` (hex code points and ranges) -> the set of code points."""
    out: set[int] = set()
    for part in spec.split():
        lo, _, hi = part.partition("-")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return frozenset(out)


_LM = _charset(_LM_CHARSET)
FALLBACK = "\\ocrfallback"


def _needs_fallback(ch: str) -> bool:
    return ord(ch) not in _LM and not _CJK.match(ch) and ch not in "\n\t"


def esc(text: str) -> str:
    """Plain text -> LaTeX text-mode source that prints exactly that text."""
    text = _CTRL.sub("", text)
    out: list[str] = []
    run: list[str] = []
    for ch in text:
        if _needs_fallback(ch):
            run.append(ch)
            continue
        if run:
            out.append("{" + FALLBACK + " " + "".join(run) + "}")
            run = []
        out.append(_ESC.get(ch, ch))
    if run:
        out.append("{" + FALLBACK + " " + "".join(run) + "}")
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Math: repairs, then the structural check (daemon.writers.texmath)


# Top-level display environments -> the inner form that works inside \[ \] and inline.
_ENV_RENAME = {
    "align": "aligned", "align*": "aligned", "flalign": "aligned", "flalign*": "aligned",
    "eqnarray": "aligned", "eqnarray*": "aligned", "alignat": "alignedat", "alignat*": "alignedat",
    "gather": "gathered", "gather*": "gathered", "multline": "gathered", "multline*": "gathered",
    "split": "aligned",
}  # fmt: skip
_ENV_DROP = {"equation", "equation*", "displaymath", "math"}


_TAG = re.compile(r"\\tag\*?\s*\{([^{}]*)\}")


def _unescaped(pattern: str) -> re.Pattern[str]:
    """``pattern`` not preceded by an odd number of backslashes."""
    return re.compile(r"(?<!\\)((?:\\\\)*)" + pattern)


_PCT = _unescaped("%")
_HASH = _unescaped("#")


def prepare_math(tex: str, *, display: bool) -> str | None:
    """Math source -> LaTeX ready to go between ``\\(…\\)`` (inline) or as the body of a display
    (already wrapped: ``\\[…\\]``), or None when it cannot be made safe (then print it verbatim)."""
    s = tex.strip()
    if not s:
        return None
    tags = _TAG.findall(s)
    s = _TAG.sub("", s)
    s = re.sub(r"\\label\s*\{[^{}]*\}|\\nonumber\b|\\notag\b", "", s)
    # colours need xcolor (and a name it knows): keep the coloured math, drop the colour
    s = re.sub(r"\\(?:text)?color\s*\{[^{}]*\}", "", s)
    s = _PCT.sub(r"\1\\%", s)
    s = _HASH.sub(r"\1\\#", s)

    def rename(m: re.Match[str]) -> str:
        kind, name = m.group(1), m.group(2)
        if name in _ENV_DROP:
            return ""
        return f"\\{kind}{{{_ENV_RENAME.get(name, name)}}}"

    s = re.sub(r"\\(begin|end)\s*\{([A-Za-z]+\*?)\}", rename, s)
    # alignat's column-count argument stays valid for alignedat; eqnarray's "&=&" is fine in aligned
    s = "".join(_MATH_ONLY.get(ch) or (f"\\{_GREEK[ch]} " if ch in _GREEK else None) or
                (f"{_MATH_SYMBOLS[ch]} " if ch in _MATH_SYMBOLS else None) or ch for ch in s)  # fmt: skip
    # a blank line inside math is a paragraph break: "Missing $ inserted"
    s = re.sub(r"\n\s*\n", "\n", _CTRL.sub(" ", s)).strip()
    if not s:
        return None
    # remaining non-ASCII (CJK, accented words) in math: the math fonts have no glyphs; \text does
    s = _NONASCII_RUN.sub(lambda m: f"\\text{{{esc(m.group(0))}}}", s)
    try:
        info = check_math(s)
    except MathError:
        return None
    if not display:
        if info.top_amp:
            return None
        if info.top_newline:
            s = _unescaped(r"\\\\").sub(r"\1 ", s)  # a line break has no meaning in inline math
            try:
                check_math(s)
            except MathError:
                return None
        return s
    if info.top_amp:
        s = "\\begin{aligned}" + s + "\\end{aligned}"
    elif info.top_newline:
        s = "\\begin{gathered}" + s + "\\end{gathered}"
    tag = f"\\tag{{{esc(tags[0])}}}" if len(tags) == 1 else ""
    return f"\\[\n{s}\n{tag}\\]" if tag else f"\\[\n{s}\n\\]"


def _verbatim(tex: str) -> str:
    return "\\texttt{" + esc(tex) + "}"


# --------------------------------------------------------------------------------------------
# Inline runs


class _Ctx:
    """Per-document state: math commands seen (for \\providecommand fallbacks)."""

    def __init__(self) -> None:
        self.commands: set[str] = set()
        self.verbatim_math = 0


def inline(text: str, ctx: _Ctx, *, in_cell: bool = False) -> str:
    """Inline Markdown -> LaTeX (text mode)."""
    runs = parse_inline(text)
    # line breaks: never at the start or end, never two in a row ("There's no line here to end")
    cleaned: list[Run] = []
    for r in runs:
        if r.kind == "break" and (not cleaned or cleaned[-1].kind == "break"):
            continue
        cleaned.append(r)
    while cleaned and cleaned[-1].kind == "break":
        cleaned.pop()
    out: list[str] = []
    line_has_content = False  # a \newline needs something before it on its line
    for r in cleaned:
        if r.kind == "break":
            if line_has_content:
                out.append("\\newline{}")
                line_has_content = False
            continue
        if r.kind != "text" or r.text.strip():
            line_has_content = True
        if r.kind == "text":
            s = esc(r.text)
        elif r.kind == "code":
            s = "\\texttt{" + esc(r.text) + "}"
        elif r.kind == "image":
            s = "\\textit{" + esc(f"[image: {r.text}]" if r.text else "[image]") + "}"
        else:  # math
            styled = r.bold or r.italic or r.underline or r.sup or r.sub
            display = r.display and not in_cell and not styled
            m = prepare_math(r.text, display=display)
            if m is None:
                ctx.verbatim_math += 1
                s = _verbatim(("$$" if r.display else "$") + r.text + ("$$" if r.display else "$"))
            else:
                ctx.commands |= command_names(m)
                s = m if display else ("\\(\\displaystyle " + m + "\\)" if r.display else "\\(" + m + "\\)")
        if r.kind != "math" or not r.display:
            if r.sub:
                s = "\\textsubscript{" + s + "}"
            if r.sup:
                s = "\\textsuperscript{" + s + "}"
            if r.underline:
                s = "\\underline{" + s + "}"
            if r.italic:
                s = "\\textit{" + s + "}"
            if r.bold:
                s = "\\textbf{" + s + "}"
        out.append(s)
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Blocks

_SECTION = {1: "section*", 2: "subsection*", 3: "subsubsection*", 4: "paragraph*", 5: "subparagraph*", 6: "subparagraph*"}


def _block(b: Block, ctx: _Ctx) -> str:
    if isinstance(b, Heading):
        cmd = _SECTION.get(b.level, "subparagraph*")
        head = f"\\{cmd}{{{inline(b.text.replace(chr(10), ' '), ctx, in_cell=True)}}}"
        # \paragraph and \subparagraph are run-in; OCR headings stand on their own line
        return head + "\\mbox{}\\par" if b.level >= 4 else head
    if isinstance(b, Paragraph):
        body = inline(b.text, ctx)
        if not body.strip():
            return ""
        if b.role != "body":
            return "{\\footnotesize " + body + "\\par}"
        return body
    if isinstance(b, ListBlock):
        return _list(b, ctx, 1)
    if isinstance(b, Table):
        return table_tex(b, ctx)
    if isinstance(b, MathBlock):
        m = prepare_math(b.tex, display=True)
        if m is None:
            ctx.verbatim_math += 1
            return "\\begin{center}" + _verbatim(b.tex) + "\\end{center}"
        ctx.commands |= command_names(m)
        return m
    if isinstance(b, Image):
        label = esc(f"[image: {b.alt}]" if b.alt else "[image]")
        return "\\begin{center}\\fbox{\\parbox{0.8\\linewidth}{\\centering\\textit{" + label + "}}}\\end{center}"
    if isinstance(b, CodeBlock):
        body = _CTRL.sub("", b.text).replace("\\end{verbatim}", "\\end {verbatim}")
        return "\\begin{verbatim}\n" + body + "\n\\end{verbatim}"
    if isinstance(b, Rule):
        return "\\noindent\\rule{\\linewidth}{0.4pt}"
    return ""


def _list(lb: ListBlock, ctx: _Ctx, depth: int) -> str:
    """itemize/enumerate; LaTeX allows 4 levels, deeper items are kept at level 4."""
    if depth > 4:
        return "\n".join(_flat_items(lb, ctx))
    env = "enumerate" if lb.ordered else "itemize"
    lines = [f"\\begin{{{env}}}"]
    if lb.ordered and lb.start != 1:
        lines.append(f"\\setcounter{{enum{'i' * depth if depth < 4 else 'iv'}}}{{{lb.start - 1}}}")
    for item in lb.items:
        lines.append("\\item{} " + inline(item.text, ctx))
        if item.children:
            lines.append(_list(item.children, ctx, depth + 1))
    lines.append(f"\\end{{{env}}}")
    return "\n".join(lines)


def _flat_items(lb: ListBlock, ctx: _Ctx) -> Iterable[str]:
    for k, item in enumerate(lb.items):
        mark = f"{lb.start + k}." if lb.ordered else "--"
        yield f"\\item[{mark}] " + inline(item.text, ctx)
        if item.children:
            yield from _flat_items(item.children, ctx)


def _col_fractions(t: Table) -> list[float]:
    """Share of the line width for each column, from the longest line of its cells (capped so
    one long cell does not squeeze every other column)."""
    natural = [3.0] * t.n_cols
    for c in t.cells:
        if c.colspan == 1:
            longest = max((display_width(x) for x in c.plain.split("\n")), default=0)
            natural[c.col] = max(natural[c.col], min(float(longest), 40.0))
    total = sum(natural)
    return [n / total for n in natural]


def _width(fracs: list[float], start: int, span: int) -> str:
    f = sum(fracs[start : start + span])
    # minus the padding of the column(s) the cell occupies
    return f"\\dimexpr {f:.4f}\\linewidth-{2 * span}\\tabcolsep-{span + 1}\\arrayrulewidth\\relax"


def _cell_body(c: Cell, ctx: _Ctx) -> str:
    body = inline(c.text, ctx, in_cell=True)
    if c.header and body:
        body = "\\textbf{" + body + "}"
    return body


def table_tex(t: Table, ctx: _Ctx) -> str:
    """The table as a longtable with spans (see the module docstring)."""
    fracs = _col_fractions(t)
    spec = "|" + "".join(f">{{\\raggedright\\arraybackslash}}p{{{_width(fracs, c, 1)}}}|" for c in range(t.n_cols))
    grid = t.grid()
    extra = _multirow_extra_lines(t, fracs)
    lines = []
    if t.caption:
        lines.append("\\noindent\\textit{" + inline(t.caption, ctx, in_cell=True) + "}")
    lines += ["{\\small", "\\setlength{\\LTleft}{0pt}\\setlength{\\LTright}{0pt}", f"\\begin{{longtable}}{{{spec}}}", "\\hline"]
    # header rows repeat on each page only if no row span crosses out of them
    repeat_head = t.header_rows > 0 and t.header_rows < t.n_rows and all(
        c.row + c.rowspan <= t.header_rows for c in t.cells if c.row < t.header_rows
    )
    for r in range(t.n_rows):
        parts: list[str] = []
        col = 0
        while col < t.n_cols:
            cell = grid[r][col]
            span = cell.colspan
            left = "|" if col == 0 else ""
            colspec = f"{left}>{{\\raggedright\\arraybackslash}}p{{{_width(fracs, col, span)}}}|"
            if cell.row == r and cell.col == col:
                body = _cell_body(cell, ctx)
                if cell.rowspan > 1 and body:
                    # "=": the width of the p column (or of the \multicolumn) it sits in; a length
                    # here would be read inside the cell, where \linewidth is already the cell width
                    body = f"\\multirow{{{cell.rowspan}}}{{=}}{{{body}}}"
            else:
                body = ""  # covered by a row span from above (or the rest of a column span)
                if r == cell.row + cell.rowspan - 1 and col == cell.col and extra.get(id(cell)):
                    # the last row a tall \multirow cell covers: deepen it so the text fits
                    body = f"\\rule[-{extra[id(cell)]}\\baselineskip]{{0pt}}{{0pt}}"
            parts.append(f"\\multicolumn{{{span}}}{{{colspec}}}{{{body}}}" if span > 1 else body)
            col += span
        rule = _rule_after(grid, r, t)
        lines.append(" & ".join(parts) + " \\\\ " + rule)
        if repeat_head and r == t.header_rows - 1:
            lines.append("\\endhead")
    lines += ["\\end{longtable}", "}"]
    return "\n".join(lines)


# Display-width units (one Latin letter; a CJK character is two) that fit on \\linewidth in
# \\small Latin Modern on A4 with 2 cm margins (about 482 pt / 4.6 pt).
_LINE_UNITS = 100.0


def _tex_width(s: str) -> float:
    """Rough width of ``s`` in Latin-letter units as typeset here (a CJK character measured about
    three: Noto CJK at \\small is wider than two Latin Modern letters)."""
    return sum(3.2 if w == 2 else float(w) for w in (display_width(ch) for ch in s))


def _lines_needed(text: str, units: float) -> int:
    """Estimated number of lines ``text`` takes in a column ``units`` wide (rounded up: too
    much room leaves a blank line, too little lets the text run over the next row)."""
    cap = max(1.0, units)
    return sum(max(1, int(-(-_tex_width(ln) // cap))) for ln in text.split("\n")) if text else 1


def _multirow_extra_lines(t: Table, fracs: list[float]) -> dict[int, int]:
    """For each \\multirow cell whose text needs more lines than the rows it spans (estimated from
    column widths), how many lines to add to its last row -- LaTeX does not grow those rows,
    and the text would run over the rows below."""
    units = [f * _LINE_UNITS - 2.0 for f in fracs]
    row_lines = [1] * t.n_rows
    for c in t.cells:
        if c.rowspan == 1:
            w = sum(units[c.col : c.col + c.colspan])
            row_lines[c.row] = max(row_lines[c.row], _lines_needed(c.plain, w))
    extra: dict[int, int] = {}
    for c in t.cells:
        if c.rowspan > 1:
            need = _lines_needed(c.plain, sum(units[c.col : c.col + c.colspan]))
            have = sum(row_lines[c.row : c.row + c.rowspan])
            if need > have:
                extra[id(c)] = need - have
    return extra


def _rule_after(grid: list[list[Cell]], r: int, t: Table) -> str:
    """``\\hline`` under row r, or ``\\cline`` pieces where a row span continues below."""
    if r == t.n_rows - 1:
        return "\\hline"
    open_cols = [grid[r][c] is not grid[r + 1][c] for c in range(t.n_cols)]
    if all(open_cols):
        return "\\hline"
    pieces, c = [], 0
    while c < t.n_cols:
        if open_cols[c]:
            start = c
            while c < t.n_cols and open_cols[c]:
                c += 1
            pieces.append(f"\\cline{{{start + 1}-{c}}}")
        else:
            c += 1
    return "".join(pieces)


# --------------------------------------------------------------------------------------------
# Document

# Commands the preamble defines (no \providecommand fallback written for these).
_PREAMBLE_KNOWN = words(
    """frac dfrac tfrac cfrac binom sqrt left right big Big bigg Bigg bigl bigr Bigl Bigr sum prod int
    iint iiint oint lim sup inf max min log ln exp sin cos tan cot sec csc arcsin arccos arctan sinh
    cosh tanh det dim ker deg gcd Pr arg text textrm textbf textit mathrm mathbf mathit mathsf
    mathtt mathcal mathbb mathfrak mathscr boldsymbol bm operatorname hat widehat tilde widetilde
    bar overline underline vec dot ddot cdot cdots ldots dots vdots ddots times div pm mp leq geq
    neq le ge ne approx equiv sim simeq cong propto infty partial nabla in notin subset subseteq
    supset supseteq cup cap forall exists emptyset rightarrow leftarrow Rightarrow Leftarrow to
    mapsto quad qquad begin end alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta
    iota kappa lambda mu nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi
    omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega displaystyle textstyle
    scriptstyle limits nolimits mid vert Vert langle rangle lfloor rfloor lceil rceil hline
    overbrace underbrace substack xrightarrow prime circ ast star ell hbar wedge vee neg oplus
    otimes perp parallel angle triangle emph mbox hbox phantom boxed cancel pmod bmod"""
)


def write_tex(doc: Document) -> str:
    ctx = _Ctx()
    body: list[str] = []
    for k, page in enumerate(doc.pages):
        if k:
            body.append("\\newpage")
        body.append(f"% page {page.number}")
        blocks = [x for x in (_block(b, ctx) for b in page.blocks) if x]
        body.extend(blocks or ["\\mbox{}"])  # an empty page still gets its page
    text = "\n\n".join(body)
    has_cjk = bool(_CJK.search(text))
    variant = "JP" if doc.language == "ja" else "KR" if doc.language == "ko" else "SC"
    pre = [
        "% Generated by ocr-daemon from OCR output. Compile with: xelatex FILE.tex",
        "\\documentclass[11pt]{article}",
        "\\usepackage[a4paper,margin=2cm]{geometry}",
        # not mathtools: it breaks e.g. "\\begin{aligned}& \\operatorname{tr}\\end{aligned}"
        "\\usepackage{amsmath,amssymb}",
        "\\usepackage{fontspec}",
        "\\usepackage{bm,cancel}",
        # mathrsfs needs the rsfs fonts (not in the Debian TeX set we rely on): script -> calligraphic
        "\\providecommand{\\mathscr}{\\mathcal}",
        "\\usepackage{array,longtable,multirow}",
    ]
    if has_cjk:
        pre += [
            "\\usepackage{xeCJK}",
            f"\\setCJKmainfont{{Noto Serif CJK {variant}}}",
            f"\\setCJKsansfont{{Noto Sans CJK {variant}}}",
            f"\\setCJKmonofont{{Noto Sans Mono CJK {variant}}}",
        ]
    if FALLBACK in text:
        # characters Latin Modern lacks (see esc); both fonts come with the packages we require
        fallback = f"Noto Sans CJK {variant}" if has_cjk else "DejaVu Sans"
        pre.append(f"\\newfontfamily{FALLBACK}{{{fallback}}}")
    pre += [
        "\\setlength{\\parindent}{0pt}",
        "\\setlength{\\parskip}{0.6\\baselineskip}",
        "\\setlength{\\emergencystretch}{3em}",  # long words/URLs: stretch rather than overflow
    ]
    # Commands used in math that no loaded package may define: print their name, never fail.
    unknown = sorted(n for n in ctx.commands if n not in _PREAMBLE_KNOWN and not n.startswith("end") and len(n) > 1)
    pre += [f"\\providecommand{{\\{n}}}{{\\ensuremath{{\\mathrm{{{n}}}}}}}" for n in unknown]
    lang = f"% language: {doc.language}"
    return "\n".join([*pre, lang, "\\begin{document}", text if text.strip() else "\\mbox{}", "\\end{document}"]) + "\n"
