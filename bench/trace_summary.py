"""Summarise a torch profiler trace that vLLM wrote (``bench_gpu.py engine-async --profile-decode DIR``).

The trace files are too large to bring back from the GPU machine, so this runs there and prints
what answers "where does a decode step's time go":

- wall time per engine step (the profiler's step marks), and the GPU's busy time in that span;
- GPU time of vLLM's own ranges (``gpu_model_runner: forward / sample / ...``, GPU side);
- CPU time of the same ranges (what the engine core's thread spends);
- the kernels by total GPU time, and idle gaps on the GPU (time the GPU waits for the CPU).

    python bench/trace_summary.py DIR [--json OUT.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
from collections import defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def load(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    data = json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return list(data["traceEvents"] if isinstance(data, dict) else data)


def busy(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of [start, end) intervals (µs)."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total


def summarise(events: list[dict[str, Any]]) -> dict[str, Any]:
    x = [e for e in events if e.get("ph") == "X" and "dur" in e]
    kernels = [e for e in x if e.get("cat") in GPU_CATS]
    gpu_ranges = [e for e in x if e.get("cat") == "gpu_user_annotation"]
    cpu_ranges = [e for e in x if e.get("cat") == "user_annotation"]
    # step marks: torch's ProfilerStep#N where the profiler runs on a schedule, else vLLM's
    # per-step annotation "execute_context_C(T)_generation_G(T)" (the batch's make-up)
    steps = sorted((e for e in cpu_ranges if str(e.get("name", "")).startswith("ProfilerStep")), key=lambda e: e["ts"])
    if len(steps) < 2:
        steps = sorted((e for e in cpu_ranges if str(e.get("name", "")).startswith("execute_context_")), key=lambda e: e["ts"])
    out: dict[str, Any] = {"kernels": len(kernels), "step_marks": sorted({str(e["name"])[:80] for e in steps})[:10]}
    if kernels:
        k0 = min(e["ts"] for e in kernels)
        k1 = max(e["ts"] + e["dur"] for e in kernels)
        b = busy([(e["ts"], e["ts"] + e["dur"]) for e in kernels])
        out["gpu_span_ms"] = round((k1 - k0) / 1e3, 2)
        out["gpu_busy_ms"] = round(b / 1e3, 2)
        ivs = sorted((e["ts"], e["ts"] + e["dur"]) for e in kernels)
        gaps, end = [], ivs[0][1]
        for s, e in ivs[1:]:
            if s > end:
                gaps.append(s - end)
            end = max(end, e)
        big = [g for g in gaps if g > 100]
        out["gpu_gaps_over_100us"] = {"count": len(big), "total_ms": round(sum(big) / 1e3, 2),
                                      "largest_ms": sorted((round(g / 1e3, 2) for g in big), reverse=True)[:10]}
        by: dict[str, list[float]] = defaultdict(list)
        for e in kernels:
            by[str(e["name"])].append(e["dur"])
        top = sorted(by.items(), key=lambda kv: -sum(kv[1]))[:30]
        out["top_kernels_ms"] = [{"name": n[:120], "count": len(d), "total_ms": round(sum(d) / 1e3, 2),
                                  "mean_us": round(sum(d) / len(d), 1)} for n, d in top]
    for label, ranges in (("gpu_ranges_ms", gpu_ranges), ("cpu_ranges_ms", cpu_ranges)):
        agg: dict[str, list[float]] = defaultdict(list)
        for e in ranges:
            name = str(e.get("name", ""))
            if name.startswith("gpu_model_runner") or name.startswith("execute_context") or "sample" in name:
                agg[name[:80]].append(e["dur"])
        out[label] = {n: {"count": len(d), "total_ms": round(sum(d) / 1e3, 2), "median_ms": round(statistics.median(d) / 1e3, 3)}
                      for n, d in sorted(agg.items(), key=lambda kv: -sum(kv[1]))[:20]}
    if len(steps) >= 2:
        starts = [e["ts"] for e in steps]
        walls = [b - a for a, b in pairwise(starts)]
        out["step_wall_ms"] = {"count": len(walls), "median": round(statistics.median(walls) / 1e3, 2),
                               "min": round(min(walls) / 1e3, 2), "max": round(max(walls) / 1e3, 2)}
        if kernels:
            per = []
            for a, b in pairwise(starts):
                per.append(busy([(max(e["ts"], a), min(e["ts"] + e["dur"], b)) for e in kernels
                                 if e["ts"] < b and e["ts"] + e["dur"] > a]))
            out["step_gpu_busy_ms_median"] = round(statistics.median(per) / 1e3, 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    traces = sorted(Path(args.dir).rglob("*.pt.trace.json*"))
    if not traces:
        raise SystemExit(f"no *.pt.trace.json[.gz] under {args.dir}")
    result = {}
    for t in traces:
        s = summarise(load(t))
        result[t.name] = s
        print(f"== {t.name} ({t.stat().st_size / 2**20:.1f} MiB)")
        print(json.dumps(s, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
