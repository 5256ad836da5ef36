"""The document model as clean GitHub-flavoured Markdown: the ``md`` writer (``write_md``) and one
page's blocks (``blocks_md``: a PDF text layer's page, ``daemon.document.layout``).

Here, below the writers, because the pages stage writes a text layer's page as Markdown too (in
the render worker); the writers' registry (``daemon.writers``) calls ``write_md`` for ``md``.

- Every page starts with a ``<!-- page N -->`` comment (the same mark as the raw engine output
  files, so a written ``.md`` can itself be fed to ``ocr-daemon convert``).
- Tables without merged cells and with at most one header row become pipe tables (so does a
  table whose only merged cell is a title row across all columns: the title becomes the line
  above the pipe table); any other table stays an HTML ``<table>`` (a pipe table cannot express spans, and a broken pipe table
  is worse than HTML, which GitHub renders).
- Math is ``$…$`` inline and a ``$$`` block on its own lines for display math.
- A line break inside a paragraph or a list item (``"\\n"`` in the model: the lines of an
  address, a signature block) is a hard break: two spaces at the line end. A bare newline would
  be a soft break, which every Markdown renderer joins into one line. Two spaces rather than a
  backslash: CommonMark and GFM read both, but Python-Markdown (MkDocs) and the original
  Markdown.pl only the spaces, and ``ocr-daemon convert`` (``daemon.document.markdown``) reads
  the file back to the same paragraph, since it strips line ends.
"""

from __future__ import annotations

import html

from daemon.document.inline import Run, escape_line_start, parse_inline
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

PAGE_MARK = "<!-- page {n} -->"
HARD_BREAK = "  \n"


def write_md(doc: Document) -> str:
    parts: list[str] = []
    for page in doc.pages:
        parts.append(PAGE_MARK.format(n=page.number))
        parts.extend(_block(b) for b in page.blocks)
    return "\n\n".join(p for p in parts if p) + "\n"


def _block(b: Block) -> str:
    if isinstance(b, Heading):
        return "#" * max(1, min(6, b.level)) + " " + b.text.replace("\n", " ")
    if isinstance(b, Paragraph):
        return b.text.replace("\n", HARD_BREAK)
    if isinstance(b, ListBlock):
        return "\n".join(_list(b, 0))
    if isinstance(b, Table):
        titled = _title_row_as_caption(b)
        if titled is not None:
            return pipe_table(titled)
        return pipe_table(b) if (not b.has_spans and b.header_rows <= 1) else html_table(b)
    if isinstance(b, MathBlock):
        return "$$\n" + b.tex.strip() + "\n$$"
    if isinstance(b, Image):
        return f"![{b.alt.replace(']', '')}]({b.src})"
    if isinstance(b, CodeBlock):
        fence = "```"
        while fence in b.text:
            fence += "`"
        return f"{fence}{b.lang}\n{b.text}\n{fence}"
    if isinstance(b, Rule):
        return "---"
    return ""


def _list(lb: ListBlock, indent: int) -> list[str]:
    out: list[str] = []
    for k, item in enumerate(lb.items):
        marker = f"{lb.start + k}." if lb.ordered else "-"
        pad = " " * indent
        lines = item.text.split("\n")
        cont = " " * (indent + len(marker) + 1)
        hard = [ln + HARD_BREAK[:-1] for ln in lines[:-1]] + lines[-1:]
        out.append(f"{pad}{marker} {hard[0]}")
        out.extend(cont + ln for ln in hard[1:])
        if item.children:
            out.extend(_list(item.children, indent + len(marker) + 1))
    return out


def _title_row_as_caption(t: Table) -> Table | None:
    """A table whose first row is one cell across all columns (its title: "Tjenestetabel" above
    a service table of the Danish Debian Edu manual) and that has no other span: the same table
    with that title as its caption and the rows below, which a pipe table can show (the next
    row is its header). None for any other table."""
    if t.n_rows < 3 or t.n_cols < 2 or t.caption or t.header_rows > 2:
        return None
    first = t.rows()[0]
    if len(first) != 1 or first[0].colspan != t.n_cols or first[0].rowspan != 1 or not first[0].text.strip():
        return None
    rest = [c for c in t.cells if c.row > 0]
    if any(c.rowspan > 1 or c.colspan > 1 for c in rest):
        return None
    cells = [Cell(c.text, c.row - 1, c.col, header=c.header) for c in rest]
    return Table(t.n_rows - 1, t.n_cols, cells, header_rows=max(0, t.header_rows - 1), caption=first[0].text)


