"""What vLLM's top-p sampling step costs on the GPU, for logits shaped like a real model's or not.

The engine row's greedy pass (bench_gpu.py engine-async --phases) showed top-p sampling at about
6 ms per decode step for 256 pages. That run used random (dummy) weights, whose logits are almost
flat: the top-p 0.9 nucleus is then most of the 151,936-token vocabulary, the worst case for any
top-p kernel. A trained OCR model is sure of nearly every token. This bench times the sampler
alone on synthetic logits of the same shape with nuclei of very different sizes, so the engine
figure can be read for real weights.

Timed per step (CUDA events, median of --iters after warm-up), batch --batch x vocab --vocab,
float32 logits, temperature 0.2, top_p 0.9 (the model card's sampling):
- ``topp``: what vLLM 0.26 runs per step with its Triton sampler (VLLM_USE_FLASHINFER_SAMPLER=0):
  divide by the temperature, ``apply_top_k_top_p`` (Triton kernel for batches >= 8), softmax,
  exponential-race sampling (``random_sample``).
- ``greedy``: ``argmax``, what the greedy pass did instead.
Logit spreads: ``equal`` (every logit the same), ``flat`` (std 0.002: dummy weights), ``spread``
(std 1), ``confident`` and ``peaked`` (std 1 plus one token 5.5 or 8 above the rest, as a model
sure of the next token), ``wide`` and ``huge`` (std 100 and 10,000: activations of a random-weight
model that grow over a long output, a guess to test against the engine's late decode steps). The nucleus size is measured, not assumed.
Each spread in float32 and in bfloat16 (--dtypes): vLLM 0.26's GPU model runner keeps the model's
bf16 logits through temperature and top-p (its V1 sampler converted them to float32 first), and
bf16 rounding turns dummy weights' nearly flat logits into long runs of equal values.

Run on the GPU machine: ``python bench/bench_sampler.py --results /tmp/res/sampler.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

os.environ.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")

# (std of the logits, lead of one token per row), in logits before the temperature division
SPREADS = {"equal": (0.0, 0.0), "flat": (0.002, 0.0), "spread": (1.0, 0.0), "confident": (1.0, 5.5), "peaked": (1.0, 8.0),
           "wide": (100.0, 0.0), "huge": (1e4, 0.0)}


def make_logits(torch: Any, batch: int, vocab: int, std: float, lead: float, seed: int) -> Any:
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(batch, vocab, generator=g, device="cuda") * std
    if lead:
        top = torch.randint(0, vocab, (batch,), generator=g, device="cuda")
        x[torch.arange(batch, device="cuda"), top] += lead
    return x


def nucleus_size(torch: Any, logits: Any, temperature: float, top_p: float) -> float:
    """Mean number of tokens in the top-p nucleus (vLLM's rule: keep while the mass above < p)."""
    probs = (logits / temperature).softmax(dim=-1)
    sorted_p, _ = probs.sort(dim=-1, descending=True)
    above = sorted_p.cumsum(dim=-1) - sorted_p
    return float((above < top_p).sum(dim=-1).float().mean().item())


def time_ms(torch: Any, fn: Any, iters: int) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=151936)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--results", default="sampler.jsonl")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    args = ap.parse_args()

    import torch
    from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p, random_sample

    temperature, top_p = 0.2, 0.9
    p = torch.full((args.batch,), top_p, device="cuda")
    t0 = time.time()
    apply_top_k_top_p(torch.randn(args.batch, args.vocab, device="cuda"), None, p)  # Triton JIT, once
    torch.cuda.synchronize()
    jit_s = time.time() - t0
    for dtype_name, name in [(d, n) for d in args.dtypes.split(",") for n in SPREADS]:
        std, lead = SPREADS[name]
        base = make_logits(torch, args.batch, args.vocab, std, lead, seed=1).to(getattr(torch, dtype_name))
        apply_top_k_top_p(base.div(temperature), None, p)  # a Triton JIT per dtype, outside the timing

        def topp(base: Any = base) -> Any:
            logits = base.div(temperature)  # vLLM divides in place; a copy keeps base for the next call
            logits = apply_top_k_top_p(logits, None, p)
            probs = logits.softmax(dim=-1, dtype=torch.float32)
            return random_sample(probs, {})

        def greedy(base: Any = base) -> Any:
            return base.argmax(dim=-1)

        row = {
            "row": "sampler", "spread": name, "dtype": dtype_name, "std": std, "lead": lead, "batch": args.batch, "vocab": args.vocab,
            "nucleus_tokens": round(nucleus_size(torch, base.float(), temperature, top_p), 1),
            "topp_ms": round(time_ms(torch, topp, args.iters), 3),
            "greedy_ms": round(time_ms(torch, greedy, args.iters), 3),
            "first_call_s": round(jit_s, 1),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()),
        }
        print("RESULT", json.dumps(row), flush=True)
        with open(args.results, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
