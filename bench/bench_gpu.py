"""GPU benchmark of the vLLM engine (LightOnOCR-2-1B, dummy weights) -- rows engine, daemon, seed.

Run on the GPU machine (see bench/RESULTS.md for the figures and bench/device_run.sh for the call):

    python bench/bench_gpu.py pages  --dir W --docs 32 --pages-per-doc 8     # make PDFs + pre-rendered PNGs
    python bench/bench_gpu.py engine --dir W [--mbt 16384] [--seqs 256]       # LLM.generate (offline)
    python bench/bench_gpu.py engine-async --dir W ...                        # AsyncLLM, all pages at once
    python bench/bench_gpu.py daemon --dir W ...                              # ocr-daemon run + inbox drop
    python bench/bench_gpu.py seed   --dir W --pages 16                       # vllm serve + 1-at-a-time client
    python bench/bench_gpu.py report --results R.jsonl                        # markdown table

Every row uses the same engine settings (``daemon.engines.vllm_engine.engine_args`` of one config),
output forced to ``--out-tokens`` tokens per page (``ignore_eos``), pages of 1176x1540 px
(42x55 cells of 28 px = 2310 image tokens). Each row appends one JSON line to ``--results``.
GPU memory is sampled with nvidia-smi (whole card, all processes) every 0.5 s during each row.

Each row records what really ran (bench/rowfacts.py): ``commit``, ``run`` (``$OCR_BENCH_RUN``:
rows of one device session), ``patch`` = the Pixtral encoder the engine core ran (its marker
file; ``patch_asked`` = what the row asked for: ``--pixtral-patch``, or
``$OCR_DAEMON_PIXTRAL_PATCH``, which wins), ``in_force`` = vLLM's settings after start (block
size, KV dtype, batch limits; ``daemon.engines.vllm_engine.settings_in_force``), ``engine_log`` =
the attention backend and flash-attention version vLLM's engine core logged, ``sampling``, and for
the daemon row ``daemon`` = page guards, autorotate, workers, stability delay as the daemon loaded
them. The flat ``mbt seqs kv attn block`` keys are the arguments asked for.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PAGE_PT = (588, 770)  # rendered at 2x -> 1176x1540 px


# ----------------------------------------------------------------------------- helpers


class GpuMem:
    """Peak of nvidia-smi memory.used (MiB) while active."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                    capture_output=True, text=True, timeout=5,
                ).stdout
                used = max(int(x) for x in out.split())
                if used > self.peak:
                    self.peak = used
                    # printed as it rises, so a row killed by its time limit still tells its peak
                    print(f"GPUMEM peak_mib={used}", flush=True)
            except Exception:
                pass
            self._stop.wait(0.5)

    def __enter__(self) -> GpuMem:
        self._t.start()
        return self

    def __exit__(self, *a: object) -> None:
        self._stop.set()
        self._t.join(2)


def cfg_for(args: argparse.Namespace) -> Any:
    from daemon.config import EngineCfg

    v: dict[str, Any] = {
        "load_format": "dummy",
        "max_num_batched_tokens": args.mbt,
        "max_num_seqs": args.seqs,
        "gpu_memory_utilization": args.gpu_util,
        "max_pages_in_flight": args.in_flight,
        "kv_cache_dtype": args.kv_dtype,
        # one GPU unless the row asks (--dp): a row's GPU count is a setting it names
        "data_parallel_size": args.dp if args.dp else "auto",
        **_attn_settings(args),
    }
    if args.profile:
        v["profile"] = args.profile
    v["pixtral_patch"] = args.pixtral_patch
    return EngineCfg(kind="vllm", model=str(args.model), vllm=v, sampling={"max_tokens": args.out_tokens}, debug=bench_debug(args))


def bench_debug(args: argparse.Namespace, daemon: bool = False) -> dict[str, Any]:
    """``engine.debug`` of the rows: output forced to ``--out-tokens`` (so the page guards, which
    would band every "truncated" page, are off); for the daemon row also vLLM's JIT monitor
    logging every kernel compiled after start, and with ``--iter-log`` every engine step (the
    engine rows set these on their own engine arguments)."""
    vllm_args: dict[str, Any] = {}
    if daemon:
        vllm_args["jit_monitor_verbose"] = True
        if args.iter_log:
            vllm_args.update(enable_logging_iteration_details=True, disable_log_stats=False)
    return {"ignore_eos": True, "page_guards": False, "vllm_args": vllm_args, "pixtral_marker": args.marker}


