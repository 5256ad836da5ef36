"""What one decode step's attention costs per layer, by kernel, KV dtype and KV block size.

The decode profile (RESULTS.md, follow-up run) put flash attention at 86 % of a full-batch decode
step with a bf16 KV cache (16.4 ms of 19.2 ms, ~4.3 TB/s of KV reads, ~90 % of the H200's
bandwidth). With ``kv_cache_dtype: fp8`` the KV bytes halve, yet steady decode ran only ~20 %
faster (62->50 against 53->41 steps/s). This bench times the attention kernels alone on the
decode step's shape, so the fp8 kernel's bandwidth can be read and alternatives compared
without starting an engine:

- ``fa3``: vLLM's FlashAttention 3 (``vllm.vllm_flash_attn.flash_attn_varlen_func``,
  ``fa_version=3``), paged KV, as vLLM's FLASH_ATTN backend calls it: with FA3 scheduler
  metadata and ``num_splits`` 32 (what its full CUDA graphs use), and without (FA3's heuristics).
  fp8: query, keys and values in ``float8_e4m3fn`` with descales, as vLLM quantizes the query
  when the cache is fp8.
- ``triton``: vLLM's Triton ``unified_attention`` (the TRITON_ATTN backend), 2-D kernel; fp8 keys
  and values with a bf16 query.

Shape (LightOnOCR-2-1B's Qwen3 decoder): 16 query heads, 8 KV heads, head_dim 128, one query
token per sequence, --batch sequences of --ctx tokens each (2,329 image+prompt tokens plus the
tokens decoded so far). Per-layer time: median of --iters CUDA-event timings after warm-up.
``tbps``: KV bytes read per call / time (what the kernel is bound by).

Run on the GPU machine: ``python bench/bench_attention.py --results /tmp/res/attention.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

HQ, HKV, D = 16, 8, 128


def _time(fn: Callable[[], Any], iters: int) -> float:
    """Median milliseconds of ``fn`` over ``iters`` CUDA-event timings, after 3 warm-up calls."""
    import torch
    from bench_sampler import time_ms  # this folder is on sys.path when run as a script

    return float(time_ms(torch, fn, iters))


def make_case(batch: int, ctx: int, block: int, fp8: bool, seed: int = 0) -> dict[str, Any]:
    """Query, paged KV cache (blocks shuffled, as a busy cache hands them out) and block table."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    per_seq = -(-ctx // block)
    nblocks = batch * per_seq + 1
    k = torch.randn(nblocks, block, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g) * 0.5
    v = torch.randn(nblocks, block, HKV, D, device="cuda", dtype=torch.bfloat16, generator=g) * 0.5
    q = torch.randn(batch, HQ, D, device="cuda", dtype=torch.bfloat16, generator=g)
    perm = torch.randperm(nblocks - 1, device="cuda", generator=g) + 1
    table = perm[: batch * per_seq].view(batch, per_seq).to(torch.int32)
    if fp8:
        k, v = k.to(torch.float8_e4m3fn), v.to(torch.float8_e4m3fn)
    return {
        "q": q, "k": k, "v": v, "table": table,
        "lens": torch.full((batch,), ctx, device="cuda", dtype=torch.int32),
        "cu_q": torch.arange(batch + 1, device="cuda", dtype=torch.int32),
        "out": torch.empty(batch, HQ, D, device="cuda", dtype=torch.bfloat16),
        "kv_bytes": batch * ctx * HKV * D * 2 * (1 if fp8 else 2),
    }


def run_fa3(c: dict[str, Any], ctx: int, fp8: bool, splits: int | None) -> Callable[[], Any]:
    """FA3 call as vLLM's FLASH_ATTN backend makes it; ``splits=None``: no scheduler metadata."""
    import torch
    from vllm.vllm_flash_attn import flash_attn_varlen_func, get_scheduler_metadata

    batch = c["q"].shape[0]
    q = c["q"].to(torch.float8_e4m3fn) if fp8 else c["q"]
    ones = torch.ones(batch, HKV, device="cuda", dtype=torch.float32)
    desc = {"q_descale": ones, "k_descale": ones, "v_descale": ones} if fp8 else {}
    meta = None
    if splits is not None:
        meta = get_scheduler_metadata(
            batch_size=batch, max_seqlen_q=1, max_seqlen_k=ctx, num_heads_q=HQ, num_heads_kv=HKV, headdim=D,
            cache_seqlens=c["lens"], qkv_dtype=torch.float8_e4m3fn if fp8 else torch.bfloat16,
            cu_seqlens_q=c["cu_q"], page_size=c["k"].shape[1], causal=True, num_splits=splits)

    def call() -> Any:
        return flash_attn_varlen_func(
            q=q, k=c["k"], v=c["v"], max_seqlen_q=1, cu_seqlens_q=c["cu_q"], max_seqlen_k=ctx,
            seqused_k=c["lens"], softmax_scale=D ** -0.5, causal=True, block_table=c["table"], out=c["out"],
            scheduler_metadata=meta, num_splits=splits or 0, fa_version=3, **desc)

    return call


