"""``ocr-daemon convert`` (run as ``python -m daemon convert``, as a user would)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openpyxl

from daemon.writers.convert import RAW_PAGE_MARK, join_raw_pages, split_raw_pages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model_outputs"


def convert(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "daemon", "convert", *map(str, args)], capture_output=True, text=True, timeout=120)


def test_convert_rebuilds_every_output(tmp_path: Path) -> None:
    raw = tmp_path / "state" / "rechnung.raw.md"
    raw.parent.mkdir()
    raw.write_text((FIXTURES / "invoice_de.md").read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    p = convert(raw, "--to", "md,txt,json,csv,xlsx", "--out", out, "--language", "de", "--csv-bom")
    assert p.returncode == 0, p.stderr
    names = sorted(x.name for x in out.iterdir())
    assert names == sorted(["rechnung.md", "rechnung.txt", "rechnung.json", "rechnung.xlsx",
                            "rechnung.table-1-1.csv", "rechnung.table-2-1.csv"])
    assert sorted(p.stdout.split()) == sorted(str(out / n) for n in names)
    side = json.loads((out / "rechnung.json").read_text(encoding="utf-8"))
    assert side["language"] == "de" and side["pages"] == 2 and sorted(side["outputs"]) == sorted(names)
    assert (out / "rechnung.table-1-1.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    ws = openpyxl.load_workbook(out / "rechnung.xlsx")["p1-t1"]
    assert ws["C2"].value == 1200  # German "1.200"
    # the written .md converts again to the same tables (same page marks)
    again = tmp_path / "again"
    p = convert(out / "rechnung.md", "--to", "csv", "--out", again, "--language", "de")
    assert p.returncode == 0, p.stderr
    assert (again / "rechnung.table-1-1.csv").read_bytes() == (out / "rechnung.table-1-1.csv").read_bytes()[3:]


def test_convert_detects_language_and_writes_beside(tmp_path: Path) -> None:
    src = tmp_path / "bericht.raw.md"
    src.write_text((FIXTURES / "report_zh.md").read_text(encoding="utf-8"), encoding="utf-8")
    p = convert(src, "--to", "xlsx,json")
    assert p.returncode == 0, p.stderr
    side = json.loads((tmp_path / "bericht.json").read_text(encoding="utf-8"))
    assert side["language"] == "zh"  # daemon.language.detect_language
    ws = openpyxl.load_workbook(tmp_path / "bericht.xlsx")["p1-t1"]
    assert abs(ws["B2"].value - 1234567.89) < 1e-6  # "1,234,567.89" read as Chinese/English


def test_convert_refuses_bad_use(tmp_path: Path) -> None:
    src = tmp_path / "x.md"
    src.write_text("# x\n", encoding="utf-8")
    p = convert(src, "--to", "md")
    assert p.returncode == 2 and "overwrite the input" in p.stderr
    assert src.read_text(encoding="utf-8") == "# x\n"
    p = convert(src, "--to", "md,docx", "--out", tmp_path / "o")
    assert p.returncode == 2 and "docx" in p.stderr
    p = convert(tmp_path / "missing.raw.md", "--to", "md")
    assert p.returncode == 2 and "cannot read" in p.stderr
    p = convert(src, "--to", "txt,pdf", "--out", tmp_path / "o")  # the pdf needs the source file
    assert p.returncode == 2 and "source file" in p.stderr and not (tmp_path / "o" / "x.txt").exists()


def test_raw_page_format() -> None:
    text = join_raw_pages(["a\n", "", "b"])
    assert text == "<!-- page 1 -->\na\n\n<!-- page 2 -->\n\n<!-- page 3 -->\nb\n"
    assert RAW_PAGE_MARK.format(n=2) == "<!-- page 2 -->"
    assert split_raw_pages(text) == ["a\n", "", "b"]
    assert split_raw_pages("preface\n<!-- page 1 -->\nbody\n") == ["preface\nbody"]


def test_convert_stem_option(tmp_path: Path) -> None:
    src = tmp_path / "17.raw.md"
    src.write_text("# Titel\n\nText", encoding="utf-8")
    p = convert(src, "--to", "txt", "--stem", "rechnung", "--language", "de")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "rechnung.txt").read_text(encoding="utf-8").startswith("Titel\n")
    assert convert(src, "--to", "txt", "--stem", "../x").returncode == 2


def test_convert_outputs_get_the_daemons_file_mode(tmp_path: Path) -> None:
    """convert writes through daemon.fsio.atomic_write like the daemon: ``0644`` less the umask
    (``0640`` under the unit's ``UMask=0027``), not the ``0600`` of a mkstemp temp file; an
    earlier output of the same name is replaced with that mode too."""
    src = tmp_path / "rechnung.raw.md"
    src.write_text((FIXTURES / "invoice_de.md").read_text(encoding="utf-8"), encoding="utf-8")
    for umask, mode in ((0o022, 0o644), (0o027, 0o640)):
        out = tmp_path / f"out-{umask:o}"
        out.mkdir()
        (out / "rechnung.txt").write_bytes(b"old")
        (out / "rechnung.txt").chmod(0o600)
        p = subprocess.run([sys.executable, "-m", "daemon", "convert", str(src), "--to", "md,txt,json,csv,xlsx",
                            "--out", str(out), "--language", "de"], capture_output=True, text=True, timeout=120, umask=umask)
        assert p.returncode == 0, p.stderr
        modes = {f.name: f.stat().st_mode & 0o777 for f in out.iterdir()}
        assert len(modes) == 6 and set(modes.values()) == {mode}, (oct(umask), modes)
        assert (out / "rechnung.txt").read_bytes() != b"old"
