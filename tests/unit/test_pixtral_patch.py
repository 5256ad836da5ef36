"""The CPU side of the Pixtral encoder patch (daemon.engines.pixtral_patch): mode resolution and the
marker that proves which processes ran the patched encoder (tests/gpu checks it in vLLM's engine
core). The patch itself needs vLLM and a GPU: tests/gpu/test_c_pixtral_varlen_gpu.py and
tests/gpu/test_d_pixtral_modes_gpu.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from daemon.engines import pixtral_patch as pp


def test_mode_from_config_unless_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pp.ENV, raising=False)
    assert pp.resolve_mode() == "varlen"
    assert pp.resolve_mode("per_image") == "per_image"
    monkeypatch.setenv(pp.ENV, "0")
    assert pp.resolve_mode("per_image") == "off"
    monkeypatch.setenv(pp.ENV, "1")
    assert pp.resolve_mode("off") == "varlen"
    monkeypatch.setenv(pp.ENV, "bogus")
    assert pp.resolve_mode("off") == "varlen"  # logged, and the default used


def test_off_patches_nothing() -> None:
    assert pp.patch_pixtral_attention("off") is None
    assert pp.applied_mode() is None


@pytest.fixture
def marker(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "pixtral.jsonl"
    pp.set_marker(path)
    yield path
    pp.set_marker(None)


def test_marker_is_written_once_per_process(marker: Path) -> None:
    pp.mark("varlen", "fa3")
    pp.mark("varlen", "fa3")  # every encoder layer calls it: one line per process
    assert pp.read_marks(marker) == [pp.EncoderMark(os.getpid(), "varlen", "fa3")]
    assert pp.applied_summary(pp.read_marks(marker)) == "varlen/fa3"


def test_a_forked_child_writes_its_own_line(marker: Path) -> None:
    """vLLM forks its engine core after the patch: the child inherits the marker and, having run
    the patched encoder, says so under its own pid, even when the parent already had."""
    pp.mark("varlen", "fa3")
    pid = os.fork()
    if pid == 0:  # the child: what the engine core does on its first encoder step
        try:
            pp.mark("varlen", "fa3")
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    marks = pp.read_marks(marker)
    assert [m.pid for m in marks] == [os.getpid(), pid]


def test_no_marker_no_file_and_stock_summary(tmp_path: Path) -> None:
    pp.set_marker(None)
    pp.mark("per_image", "sdpa")
    assert pp.read_marks(tmp_path / "none.jsonl") == []
    assert pp.applied_summary([]) == "stock"


def test_unreadable_marker_lines_are_skipped(tmp_path: Path) -> None:
    p = tmp_path / "m.jsonl"
    p.write_text('{"pid": 7, "mode": "per_image", "kernel": "sdpa"}\nnot json\n{"pid": 8}\n')
    assert pp.read_marks(p) == [pp.EncoderMark(7, "per_image", "sdpa")]
    assert pp.applied_summary(pp.read_marks(p) + [pp.EncoderMark(9, "varlen", "fa3")]) == "per_image/sdpa,varlen/fa3"


def test_a_marker_that_cannot_be_written_does_not_raise(tmp_path: Path) -> None:
    pp.set_marker(tmp_path / "missing-dir" / "m.jsonl")
    try:
        pp.mark("varlen", "fa3")  # logged only: the encoder must go on
    finally:
        pp.set_marker(None)
