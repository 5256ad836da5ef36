"""Destination and archive templates filled in: every value made safe as a path component.

Contract:
- ``expand_template(template, fields)`` fills the placeholders of ``TEMPLATE_FIELDS``
  (``daemon.config.base``; ``{doc_yyyy} {doc_mm} {doc_date}`` are the date printed on the
  document). Every value is sanitised first (``sanitize_field``) so that a file name or an inbox
  name can never steer outputs outside the template's folder: no ``/`` or ``\\``, no ``..``, no
  NUL or other control characters, no leading ``-`` or ``.``, never empty. ``{subdir}`` keeps its
  folder levels, each one sanitised (``""`` at the inbox's root). An unknown placeholder raises
  ``KeyError`` (validation refuses it first).
- ``subdir_of(path, root)``: the folder below the inbox ``root`` that ``path`` is in, '/'-joined;
  ``""`` at the root or outside it.
- Pure functions: no file system access. The routes (``daemon.understand.route``) and the batch
  splitter's archive folder (``daemon.intake.batch``) both fill templates through here.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

from daemon.config.base import TEMPLATE_FIELDS

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_SEP_RE = re.compile(r"[/\\]")


def sanitize_field(value: str) -> str:
    """Make ``value`` safe as (part of) one path component; see the module docstring."""
    v = _CONTROL_RE.sub("", str(value))
    v = _SEP_RE.sub("_", v)
    while ".." in v:
        v = v.replace("..", "_")
    v = v.strip()
    if v.startswith(("-", ".")):
        v = "_" + v[1:]
    return v or "_"


def expand_template(template: str, fields: dict[str, str]) -> Path:
    """Fill a destination/archive template with sanitised ``fields``.

    Unknown placeholders raise ``KeyError`` (config validation already refuses them); fields
    missing from ``fields`` expand to ``"_"``.
    """
    safe = {k: sanitize_field(v) for k, v in fields.items()}
    if "subdir" in fields:  # folder levels kept, each one sanitised; "" at the inbox's root
        safe["subdir"] = "/".join(sanitize_field(c) for c in fields["subdir"].split("/")) if fields["subdir"] else ""
    out = []
    for literal, name, spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS:
            raise KeyError(f"unknown template placeholder {{{name}}}")
        value = safe.get(name, "_")
        # Conversions (!r) are ignored on purpose: they would add quotes to folder names.
        out.append(format(value, spec) if spec else value)
    return Path("".join(out))


def subdir_of(path: Path, root: Path | None) -> str:
    """The folder below the inbox ``root`` that ``path`` is in, '/'-joined; '' at the root or
    outside it (see the module docstring)."""
    if root is None:
        return ""
    try:
        return "/".join(path.parent.relative_to(root).parts)
    except ValueError:
        return ""
