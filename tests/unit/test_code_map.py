"""The code map in docs/development.md names every module of daemon/ (issue 36, item 5: it had
left out 35 of 92 modules, so a new engineer could not find where a stage's code lives).

Each row of the map's table is one folder (`daemon/intake/`, ..., `daemon/` for the top-level
modules); every ``*.py`` in that folder (``__init__.py`` only where it holds code beyond a
docstring) must be named in its row as ``name.py``, and every folder of daemon/ must have a row.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "development.md"


def _rows() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Code map", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`(daemon/[a-z_/]*)`\s*\|(.*)\|\s*$", line)
        if m:
            rows[m.group(1).rstrip("/") + "/"] = m.group(2)
    return rows


def _has_code(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)) and not isinstance(n, ast.ImportFrom)
               for n in body)


def test_code_map_names_every_module() -> None:
    rows = _rows()
    missing = []
    for path in sorted((REPO / "daemon").rglob("*.py")):
        if path.name == "__init__.py" and not _has_code(path):
            continue
        folder = path.parent.relative_to(REPO).as_posix() + "/"
        row = rows.get(folder)
        if row is None:
            missing.append(f"{folder}: no row in the code map")
        elif not re.search(rf"(?<![\w.]){re.escape(path.name)}", row):
            missing.append(f"{folder}{path.name}")
    assert not missing, "docs/development.md's code map leaves out:\n  " + "\n  ".join(sorted(set(missing)))


def test_code_map_names_no_module_that_is_gone() -> None:
    gone = []
    for folder, row in _rows().items():
        for name in re.findall(r"`([a-z_]+\.py)", row):
            if not (REPO / folder / name).exists():
                gone.append(f"{folder}{name}")
    assert not gone, "the code map names modules that do not exist: " + ", ".join(gone)
