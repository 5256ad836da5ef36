"""tex writer: math repair/check units, and adversarial pages that must still compile."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.document.parse import parse_document
from daemon.writers import render_outputs
from daemon.writers.latex import esc, prepare_math
from tests.integration.test_writers import compile_tex


@pytest.mark.parametrize(
    "tex",
    [
        r"\frac{a}",  # missing argument
        r"x^2^3",  # double superscript
        r"x^{2}'",  # prime after a superscript
        r"x^",  # dangling script
        r"\left( x",  # \left without \right
        r"\right) x",
        r"\left x \right)",  # \left without a delimiter
        r"\begin{foo} x \end{foo}",  # unknown environment
        r"\begin{matrix} a \end{pmatrix}",
        r"{a",
        r"a}",
        r"\def\x{1} \x",  # TeX programming
        r"\input{/etc/passwd}",
        r"\text{a & b}",  # & inside a group
        r"\begin{cases} a & b & c \end{cases}",  # cases has two columns
        r"\begin{array} a \end{array}",  # array without its column spec
        r"\begin{array}{cc} a & b & c \end{array}",
        r"\begin{pmatrix} 1&2&3&4&5&6&7&8&9&10&11 \end{pmatrix}",  # MaxMatrixCols
        r"\hline x",
        r"\textbackslash x",  # text-mode only
    ],
)
def test_prepare_math_refuses_what_would_not_compile(tex: str) -> None:
    assert prepare_math(tex, display=False) is None
    assert prepare_math(tex, display=True) is None


@pytest.mark.parametrize(
    ("tex", "display", "want"),
    [
        (r"a &= b \\ c &= d", True, "\\begin{aligned}a &= b \\\\ c &= d\\end{aligned}"),
        (r"a \\ b", True, "\\begin{gathered}a \\\\ b\\end{gathered}"),
        ("\\begin{align*}\nx &= 1 \\tag{3}\n\\end{align*}", True, "\\begin{aligned}"),
        ("\\begin{equation}\\label{eq:1} E = mc^2 \\end{equation}", True, "E = mc^2"),
        (r"50% \# 3", False, r"50\% \# 3"),
        ("α ≤ β × γ", False, r"\alpha  \leq  \beta  \times \gamma"),
        ("净利润 = x", False, r"\text{净利润} = x"),
        (r"\sqrt[3]{x} + \left\{ y \right. + \big( z \big)", False, r"\sqrt[3]{x}"),
        (r"\begin{pmatrix} a & b \\ c & d \end{pmatrix}", False, r"\begin{pmatrix}"),
        (r"\sum\limits_{i=1}^{n} x_i' ", False, r"\sum\limits_{i=1}^{n} x_i'"),
        (r"\substack{a \\ b}", False, r"\substack{a \\ b}"),
        (r"a \\ b", False, "a   b"),  # a line break means nothing in inline math
    ],
)
def test_prepare_math_repairs(tex: str, display: bool, want: str) -> None:
    got = prepare_math(tex, display=display)
    assert got is not None and want in got
    if "tag{3}" in tex:
        assert got.rstrip().endswith("\\tag{3}\\]") and "\\tag{3}\n\\end" not in got


def test_esc_prints_specials_literally() -> None:
    assert esc("50% & _#$ {x} ~^ \\ [a]") == (
        "50\\% \\& \\_\\#\\$ \\{x\\} \\textasciitilde{}\\textasciicircum{} \\textbackslash{} {[}a{]}"
    )
    assert esc("bell\x07tab\tμm Ⅰ") == "belltab {\\ocrfallback μ}m {\\ocrfallback Ⅰ}"


TORTURE = r"""# Heading with $x^2$ and # sign & 100%

###### Level six _under_score_