def _pipe_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>") or " "


def pipe_table(t: Table) -> str:
    """A GFM pipe table (only for tables without spans). A table without a header row gets its
    first row as the header: GFM has no header-less tables."""
    grid = t.grid()
    rows = [[_pipe_cell(c.text) for c in row] for row in grid]
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(["---"] * t.n_cols) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows[1:])
    if t.caption:
        out.insert(0, escape_line_start(t.caption.replace("\n", " ")) + "\n")
    return "\n".join(out)


_STYLE_TAGS = (("bold", "b"), ("italic", "i"), ("underline", "u"), ("strike", "s"), ("sup", "sup"), ("sub", "sub"))


def runs_html(text: str) -> str:
    """Inline Markdown -> inline HTML (for cells of HTML tables, where GitHub does not render
    Markdown). Math stays as ``$…$`` source. Style tags are nested, not repeated per run:
    ``**Adam *(ours)***`` -> ``<b>Adam <i>(ours)</i></b>``."""
    out: list[str] = []
    stack: list[tuple[str, str]] = []  # (key, closing tag) of open elements, outermost first

    def wanted(r: Run) -> list[tuple[str, str, str]]:
        w = [("a:" + r.href, f'<a href="{html.escape(r.href)}">', "</a>")] if r.href else []
        if r.kind != "break":
            w += [(flag, f"<{tag}>", f"</{tag}>") for flag, tag in _STYLE_TAGS if getattr(r, flag)]
        return w

    for r in parse_inline(text):
        want = wanted(r)
        keep = 0
        while keep < len(stack) and keep < len(want) and stack[keep][0] == want[keep][0]:
            keep += 1
        if r.kind == "break":  # a line break does not interrupt the styles around it
            keep = len(stack)
        while len(stack) > keep:
            out.append(stack.pop()[1])
        for key, opener, closer in want[len(stack) :]:
            out.append(opener)
            stack.append((key, closer))
        if r.kind == "text":
            out.append(html.escape(r.text, quote=False))
        elif r.kind == "code":
            out.append(f"<code>{html.escape(r.text, quote=False)}</code>")
        elif r.kind == "math":
            d = "$$" if r.display else "$"
            out.append(html.escape(f"{d}{r.text}{d}", quote=False))
        elif r.kind == "break":
            out.append("<br>")
        else:  # image
            out.append(f'<img alt="{html.escape(r.text)}">')
    while stack:
        out.append(stack.pop()[1])
    return "".join(out)


def html_table(t: Table) -> str:
    """A valid HTML table keeping spans and header rows."""
    out = ["<table>"]
    if t.caption:
        out.append(f"<caption>{runs_html(t.caption)}</caption>")
    rows = t.rows()
    for section, lo, hi in (("thead", 0, t.header_rows), ("tbody", t.header_rows, t.n_rows)):
        if lo >= hi:
            continue
        out.append(f"<{section}>")
        for r in range(lo, hi):
            cells = []
            for c in rows[r]:
                tag = "th" if c.header else "td"
                attrs = (f' rowspan="{c.rowspan}"' if c.rowspan > 1 else "") + (
                    f' colspan="{c.colspan}"' if c.colspan > 1 else ""
                )
                cells.append(f"<{tag}{attrs}>{runs_html(c.text)}</{tag}>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append(f"</{section}>")
    out.append("</table>")
    return "\n".join(out)


def blocks_md(blocks: list[Block]) -> str:
    """The Markdown of one page's blocks, without the page mark (``daemon.document.layout``
    writes a PDF text layer's page this way, so it parses back into the same blocks)."""
    return "\n\n".join(p for p in (_block(b) for b in blocks) if p)
