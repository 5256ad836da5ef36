"""The flow the imports obey (issue 36): the daemon's packages as layers, bottom to top.

A module may import modules of its own layer and of the layers below it, never of a layer above
(top-level, inside a function, or under ``TYPE_CHECKING`` alike). An import inside a function is
for a heavy optional dependency (vllm, torch, openpyxl, psycopg, pymupdf, pikepdf, tesserocr
where absent): a daemon module imported inside a function is refused unless ``LAZY`` names the
pair and says why (loading it later saves start-up time or memory); it must never hide a cycle.

Why an AST walk and not import-linter: the layers here are not whole packages only
(``daemon.document.model`` is a record of the foundation while ``daemon.document`` is a stage),
import-linter cannot refuse function-level imports, and the walk of ~130 files takes well under
a second with nothing to install.

``PENDING`` lists the imports against the flow that other branches of issue 36 remove (each with
who and how); an entry that no longer occurs fails the test, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from daemon import vocab, writers

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "daemon"

#: Bottom to top. A module belongs to the layer of its longest matching prefix (a module or a
#: package and everything below it). Names of modules that do not exist yet (being written on
#: other branches of issue 36) are placed already.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The records and helpers every stage shares; no stage of their own. The document model
    # (blocks, Document) is the record of a page's structure that pagerecord and every stage
    # after the engines carry, so its two modules sit here, the builders in ``document``.
    ("foundation", (
        "daemon", "daemon.errors", "daemon.fsio", "daemon.names", "daemon.procenv", "daemon.stages",
        "daemon.models", "daemon.pagerecord", "daemon.document.model", "daemon.document.inline",
        "daemon.vocab", "daemon.tessdata", "daemon.tessapi", "daemon.layerrecords", "daemon.language", "daemon.dates",
    )),
    ("config", ("daemon.config",)),
    ("journal", ("daemon.journal",)),
    # Text -> blocks: engine Markdown or plain text, a PDF text layer; the pages stage builds a
    # text-layer page's blocks (and a scanned table's cells) in the render worker.
    ("document", ("daemon.document",)),
    ("pages", ("daemon.pages",)),
    # Above pages: the content check probes a file and the batch splitter renders its pages.
    ("intake", ("daemon.intake",)),
    ("engines", ("daemon.engines",)),
    ("understand", ("daemon.understand",)),
    ("writers", ("daemon.writers",)),
    # Above the writers: it checks each output (the searchable PDF) against the words read.
    ("quality", ("daemon.quality",)),
    # The daemon's counters: the workers count into them, the HTTP endpoint reads them.
    ("metrics", ("daemon.service.metrics",)),
    # Below the service: the service's lifecycle starts and stops the endpoint; the endpoint reads
    # the journal and the metrics, never the service's internals.
    ("http", ("daemon.http",)),
    ("service", ("daemon.service",)),
    ("commands", ("daemon.cli", "daemon.__main__", "daemon.commands")),
)

#: The top layer loads each command's modules when the command runs (``ocr-daemon --help`` and
#: ``status`` start without the engines, PyMuPDF or the service): its function-level imports of
#: daemon modules are its design, not a hidden cycle.
LAZY_LAYERS = frozenset({"commands"})

#: (importing module, imported module) -> why the import is inside a function.
LAZY: dict[tuple[str, str], str] = {
    **{("daemon.engines", f"daemon.engines.{m}"): "only the engine configured is loaded (vLLM, tesserocr)"
       for m in ("tesseract", "vllm_engine", "openai_engine")},
    **{("daemon.engines.serve", m): "vLLM loads serve.register in every process it starts: it stays light"
       for m in ("daemon.engines.vllm_engine", "daemon.engines.pixtral_patch", "daemon.config")},
    ("daemon.journal.factory", "daemon.journal.pgstore"): "psycopg, only for a PostgreSQL journal",
    **{("daemon.writers", m): "a writer is loaded when its format is asked for (start-up time; openpyxl)"
       for m in ("daemon.writers.text", "daemon.document.blocksmd", "daemon.writers.jsonout", "daemon.writers.latex",
                 "daemon.writers.tables")},
}

#: Imports against the flow still there on this branch; each goes with another branch of issue 36.
PENDING: dict[tuple[str, str], str] = {}

#: Function-level daemon imports still there on this branch, and who removes them.
PENDING_LAZY: dict[tuple[str, str], str] = {
    ("daemon.journal.rows", "daemon.journal"):
        "journal: status_summary (it reads deliveries, which import store and rows) goes with the queries",
}


def _layer_index(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return None if best is None else best[0]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST) -> list[tuple[str, int, bool]]:
    """(imported daemon module, line, inside a function) for every import in ``tree``."""
    out: list[tuple[str, int, bool]] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                if child.module == "daemon":  # from daemon import procenv: the module daemon.procenv
                    out.extend((f"daemon.{a.name}", child.lineno, in_function) for a in child.names)
                elif child.module.startswith("daemon."):
                    out.append((child.module, child.lineno, in_function))
            elif isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_function) for a in child.names if a.name.split(".")[0] == "daemon")
            walk(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    walk(tree, False)
    return out


def _all_imports(package: Path = PACKAGE) -> list[tuple[str, str, int, bool]]:
    rows = []
    for path in sorted(package.rglob("*.py")):
        module = _module_name(path)
        for target, line, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            rows.append((module, target, line, in_function))
    return rows


def against_the_flow(rows: list[tuple[str, str, int, bool]]) -> list[str]:
    """The imports of ``rows`` from a lower layer to a higher one, not in ``PENDING``."""
    bad = []
    for module, target, line, _in_function in rows:
        a, b = _layer_index(module), _layer_index(target)
        if a is not None and b is not None and b > a and (module, target) not in PENDING:
            bad.append(f"{module}:{line} imports {target} ({LAYERS[a][0]} -> {LAYERS[b][0]})")
    return bad


def hidden_in_functions(rows: list[tuple[str, str, int, bool]]) -> list[str]:
    """The function-level daemon imports of ``rows`` that no rule allows."""
    bad = []
    for module, target, line, in_function in rows:
        a = _layer_index(module)
        if not in_function or (a is not None and LAYERS[a][0] in LAZY_LAYERS):
            continue
        if target.startswith(module + ".") and module == "daemon":
            continue
        if (module, target) not in LAZY and (module, target) not in PENDING_LAZY and (module, target) not in PENDING:
            bad.append(f"{module}:{line} imports {target} inside a function")
    return bad


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, str, int, bool]]:
    return _all_imports()


def test_every_module_has_a_layer(rows: list[tuple[str, str, int, bool]]) -> None:
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    assert [m for m in sorted(modules) if _layer_index(m) is None] == []
    # each layer names modules that are all in one place: no prefix of two layers at once
    prefixes = [p for _name, ps in LAYERS for p in ps]
    assert len(prefixes) == len(set(prefixes))


def test_no_import_against_the_flow(rows: list[tuple[str, str, int, bool]]) -> None:
    assert against_the_flow(rows) == []


def test_no_daemon_import_hidden_in_a_function(rows: list[tuple[str, str, int, bool]]) -> None:
    assert hidden_in_functions(rows) == []


def test_exceptions_still_needed(rows: list[tuple[str, str, int, bool]]) -> None:
    """Every ``PENDING``/``LAZY`` pair still occurs: a removed import takes its entry with it."""
    seen = {(m, t) for m, t, _line, _f in rows}
    lazy_seen = {(m, t) for m, t, _line, f in rows if f}
    assert sorted(set(PENDING) - seen) == []
    assert sorted((set(LAZY) | set(PENDING_LAZY)) - lazy_seen) == []


def test_the_check_catches_a_bad_import(tmp_path: Path) -> None:
    """The walk sees an import against the flow, top-level and inside a function, and a daemon
    import hidden in a function (the same walk over a copy of one real module plus the bad lines)."""
    pkg = tmp_path / "daemon" / "config"
    pkg.mkdir(parents=True)
    src = (PACKAGE / "config" / "templates.py").read_text(encoding="utf-8")
    (pkg / "templates.py").write_text(
        src + "\nfrom daemon.writers import render_outputs\n\n\ndef f():\n    from daemon.config.schema import Config\n"
        "    from daemon.service.pipeline import Pipeline\n", encoding="utf-8")
    rows = [(f"daemon.config.{p.stem}", t, line, fn)
            for p in pkg.glob("*.py") for t, line, fn in _imports(ast.parse(p.read_text(encoding="utf-8")))]
    flow = against_the_flow(rows)
    assert len(flow) == 2 and "daemon.writers (config -> writers)" in flow[0] and "daemon.service" in flow[1]
    hidden = hidden_in_functions(rows)
    assert [h.split(" imports ")[1] for h in hidden] == ["daemon.config.schema inside a function",
                                                         "daemon.service.pipeline inside a function"]


def test_formats_are_the_writers_registry() -> None:
    """daemon.vocab.FORMATS (what the config validates ``formats:`` against, without importing the
    writers) is the writers' registry followed by the source-file formats, in that order."""
    assert (*writers.WRITERS, *vocab.SOURCE_FORMATS) == vocab.FORMATS
