"""bench/iter_summary.py on a log in vLLM 0.26's format: steps by pass, and the pass's timeline.

The device runs are where this tool is used; these tests pin what it reads from a log, so that a
figure in bench/RESULTS.md (a late first step, a stall without steps) is not an artefact of it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("iter_summary", BENCH / "iter_summary.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["iter_summary"] = mod
    spec.loader.exec_module(mod)
    return mod


def _step(clock: str, i: int, ctx: int, gen: int, enc: int = 0, ms: float = 0.05) -> str:
    line = (
        f"INFO 11-30 {clock} [loggers.py:182] Engine 000: Iteration({i}): {ctx} context requests, "
        f"{ctx * 2329} context tokens, {gen} generation requests, {gen} generation tokens, "
        f"iteration elapsed time: {ms:.2f} ms, GPU KV cache usage: 1.5%"
    )
    return line + (f", encoder inputs: {enc}, encoder output embeddings: {enc * 2310}" if enc else "")


# 2026-11-30 01:56:22.25 UTC as the epoch seconds the bench prints in its PASS markers
START = 1796003782.25


def log_lines() -> list[str]:
    return [
        _step("01:56:20", 0, 1, 0, enc=1),  # warm-up: before any PASS marker, dropped
        f"PASS full start {START:.3f}",
        # first step 2 s after the marker; a whole second (01:56:26) without a step; all 3
        # pages decoding from 01:56:27
        _step("01:56:24", 1, 1, 0, enc=1),
        _step("01:56:24", 2, 2, 1, enc=2),
        _step("01:56:25", 3, 0, 2),
        _step("01:56:27", 4, 0, 3),
        _step("01:56:27", 5, 0, 3, ms=12.5),
        f"PASS full end {START + 6.0:.3f}",
        _step("01:56:29", 6, 1, 0, enc=1),  # between passes: dropped
    ]


def test_steps_are_split_by_pass_and_warm_up_steps_dropped() -> None:
    m = _load()
    walls: dict[str, float] = {}
    starts: dict[str, float] = {}
    passes = m.parse(log_lines(), walls, starts)
    assert list(passes) == ["full"]
    assert [s["i"] for s in passes["full"]] == [1, 2, 3, 4, 5]
    assert abs(walls["full"] - 6.0) < 1e-6
    assert abs(starts["full"] - (1 * 3600 + 56 * 60 + 22.25)) < 1e-3
    s = m.summarise(passes["full"])
    assert s["encoder_steps"]["steps"] == 2 and s["decode_steps"]["steps"] == 3
    assert s["decode_full_batch"]["batch"] == 3 and s["slowest"][0]["i"] == 5


def test_timeline_finds_a_late_first_step_and_a_second_without_steps() -> None:
    m = _load()
    starts: dict[str, float] = {}
    passes = m.parse(log_lines(), None, starts)
    t = m.timeline(passes["full"], starts["full"])
    # the marker at :22.25, the first step logged in second :24 -> it ran 1.75-2.75 s in
    assert t["first_step_after_s"] == [1.75, 2.75]
    assert t["steps_per_s"] == [2, 1, 0, 2]
    assert t["seconds_without_steps"] == 1
    assert t["all_decoding_after_s"] == 5 and t["pages_decoding_at_most"] == 3


def test_timeline_over_midnight() -> None:
    m = _load()
    start = 23 * 3600 + 59 * 60 + 59.5
    steps = [{"clock": 23 * 3600 + 59 * 60 + 59, "gen_reqs": 1}, {"clock": 0, "gen_reqs": 2}, {"clock": 1, "gen_reqs": 2}]
    t = m.timeline(steps, start)  # type: ignore[arg-type]
    assert t["steps_per_s"] == [1, 1, 1] and t["first_step_after_s"] == [0.0, 0.5]
    assert t["all_decoding_after_s"] == 1