def run_triton(c: dict[str, Any], ctx: int, fp8: bool) -> Callable[[], Any]:
    """vLLM's Triton unified attention (2-D kernel: the batch is above its 3-D threshold)."""
    import torch
    from vllm.v1.attention.ops.triton_unified_attention import unified_attention

    batch = c["q"].shape[0]
    one = torch.ones(1, device="cuda", dtype=torch.float32)

    def call() -> Any:
        return unified_attention(
            q=c["q"], k=c["k"], v=c["v"], out=c["out"], cu_seqlens_q=c["cu_q"], max_seqlen_q=1,
            seqused_k=c["lens"], max_seqlen_k=ctx, softmax_scale=D ** -0.5, causal=True, window_size=(-1, -1),
            block_table=c["table"], softcap=0, q_descale=None,
            k_descale=one.expand(batch, HKV) if fp8 else None, v_descale=one.expand(batch, HKV) if fp8 else None)

    return call


BACKENDS = {"fa3_meta32": "FLASH_ATTN", "triton": "TRITON_ATTN"}


def pick(rows: list[dict[str, Any]], kv: str, ctx: int) -> list[str]:
    """``bench_gpu.py`` flags for the fastest kernel and block for ``kv`` at ``ctx`` (nearest measured).

    Only the calls an engine makes count: FA3 with scheduler metadata (vLLM's full CUDA graphs of
    decode steps use it) and Triton. Always explicit (the daemon's own default block depends on
    the KV dtype); empty when nothing was measured.
    """
    ok = [r for r in rows if r.get("kv") == kv and "ms" in r and r["kernel"] in BACKENDS]
    if not ok:
        return []
    near = min({r["ctx"] for r in ok}, key=lambda c: abs(c - ctx))
    best = min((r for r in ok if r["ctx"] == near), key=lambda r: r["ms"])
    return ["--attn", BACKENDS[best["kernel"]], "--block-size", str(best["block"])]


def measure(batch: int, ctx: int, block: int, fp8: bool, iters: int) -> list[dict[str, Any]]:
    """One row per kernel for this shape; a kernel that refuses the combination gives an error row."""
    c = make_case(batch, ctx, block, fp8)
    kernels: dict[str, Callable[[], Callable[[], Any]]] = {
        "fa3_meta32": lambda: run_fa3(c, ctx, fp8, 32),
        "fa3_heur": lambda: run_fa3(c, ctx, fp8, None),
        "triton": lambda: run_triton(c, ctx, fp8),
    }
    rows = []
    for name, mk in kernels.items():
        row: dict[str, Any] = {"kernel": name, "kv": "fp8" if fp8 else "bf16", "block": block, "ctx": ctx, "batch": batch}
        try:
            ms = _time(mk(), iters)
            row |= {"ms": round(ms, 4), "tbps": round(c["kv_bytes"] / ms / 1e9, 2), "step_ms_28_layers": round(28 * ms, 2)}
        except Exception as e:  # a kernel that refuses a combination is a result too
            row["error"] = f"{type(e).__name__}: {str(e)[:160]}"
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--ctx", type=int, nargs="+", default=[2440, 2830, 3329])
    ap.add_argument("--blocks", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--results", default="")
    ap.add_argument("--pick", choices=["bf16", "fp8"],
                    help="print bench_gpu.py's flags for the fastest kernel in --results at the middle --ctx; time nothing")
    args = ap.parse_args()
    if args.pick:
        rows = []
        if args.results and os.path.exists(args.results):
            with open(args.results) as f:
                rows = [json.loads(x) for x in f if x.strip()]
        print(" ".join(pick(rows, args.pick, args.ctx[len(args.ctx) // 2])))
        return
    rows = [row for ctx in args.ctx for block in args.blocks for fp8 in (False, True)
            for row in measure(args.batch, ctx, block, fp8, args.iters)]
    if args.results:
        with open(args.results, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