def _attn_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The attention kernel and KV block of the row (only when set: vLLM's own choice otherwise)."""
    out: dict[str, Any] = {}
    if args.attn != "auto":
        out["attention_backend"] = args.attn
    if args.block_size:
        out["block_size"] = args.block_size
    return out


def _block_size(args: argparse.Namespace) -> int | str:
    """The KV block the row's engine got (the daemon's rule for fp8 included), "default" for vLLM's."""
    from daemon.engines.vllm_engine import engine_args

    return int(engine_args(cfg_for(args)).get("block_size", 0)) or "default"


def _attn_tag(args: argparse.Namespace) -> str:
    """File-name suffix for a row with its own attention settings ("" with vLLM's)."""
    return "".join(f"-{v}" for v in _attn_settings(args).values())


def engine_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    from daemon.engines.vllm_engine import data_parallel_size, engine_args, gpu_total_memory

    cfg = cfg_for(args)
    kw = engine_args(cfg, dp_size=data_parallel_size(cfg), gpu_total_bytes=gpu_total_memory())
    kw["disable_log_stats"] = True
    return kw


def sampling(args: argparse.Namespace, **extra: Any) -> Any:
    from vllm import SamplingParams

    return SamplingParams(**{**sampling_fields(args), **extra})


#: The model card's sampling, as the daemon's defaults (engine.sampling).
TEMPERATURE, TOP_P = 0.2, 0.9


def sampling_fields(args: argparse.Namespace, greedy: bool = False) -> dict[str, Any]:
    """The sampling of the engine rows' measured pass (recorded with the row)."""
    if greedy:
        return {"temperature": 0.0, "top_p": 1.0, "max_tokens": args.out_tokens, "ignore_eos": True}
    return {"temperature": TEMPERATURE, "top_p": TOP_P, "max_tokens": args.out_tokens, "ignore_eos": True}


def patch_engine(args: argparse.Namespace) -> None:
    """Patch the Pixtral encoder as the row asks, before vLLM forks its engine core, which notes
    in the row's marker file what it ran."""
    from daemon.engines.pixtral_patch import patch_pixtral_attention, resolve_mode, set_marker

    set_marker(args.marker)
    patch_pixtral_attention(resolve_mode(args.pixtral_patch))


def engine_facts(args: argparse.Namespace, vllm_config: Any, kw: dict[str, Any], greedy: bool = False) -> dict[str, Any]:
    """What an engine row (vLLM in this process) really ran with; ``kw``: the arguments it gave vLLM."""
    from rowfacts import engine_log_facts, own_log_text, patch_applied

    from daemon.engines.vllm_engine import settings_in_force

    return {"patch": patch_applied(Path(args.marker)), "in_force": settings_in_force(vllm_config),
            "engine_log": engine_log_facts(own_log_text()), "sampling": sampling_fields(args, greedy),
            "vllm_args": {k: v if isinstance(v, (bool, int, float, str, type(None))) else str(v) for k, v in kw.items()}}


def load_pages(args: argparse.Namespace) -> list[Any]:
    from PIL import Image

    files = sorted((Path(args.dir) / "png").glob("*.png"))[: args.pages or None]
    return [Image.open(f).convert("RGB") for f in files]


def record(args: argparse.Namespace, row: dict[str, Any], facts: dict[str, Any]) -> None:
    """Append the row with when, which code, what was asked and ``facts`` (what really ran)."""
    from rowfacts import git_commit

    from daemon.engines.pixtral_patch import resolve_mode

    row.update(
        date=time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime()), run=os.environ.get("OCR_BENCH_RUN", ""),
        commit=git_commit(), machine=_gpu_name(),
        mbt=args.mbt, seqs=args.seqs, out_tokens=args.out_tokens, profile=args.profile or "default",
        patch_asked=resolve_mode(args.pixtral_patch), kv=args.kv_dtype,
        attn=args.attn, block=_block_size(args), dp=args.dp or "auto", render_nice=args.render_nice if args.render_nice >= 0 else "auto",
    )
    row.update(facts)
    print("RESULT", json.dumps(row), flush=True)
    with open(args.results, "a") as f:
        f.write(json.dumps(row) + "\n")


@functools.cache
def _gpu_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=10).stdout
        return ", ".join(x.strip() for x in out.splitlines() if x.strip()) or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ----------------------------------------------------------------------------- pages


def make_pages(args: argparse.Namespace) -> None:
    """PDFs of ``--pages-per-doc`` pages of dense text + each page pre-rendered as PNG (2x), and
    the same documents as scans (``scan/``: each page its 2x PNG in an image-only PDF page, no
    text layer) for the daemon row with ``--scans``."""
    import random

    import pymupdf as fitz

    d = Path(args.dir)
    (d / "pdf").mkdir(parents=True, exist_ok=True)
    (d / "png").mkdir(parents=True, exist_ok=True)
    (d / "scan").mkdir(parents=True, exist_ok=True)
    rnd = random.Random(7)
    words = ["invoice", "total", "amount", "date", "payment", "account", "reference", "order", "customer", "tax", "due"]
    n = 0
    for di in range(args.docs):
        doc = fitz.open()
        for _ in range(args.pages_per_doc):
            page = doc.new_page(width=PAGE_PT[0], height=PAGE_PT[1])
            y = 40.0
            while y < PAGE_PT[1] - 30:
                line = " ".join(rnd.choice(words) for _ in range(rnd.randint(6, 12)))
                page.insert_text((36, y), f"{line} {rnd.randint(1, 99999)}", fontsize=10)
                y += 14
            pix = page.get_pixmap(matrix=fitz.Matrix(2, 2))
            pix.save(str(d / "png" / f"p{n:05d}.png"))
            n += 1
        doc.save(str(d / "pdf" / f"doc{di:03d}.pdf"))
        doc.close()
        scan = fitz.open()
        for k in range(n - args.pages_per_doc, n):
            sp = scan.new_page(width=PAGE_PT[0], height=PAGE_PT[1])
            sp.insert_image(sp.rect, filename=str(d / "png" / f"p{k:05d}.png"))
        scan.save(str(d / "scan" / f"doc{di:03d}.pdf"))
        scan.close()
    for k in range(3):  # distinct content: the journal would link identical files as duplicates
        one = fitz.open()
        p = one.new_page(width=PAGE_PT[0], height=PAGE_PT[1])
        for j in range(40):
            p.insert_text((36, 60 + 16 * j), f"single page latency probe {k} line {j} {rnd.randint(1, 10**9)}", fontsize=11)
        one.save(str(d / f"one{k}.pdf"))
    big = fitz.open()  # the "300-page PDF" of the issue, for --mixed
    for j in range(args.big_pages):
        p = big.new_page(width=PAGE_PT[0], height=PAGE_PT[1])
        y = 40.0
        while y < PAGE_PT[1] - 30:
            p.insert_text((36, y), f"big document page {j + 1} " + " ".join(rnd.choice(words) for _ in range(8)), fontsize=10)
            y += 14
    big.save(str(d / "big.pdf"))
    print(f"wrote {args.docs} PDFs x {args.pages_per_doc} pages, {n} PNGs and a {args.big_pages}-page big.pdf in {d}")


# ----------------------------------------------------------------------------- rows


