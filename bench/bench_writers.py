"""Time of ``render_outputs`` per format on a large synthetic document (issue 4).

50 pages, each: a heading, 5 paragraphs with inline math, a 61-row x 5-column HTML table with
formatting, numbers and math in cells, a list. Every page differs (row texts carry the page
number), so the inline-parse cache only helps across formats, as in the daemon.

Usage: ``.venv/bin/python bench/bench_writers.py``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daemon.document.inline import _parse_inline_cached, plain_text  # noqa: E402
from daemon.document.parse import parse_document  # noqa: E402
from daemon.writers import FORMATS, render_outputs  # noqa: E402


def page(n: int) -> str:
    rows = "".join(
        f"<tr><td>Artikel {n}-{i} mit <b>fett</b></td><td>{i},50 €</td><td>{i * 3}.{i % 10}00,00</td>"
        f"<td>$x_{{{i}}}^2 + {n}$</td><td>note_{n}_{i} & 5%</td></tr>"
        for i in range(60)
    )
    para = f"Seite {n}: ein Absatz mit $a_{n}+b$ und Text. " * 30
    return (f"# Seite {n}\n\n" + (para + "\n\n") * 5 + "<table><tr><th>A</th><th>B</th><th>C</th><th>D</th>"
            f"<th>E</th></tr>{rows}</table>\n\n- a\n- b {n}\n")


def main() -> None:
    pages = [page(n) for n in range(1, 51)]
    print(f"input: {len(pages)} pages, {sum(map(len, pages)) / 1e6:.2f} MB of engine Markdown")
    t = time.perf_counter()
    parse_document(pages, language="de")
    print(f"parse_document: {time.perf_counter() - t:.2f} s")
    text_formats = [f for f in FORMATS if f != "pdf"]  # pdf is made from the source file: bench/bench_pdf.py
    for fmt in text_formats:
        _parse_inline_cached.cache_clear()
        plain_text.cache_clear()
        t = time.perf_counter()
        out = render_outputs(parse_document(pages, markdown=True, language="de"), formats=[fmt], stem="s", sidecar={})
        print(f"{fmt:5s}: {time.perf_counter() - t:.2f} s, {sum(len(v) for v in out.values()) / 1e3:.0f} kB")
    _parse_inline_cached.cache_clear()
    plain_text.cache_clear()
    t = time.perf_counter()
    render_outputs(parse_document(pages, markdown=True, language="de"), formats=text_formats, stem="s", sidecar={})
    print(f"all six formats in one call: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