Text with \textbf{not a command}, \\ double backslash, {braces}, [brackets] and ~tilde^caret.
[starts with a bracket after a break
*starts with a star

Bad math: $\frac{a}$, $x^2^3$, $\left( x$, $\begin{foo} x \end{foo}$, $a & b$, $\def\x{1}\x$, $\input{/etc/passwd}$.
Good math: $\unknowncmd{x} + \si{m}$, $50%$, $\mathscr{L}$, $α ≤ β$, $净利润$, $\sqrt[3]{x}$, $\left\{ x \right.$.
Emoji 😀 and control char \x07 and a very long word Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherungsanstalt.

$$
a &= b \\ c &= d
$$

$$
\begin{align*}
x &= 1 \tag{1} \\
y &= 2
\end{align*}
$$

\begin{equation}
E = mc^2 \label{eq:e}
\end{equation}

$$
\frac{1}{
$$

- level 1
  - level 2
    - level 3
      - level 4
        - level 5
          - level 6 [ ] task
5. five
6. six

<table><tr><th rowspan="3">A</th><th colspan="9">B wider than the table</th></tr>
<tr><td><br>leading break</td><td>$$\sum_i x_i$$</td></tr>
<tr><td rowspan="0">to the end</td><td>- item<ul><li>one</li><li>two</li></ul></td><td><table><tr><td>in</td></tr></table></td></tr>
<tr><td>ragged</td></tr></table>

<table><tr><th>only header</th></tr></table>

<table><tr><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td><td>9</td><td>10</td><td>11</td><td>12</td><td>13</td><td>14</td><td>15</td><td>16</td><td>17</td><td>18</td><td>19</td><td>20</td></tr></table>

```
\end{verbatim} inside code
```

![](img.png)

---
"""


def test_torture_page_compiles(tmp_path: Path) -> None:
    pages = [TORTURE.replace("\\x07", "\x07"), "", "<table><tr><td>only a table</td></tr></table>"]
    out = render_outputs(parse_document(pages, markdown=True, language="en"), formats=["tex"], stem="t", sidecar={})
    src = out["t.tex"].decode()
    log = compile_tex(out["t.tex"], tmp_path, "torture")
    assert "Output written on torture.pdf (3 pages" in log  # the empty page 2 is kept
    assert src.count("\\newpage") == 2
    assert "\\providecommand{\\unknowncmd}" in src
    assert "\\texttt{\\$\\textbackslash{}frac\\{a\\}\\$}" in src  # bad math shown verbatim
    assert "/etc/passwd" not in src.replace("\\texttt{\\$\\textbackslash{}input\\{/etc/passwd\\}\\$}", "")


def test_plain_text_pages_compile(tmp_path: Path) -> None:
    page = "Rabatt 50% & mehr_hier #1 {x} ~ ^ \\ $5 and $10 *x* \\begin{document}\n\nÆØÅ æøå ß é 中文 かな"
    out = render_outputs(parse_document([page, page], markdown=False, language="da"), formats=["tex"], stem="p", sidecar={})
    compile_tex(out["p.tex"], tmp_path, "plain")
    assert "\\$5 and \\$10" in out["p.tex"].decode()


def test_japanese_uses_jp_cjk_fonts() -> None:
    doc_src = "# 領収書\n\nかな"
    out = render_outputs(parse_document([doc_src], markdown=True, language="ja"), formats=["tex"], stem="j", sidecar={})
    assert "Noto Serif CJK JP" in out["j.tex"].decode()
    assert parse_document([doc_src]).pages[0].blocks


@pytest.mark.parametrize(
    ("page", "lang", "font"),
    [
        ("Symbols μm, α-Strahlung, Ⅳ, ① ② and ✓ → ← ≤ ─ ■ in running text, $μ = 3$.", "de", "DejaVu Sans"),
        ("# 時間割\n\n英語Ⅰ ― ①、μ、→。", "ja", "Noto Sans CJK JP"),
    ],
)
def test_characters_latin_modern_lacks_use_the_fallback_font(page: str, lang: str, font: str, tmp_path: Path) -> None:
    out = render_outputs(parse_document([page], markdown=True, language=lang), formats=["tex"], stem="f", sidecar={})
    src = out["f.tex"].decode()
    assert f"\\newfontfamily\\ocrfallback{{{font}}}" in src
    log = compile_tex(out["f.tex"], tmp_path, "fallback")
    assert "Missing character" not in log


REALISTIC_MATH = [
    r"\hat{H} = \frac{\hat{p}^2}{2m} + V(x)",
    r"\int_{-\infty}^{\infty} e^{-x^2} \, dx = \sqrt{\pi}",
    r"\sum_{k=0}^{n} \binom{n}{k} = 2^n",
    r"\lim_{x \to 0} \frac{\sin x}{x} = 1",
    r"\mathbf{A}\mathbf{x} = \mathbf{b}",
    r"\nabla \cdot \vec{E} = \frac{\rho}{\varepsilon_0}",
    r"f'(x) = \lim_{h \to 0} \frac{f(x+h) - f(x)}{h}",
    r"\left\| x \right\|_2 \leq \left( \sum_i |x_i|^2 \right)^{1/2}",
    r"\begin{bmatrix} a & b \\ c & d \end{bmatrix}^{-1} = \frac{1}{ad-bc} \begin{bmatrix} d & -b \\ -c & a \end{bmatrix}",
    r"|x| = \begin{cases} x & x \geq 0 \\ -x & x < 0 \end{cases}",
    r"\operatorname*{arg\,max}_{\theta} \; \log p(x \mid \theta)",
    r"\underbrace{1 + 1 + \cdots + 1}_{n} = n",
    r"\overline{z} = a - bi, \quad \tilde{x}, \; \dot{q}, \; \ddot{q}",
    r"\mathbb{P}(A \cap B) = \mathbb{P}(A)\,\mathbb{P}(B \mid A)",
    r"x_{1,2} = \frac{-b \pm \sqrt{b^2 - 4ac}}{2a}",
    r"\boldsymbol{\mu} \in \mathbb{R}^{d}, \; \Sigma \succ 0",
    r"\mathcal{L}(\theta) = -\sum_{i} y_i \log \hat{y}_i",
    r"\begin{array}{|c|c|} \hline a & b \\ \hline c & d \\ \hline \end{array}",
    r"\sqrt[3]{27} = 3, \quad 10^{-3}\,\text{m} = 1\,\text{mm}",
    r"\frac{\partial^2 u}{\partial t^2} = c^2 \Delta u",
    r"a \equiv b \pmod{n}",
    r"\left. \frac{df}{dx} \right|_{x=0}",
    r"\textcolor{red}{x^2} + \color{blue} y",
    r"\mathscr{F}\{f\}(\xi) = \hat{f}(\xi)",
]


def test_realistic_math_is_kept_and_compiles(tmp_path: Path) -> None:
    """Ordinary formulas are never sent to the verbatim fallback, inline or display."""
    inline = "\n\n".join(f"Inline {k}: ${m}$." for k, m in enumerate(REALISTIC_MATH))
    display = "\n\n".join(f"$$\n{m}\n$$" for m in REALISTIC_MATH)
    out = render_outputs(parse_document([inline, display], markdown=True, language="en"), formats=["tex"], stem="m", sidecar={})
    src = out["m.tex"].decode()
    assert "\\texttt{\\$" not in src
    for m in REALISTIC_MATH:
        assert prepare_math(m, display=False) is not None, m
    compile_tex(out["m.tex"], tmp_path, "math")


def test_tall_multirow_cell_gets_room(tmp_path: Path) -> None:
    """A row-spanned cell with more text than its rows hold: the last spanned row is deepened
    (the "=" width makes it wrap at its column, not at a fraction of it)."""
    long = "每股收益（元，基本与稀释后的加权平均数，按照会计准则计算的结果，以及更多的说明文字）" * 2
    page = (f'<table><tr><th>项目</th><th>2023</th><th>2022</th></tr><tr><td rowspan="2">{long}</td><td>0.45</td>'
            '<td>0.40</td></tr><tr><td colspan="2">稀释后：0.44</td></tr><tr><td>总资产</td><td>1</td><td>2</td></tr></table>')
    out = render_outputs(parse_document([page], markdown=True, language="zh"), formats=["tex"], stem="t", sidecar={})
    src = out["t.tex"].decode()
    assert "\\multirow{2}{=}{" in src and "\\rule[-" in src
    compile_tex(out["t.tex"], tmp_path, "tall")
