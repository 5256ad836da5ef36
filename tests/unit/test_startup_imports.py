"""Start-up cost of ``ocr-daemon once`` (issue 32): what its main process imports, and the
render worker's import of OCRmyPDF's text-layer renderer without the package's ``__init__``.

Each check runs a fresh interpreter (``sys.modules`` of this test process has everything loaded).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_once_main_process_does_not_import_pdf_libraries() -> None:
    """The modules ``ocr-daemon once`` imports in its main process (the CLI, the pipeline, the
    batch splitter, the Tesseract engine) leave MuPDF and pikepdf to the processes that open a
    PDF or write one: 0.3-0.4 s of CPU per ``once`` call."""
    got = _run(
        "import json, sys\n"
        "import daemon.cli, daemon.commands.once, daemon.service.pipeline, daemon.intake.batch, daemon.service.hooks\n"
        "import daemon.journal.guard, daemon.engines.tesseract, daemon.pages.textlayer, daemon.writers.pdf\n"
        "print(json.dumps({m: m in sys.modules for m in ('pymupdf', 'pikepdf', 'ocrmypdf')}))\n"
    )
    assert got == {"pymupdf": False, "pikepdf": False, "ocrmypdf": False}, got


def test_mupdf_is_loaded_quiet_on_first_use(tmp_path: Path) -> None:
    """``probe.mupdf()`` imports pymupdf with MuPDF's stderr chatter off, and a broken PDF is
    still refused as corrupt (``_file_is_broken`` sees MuPDF's exception)."""
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" + b"\x00garbage" * 50)
    got = _run(
        "import json, sys\n"
        "from pathlib import Path\n"
        "from daemon.pages import probe\n"
        "before = 'pymupdf' in sys.modules\n"
        "fz = probe.mupdf()\n"
        f"reason = probe.probe(Path({str(bad)!r}))\n"
        "print(json.dumps({'before': before, 'same': fz is probe.mupdf(), 'quiet': not fz.TOOLS.mupdf_display_errors(),"
        " 'reason': reason}))\n"
    )
    assert got["before"] is False and got["same"] is True and got["quiet"] is True, got
    assert got["reason"] and "PDF" in got["reason"], got


def test_pdf_renderer_loads_without_the_ocrmypdf_package_init() -> None:
    """``writers.pdf._load_renderer`` imports the fpdf2 renderer's modules and not OCRmyPDF's API
    (``ocrmypdf.api``, its pipelines); the package itself still imports afterwards (the PDF/A
    step needs ``ocrmypdf._exec.ghostscript`` and ``ocrmypdf.pdfa``) and finds its font folder."""
    got = _run(
        "import json, sys\n"
        "from daemon.writers import pdf\n"
        "fonts = pdf._load_renderer()\n"
        "loaded = sorted(m for m in sys.modules if m == 'ocrmypdf' or m.startswith('ocrmypdf.'))\n"
        "from ocrmypdf.fpdf_renderer import Fpdf2MultiPageRenderer\n"
        "import ocrmypdf\n"
        "from ocrmypdf._exec import ghostscript\n"
        "from ocrmypdf.pdfa import generate_pdfa_ps\n"
        "print(json.dumps({'loaded': loaded, 'fonts': sorted(p.name for p in fonts.glob('*.ttf')),"
        " 'version': bool(ocrmypdf.__version__), 'renderer': Fpdf2MultiPageRenderer.__module__}))\n"
    )
    assert "ocrmypdf" not in got["loaded"] and "ocrmypdf.api" not in got["loaded"], got["loaded"]
    assert "ocrmypdf.fpdf_renderer.renderer" in got["loaded"], got["loaded"]
    assert got["fonts"] and got["version"] and got["renderer"] == "ocrmypdf.fpdf_renderer.renderer", got
