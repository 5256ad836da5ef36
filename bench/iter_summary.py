"""Where a whole engine run's time goes, step by step, from vLLM's per-step log lines.

``bench_gpu.py engine-async --iter-log`` turns on vLLM's ``enable_logging_iteration_details``:
one line per engine step with the batch's make-up (context = prefill requests/tokens, generation
= decode requests/tokens, encoder inputs) and the step's elapsed time, and prints
``PASS <name> start|end`` around each measured pass. A torch profile covers ~20 steps; this covers
all ~1,040 steps of every pass, so two passes (top-p and greedy sampling, say) can be compared
where they differ: in the encoder steps, the mixed prefill steps, the decode steps early or late.

Read the step times with care: with vLLM's async scheduling (a batch queue), a step's "elapsed
time" is how long the engine core blocked on that step's result after queueing the next one, not
the step's GPU time, so ``wall_minus_steps_s`` (the pass's wall time less the sum of its steps) is
mostly GPU time the log does not attribute. The timeline is sturdier: each line carries the
front-end's log time (whole seconds), so per pass this gives the seconds from the PASS marker to
the first step (``first_step_after_s``, a 1-s range), the steps logged in each second
(``steps_per_s``), whole seconds inside the pass without any step (``seconds_without_steps``: a
stall of the engine core, e.g. a kernel compile) and when every page was decoding
(``all_decoding_after_s``: the end of the encoder ramp). That is how the 2026-11-30 runs found a
2-3 s stall in the first top-p pass and a late first step in top-p passes (bench/RESULTS.md).

    python bench/iter_summary.py LOG [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Any

ITER = re.compile(
    r"Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens, (\d+) generation requests, "
    r"(\d+) generation tokens, iteration elapsed time: ([\d.]+) ms(?: \(dummy\))?, GPU KV cache usage: ([\d.]+)%"
    r"(?:, encoder inputs: (\d+), encoder output embeddings: (\d+))?"
)
PASS = re.compile(r"^PASS (\S+) (start|end) ([\d.]+)")
# the log line's time of day (vLLM's format: "INFO 11-30 01:56:24 [loggers.py:182] ...")
CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d) \[")
DAY = 86400


def parse(
    lines: list[str], walls: dict[str, float] | None = None, starts: dict[str, float] | None = None
) -> dict[str, list[dict[str, float]]]:
    """Steps by pass; steps logged outside any pass (warm-up) are dropped. ``walls`` (if given)
    receives each pass's wall time from its PASS markers, ``starts`` its start as seconds of the
    UTC day (the clock of the log lines; the device runs on UTC). A step's ``clock`` is its log
    line's second of the day (-1 when the line has no time)."""
    passes: dict[str, list[dict[str, float]]] = {}
    current: str | None = None
    started: dict[str, float] = {}
    for line in lines:
        m = PASS.search(line)
        if m:
            current = m.group(1) if m.group(2) == "start" else None
            if current:
                passes[current] = []
                started[current] = float(m.group(3))
                if starts is not None:
                    starts[current] = float(m.group(3)) % DAY
            elif walls is not None and m.group(1) in started:
                walls[m.group(1)] = float(m.group(3)) - started[m.group(1)]
            continue
        m = ITER.search(line)
        if m and current:
            c = CLOCK.search(line[: m.start()])
            passes[current].append({
                "i": int(m.group(1)), "ctx_reqs": int(m.group(2)), "ctx_tokens": int(m.group(3)),
                "gen_reqs": int(m.group(4)), "gen_tokens": int(m.group(5)), "ms": float(m.group(6)),
                "kv_pct": float(m.group(7)), "enc_inputs": int(m.group(8) or 0),
                "clock": int(c.group(1)) * 3600 + int(c.group(2)) * 60 + int(c.group(3)) if c else -1,
            })
    return passes


def timeline(steps: list[dict[str, float]], start: float) -> dict[str, Any]:
    """The pass second by second from its steps' log times (see the module docstring).

    ``start``: the pass's start as seconds of the day. Seconds are relative to it; a step logged
    at second ``t`` happened in ``[t, t + 1)``, so ``first_step_after_s`` is a range."""
    clocked = [s for s in steps if s["clock"] >= 0]
    if not clocked:
        return {}
    # seconds since the pass began (mod a day: a pass may run over midnight)
    rel = [int((s["clock"] - int(start)) % DAY) for s in clocked]
    first = rel[0]
    per_second = [0] * (rel[-1] - first + 1)
    for r in rel:
        per_second[r - first] += 1
    full = max(s["gen_reqs"] for s in clocked)
    all_decoding = next(r for r, s in zip(rel, clocked, strict=True) if s["gen_reqs"] == full)
    return {
        "first_step_after_s": [round(max(0.0, first - (start % 1)), 2), round(first + 1 - (start % 1), 2)],
        "steps_per_s": per_second,
        "seconds_without_steps": per_second.count(0),
        "all_decoding_after_s": all_decoding,
        "pages_decoding_at_most": full,
    }


def median_by_tenth(values: list[float], digits: int = 2) -> list[float]:
    """Medians of the ten consecutive tenths of ``values`` (at least 10 of them): does a step get
    slower as a pass goes on?"""
    n = len(values)
    return [round(statistics.median(values[k * n // 10:(k + 1) * n // 10]), digits) for k in range(10)]


def _agg(steps: list[dict[str, float]]) -> dict[str, Any]:
    ms = [s["ms"] for s in steps]
    if not ms:
        return {"steps": 0}
    return {"steps": len(ms), "total_s": round(sum(ms) / 1e3, 2), "median_ms": round(statistics.median(ms), 2),
            "max_ms": round(max(ms), 1)}


def summarise(steps: list[dict[str, float]]) -> dict[str, Any]:
    enc = [s for s in steps if s["enc_inputs"] > 0]
    prefill = [s for s in steps if s["enc_inputs"] == 0 and s["ctx_reqs"] > 0]
    decode = [s for s in steps if s["ctx_reqs"] == 0]
    full = max((s["gen_reqs"] for s in decode), default=0)
    out: dict[str, Any] = {
        "all": _agg(steps), "encoder_steps": _agg(enc), "prefill_steps": _agg(prefill), "decode_steps": _agg(decode),
        "decode_full_batch": _agg([s for s in decode if s["gen_reqs"] == full]) | {"batch": full},
        "decode_partial_batch": _agg([s for s in decode if s["gen_reqs"] < full]),
    }
    # decode steps in tenths of the pass: does a step get slower as the contexts grow?
    if len(decode) >= 10:
        out["decode_median_ms_by_tenth"] = median_by_tenth([s["ms"] for s in decode])
    out["slowest"] = [{k: s[k] for k in ("i", "ctx_reqs", "ctx_tokens", "gen_reqs", "enc_inputs", "ms")}
                      for s in sorted(steps, key=lambda s: -s["ms"])[:8]]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    walls: dict[str, float] = {}
    starts: dict[str, float] = {}
    passes = parse(Path(args.log).read_text(errors="replace").splitlines(), walls, starts)
    result = {name: summarise(steps) for name, steps in passes.items()}
    for name, s in result.items():
        # the pass's wall time against the engine core's step times (see the module docstring
        # for what those times are)
        if name in walls and s["all"].get("steps"):
            s["wall_s"] = round(walls[name], 2)
            s["wall_minus_steps_s"] = round(walls[name] - s["all"]["total_s"], 2)
        if name in starts:
            s["timeline"] = timeline(passes[name], starts[name])
    for name, s in result.items():
        print(f"== {name}")
        print(json.dumps(s, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