def row_engine(args: argparse.Namespace) -> None:
    """Offline ``LLM.generate`` of the pre-rendered pages (vLLM's own serial preprocessing included)."""
    from vllm import LLM

    from daemon.engines.vllm_engine import VllmEngine

    patch_engine(args)
    pages = load_pages(args)
    kw = engine_kwargs(args)
    kw.pop("renderer_num_workers", None)  # offline LLM uses the synchronous renderer
    t0 = time.time()
    llm = LLM(**kw)
    t_start = time.time() - t0
    tok = llm.get_tokenizer()
    prompt = tok.apply_chat_template([{"role": "user", "content": [{"type": "image"}]}], tokenize=False, add_generation_prompt=True)
    warm = [{"prompt": prompt, "multi_modal_data": {"image": _one_pixel_changed(im, 7)}} for im in pages[: VllmEngine.warmup_pages]]
    llm.generate(warm, sampling(args, max_tokens=VllmEngine.warmup_tokens), use_tqdm=False)
    reqs = [{"prompt": prompt, "multi_modal_data": {"image": im}} for im in pages]
    with GpuMem() as mem:
        t1 = time.time()
        outs = llm.generate(reqs, sampling(args), use_tqdm=False)
        dt = time.time() - t1
    toks = sum(len(o.outputs[0].token_ids) for o in outs)
    record(args, {"row": "engine", "pages": len(pages), "seconds": round(dt, 2), "pages_per_s": round(len(pages) / dt, 3),
                  "out_tokens_total": toks, "gpu_mem_peak_mib": mem.peak, "engine_start_s": round(t_start, 1)},
           engine_facts(args, getattr(llm.llm_engine, "vllm_config", None), kw))


