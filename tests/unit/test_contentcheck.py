"""daemon.intake.contentcheck (the stability thread's bounded check) and fsio.safe_stem, on real
files: sparse files made with truncate, a real PNG, a name that is not UTF-8."""

from __future__ import annotations

import os
import time
from pathlib import Path

from faultkit import tiny_png_bytes

from daemon.fsio import safe_stem
from daemon.intake.contentcheck import Refused, check


def _sparse(path: Path, size: int, tail: bytes = b"") -> Path:
    with open(path, "wb") as f:
        f.write(b"%PDF-1.4\n")
        f.truncate(size)
        if tail:
            f.seek(size - len(tail))
            f.write(tail)
    return path


def test_a_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    big = _sparse(tmp_path / "big.pdf", 3 << 30)
    t = time.monotonic()
    reason = check(big, 2 << 30)
    assert isinstance(reason, Refused) and "file too large: 3,072 MiB > limit 2,048 MiB" in reason
    assert time.monotonic() - t < 0.5  # a stat, nothing read


def test_a_pdf_is_judged_by_its_header_and_trailer_only(tmp_path: Path) -> None:
    # 1 GiB of holes: MuPDF's repair took 11.6 s on this in-process before (issue 33)
    cut = _sparse(tmp_path / "cut.pdf", 1 << 30)
    t = time.monotonic()
    assert check(cut, 2 << 30) == "truncated PDF (no end-of-file marker)"
    whole = _sparse(tmp_path / "whole.pdf", 1 << 30, b"\nstartxref\n9\n%%EOF\n")
    assert check(whole, 2 << 30) is None  # opened for real (and refused) in a render worker
    assert time.monotonic() - t < 0.5
    assert not isinstance(check(cut, 2 << 30), Refused)  # waits invalid_grace like before


def test_images_and_wrong_contents(tmp_path: Path) -> None:
    png = tmp_path / "a.png"
    png.write_bytes(tiny_png_bytes("hello"))
    assert check(png, 1 << 30) is None
    png.write_bytes(tiny_png_bytes("hello")[:-20])
    assert check(png, 1 << 30) == "truncated PNG"
    fake = tmp_path / "b.pdf"
    fake.write_bytes(tiny_png_bytes("x"))
    assert check(fake, 1 << 30) == "not a PDF: the file is a PNG image"


def test_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    name = os.path.join(os.fsencode(tmp_path), b"bad\xff\xfe.png")
    with open(name, "wb") as f:
        f.write(tiny_png_bytes("bytes"))
    assert check(Path(os.fsdecode(name)), 1 << 30) is None


def test_safe_stem_is_safe_unique_and_stable() -> None:
    assert safe_stem("scan 2026-12 (1)") == "scan 2026-12 (1)"  # nothing to replace: unchanged
    a, b = safe_stem("new\nline"), safe_stem("new\tline")
    assert a.startswith("new_line-") and b.startswith("new_line-") and a != b
    assert safe_stem("new\nline") == a  # stable
    bad = safe_stem(os.fsdecode(b"bad\xff\xfe"))
    assert bad.startswith("bad__-") and bad.encode("utf-8")
    assert all(c.isprintable() for c in safe_stem("tab\tand\x1b[31mansi"))
