"""Inline Markdown: normalisation (engine text -> the model's normalised form) and runs.

Contract:
- ``normalize_inline(s)`` rewrites the engine's inline Markdown to the model's normalised form
  (see :mod:`daemon.document.model`): math only as ``$…$``/``$$…$$``, literal dollars escaped.
- ``escape_plain(text)`` makes plain OCR text safe to hold as normalised inline Markdown.
- ``parse_inline(text)`` turns normalised inline Markdown into styled :class:`Run` objects
  (adjacent runs of one style merged), for the writers that are not Markdown; the result is
  the caller's to change (results are cached, copies are handed out).
- ``plain_text(text)``: the same text without styles (math as LaTeX source, images as
  ``[image: alt]``, links as ``text (url)``).

Nothing here raises on odd input: what is not understood stays text.

One module: normalisation and the run parser must read the same syntax the same
way (escapes, code spans, where math starts and ends), so they share those scanners here rather
than in two modules that would import each other's private rules.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

_LATEXISH = re.compile(r"[\\^_{}=]")
_NUMBERISH = re.compile(r"^[\d\s.,'%+\-−]*$")


def find_unescaped(s: str, needle: str, start: int) -> int:
    """Index of the next ``needle`` at or after ``start`` that is not backslash-escaped."""
    i = start
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s.startswith(needle, i):
            return i
        i += 1
    return -1


def _math_body_ok(body: str) -> bool:
    """Can ``body`` sit between math delimiters at all: not blank, no blank line, no unescaped
    ``$``, and no odd run of backslashes at its end (it would escape the closing delimiter)."""
    stripped = body.strip()
    if not stripped or "\n\n" in body or find_unescaped(stripped, "$", 0) != -1:
        return False
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 0


def _inline_math_ok(content: str, after: str) -> bool:
    """TeX/pandoc rule for ``$…$``: no space just inside the delimiters and no digit right after
    the closing one (so ``$5 and $10`` stays money) -- unless the content plainly is LaTeX."""
    if not _math_body_ok(content) or "\n" in content or "\\(" in content or "\\[" in content:
        return False
    if not _LATEXISH.search(content) and len(re.findall(r"(?:^|\s)[^\W\d_]{3,}(?=[\s,.;:!?]|$)", content)) >= 2:
        return False  # "$3 per run, and 50$": prose between two prices, not a formula
    edge_space = content[0].isspace() or content[-1].isspace()
    # "$ x^2 $" is sloppy math; "$5 and $" is money
    if edge_space and not (content[0].isspace() and content[-1].isspace() and _LATEXISH.search(content)):
        return False
    return not after.isdigit()


def _escaped_math_ok(content: str, after: str) -> bool:
    """Whether ``\\$content\\$`` is math the engine escaped by mistake rather than two literal
    dollar signs (``\\$5 and \\$10``): tight delimiters, not just a number, and either LaTeX
    markup or a short formula-like token (``x``, ``2x``, ``n+1``)."""
    if not _math_body_ok(content) or content[0].isspace() or content[-1].isspace() or after.isdigit():
        return False
    if _NUMBERISH.match(content) or not re.search(r"[A-Za-z\\]", content) or "$" in content:
        return False
    if "\n" in content or "\\(" in content or "\\[" in content:
        return False
    if _LATEXISH.search(content):
        return True
    return len(content) <= 12 and bool(re.fullmatch(r"[A-Za-z0-9+\-*/=<>().,' ]+", content)) and (
        len(re.findall(r"[A-Za-z]+", content)) <= 3 and all(len(w) <= 2 for w in re.findall(r"[A-Za-z]+", content))
    )


def _next_dollar(s: str, start: int) -> tuple[int, int]:
    """(position, length) of the next dollar token at/after ``start``: ``$`` (1) or ``\\$`` (2);
    (-1, 0) if none. ``\\\\`` pairs are skipped."""
    i = start
    while i < len(s):
        if s[i] == "\\":
            if s[i + 1 : i + 2] == "$":
                return i, 2
            i += 2
            continue
        if s[i] == "$":
            return i, 1
        i += 1
    return -1, 0


def _escaped_pair(s: str, i: int, open_len: int) -> tuple[str, int] | None:
    """Repair escaped-dollar math: the dollar token at ``i`` (``open_len`` 1 or 2) and the next
    dollar token, when at least one of them is escaped and the text between looks like math.
    Returns (``$body$``, index after the closing token) or None."""
    j, close_len = _next_dollar(s, i + open_len)
    if j == -1 or (open_len == 1 and close_len == 1):
        return None
    body = s[i + open_len : j]
    if _escaped_math_ok(body, s[j + close_len : j + close_len + 1]):
        return f"${body}$", j + close_len
    return None


def _code_span_end(s: str, i: int) -> tuple[int, int]:
    """For a backtick run at ``i``: (length of the run, index just past the closing run or -1)."""
    j = i
    while j < len(s) and s[j] == "`":
        j += 1
    ticks = s[i:j]
    k = s.find(ticks, j)
    while k != -1 and k + len(ticks) < len(s) and s[k + len(ticks)] == "`":
        k = s.find(ticks, k + len(ticks) + 1)
    return len(ticks), (k + len(ticks) if k != -1 else -1)


def normalize_inline(s: str) -> str:
    """Normalise engine Markdown inline text (see the module docstring): math delimiters,
    repaired escaped-dollar math, literal dollars escaped. Code spans are left untouched.
    Idempotent: ``normalize_inline(normalize_inline(x)) == normalize_inline(x)``."""
    # Two passes: first \(…\) / \[…\] become dollars, then every dollar token is judged once
    # with all of them in view (judging them in one pass made the result depend on the order).
    return _normalize_pass(_normalize_pass(s, parens=True), parens=False)


def _normalize_pass(s: str, *, parens: bool) -> str:
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "`":
            nt, end = _code_span_end(s, i)
            if end == -1:
                out.append(s[i : i + nt])
                i += nt
            else:
                out.append(s[i:end])
                i = end
            continue
        if ch == "\\" and i + 1 < n:
            nxt = s[i + 1]
            if parens and nxt in "([":
                close = "\\)" if nxt == "(" else "\\]"
                j = s.find(close, i + 2)
                # "$" inside \(…\) would be judged again by the dollar pass: leave such text alone
                if j != -1 and _math_body_ok(s[i + 2 : j]) and "$" not in s[i + 2 : j]:
                    body = s[i + 2 : j].strip()
                    out.append(f"${body}$" if nxt == "(" else f"$${body}$$")
                    i = j + 2
                    continue
            if nxt == "$" and not parens:
                if s.startswith("\\$\\$", i):
                    j = s.find("\\$\\$", i + 4)
                    if j != -1 and _math_body_ok(s[i + 4 : j]) and _escaped_math_ok(s[i + 4 : j], ""):
                        out.append("$$" + s[i + 4 : j].strip() + "$$")
                        i = j + 4
                        continue
                got = _escaped_pair(s, i, 2)
                if got:
                    out.append(got[0])
                    i = got[1]
                    continue
                out.append("\\$")
                i += 2
                continue
            out.append(s[i : i + 2])
            i += 2
            continue
        if ch == "$" and not parens:
            if s.startswith("$$", i):
                j = find_unescaped(s, "$$", i + 2)
                if j != -1 and _math_body_ok(s[i + 2 : j]):
                    out.append("$$" + s[i + 2 : j].strip() + "$$")
                    i = j + 2
                    continue
                out.append("\\$")  # no closing "$$": the second "$" may still open inline math
                i += 1
                continue
            j = find_unescaped(s, "$", i + 1)
            if j != -1:
                body = s[i + 1 : j]
                if _inline_math_ok(body, s[j + 1 : j + 2]):
                    out.append("$" + body.strip() + "$")
                    i = j + 1
                    continue
            got = _escaped_pair(s, i, 1)
            if got:
                out.append(got[0])
                i = got[1]
                continue
            out.append("\\$")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# Brackets are left as they are: "[1]" is literal text in CommonMark unless a link follows, and
# "\\[...\\]" is what the engines write for display math, which normalize_inline repairs to "$$": an
# escaped "[mut/Mb]" from a PDF's text layer came out as "$$mut/Mb$$" (real-world set, 2026-12-01).
# Only the "[" of a "[text](" that would make an inline link is escaped (_MD_LINK_OPEN); "\\[" with
# no "\\]" after it is no math, and the inline parser reads it as a literal "[".
# An underscore between two letters or digits ("package_name", "dh_auto_build") is left as it is:
# CommonMark's flanking rules never let an intraword "_" open or close emphasis (nor does
# parse_inline), and "package\\_name" in the md file and the JSON's page texts is no longer the
# word a search or a reader looks for (the Debian manuals of the real-world set, 2026-12-02).
_MD_ESCAPE = re.compile(r"([\\`*$<~|])")
_MD_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_MD_LINK_OPEN = re.compile(r"\[(?=[^\[\]\n]*\]\()")


def escape_markdown_chars(text: str) -> str:
    """``text`` with the characters that would start Markdown or math markup escaped (inline;
    line starts are ``escape_plain``'s)."""
    text = _MD_ESCAPE.sub(r"\\\1", text)
    if "_" in text:  # the lookarounds cost: most text has no underscore
        text = _MD_UNDERSCORE.sub(r"\\_", text)
    return _MD_LINK_OPEN.sub(r"\\[", text)


_MD_LINE_START = re.compile(r"^(\s*)(#{1,6}\s|[-+*]\s|\d{1,9}[.)]\s|>|={3,}\s*$|-{3,}\s*$)")


def escape_line_start(line: str) -> str:
    """An inline Markdown line that would start a block (a list item, a heading, a quote, a
    rule) when it stands at the start of a line, escaped so that it stays text."""
    m = _MD_LINE_START.match(line)
    if m and m.group(2)[0].isdigit():
        # CommonMark escapes only ASCII punctuation: "\1." shows the backslash; "1\." is a
        # literal "1." that does not start an ordered list.
        k = len(m.group(1)) + len(m.group(2).rstrip()) - 1
        return line[:k] + "\\" + line[k:]
    if m:
        return m.group(1) + "\\" + line[len(m.group(1)) :]
    return line


def escape_plain(text: str) -> str:
    """Plain text (Tesseract) -> inline Markdown that means exactly that text."""
    return "\n".join(escape_line_start(escape_markdown_chars(line)) for line in text.split("\n"))


# --------------------------------------------------------------------------------------------
# Runs


@dataclass
class Run:
    """A piece of inline content. ``kind``: ``text`` (styled by the flags), ``math`` (LaTeX source
    in ``text``; ``display`` for ``$$…$$``), ``code``, ``break`` (a hard line break), ``image``
    (``text`` is the alt text)."""

    kind: Literal["text", "math", "code", "break", "image"]
    text: str = ""
    bold: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    sup: bool = False
    sub: bool = False
    href: str | None = None
    display: bool = False

    def style(self) -> tuple[bool, bool, bool, bool, bool, bool, str | None]:
        return (self.bold, self.italic, self.underline, self.strike, self.sup, self.sub, self.href)


# Placeholders in the supplementary private use area stand for atoms and style toggles while the
# emphasis regexes run, so the regexes never see inside math or code.
_PUA = 0xF0000
_ATOM_RE = re.compile("[\U000f0000-\U000ffffd]")
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^<>]*?)?)\s*(/?)>")
_ATTR_RE = re.compile(r"""([A-Za-z_:][-\w:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_ENTITY_RE = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_STYLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strike",
    "del": "strike",
    "strike": "strike",
    "sup": "sup",
    "sub": "sub",
}
_ESCAPABLE = set("\\`*_{}[]()#+-.!|$<>~&%^\"'=:;,/?@")


def tag_attrs(s: str) -> dict[str, str]:
    return {m.group(1).lower(): html.unescape(m.group(2) or m.group(3) or m.group(4) or "") for m in _ATTR_RE.finditer(s)}


def _wrapper(on: str, off: str) -> Callable[[re.Match[str]], str]:
    return lambda m: on + m.group(1) + off


def parse_inline(text: str) -> list[Run]:
    """Normalised inline Markdown -> runs (adjacent runs of the same style merged). A newline is
    a ``break`` run: OCR line breaks inside a paragraph or a cell are kept."""
    return [dataclasses.replace(r) for r in _parse_inline_cached(text)]


@functools.lru_cache(maxsize=32768)
def _parse_inline_cached(text: str) -> tuple[Run, ...]:
    # every writer reads the same cell texts (and render_outputs runs twice per document)
    return tuple(_parse_inline(text))


def _parse_inline(text: str) -> list[Run]:
    """Three passes: take the pieces that are not styled text (code, math, escapes, tags, links,
    images, line breaks) out of the text as atoms; mark emphasis in what is left (it cannot see
    into the atoms); then walk the result into runs."""
    atoms = _Atoms()
    s = _take_atoms(text, atoms)
    s = _mark_emphasis(s, atoms)
    return _build_runs(s, atoms)


class _Atoms:
    """Pieces taken out of the text, each replaced by one private-use character that is its index
    (the input's own private-use characters become atoms too, so none is mistaken for one)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, ...]] = []

    def add(self, *atom: str) -> str:
        self.items.append(atom)
        return chr(_PUA + len(self.items) - 1)

    def get(self, placeholder: str) -> tuple[str, ...]:
        return self.items[ord(placeholder) - _PUA]


#: What a lexer step returns: (the text for the buffer, the index after what it took), or None
#: when the character at the index starts nothing it knows (it then stays as it is).
_Lexed = tuple[str, int] | None

_AUTOLINK_RE = re.compile(r"<((?:https?|ftp)://[^\s<>]+|mailto:[^\s<>]+)>")
_IMAGE_RE = re.compile(r"!\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_LINK_RE = re.compile(r"\[([^\[\]]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _take_atoms(text: str, atoms: _Atoms) -> str:
    buf: list[str] = []
    i = 0
    while i < len(text):
        lexed = _lex_at(text, i, atoms)
        if lexed is None:
            buf.append(text[i])
            i += 1
        else:
            piece, i = lexed
            buf.append(piece)
    return "".join(buf)


def _lex_at(text: str, i: int, atoms: _Atoms) -> _Lexed:
    ch = text[i]
    if ch == "`":
        return _lex_code(text, i, atoms)
    if _PUA <= ord(ch) <= 0xFFFFD:  # the input's own private-use characters: keep, never as placeholders
        return atoms.add("lit", ch), i + 1
    if ch == "\n":
        return atoms.add("break"), i + 1
    if ch == "\\":
        return _lex_escape(text, i, atoms)
    if ch == "$":
        return _lex_math(text, i, atoms)
    if ch == "<":
        return _lex_tag(text, i, atoms)
    if ch == "!" and text.startswith("![", i):
        m = _IMAGE_RE.match(text, i)
        return (atoms.add("image", m.group(1), m.group(2)), m.end()) if m else None
    if ch == "[":
        m = _LINK_RE.match(text, i)
        # the link text goes through the emphasis pass like any other text
        return (atoms.add("linkon", m.group(2)) + m.group(1) + atoms.add("linkoff"), m.end()) if m else None
    return None


def _lex_code(text: str, i: int, atoms: _Atoms) -> _Lexed:
    nt, end = _code_span_end(text, i)
    if end == -1:  # an unclosed backtick run is literal text
        return atoms.add("lit", text[i : i + nt]), i + nt
    body = text[i + nt : end - nt].replace("\n", " ")  # CommonMark: line ends -> spaces
    if body.startswith(" ") and body.endswith(" ") and body.strip():
        body = body[1:-1]
    return atoms.add("code", body), end


def _lex_escape(text: str, i: int, atoms: _Atoms) -> _Lexed:
    if i + 1 >= len(text):
        return None
    nxt = text[i + 1]
    if nxt == "\n":
        return atoms.add("break"), i + 2
    return atoms.add("lit", nxt if nxt in _ESCAPABLE else "\\" + nxt), i + 2


def _lex_math(text: str, i: int, atoms: _Atoms) -> _Lexed:
    if text.startswith("$$", i):
        j = find_unescaped(text, "$$", i + 2)
        if j != -1:
            return atoms.add("math", text[i + 2 : j].strip(), "display"), j + 2
    else:
        j = find_unescaped(text, "$", i + 1)
        if j != -1:
            return atoms.add("math", text[i + 1 : j].strip(), ""), j + 1
    return atoms.add("lit", "$"), i + 1


def _lex_tag(text: str, i: int, atoms: _Atoms) -> _Lexed:
    m = _TAG_RE.match(text, i)
    if m:
        closing, name, rest = m.group(1), m.group(2).lower(), m.group(3)
        piece = ""
        if name == "br":
            piece = atoms.add("break")
        elif name == "img":
            a = tag_attrs(rest)
            piece = atoms.add("image", a.get("alt", ""), a.get("src", ""))
        elif name in _STYLE_TAGS:
            piece = atoms.add("off" if closing else "on", _STYLE_TAGS[name])
        elif name == "a":
            piece = atoms.add("linkoff") if closing else atoms.add("linkon", tag_attrs(rest).get("href", ""))
        # <code>…</code> in a cell and any other tag (span, font, p, div …): the tag is dropped,
        # its text kept
        return piece, m.end()
    m = _AUTOLINK_RE.match(text, i)
    if m:
        return atoms.add("linkon", m.group(1)) + m.group(1) + atoms.add("linkoff"), m.end()
    return None


_EMPHASIS = (
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.S), "bold"),
    (re.compile(r"(?<![\w\\])__(?=\S)(.+?)(?<=\S)__(?!\w)", re.S), "bold"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~", re.S), "strike"),
    (re.compile(r"\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*", re.S), "italic"),
    (re.compile(r"(?<![\w\\])_(?=[^\s_])([^_]+?)(?<=[^\s_])_(?!\w)", re.S), "italic"),
)


def _mark_emphasis(s: str, atoms: _Atoms) -> str:
    """``**bold**``, ``__bold__``, ``~~strike~~``, ``*italic*``, ``_italic_`` -> on/off atoms."""
    for pattern, name in _EMPHASIS:
        s = pattern.sub(_wrapper(atoms.add("on", name), atoms.add("off", name)), s)
    return s


class _RunBuilder:
    """Walks text and atoms into runs, keeping the open styles and links."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.flags = {"bold": 0, "italic": 0, "underline": 0, "strike": 0, "sup": 0, "sub": 0}
        self.links: list[str] = []

    def styled(self, kind: Any, txt: str = "", display: bool = False) -> Run:
        f = self.flags
        return Run(
            kind,
            txt,
            bold=f["bold"] > 0,
            italic=f["italic"] > 0,
            underline=f["underline"] > 0,
            strike=f["strike"] > 0,
            sup=f["sup"] > 0,
            sub=f["sub"] > 0,
            href=self.links[-1] if self.links else None,
            display=display,
        )

    def add_text(self, txt: str) -> None:
        if not txt:
            return
        r = self.styled("text", txt)
        if self.runs and self.runs[-1].kind == "text" and self.runs[-1].style() == r.style():
            self.runs[-1].text += txt
        else:
            self.runs.append(r)

    def add_atom(self, at: tuple[str, ...]) -> None:
        k = at[0]
        if k == "lit":
            self.add_text(at[1])
        elif k == "code":
            self.runs.append(self.styled("code", at[1]))
        elif k == "math":
            self.runs.append(self.styled("math", at[1], display=at[2] == "display"))
        elif k == "break":
            self.runs.append(self.styled("break"))
        elif k == "image":
            self.runs.append(self.styled("image", at[1]))
        elif k == "on":
            self.flags[at[1]] += 1
        elif k == "off":
            self.flags[at[1]] = max(0, self.flags[at[1]] - 1)
        elif k == "linkon":
            self.links.append(at[1])
        elif k == "linkoff" and self.links:
            self.links.pop()


def _unescape_entities(s: str) -> str:
    return _ENTITY_RE.sub(lambda e: html.unescape(e.group(0)), s)


def _build_runs(s: str, atoms: _Atoms) -> list[Run]:
    b = _RunBuilder()
    pos = 0
    for m in _ATOM_RE.finditer(s):
        b.add_text(_unescape_entities(s[pos : m.start()]))
        pos = m.end()
        b.add_atom(atoms.get(m.group(0)))
    b.add_text(_unescape_entities(s[pos:]))
    return b.runs


@functools.lru_cache(maxsize=32768)
def plain_text(text: str, *, math_delims: bool = True) -> str:
    """Inline Markdown -> plain text: styles dropped, math kept as LaTeX source (``$…$`` when
    ``math_delims``), images as ``[image: alt]``, links as ``text (url)``."""
    parts: list[str] = []
    runs = _parse_inline_cached(text)
    for idx, r in enumerate(runs):
        if r.kind == "text":
            parts.append(_unicode_script(r.text, r.sup, r.sub))
            after = runs[idx + 1] if idx + 1 < len(runs) else None
            if (r.sup and r.text and not r.text[-1].isspace() and after is not None and after.kind == "text"
                    and not after.sup and after.text[:1].isalnum()):
                parts.append(" ")  # a footnote mark before a word stays apart from it: "² Vielmehr"
        elif r.kind == "code":
            parts.append(r.text)
        elif r.kind == "math":
            d = "$$" if r.display else "$"
            parts.append(f"{d}{r.text}{d}" if math_delims else r.text)
        elif r.kind == "break":
            parts.append("\n")
        elif r.kind == "image":
            parts.append(f"[image: {r.text}]" if r.text else "[image]")
        nxt = runs[idx + 1] if idx + 1 < len(runs) else None
        if r.href and (nxt is None or nxt.href != r.href):
            label = "".join(x.text for x in runs[: idx + 1] if x.href == r.href)
            if r.href not in (label, "mailto:" + label):
                parts.append(f" ({r.href})")
    return "".join(parts)


_SUP = str.maketrans("0123456789+-=()n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿ")
_SUB = str.maketrans("0123456789+-=()", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎")


def _unicode_script(t: str, sup: bool, sub: bool) -> str:
    """Superscript/subscript text in plain output: Unicode digits where they exist (m², H₂O),
    else the text as is (1er, footnote marks)."""
    if not (sup or sub):
        return t
    table, chars = (_SUP, "0123456789+-=()n") if sup else (_SUB, "0123456789+-=()")
    if t and all(c in chars for c in t):
        return t.translate(table)
    return t