def row_engine_async(args: argparse.Namespace) -> None:
    """``AsyncLLM`` with every page submitted at once (renderer thread pool preprocessing)."""
    from vllm import AsyncEngineArgs
    from vllm.sampling_params import RequestOutputKind
    from vllm.v1.engine.async_llm import AsyncLLM

    from daemon.engines.textguard import pad_to_multiple
    from daemon.engines.vllm_engine import VllmEngine

    patch_engine(args)
    if args.sampler_trace:
        install_sampler_trace(args.sampler_trace)
    pages = [pad_to_multiple(im, 28) for im in load_pages(args)]
    kw = engine_kwargs(args)
    if args.profile_decode:
        # torch profiler in the engine core over decode steps at full batch: skip the steps that
        # encode and prefill the 256 pages (~40 at 16384 tokens a step), then 20 steps; vLLM writes
        # a table of CUDA time by kernel to DIR/profiler_out_0.txt
        from vllm.config import ProfilerConfig

        Path(args.profile_decode).mkdir(parents=True, exist_ok=True)
        kw["profiler_config"] = ProfilerConfig(
            profiler="torch", torch_profiler_dir=str(Path(args.profile_decode).resolve()), torch_profiler_with_stack=False,
            ignore_frontend=True, delay_iterations=args.profile_delay, max_iterations=args.profile_iters,
        )
    if args.iter_log:
        # one log line per engine step from vLLM's stat logger: context/generation requests and
        # tokens, encoder inputs, elapsed ms; PASS markers below tell bench/iter_summary.py which
        # pass each step belongs to
        kw["disable_log_stats"] = False
        kw["enable_logging_iteration_details"] = True
    if args.jit_verbose:
        # vLLM's JIT monitor logs every kernel compiled after start, with its specialisation
        # (by default only the first one, once)
        kw["jit_monitor_verbose"] = True

    async def main() -> None:
        t0 = time.time()
        llm = AsyncLLM.from_engine_args(AsyncEngineArgs(**kw))
        t_start = time.time() - t0
        tok = llm.renderer.get_tokenizer()
        prompt = tok.apply_chat_template([{"role": "user", "content": [{"type": "image"}]}], tokenize=False, add_generation_prompt=True)
        sp = sampling(args, output_kind=RequestOutputKind.FINAL_ONLY)
        if args.greedy:
            sp = sampling(args, temperature=0.0, top_p=1.0, output_kind=RequestOutputKind.FINAL_ONLY)
        ids = iter(range(10**9))

        rendered_at: list[float] = []  # when each page's input processing ended (time.time())

        async def one(im: Any, sp: Any = sp) -> int:
            p: dict[str, Any] = {"prompt": prompt, "multi_modal_data": {"image": im}}
            if args.no_resize:
                p["mm_processor_kwargs"] = {"do_resize": False}
            inp = await llm.renderer.render_cmpl_async([p])
            rendered_at.append(time.time())
            last = None
            async for out in llm.generate(inp[0], sp, f"r{next(ids)}"):
                last = out
            assert last is not None
            return len(last.outputs[0].token_ids)

        # the daemon's warm-up (one page alone, then VllmEngine.warmup_pages pages of
        # warmup_tokens decoding together), so that the measured pass pays no one-time cost the
        # daemon does not pay either; on copies with one pixel changed, as the later passes
        warm_sp = sampling(args, max_tokens=VllmEngine.warmup_tokens, output_kind=RequestOutputKind.FINAL_ONLY)
        warm_pages = [_one_pixel_changed(im, 7) for im in pages[: VllmEngine.warmup_pages + 1]]
        t_w = time.time()
        await one(warm_pages[0], warm_sp)
        print(f"WARMUP first page alone {time.time() - t_w:.1f} s", flush=True)
        await asyncio.gather(*(one(im, warm_sp) for im in warm_pages[1:]))
        if args.profile_decode:
            await llm.start_profile()
        traced_before = len(Path(args.sampler_trace).read_text().splitlines()) if args.sampler_trace and Path(args.sampler_trace).exists() else 0
        rendered_at.clear()
        with GpuMem() as mem:
            t1 = time.time()
            mark("full", "start")
            toks = await asyncio.gather(*(one(im) for im in pages))
            mark("full", "end")
            dt = time.time() - t1
        if args.profile_decode:
            try:  # vLLM may have stopped it already after max_iterations
                await llm.stop_profile()
            except Exception as e:  # noqa: BLE001 - the table is written either way
                print(f"stop_profile: {e!r}", flush=True)
        row_name = "engine-async" + ("-profiled" if args.profile_decode else "") + ("-greedy" if args.greedy else "")
        # input processing of the pass's pages: when the first, the median and the last one were
        # ready to go to the engine core (s after the pass started), i.e. how long the engine
        # could not have started for want of input
        ready = _first_median_last([t - t1 for t in rendered_at])
        record(args, {"row": row_name, "pages": len(pages), "seconds": round(dt, 2), "pages_per_s": round(len(pages) / dt, 3),
                      "out_tokens_total": sum(toks), "gpu_mem_peak_mib": mem.peak, "engine_start_s": round(t_start, 1),
                      "no_resize": bool(args.no_resize),
                      "inputs_ready_s": ready}, engine_facts(args, getattr(llm, "vllm_config", None), kw, args.greedy))
        if args.sampler_trace:
            await asyncio.sleep(1)
            record(args, {"row": "engine-async-sampler-trace", "pages": len(pages),
                          **summarise_sampler_trace(args.sampler_trace, traced_before)}, engine_facts(args, getattr(llm, "vllm_config", None), kw, args.greedy))
        if args.phases or args.phases_short:
            await phases(llm, prompt, pages, dt, one, rendered_at)
        llm.shutdown()

    async def phases(llm: Any, prompt: str, pages: list[Any], full_s: float, one_page: Any, rendered_at: list[float]) -> None:
        """Split the row's time: input processing, encoder + prefill (1 token), text-only prefill."""
        split: dict[str, Any] = {"row": "engine-async-phases", "pages": len(pages), "full_s": round(full_s, 2)}
        t = time.time()
        rendered = await asyncio.gather(*(llm.renderer.render_cmpl_async([{"prompt": prompt, "multi_modal_data": {"image": im}}])
                                          for im in pages))
        split["processing_s"] = round(time.time() - t, 2)
        from vllm.sampling_params import RequestOutputKind

        one = sampling(args, max_tokens=1, output_kind=RequestOutputKind.FINAL_ONLY)
        ids = iter(range(10**9))

        async def run(inp: Any, sp: Any = one) -> None:
            async for _ in llm.generate(inp, sp, f"p{next(ids)}"):
                pass

        t = time.time()
        mark("encoder_prefill", "start")
        await asyncio.gather(*(run(r[0]) for r in rendered))
        mark("encoder_prefill", "end")
        split["encoder_prefill_s"] = round(time.time() - t, 2)
        try:  # the same number of prompt tokens without an image: prefill alone
            r0 = rendered[0][0]
            ptoks = r0.get("prompt_token_ids") if isinstance(r0, dict) else getattr(r0, "prompt_token_ids", None)
            n_tok = len(ptoks) if ptoks else 2400
            token_prompts = [{"prompt_token_ids": [100 + (i * 7 + j) % 50000 for j in range(n_tok)]} for i in range(len(pages))]
            try:
                text = [r[0] for r in await asyncio.gather(*(llm.renderer.render_cmpl_async([p]) for p in token_prompts))]
            except Exception:  # noqa: BLE001 - older/newer renderer API: hand the token prompt over as is
                text = token_prompts
            t = time.time()
            mark("prefill_only", "start")
            await asyncio.gather(*(run(r) for r in text))
            mark("prefill_only", "end")
            split["prefill_only_s"] = round(time.time() - t, 2)
            split["prompt_tokens"] = n_tok
        except Exception as e:  # noqa: BLE001 - a diagnostic; the row itself is recorded above
            split["prefill_only_error"] = repr(e)[:300]
        split["decode_s_est"] = round(full_s - split["encoder_prefill_s"], 2)
        # Two more full runs like the measured one (raw images through vLLM's renderer): greedy
        # sampling (what top-p costs), then top-p again (the order effect, so the greedy figure is
        # compared with a run made under the same conditions). Each pass gets its own copies of the
        # pages with one pixel changed: the engine runs with vLLM's processor cache off
        # (mm_processor_cache_gb 0), so this changes nothing today; it keeps the passes fresh inputs
        # if a row is ever run with the cache on.
        greedy = sampling(args, temperature=0.0, top_p=1.0, output_kind=RequestOutputKind.FINAL_ONLY)
        topp = sampling(args, output_kind=RequestOutputKind.FINAL_ONLY)
        passes = () if args.phases_short else (("greedy_full_s", greedy), ("topp_again_s", topp))
        for k, (name, sp) in enumerate(passes, start=1):
            fresh = [_one_pixel_changed(im, k) for im in pages]
            rendered_at.clear()
            t = time.time()
            mark(name.removesuffix("_s"), "start")
            await asyncio.gather(*(one_page(im, sp) for im in fresh))
            mark(name.removesuffix("_s"), "end")
            split[name] = round(time.time() - t, 2)
            split[name.removesuffix("_s") + "_inputs_ready_s"] = _first_median_last([x - t for x in rendered_at])
        record(args, split, engine_facts(args, getattr(llm, "vllm_config", None), kw, args.greedy))

    asyncio.run(main())


