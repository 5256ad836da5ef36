"""The structural check of TeX math: will this math source compile inside ``\\[…\\]``?

Contract: ``check_math(tex)`` returns a :class:`MathCheck` (whether ``&`` or ``\\\\`` stand outside
any environment, which the caller wraps in ``aligned``/``gathered`` or drops for inline math)
or raises :class:`MathError` naming the first construct that would stop ``xelatex`` (with the
preamble of :mod:`daemon.writers.latex`): unbalanced braces or environments, an environment
outside ``ALLOWED_ENVS``, too many columns for ``cases``/a matrix/an ``array`` spec, ``\\left``
without ``\\right`` (also across a cell), a dangling ``^``, a double superscript (primes
count), an unbraced argument that is not a single simple token (``x^\\sqrt2``), a command
missing a mandatory argument, two ``\\over`` in one group, ``\\limits`` after a non-operator,
text-mode or TeX programming commands, math delimiters inside math. It is pure (no I/O) and
never changes the source: the repairs (``%`` escaped, ``align`` -> ``aligned``, Unicode symbols
-> commands) are :func:`daemon.writers.latex.prepare_math`'s, which calls this check after
them. The rules come from fuzzing (tests/integration/test_writer_fuzz.py).

The check walks the tokens once with a stack of open groups and environments
(:class:`_Checker`, one method per kind of token).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def words(s: str) -> frozenset[str]:
    return frozenset(s.split())


ALLOWED_ENVS = words(
    "matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix smallmatrix cases aligned alignedat gathered "
    "array subarray split"
)
# TeX programming and document-level commands: never run them from OCR text.
_FORBIDDEN = words(
    "def edef gdef xdef let futurelet newcommand renewcommand providecommand DeclareMathOperator "
    "newenvironment renewenvironment input include InputIfFileExists openin openout read write "
    "immediate catcode csname endcsname expandafter documentclass usepackage makeatletter "
    "makeatother special par item section subsection chapter newpage clearpage vskip hskip "
    "halign valign noalign output everypar errmessage loop"
)
_GENFRAC = words("over atop choose above brace brack overwithdelims atopwithdelims abovewithdelims")
# Large operators (\mathop): only these may take \limits / \nolimits.
_LIMIT_OPS = words(
    "sum prod coprod int iint iiint oint bigcup bigcap bigsqcup bigvee bigwedge bigodot bigotimes "
    "bigoplus biguplus lim limsup liminf max min sup inf det gcd Pr arg log ln exp sin cos tan "
    "dim ker hom deg injlim projlim varlimsup varliminf"
)
# Commands that may stand as an unbraced argument of ^, _ or a command (x^\prime, \hat\alpha);
# any other command there needs braces (x^\sqrt{2}, x^\sum, x^\, are compile errors).
_SIMPLE_ARGS = words(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi "
    "pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta "
    "Lambda Xi Pi Sigma Upsilon Phi Psi Omega infty prime ast star circ bullet dagger ddagger pm "
    "mp times cdot top bot ell hbar partial nabla emptyset varnothing cdots ldots dots vdots "
    "ddots imath jmath aleph wp Re Im surd angle flat natural sharp"
)
# Control symbols (backslash + one non-letter) that mean something in math mode.
_CONTROL_SYMBOLS = frozenset(",;:!> {}|#$%&_/-\n\t")
# Text-mode commands that are errors in math mode.
_TEXT_ONLY = words(
    "textbackslash textasciitilde textasciicircum textbar textless textgreater textquotedbl "
    "textdollar textunderscore verb footnote vspace newline noindent centering raggedright "
    "raggedleft linebreak pagebreak caption includegraphics"
)
# Commands taking a fixed number of mandatory arguments (a missing one is a compile error).
_NARGS = {
    "frac": 2, "dfrac": 2, "tfrac": 2, "cfrac": 2, "binom": 2, "dbinom": 2, "tbinom": 2,
    "overset": 2, "underset": 2, "stackrel": 2, "sqrt": 1, "text": 1, "textrm": 1, "textbf": 1,
    "textit": 1, "mathrm": 1, "mathbf": 1, "mathit": 1, "mathsf": 1, "mathtt": 1, "mathcal": 1,
    "mathbb": 1, "mathfrak": 1, "mathscr": 1, "boldsymbol": 1, "bm": 1, "operatorname": 1,
    "hat": 1, "widehat": 1, "tilde": 1, "widetilde": 1, "bar": 1, "overline": 1, "underline": 1,
    "vec": 1, "dot": 1, "ddot": 1, "check": 1, "breve": 1, "acute": 1, "grave": 1, "mathring": 1,
    "overbrace": 1, "underbrace": 1, "overrightarrow": 1, "overleftarrow": 1, "substack": 1,
    "mbox": 1, "hbox": 1, "cancel": 1, "pmod": 1, "bmod": 0, "xrightarrow": 1, "xleftarrow": 1,
    "phantom": 1, "hphantom": 1, "vphantom": 1, "boxed": 1, "textsf": 1, "texttt": 1, "emph": 1,
}  # fmt: skip
_DELIMS = {"(", ")", "[", "]", "|", ".", "/", "<", ">", "\\{", "\\}", "\\|", "\\langle", "\\rangle",
           "\\lvert", "\\rvert", "\\lVert", "\\rVert", "\\vert", "\\Vert", "\\lfloor", "\\rfloor",
           "\\lceil", "\\rceil", "\\uparrow", "\\downarrow", "\\updownarrow", "\\Uparrow",
           "\\Downarrow", "\\backslash", "\\lbrace", "\\rbrace", "\\lbrack", "\\rbrack", "\\lgroup",
           "\\rgroup", "\\lmoustache", "\\rmoustache", "\\Updownarrow"}  # fmt: skip
_SIZED = {"left", "right", "middle", "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr",
          "biggl", "biggr", "Biggl", "Biggr", "bigm", "Bigm", "biggm", "Biggm"}  # fmt: skip


_TOKEN = re.compile(r"\\([A-Za-z]+\*?|.)|(\s+)|(.)", re.S)


class MathError(ValueError):
    """The math would not compile; the message names the construct."""


def _tokens(tex: str) -> list[str]:
    """Control sequences (``\\frac``, ``\\,``), one ``" "`` per run of white space, single characters."""
    toks = []
    for m in _TOKEN.finditer(tex):
        if m.group(1) is not None:
            toks.append("\\" + m.group(1))
        elif m.group(2) is not None:
            toks.append(" ")
        else:
            toks.append(m.group(3))
    return toks


@dataclass
class MathCheck:
    """Result of the structural check of one math string."""

    top_amp: bool = False  # '&' outside any alignment environment
    top_newline: bool = False  # '\\' outside any environment


# Most '&' a row of an environment may hold (more is "Extra alignment tab"); None = no limit.
_ENV_MAX_AMPS: dict[str, int | None] = {"cases": 1, "gathered": 0, "split": 1, "subarray": 0}
_MATRIX_MAX_AMPS = 9  # amsmath's MaxMatrixCols = 10
_ENV_SPEC_ARG = {"array", "subarray", "alignedat"}  # environments whose first argument is required
# \substack{a \\ b}, \shortstack{…}: rows inside a group outside any environment
_ROW_GROUPS = ("\\substack", "\\shortstack")


def _array_columns(spec: str) -> int:
    """Columns of an array preamble like ``{|c|c|l|}`` or ``{cp{2cm}r}``."""
    spec = re.sub(r"\{[^{}]*\}", "", spec.strip()[1:-1]) if spec.startswith("{") else spec
    return max(1, sum(1 for ch in spec if ch in "lcrpmbX"))


def check_math(tex: str) -> MathCheck:
    """Structural check of math source (see the module contract); raises MathError."""
    return _Checker(_tokens(tex)).run()


@dataclass
class _Env:
    """An open environment: its name, the '&' in its current row and the most a row may hold."""

    name: str
    limit: int | None
    amps: int = 0


class _Checker:
    """One pass over the tokens. State: the open environments and groups (each group remembers
    the command it is an argument of), per group/environment cell the ``\\left``/``\\right``
    balance and the count of ``\\over``-style fractions, whether the current atom already has a
    super-/subscript, and the previous command and significant token."""

    def __init__(self, toks: list[str]) -> None:
        self.toks = toks
        self.res = MathCheck()
        self.envs: list[_Env] = []
        self.groups: list[str] = []  # per open brace: the command it is an argument of ("" if none)
        self.lr: list[int] = [0]  # \left…\right balance per group/environment cell
        self.genfrac: list[int] = [0]  # \over-style fractions per group/environment cell (one allowed)
        self.sup = self.sub = False
        self.i = 0
        self.prev_cmd = ""
        self.prev_sig = ""  # the last significant token ("}" + owner for a closed group)

    def run(self) -> MathCheck:
        toks = self.toks
        while self.i < len(toks):
            t = toks[self.i]
            if t == " ":
                self.i += 1
            elif t == "{":
                self._open_group()
            elif t == "}":
                self._close_group()
            elif t in ("^", "_"):
                self._script(t)
            elif t == "'":
                self._prime()
            elif t in ("\\begin", "\\end"):
                self._environment(t)
            elif t in ("&", "\\\\"):
                self._cell_break(t)
            elif t in ("$", "\\(", "\\)", "\\[", "\\]"):
                raise MathError(f"math delimiter {t} inside math")
            elif len(t) == 2 and t[0] == "\\" and not t[1].isalpha() and t[1] not in _CONTROL_SYMBOLS:
                raise MathError(f"unknown control symbol {t}")
            elif t.startswith("\\") and len(t) > 1:
                self._command(t)
            else:
                self.sup = self.sub = False
                self._next(t)
        self._check_all_closed()
        return self.res

    # ------------------------------------------------------------------ helpers

    def _next(self, t: str) -> None:
        """Done with an ordinary token ``t``: it is the last significant one."""
        self.prev_cmd = ""
        self.prev_sig = t
        self.i += 1

    def _skip_spaces(self, k: int) -> int:
        while k < len(self.toks) and self.toks[k] == " ":
            k += 1
        return k

    def _next_atom(self, k: int) -> int:
        """Index after the atom starting at k (skipping spaces); -1 if none."""
        toks = self.toks
        k = self._skip_spaces(k)
        if k >= len(toks) or toks[k] in ("}", "&", "\\\\", "^", "_", "\\begin", "\\end"):
            return -1
        if toks[k] == "{":
            depth = 0
            for j in range(k, len(toks)):
                if toks[j] == "{":
                    depth += 1
                elif toks[j] == "}":
                    depth -= 1
                    if depth == 0:
                        return j + 1
            return -1
        return k + 1

    def _check_arg(self, j: int, what: str) -> None:
        """The unbraced one-token argument ending at j must be something TeX takes as one."""
        arg = self.toks[j - 1]
        if arg in ("'", "~") or (arg.startswith("\\") and arg[1:] not in _SIMPLE_ARGS):
            raise MathError(f"{what}{arg} needs braces")

    # ------------------------------------------------------------------ groups and scripts

    def _open_group(self) -> None:
        self.groups.append(self.prev_cmd)
        self.lr.append(0)
        self.genfrac.append(0)
        self.sup = self.sub = False
        self._next("{")

    def _close_group(self) -> None:
        if not self.groups:
            raise MathError("unbalanced }")
        owner = self.groups.pop()
        self.genfrac.pop()
        if self.lr.pop() != 0:
            raise MathError("\\left without \\right in a group")
        self.sup = self.sub = False
        self.prev_sig = "}" + owner
        self.prev_cmd = ""
        self.i += 1

    def _script(self, t: str) -> None:
        # x'^2 is fine: the prime takes the superscript that follows it
        if (t == "^" and self.sup and self.prev_sig != "'") or (t == "_" and self.sub):
            raise MathError("double script")
        if t == "^":
            self.sup = True
        else:
            self.sub = True
        j = self._next_atom(self.i + 1)
        if j == -1:
            raise MathError("script without argument")
        self._check_arg(j, t)  # x^\sqrt{2}: "Missing { inserted"
        self.i = j
        self.prev_sig = "script"
        self.prev_cmd = ""

    def _prime(self) -> None:
        # a prime is a superscript: x^2' and x' ' are double superscripts; x'' is fine
        if self.sup and self.toks[self.i - 1] != "'":
            raise MathError("prime after superscript")
        self.sup = True
        self.prev_sig = "'"
        self.i += 1

    # ------------------------------------------------------------------ environments and cells

    def _environment(self, t: str) -> None:
        k = self._skip_spaces(self.i + 1)
        j = self._next_atom(k)
        if j == -1 or self.toks[k] != "{":
            raise MathError("malformed environment")
        name = "".join(self.toks[k + 1 : j - 1]).strip()
        self.i = self._begin(name, j) if t == "\\begin" else self._end(name, j)
        self.sup = self.sub = False
        self.prev_cmd = ""

    def _begin(self, name: str, j: int) -> int:
        """``\\begin{name}`` ends before j; returns the index after it and its required argument."""
        if name not in ALLOWED_ENVS:
            raise MathError(f"environment {name} not allowed in math")
        limit = _ENV_MAX_AMPS.get(name, _MATRIX_MAX_AMPS if "matrix" in name else None)
        if name in _ENV_SPEC_ARG:
            k0 = self._skip_spaces(j)
            j2 = self._next_atom(k0)
            if j2 == -1 or self.toks[k0] != "{":
                raise MathError(f"{name} needs its argument")
            if name in ("array", "subarray"):
                limit = _array_columns("".join(self.toks[j:j2]).strip()) - 1
            j = j2
        self.envs.append(_Env(name, limit))
        self.lr.append(0)
        self.genfrac.append(0)
        return j

    def _end(self, name: str, j: int) -> int:
        if not self.envs or self.envs[-1].name != name:
            raise MathError(f"\\end{{{name}}} does not match")
        self.envs.pop()
        self.genfrac.pop()
        if self.lr.pop() != 0:
            raise MathError("\\left without \\right in an environment")
        return j

    def _cell_break(self, t: str) -> None:
        """``&`` or ``\\\\``: a new cell or row of the innermost environment."""
        if self.lr[-1] != 0:
            raise MathError("\\left…\\right across a cell")
        self.genfrac[-1] = 0
        if self.envs:
            frame = self.envs[-1]
            if t == "&":
                frame.amps += 1
                if frame.limit is not None and frame.amps > frame.limit:
                    raise MathError(f"too many columns in {frame.name}")
            else:
                frame.amps = 0
        elif self.groups and t == "\\\\" and self.groups[-1] in _ROW_GROUPS:
            pass
        elif self.groups:
            raise MathError(f"{t} inside a group outside an environment")
        elif t == "&":
            self.res.top_amp = True
        else:
            self.res.top_newline = True
        self.sup = self.sub = False
        self._next(t)

    # ------------------------------------------------------------------ commands

    def _command(self, t: str) -> None:
        name = t[1:].rstrip("*")
        self._check_command_allowed(name)
        if name in _SIZED:
            self._sized(name)
            return
        self._check_arguments(name, t)
        if name not in ("limits", "nolimits", "displaystyle"):
            self.sup = self.sub = False
        self.prev_cmd = t
        if name not in ("limits", "nolimits"):
            self.prev_sig = t
        self.i += 1

    def _check_command_allowed(self, name: str) -> None:
        if name in _FORBIDDEN or name in _TEXT_ONLY or name.startswith("end"):
            raise MathError(f"\\{name} not allowed in math")
        if name == "hline" and not self.envs:
            raise MathError("\\hline outside an array")
        if name in _GENFRAC:
            self.genfrac[-1] += 1
            if self.genfrac[-1] > 1:
                raise MathError("ambiguous: two \\over-style fractions in one group")
        if name in ("limits", "nolimits") and not (
            self.prev_sig[1:] in _LIMIT_OPS or self.prev_sig[2:] in ("operatorname*", "mathop")
        ):
            raise MathError("\\limits must follow a math operator")

    def _sized(self, name: str) -> None:
        """``\\left``, ``\\right``, ``\\middle``, ``\\big`` …: a delimiter must follow."""
        k = self._skip_spaces(self.i + 1)
        if k >= len(self.toks) or self.toks[k] not in _DELIMS:
            raise MathError(f"\\{name} without a delimiter")
        if name == "left":
            self.lr[-1] += 1
        elif name == "right":
            self.lr[-1] -= 1
            if self.lr[-1] < 0:
                raise MathError("\\right without \\left")
        elif name == "middle" and self.lr[-1] <= 0:
            raise MathError("\\middle outside \\left…\\right")
        self.i = k + 1
        self.sup = self.sub = False
        self.prev_cmd = ""

    def _check_arguments(self, name: str, t: str) -> None:
        """A command with mandatory arguments must have them, each braced or one simple token."""
        need = _NARGS.get(name, 0)
        if not need:
            return
        toks = self.toks
        k = self.i + 1
        if name == "sqrt":  # optional [n]
            k = self._skip_spaces(k)
            if k < len(toks) and toks[k] == "[":
                while k < len(toks) and toks[k] != "]":
                    k += 1
                k += 1
        for _ in range(need):
            k2 = self._next_atom(k)
            if k2 == -1:
                raise MathError(f"\\{name} is missing an argument")
            self._check_arg(k2, t)
            k = k2

    def _check_all_closed(self) -> None:
        if self.groups:
            raise MathError("unbalanced {")
        if self.envs:
            raise MathError(f"unclosed environment {self.envs[-1].name}")
        if self.lr[-1] != 0:
            raise MathError("\\left without \\right")


def command_names(tex: str) -> set[str]:
    """The names of the control words in ``tex`` (``\\frac`` -> ``frac``)."""
    return set(re.findall(r"\\([A-Za-z]+)", tex))