def install_sampler_trace(path: str) -> None:
    """Time vLLM's top-k/top-p step on every engine step, and look at the logits now and then.

    Patched here, in the bench process, before the engine starts: vLLM forks its engine-core
    process, which inherits the patch (as it does the Pixtral one). Every call's GPU time is taken
    with CUDA events; every 25th call also records the logits' max, min, std and non-finite count
    (they answer whether the step gets slower as a random-weight model's outputs grow, and why).
    Lines go to ``path`` (JSON) in blocks of 50 calls, each block after one synchronize, so the
    engine's CPU/GPU overlap is broken once per ~50 steps. A diagnostic: not for timed rows.
    """
    import torch
    from vllm.v1.worker.gpu.sample import sampler as v2_sampler
    from vllm.v1.worker.gpu.sample import states as v2_states

    orig = v2_sampler.apply_top_k_top_p
    pending: list[tuple[int, int, Any, Any, Any]] = []
    calls = [0]

    def flush() -> None:
        pending[-1][3].synchronize()
        with open(path, "a") as f:
            for n, rows, a, b, st in pending:
                row: dict[str, Any] = {"call": n, "rows": rows, "ms": round(a.elapsed_time(b), 4)}
                if st is not None:
                    row.update(zip(("max", "min", "std", "nonfinite"), (round(float(v), 5) for v in st.tolist()), strict=True))
                f.write(json.dumps(row) + "\n")
        pending.clear()

    def traced(logits: Any, k: Any, p: Any) -> Any:
        if torch.cuda.is_current_stream_capturing() or (k is None and p is None):
            return orig(logits, k, p)
        calls[0] += 1
        st = None
        if calls[0] % 25 == 0:
            x = logits.float()
            st = torch.stack([x.amax(), x.amin(), x.std(), (~torch.isfinite(x)).sum().float()])
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        out = orig(logits, k, p)
        b.record()
        pending.append((calls[0], int(logits.shape[0]), a, b, st))
        if len(pending) >= 50:
            flush()
        return out

    v2_sampler.apply_top_k_top_p = traced
    if hasattr(v2_states, "apply_top_k_top_p"):
        v2_states.apply_top_k_top_p = traced


def summarise_sampler_trace(path: str, skip: int = 0) -> dict[str, Any]:
    """The trace's top-p step time by tenths of the calls, its slowest calls, and the logit stats
    (the first ``skip`` lines, written before the measured pass, left out)."""
    from iter_summary import median_by_tenth  # bench/, beside this script

    rows = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()][skip:] if Path(path).exists() else []
    if not rows:
        return {"sampler_trace_calls": 0}
    n = len(rows)
    ms = [r["ms"] for r in rows]
    stats = [r for r in rows if "std" in r]
    return {
        "sampler_trace_calls": n, "topp_total_s": round(sum(ms) / 1e3, 2),
        "topp_median_ms_by_tenth": median_by_tenth(ms, 3) if n >= 10 else ms,
        "topp_slowest": sorted(rows, key=lambda r: -r["ms"])[:5],
        "logits_by_tenth": [stats[k * len(stats) // 10] for k in range(10)] if len(stats) >= 10 else stats,
    }


def mark(name: str, what: str) -> None:
    """A pass boundary in the log, for bench/iter_summary.py (vLLM's step lines go to the same stream)."""
    print(f"PASS {name} {what} {time.time():.3f}", flush=True)


def _first_median_last(xs: list[float]) -> list[float]:
    """``[first, median, last]`` of ``xs``, rounded to 10 ms (``[]`` for none)."""
    ys = sorted(xs)
    return [round(ys[0], 2), round(ys[len(ys) // 2], 2), round(ys[-1], 2)] if ys else []


def _one_pixel_changed(im: Any, k: int) -> Any:
    """A copy of the image whose top-left pixel differs (a new content hash, the same cost)."""
    c = im.copy()
    r, g, b = c.getpixel((0, 0))[:3]
    c.putpixel((0, 0), ((r + 37 * k) % 256, g, b))
    return c


def row_vllm_engine(args: argparse.Namespace) -> None:
    """Our ``VllmEngine`` (submit() from 16 threads), no daemon around it."""
    import concurrent.futures as cf

    from daemon.engines.base import PageRequest
    from daemon.engines.vllm_engine import VllmEngine

    pages = load_pages(args)
    eng = VllmEngine(cfg_for(args))
    t0 = time.time()
    eng.start()
    t_start = time.time() - t0
    eng.recognize([PageRequest("warm", i, im) for i, im in enumerate(pages[:8])])
    with GpuMem() as mem, cf.ThreadPoolExecutor(16) as ex:
        t1 = time.time()
        futs = list(ex.map(lambda ia: eng.submit(PageRequest(f"doc-{ia[0] // 8}", ia[0] % 8, ia[1], priority=ia[0] % 8)), enumerate(pages)))
        res = [f.result() for f in futs]
        dt = time.time() - t1
    eng.close()
    from rowfacts import engine_log_facts, own_log_text, patch_applied

    record(args, {"row": "vllm-engine", "pages": len(pages), "seconds": round(dt, 2), "pages_per_s": round(len(pages) / dt, 3),
                  "out_tokens_total": sum(int(r.meta.get("tokens", 0)) for r in res), "gpu_mem_peak_mib": mem.peak,
                  "engine_start_s": round(t_start, 1)},
           {"patch": patch_applied(Path(args.marker)), "in_force": eng.in_force, "engine_log": engine_log_facts(own_log_text()),
            "sampling": sampling_fields(args), "page_guards": eng.policy.guards})


def daemon_config(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The daemon row's rules.yaml (as data): the engine rows' settings, the bench's engine.debug,
    autorotate off (the pages are upright; OSD would only cost CPU), ``--doc-workers``."""
    return {
        "daemon": {"state_dir": str(work / "state"), "failed_dir": str(work / "failed"), "workers": args.doc_workers,
                   "render_workers": args.render_workers, "pages_in_flight_per_document": 64, "log_level": "INFO",
                   "rescan_interval": 3600, "http": None, **({"render_nice": args.render_nice} if args.render_nice >= 0 else {})},
        # text_layer ocr: the bench's PDFs are born-digital (insert_text), and under the default
        # auto the daemon reads them from their text layer without the GPU (2026-12-01 06:15,
        # e0ec28e: 256 pages in 2.27 s); the row measures the engine path, as a scan would take.
        # --scans --text-layer auto: the same pages as image-only PDFs under the default, i.e. the
        # text-layer check on every page before it goes to the engine (issue 15: it must not slow
        # the GPU rows)
        "engine": {"kind": args.engine_kind, "model": str(args.model), "autorotate": False, "text_layer": args.text_layer,
                   "sampling": {"max_tokens": args.out_tokens}, "debug": bench_debug(args, daemon=True),
                   "vllm": {"load_format": "dummy", "max_num_batched_tokens": args.mbt, "max_num_seqs": args.seqs,
                            "gpu_memory_utilization": args.gpu_util, "max_pages_in_flight": args.in_flight,
                            "kv_cache_dtype": args.kv_dtype, "pixtral_patch": args.pixtral_patch, **_attn_settings(args),
                            "data_parallel_size": args.dp if args.dp else "auto",
                            **({"profile": args.profile} if args.profile else {})},
                   # engine.kind openai (bench_serve.py): the server it posts to, all pages in flight
                   **({"openai": {"base_urls": [args.openai_url], "concurrency": args.in_flight, "timeout": 1800}}
                      if args.engine_kind == "openai" else {})},
        "inboxes": [{"path": str(work / "inbox"), "stability_delay": 0.5}],
        "routes": [{"name": "all", "formats": ["txt", "md", "json"], "destination": str(work / "out")}],
    }


def _daemon_config(args: argparse.Namespace, work: Path) -> Path:
    import yaml

    p = work / "rules.yaml"
    p.write_text(yaml.safe_dump(daemon_config(args, work)))
    return p


def _stop(proc: subprocess.Popen[bytes], sig: int, grace: float) -> None:
    """Send ``sig``; SIGKILL if the process is still there after ``grace`` seconds."""
    proc.send_signal(sig)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()


def _count_json(folder: Path) -> int:
    return sum(1 for _ in folder.rglob("*.json")) if folder.exists() else 0


def row_daemon(args: argparse.Namespace) -> None:
    """``ocr-daemon run`` (forced output length through ``engine.debug``); PDFs dropped into the inbox at once."""
    if args.scans and not hasattr(args, "row_name"):
        args.row_name = "daemon-scans"
    work = Path(args.dir) / f"daemon-{int(time.time())}"
    for sub in ("inbox", "out", "state", "failed", "stage"):
        (work / sub).mkdir(parents=True)
    conf = _daemon_config(args, work)
    # append mode: with --iter-log the bench writes PASS markers into the same file (O_APPEND keeps
    # both writers' lines whole)
    log = open(work / "daemon.log", "a")  # noqa: SIM115 - the daemon writes it until the finally below
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.iter_log:
        env["OCR_BENCH_ITER_LOG"] = "1"  # vLLM's per-step lines and RENDERED times (daemon_bench_wrapper.py)
    cmd = [sys.executable, str(ROOT / "bench" / "daemon_bench_wrapper.py"), "run", "--config", str(conf), "--engine", args.engine_kind]
    t0 = time.time()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT))
    try:
        while "initial scan" not in (work / "daemon.log").read_text():
            if proc.poll() is not None:
                raise SystemExit(f"daemon exited with {proc.returncode}; see {work / 'daemon.log'}")
            time.sleep(0.5)
        t_ready = time.time() - t0
        out = work / "out"
        # warm-up + idle latency: one 1-page file into the idle daemon
        lat = []
        for k in range(2):
            src = work / "stage" / f"one{k}.pdf"
            shutil.copy(Path(args.dir) / f"one{k}.pdf", src)
            before = _count_json(out)
            t1 = time.time()
            os.rename(src, work / "inbox" / src.name)
            while _count_json(out) <= before:
                time.sleep(0.02)
            lat.append(time.time() - t1)
        pdfs = sorted((Path(args.dir) / ("scan" if args.scans else "pdf")).glob("*.pdf"))[: args.docs_limit or None]
        staged = []
        for p in pdfs:
            dst = work / "stage" / p.name
            shutil.copy(p, dst)
            staged.append(dst)
        import pymupdf as fitz

        n_pages = sum(fitz.open(str(p)).page_count for p in staged)
        base = _count_json(out)
        with GpuMem() as mem:
            t1 = time.time()
            _daemon_log_mark(work, "daemon", "start", t1)
            for p in staged:
                os.rename(p, work / "inbox" / p.name)
            while _count_json(out) < base + len(staged):
                if proc.poll() is not None:
                    raise SystemExit(f"daemon died with {proc.returncode}")
                time.sleep(0.05)
            dt = time.time() - t1
            _daemon_log_mark(work, "daemon", "end", time.time())
        extra: dict[str, Any] = {}
        if args.iter_log:
            # the pages' input processing in vLLM's renderer, from the daemon's RENDERED lines:
            # first, median and last page ready to go to the engine core, in s after the drop
            # (the time has three decimals: a line glued to the next one still parses)
            rendered = [float(m.group(1)) for m in re.finditer(r"^RENDERED (\d+\.\d{3})", (work / "daemon.log").read_text(errors="replace"), re.M)]
            extra["inputs_ready_s"] = _first_median_last([t - t1 for t in rendered if t >= t1])
        failed = list((work / "failed").iterdir())
        mixed: dict[str, Any] = {}
        if args.mixed:
            mixed = _mixed_probe(args, work, proc)
        record(args, {**mixed, **extra, "row": getattr(args, "row_name", "daemon"), "pages": n_pages, "docs": len(staged), "seconds": round(dt, 2),
                      "pages_per_s": round(n_pages / dt, 3), "gpu_mem_peak_mib": mem.peak, "ready_s": round(t_ready, 1),
                      "idle_latency_s": [round(x, 2) for x in lat], "failed": len(failed),
                      "stability_delay_s": 0.5, "doc_workers": args.doc_workers}, daemon_row_facts(args, conf, work))
    finally:
        _stop(proc, signal.SIGTERM, 90)
        log.close()
        prefix = getattr(args, "row_name", "daemon")  # serve rows: their own copy, not the daemon row's
        shutil.copy(work / "daemon.log", Path(args.results).parent / f"{prefix}-{args.profile or 'default'}-{args.kv_dtype}{_attn_tag(args)}.log")


def daemon_row_facts(args: argparse.Namespace, conf: Path, work: Path) -> dict[str, Any]:
    """What the daemon row really ran with: its loaded config, its engine core's marker and log."""
    from rowfacts import daemon_facts, engine_log_facts, patch_applied

    from daemon.config import load_config

    logged = engine_log_facts((work / "daemon.log").read_text(encoding="utf-8", errors="replace"))
    daemon = daemon_facts(load_config(conf))
    return {"patch": patch_applied(Path(args.marker)), "in_force": logged.pop("in_force", {}), "engine_log": logged,
            "sampling": daemon.pop("sampling"), "daemon": daemon}


def _daemon_log_mark(work: Path, name: str, what: str, t: float) -> None:
    """A PASS marker (as ``mark``) appended to the daemon's log, for bench/iter_summary.py."""
    with open(work / "daemon.log", "a") as f:
        f.write(f"PASS {name} {what} {t:.3f}\n")


def _mixed_probe(args: argparse.Namespace, work: Path, proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    """A 1-page file dropped ``--mixed`` seconds after a big PDF: its latency, and the big one's time."""
    import pymupdf as fitz

    out = work / "out"
    big = work / "stage" / "big.pdf"
    shutil.copy(Path(args.dir) / "big.pdf", big)
    one = work / "stage" / "one2.pdf"
    shutil.copy(Path(args.dir) / "one2.pdf", one)
    big_pages = fitz.open(str(big)).page_count
    base = _count_json(out)
    t0 = time.time()
    os.rename(big, work / "inbox" / big.name)
    time.sleep(args.mixed)
    t1 = time.time()
    os.rename(one, work / "inbox" / one.name)
    small_s = None
    while _count_json(out) < base + 2:
        if proc.poll() is not None:
            raise SystemExit(f"daemon died with {proc.returncode}")
        if small_s is None and any(out.rglob("one2*.json")):
            small_s = time.time() - t1
        time.sleep(0.02)
    if small_s is None:
        small_s = time.time() - t1
    return {"mixed_big_pages": big_pages, "mixed_small_dropped_after_s": args.mixed,
            "mixed_small_latency_s": round(small_s, 2), "mixed_big_s": round(time.time() - t0, 2)}


def row_seed(args: argparse.Namespace) -> None:
    """``vllm serve`` with the model card's flags; a client posting one page at a time."""
    import base64
    import io

    pages = load_pages(args)
    port = 8765
    cmd = ["vllm", "serve", str(args.model), "--port", str(port), "--load-format", "dummy",
           "--limit-mm-per-prompt", '{"image": 1}', "--mm-processor-cache-gb", "0", "--no-enable-prefix-caching"]
    if shutil.which("vllm") is None:
        cmd = [sys.executable, "-m", "vllm.entrypoints.cli.main", *cmd[1:]]
    log = open(Path(args.results).parent / "seed-serve.log", "w")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    try:
        t0 = time.time()
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except Exception:
                if proc.poll() is not None:
                    raise SystemExit(f"vllm serve exited {proc.returncode}") from None
                time.sleep(1)
        t_ready = time.time() - t0

        def post(im: Any) -> int:
            buf = io.BytesIO()
            im.save(buf, format="PNG")
            url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
            body = {"model": str(args.model), "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
                    "max_tokens": args.out_tokens, "temperature": TEMPERATURE, "top_p": TOP_P, "ignore_eos": True}
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=600) as r:
                return int(json.load(r)["usage"]["completion_tokens"])

        post(pages[0])
        with GpuMem() as mem:
            t1 = time.time()
            toks = [post(im) for im in pages]
            dt = time.time() - t1
        from rowfacts import engine_log_facts

        serve_log = Path(args.results).parent / "seed-serve.log"
        record(args, {"row": "seed", "pages": len(pages), "seconds": round(dt, 2), "pages_per_s": round(len(pages) / dt, 3),
                      "out_tokens_total": sum(toks), "gpu_mem_peak_mib": mem.peak, "ready_s": round(t_ready, 1)},
               {"patch": "stock", "patch_asked": "off", "client": "one page at a time",
                # vllm serve with the model card's flags: vLLM's defaults for everything else
                "in_force": {"serve_args": cmd[cmd.index("serve") + 2:] if "serve" in cmd else cmd},
                "engine_log": engine_log_facts(serve_log.read_text(encoding="utf-8", errors="replace")),
                "sampling": {"temperature": TEMPERATURE, "top_p": TOP_P, "max_tokens": args.out_tokens, "ignore_eos": True}})
    finally:
        _stop(proc, signal.SIGINT, 60)
        log.close()


def report(args: argparse.Namespace) -> None:
    """A markdown table of the results file; rows of one run (``run``) are what ratios may use."""
    from rowfacts import SETTING_KEYS, settings_text

    rows = [json.loads(x) for x in Path(args.results).read_text().splitlines() if x.strip()]
    print("| run | row | settings (in force) | pages | seconds | pages/s | GPU mem peak (MiB) | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "pages" not in r:  # a CPU row of the same results file (cpu_cost): not a GPU throughput row
            print(f"| {r.get('run', '')} | {r['row']} | - | - | - | - | - | {json.dumps({k: v for k, v in r.items() if k.endswith('_ms')})} |")
            continue
        s = settings_text(r)
        if "seconds" not in r:  # a split or diagnostic row (phases, sampler trace): its figures as notes
            notes = {k: v for k, v in r.items() if k not in SETTING_KEYS}
            print(f"| {r.get('run', '')} | {r['row']} | {s} | {r['pages']} | - | - | - | {notes} |")
            continue
        notes = {k: v for k, v in r.items()
                 if k in ("engine_start_s", "ready_s", "idle_latency_s", "failed", "no_resize", "docs") or k.startswith("mixed_")}
        print(f"| {r.get('run', '')} | {r['row']} | {s} | {r['pages']} | {r['seconds']} | {r['pages_per_s']} | {r.get('gpu_mem_peak_mib')} | {notes} |")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("row", choices=["pages", "engine", "engine-async", "vllm-engine", "daemon", "seed", "serve", "report"])
    ap.add_argument("--dir", default="/tmp/benchwork")
    ap.add_argument("--model", default="/tmp/dummymodel")
    ap.add_argument("--results", default="/tmp/benchwork/results.jsonl")
    ap.add_argument("--docs", type=int, default=32)
    ap.add_argument("--pages-per-doc", type=int, default=8)
    ap.add_argument("--pages", type=int, default=0, help="use only the first N pre-rendered pages (0 = all)")
    ap.add_argument("--out-tokens", type=int, default=1000)
    ap.add_argument("--mbt", type=int, default=16384)
    ap.add_argument("--seqs", type=int, default=256)
    ap.add_argument("--gpu-util", type=float, default=0.85)
    ap.add_argument("--in-flight", type=int, default=512)
    ap.add_argument("--profile", default="")
    ap.add_argument("--kv-dtype", default="auto", choices=["auto", "fp8"])
    ap.add_argument("--attn", default="auto", choices=["auto", "FLASH_ATTN", "TRITON_ATTN"],
                    help="attention backend (engine.vllm.attention_backend)")
    ap.add_argument("--block-size", type=int, default=0, help="KV-cache block in tokens (0 = vLLM's)")
    ap.add_argument("--pixtral-patch", default="varlen", choices=["varlen", "per_image", "off"],
                    help="vision encoder (engine.vllm.pixtral_patch; off = vLLM's own); $OCR_DAEMON_PIXTRAL_PATCH wins when set")
    ap.add_argument("--greedy", action="store_true", help="engine-async: greedy sampling instead of the model card's")
    ap.add_argument("--profile-decode", default="", metavar="DIR",
                    help="engine-async: torch-profile 20 decode steps at full batch; CUDA time by kernel in DIR")
    ap.add_argument("--profile-delay", type=int, default=100, help="engine steps before --profile-decode starts")
    ap.add_argument("--profile-iters", type=int, default=20, help="engine steps that --profile-decode records")
    ap.add_argument("--sampler-trace", default="", metavar="FILE",
                    help="engine-async: time vLLM's top-p step on every engine step (and logit stats) into FILE; a diagnostic")
    ap.add_argument("--jit-verbose", action="store_true",
                    help="engine-async: vLLM's JIT monitor logs every kernel compile after start, not only the first")
    ap.add_argument("--iter-log", action="store_true",
                    help="engine-async, daemon: vLLM logs every engine step (batch make-up, elapsed ms); bench/iter_summary.py "
                         "reads it (for the daemon, from its log, with the pages' input-processing times)")
    ap.add_argument("--docs-limit", type=int, default=0, help="daemon row: drop only the first N PDFs (0 = all)")
    ap.add_argument("--big-pages", type=int, default=300, help="pages row: pages of big.pdf")
    ap.add_argument("--mixed", type=float, default=0.0,
                    help="daemon row: afterwards drop big.pdf, then one 1-page file this many seconds later; "
                         "record the small file's latency (0 = skip)")
    ap.add_argument("--phases-short", action="store_true",
                    help="engine-async: --phases without the two extra full passes (greedy, top-p again): the "
                         "encoder's share for a row that is slow (vLLM's own encoder) or a session short of time")
    ap.add_argument("--phases", action="store_true",
                    help="engine-async: after the row, time input processing alone, encoder+prefill (1 output token) "
                         "and text-only prefill of the same length, to split the time by stage")
    ap.add_argument("--no-resize", action="store_true")
    ap.add_argument("--doc-workers", type=int, default=32)
    ap.add_argument("--render-workers", type=int, default=0)
    ap.add_argument("--render-nice", type=int, default=-1, help="daemon row: daemon.render_nice (-1 = the daemon's default)")
    ap.add_argument("--engine-kind", default="vllm", help="daemon row: engine (tesseract for a CPU dry run)")
    ap.add_argument("--serve-port", type=int, default=8790, help="serve row: the vllm serve port (bench_serve.py)")
    ap.add_argument("--also-pages", type=int, default=0, help="serve row: a second client pass on the first N pages")
    ap.add_argument("--client-only", action="store_true", help="serve row: the client pass(es) only, no daemon row")
    ap.add_argument("--scans", action="store_true", help="daemon row: drop the image-only PDFs (scan/) instead of the born-digital ones")
    ap.add_argument("--text-layer", default="ocr", choices=["auto", "ocr"], help="daemon row: engine.text_layer")
    ap.add_argument("--dp", type=int, default=1, help="engine.vllm.data_parallel_size of the row (0 = auto: every visible GPU)")
    return ap


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    # the file each row's engine core notes the Pixtral encoder it ran in (pixtral_patch.mark)
    args.marker = str(Path(args.results).parent / f"pixtral-{args.row}-{os.getpid()}-{int(time.time())}.jsonl")
    return args


def main() -> None:
    args = parse_args()
    if args.row not in ("pages", "report") and args.engine_kind == "vllm":
        os.environ.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")
        if not Path(args.model, "config.json").exists():
            from daemon.engines.modelfolder import write_dummy_model

            write_dummy_model(Path(args.model))
    Path(args.results).parent.mkdir(parents=True, exist_ok=True)
    {"pages": make_pages, "engine": row_engine, "engine-async": row_engine_async, "vllm-engine": row_vllm_engine,
     "daemon": row_daemon, "seed": row_seed, "serve": _row_serve, "report": report}[args.row](args)


def _row_serve(args: argparse.Namespace) -> None:
    from bench_serve import row_serve

    row_serve(args)


if __name__ == "__main__":
    main()
