"""Resident vLLM engine serving LightOnOCR-2-1B (``engine.kind: vllm``).

Contract (see ``daemon.engines.base`` for the general engine contract):

- ``VllmEngine(engine_cfg)``; ``start()`` builds an in-process ``vllm`` ``AsyncLLM`` (the engine
  core runs in a child process vLLM forks) on a private asyncio event loop in a dedicated thread.
  ``engine_cfg.model`` is an HF repo id (uses the HF cache; downloads when there is network) or a
  local folder; a missing folder / no network raises ``FatalError(..., ExitCode.ENGINE)`` naming it.
- ``submit(PageRequest)`` is thread-safe and returns a ``concurrent.futures.Future[PageText]``.
  It blocks while ``cfg.vllm.max_pages_in_flight`` pages are unfinished (back-pressure). Every
  page is one request: the image alone in one user message through the model's chat template.
  ``priority`` maps onto vLLM's priority scheduling (lower runs sooner).
- Degenerate output (a loop until ``max_tokens``) is retried with a higher temperature up to
  ``cfg.vllm.repetition_retries`` times, then trimmed and flagged ``"repetition"``.
- Output stopped at ``max_tokens`` without looping (a dense page) is split into overlapping
  horizontal bands recognised separately and joined without the overlap (flag ``"banded"``; a band
  still truncated after one more split adds ``"truncated"``).
- Health: ``EngineDeadError`` from vLLM, or no finished request for ``cfg.vllm.hang_timeout``
  seconds while requests are in flight, restarts the engine with exponential backoff; in-flight
  pages are re-submitted (nothing lost). A page in flight at ``PAGE_KILL_LIMIT`` engine deaths
  is then run alone (isolated); if the engine dies again while it is the only suspect, its future
  fails with ``InputError`` (only that document fails).
- Warm-up: before ``start()`` returns, one blank page at the render size runs alone, then
  ``warmup_pages`` run through the engine together (``warmup_tokens`` each, EOS ignored so that
  they all decode in the same steps), so one-time costs (Triton JIT of the top-k/top-p sampling kernel, first encoder run) are
  paid at start rather than by the first user file or inside the first big batch. Triton compiles
  that kernel twice, for batch sizes that are multiples of 16 and for the others (it specialises
  integer arguments on divisibility by 16), so the warm-up reaches a batch of 16. A failed or slow
  warm-up is logged and does not stop the start.
- ``close(drain_timeout)`` stops taking pages, waits for in-flight ones up to ``drain_timeout``,
  then fails the rest with ``EngineDeadError`` (the pipeline re-queues them) and stops vLLM.

The Pixtral vision encoder of vLLM 0.26 attends over all images of an encoder step at once with a
dense block-diagonal mask (cost quadratic in images per step, and no flash kernel). ``start()``
patches it (``patch_pixtral_attention``) to one varlen flash-attention call over the images, which
computes the same function; the patch is inherited by the engine core because vLLM forks it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import functools
import itertools
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.base import Engine, InFlight, PageRequest
from daemon.engines.textguard import (
    find_repetition,
    join_bands,
    pad_to_multiple,
    split_bands,
    trim_repetition,
)
from daemon.errors import EngineDeadError, ExitCode, FatalError, InputError, TransientError
from daemon.models import PageText

log = logging.getLogger(__name__)

#: Engine deaths a page may be in flight for before it is run alone.
PAGE_KILL_LIMIT = 2
#: Temperatures tried after the configured one when a page loops.
RETRY_TEMPERATURES = (0.5, 0.8, 1.0)
#: Band splits: first 2 bands, then each still-truncated band once more into 2.
MAX_BAND_DEPTH = 2
GIB = 1 << 30


# ----------------------------------------------------------------------------- settings


#: KV-cache block (tokens) with ``kv_cache_dtype: fp8`` when the config names none.
FP8_BLOCK_SIZE = 64


def engine_args(cfg: EngineCfg, cpu_count: int | None = None) -> dict[str, Any]:
    """Keyword arguments for ``vllm.AsyncEngineArgs`` from the config (pure; unit-tested).

    The ``16gb`` profile fixes a KV-cache byte budget instead of a fraction of the card, and
    smaller batch limits, so that the whole process stays within 16 GiB whatever card it runs on.
    """
    v = cfg.vllm
    cpus = cpu_count or os.cpu_count() or 2
    args: dict[str, Any] = {
        "model": cfg.model,
        "dtype": v.dtype,
        "max_model_len": v.max_model_len,
        "max_num_seqs": v.max_num_seqs,
        "max_num_batched_tokens": v.max_num_batched_tokens,
        "gpu_memory_utilization": v.gpu_memory_utilization,
        "enforce_eager": v.enforce_eager,
        "load_format": v.load_format,
        "kv_cache_dtype": v.kv_cache_dtype,
        # One image per request (model card); pages never repeat, so no processor cache and no
        # prefix caching (the cache would only cost hashing); priority scheduling for small files.
        "limit_mm_per_prompt": {"image": 1},
        "mm_processor_cache_gb": 0,
        "enable_prefix_caching": False,
        "scheduling_policy": "priority",
        # Image preprocessing runs in this thread pool of the frontend (our process), off the loop.
        "renderer_num_workers": max(1, min(8, cpus // 2)),
        "disable_log_stats": False,
        "enable_log_requests": False,
    }
    if v.attention_backend != "auto":
        args["attention_backend"] = v.attention_backend
    if v.block_size:
        args["block_size"] = v.block_size
    elif v.kv_cache_dtype == "fp8":
        # FlashAttention 3 reads an fp8 cache faster in blocks of 64 tokens than in vLLM's 16:
        # 3-14 % per decode step on an H200 (bench/bench_attention.py, bench/RESULTS.md).
        args["block_size"] = FP8_BLOCK_SIZE
    if v.kv_cache_memory_bytes:
        args["kv_cache_memory_bytes"] = v.kv_cache_memory_bytes
    if v.profile == "16gb":
        # Weights ~2 GiB (bf16), activations of the vision encoder + CUDA graphs ~3 GiB, CUDA
        # context ~0.6 GiB: a 6 GiB KV cache (~55k tokens = ~16 pages of 2.3k image tokens +
        # 1k output) keeps the process near 12 GiB, leaving room for the desktop/driver.
        args["kv_cache_memory_bytes"] = v.kv_cache_memory_bytes or 6 * GIB
        args["max_num_seqs"] = min(v.max_num_seqs, 32)
        args["max_num_batched_tokens"] = min(v.max_num_batched_tokens, 4096)
        args["max_model_len"] = min(v.max_model_len, 8192)
        args["renderer_num_workers"] = max(1, min(4, cpus // 2))
    if "kv_cache_memory_bytes" in args:
        args.pop("gpu_memory_utilization")
    return args


def sampling_kwargs(cfg: EngineCfg, temperature: float | None = None, max_tokens: int | None = None) -> dict[str, Any]:
    """Keyword arguments for ``vllm.SamplingParams`` (without ``output_kind``)."""
    s = cfg.sampling
    return {
        "temperature": s.temperature if temperature is None else temperature,
        "top_p": s.top_p,
        "max_tokens": max_tokens or s.max_tokens,
        "skip_special_tokens": True,
    }


def check_model_source(model: str) -> None:
    """Raise ``FatalError`` when ``model`` is a path that does not exist (repo ids are left to HF)."""
    looks_like_path = model.startswith(("/", ".", "~")) or os.sep in model.strip("/").split("/", 1)[-1]
    p = Path(model).expanduser()
    if (looks_like_path or p.exists()) and not (p / "config.json").is_file():
        raise FatalError(
            f"model folder {p} does not exist or has no config.json; run "
            f"'ocr-daemon model fetch --dir {p}' where there is network, or set engine.model",
            ExitCode.ENGINE,
        )


def choose_sampler() -> str:
    """Pick vLLM's top-p/top-k sampler through ``VLLM_USE_FLASHINFER_SAMPLER``; returns its value.

    vLLM's default is FlashInfer's sampler, whose kernels FlashInfer compiles with ``nvcc`` at the
    first sampled step (unless its JIT cache package is installed); where there is no CUDA toolkit,
    as on a plain ``pip install vllm`` machine, that kills the engine at start (vllm-project/vllm
    issue 49497) and where FlashInfer is missing vLLM cannot select it at all. So the engine asks
    for vLLM's Triton sampler, which is what every figure in bench/RESULTS.md ran with. A value
    set in the environment (``VLLM_USE_FLASHINFER_SAMPLER=1`` where the toolkit is there) wins.
    """
    os.environ.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")
    return os.environ["VLLM_USE_FLASHINFER_SAMPLER"]


# ----------------------------------------------------------------------------- vision patch

_PATCHED: str | None = None
PIXTRAL_MODES = ("varlen", "per_image", "off")


class VarlenImages:
    """Stands in for Pixtral's dense block-diagonal mask: where each image starts and ends.

    ``cu_seqlens`` (int32, on the encoder's device) holds the cumulative patch counts, as flash
    attention's varlen kernels take them; ``sizes`` and ``max_seqlen`` stay on the host so the
    attention needs no device-to-host sync.
    """

    def __init__(self, sizes: list[int], device: Any) -> None:
        import torch

        self.sizes = list(sizes)
        self.max_seqlen = max(self.sizes)
        self.cu_seqlens = torch.tensor(list(itertools.accumulate(self.sizes, initial=0)), dtype=torch.int32, device=device)


@functools.cache  # looked up once per process, on the first encoder step (CUDA is up by then)
def _flash_varlen() -> tuple[Callable[..., Any], int | None] | None:
    """vLLM's bundled flash-attention varlen function and version (FA3 on Hopper), or None."""
    try:
        from vllm.v1.attention.backends.fa_utils import flash_attn_varlen_func, get_flash_attn_version

        version = get_flash_attn_version(head_size=64)
        from vllm.vllm_flash_attn import is_fa_version_supported

        if version is None or not is_fa_version_supported(version):
            return None
        return flash_attn_varlen_func, version
    except Exception as e:  # no CUDA flash-attention build on this GPU / platform
        log.info("Pixtral encoder: no varlen flash attention (%s); per-image SDPA", e)
        return None


def varlen_attention_forward(self: Any, hidden_states: Any, attention_mask: Any, position_embeddings: Any) -> Any:
    """``PixtralHFAttention.forward`` for a :class:`VarlenImages` "mask".

    Same computation as vLLM's forward (qkv projection, 2-D rotary, attention, output projection)
    but the attention runs once over all images with flash attention's varlen kernel
    (``cu_seqlens`` marks the images), or, where that kernel is missing, as one unmasked SDPA call
    per image. Only the attention is split: the projections and the MLP still see every image of
    the encoder step as one big batch.
    """
    import torch
    from vllm.model_executor.models import pixtral as vp

    batch, patches, _ = hidden_states.size()  # batch is 1: the images are concatenated
    qkv, _ = self.qkv_proj(hidden_states)
    q, k, v = qkv.chunk(3, dim=-1)
    q = q.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
    k = k.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
    cos, sin = position_embeddings
    q, k = vp.apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=0)
    fa = _flash_varlen()
    if fa is not None:
        fn, version = fa
        shape = (patches, self.n_heads, self.head_dim)
        out = fn(
            q.transpose(1, 2).reshape(shape),
            k.transpose(1, 2).reshape(shape),
            v.reshape(shape),
            max_seqlen_q=attention_mask.max_seqlen,
            cu_seqlens_q=attention_mask.cu_seqlens,
            max_seqlen_k=attention_mask.max_seqlen,
            cu_seqlens_k=attention_mask.cu_seqlens,
            causal=False,
            fa_version=version,
        )
    else:
        v = v.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
        parts = []
        for qi, ki, vi in zip(*(t.split(attention_mask.sizes, dim=2) for t in (q, k, v)), strict=True):
            parts.append(torch.nn.functional.scaled_dot_product_attention(qi, ki, vi))
        out = torch.cat(parts, dim=2).transpose(1, 2)
    out = out.reshape(batch, patches, self.n_heads * self.head_dim)
    attn_output, _ = self.o_proj(out)
    return attn_output, None


def patch_pixtral_attention(mode: str | None = None) -> str | None:
    """Replace the dense block-diagonal mask of vLLM's Pixtral encoder. Idempotent.

    vLLM 0.26 encodes all images of an encoder step as one sequence with a dense block-diagonal
    mask: memory and time quadratic in the images per step, and SDPA cannot use a flash kernel
    with a mask. Block-diagonal attention over the concatenation equals full attention over each
    image separately, so both modes compute the same function:

    - ``varlen`` (default): one flash-attention varlen call over all images of the step
      (vLLM's bundled FA3 on Hopper, FA2 on Ampere/Ada; per-image SDPA where neither exists); the
      projections and MLP run over all images at once.
    - ``per_image``: the whole encoder runs image by image without a mask (SDPA's flash kernel).
    - ``off``: vLLM's code as shipped.

    ``mode`` defaults to ``$OCR_DAEMON_PIXTRAL_PATCH`` (``0`` means off), else ``varlen``.
    Returns the mode applied, or None if nothing was patched (off, or vLLM's code differs).
    """
    global _PATCHED
    if _PATCHED:
        return _PATCHED
    mode = mode or os.environ.get("OCR_DAEMON_PIXTRAL_PATCH", "varlen")
    mode = {"0": "off", "1": "varlen"}.get(mode, mode)
    if mode not in PIXTRAL_MODES:
        log.warning("OCR_DAEMON_PIXTRAL_PATCH=%r unknown (want one of %s); using varlen", mode, PIXTRAL_MODES)
        mode = "varlen"
    if mode == "off":
        return None
    try:
        import transformers.models.pixtral.modeling_pixtral as hf_pixtral
        from vllm.model_executor.models import pixtral as vp
    except Exception as e:  # vLLM layout changed: run unpatched
        log.warning("Pixtral attention patch not applied: %s", e)
        return None
    model_cls = getattr(vp, "PixtralHFVisionModel", None)
    attn_cls = getattr(vp, "PixtralHFAttention", None)
    orig_mask = getattr(hf_pixtral, "generate_block_attention_mask", None)
    if model_cls is None or attn_cls is None or orig_mask is None or getattr(vp, "USE_XFORMERS_OPS", False):
        return None

    if mode == "varlen":
        orig_attn = attn_cls.forward

        def varlen_mask(patch_embeds_list: list[int], tensor: Any) -> Any:
            return VarlenImages(patch_embeds_list, tensor.device)

        def attn_forward(self: Any, hidden_states: Any, attention_mask: Any, position_embeddings: Any) -> Any:
            if isinstance(attention_mask, VarlenImages):
                return varlen_attention_forward(self, hidden_states, attention_mask, position_embeddings)
            return orig_attn(self, hidden_states, attention_mask, position_embeddings)

        hf_pixtral.generate_block_attention_mask = varlen_mask
        attn_cls.forward = attn_forward
    else:
        orig_forward = model_cls.forward

        def one_block_mask(patch_embeds_list: list[int], tensor: Any) -> Any:
            if len(patch_embeds_list) == 1:
                return None  # one image: full attention, no mask -> flash kernel
            return orig_mask(patch_embeds_list, tensor)

        def forward(self: Any, pixel_values: list[Any], **kwargs: Any) -> Any:
            if len(pixel_values) <= 1:
                return orig_forward(self, pixel_values, **kwargs)
            outs: list[Any] = []
            for pv in pixel_values:
                outs.extend(orig_forward(self, [pv], **kwargs))
            return tuple(outs)

        hf_pixtral.generate_block_attention_mask = one_block_mask
        model_cls.forward = forward
    _PATCHED = mode
    log.info("vLLM Pixtral encoder: %s attention without a dense mask", mode)
    return mode


# ----------------------------------------------------------------------------- page logic


@dataclass
class GenResult:
    text: str
    finish_reason: str | None
    num_tokens: int = 0


GenerateFn = Callable[[Image.Image, float, int, int], Awaitable[GenResult]]


@dataclass
class PageOutcome:
    """What ``recognise_page`` made of one page (after the guards' retries and bands)."""

    text: str
    flags: list[str] = field(default_factory=list)
    attempts: int = 0
    tokens: int = 0

    def page_text(self, index: int, engine: str, seconds: float) -> PageText:
        """The engine's answer for the pipeline; attempts and tokens go into ``meta``."""
        return PageText(index=index, text=self.text, engine=engine, seconds=seconds, flags=self.flags,
                        meta={"attempts": self.attempts, "tokens": self.tokens})


async def recognise_page(
    image: Image.Image,
    priority: int,
    generate: GenerateFn,
    temperature: float,
    max_tokens: int,
    retries: int,
    guards: bool = True,
    depth: int = 0,
) -> PageOutcome:
    """The per-page policy: repetition retries, then banding of truncated output (pure async logic).

    ``generate(image, temperature, max_tokens, priority)`` does one engine request.
    """
    temps = [temperature, *RETRY_TEMPERATURES][: retries + 1]
    out = PageOutcome(text="")
    res = GenResult("", None)
    loop_at: int | None = None
    for t in temps:
        res = await generate(image, t, max_tokens, priority)
        out.attempts += 1
        out.tokens += res.num_tokens
        if not guards:
            break
        loop_at = find_repetition(res.text) if res.finish_reason == "length" else None
        if loop_at is None:
            break
        log.info("page output loops (temperature %.2f); retrying", t)
    out.text = res.text
    if not guards:
        return out
    if loop_at is not None:
        out.text = trim_repetition(res.text, loop_at)
        out.flags.append("repetition")
        return out
    if res.finish_reason == "length":
        if depth >= MAX_BAND_DEPTH or image.height < 200:
            out.flags.append("truncated")
            return out
        bands = split_bands(image, 2)
        parts = await asyncio.gather(
            *(
                recognise_page(b, priority, generate, temperature, max_tokens, retries, guards, depth + 1)
                for b in bands
            )
        )
        out.text = join_bands([p.text for p in parts])
        out.attempts += sum(p.attempts for p in parts)
        out.tokens += sum(p.tokens for p in parts)
        flags = {"banded"} | {f for p in parts for f in p.flags}
        out.flags = sorted(flags)
    return out


# ----------------------------------------------------------------------------- the engine


class _Restarted(Exception):
    """The engine was restarted while this request ran (internal)."""


class VllmEngine(Engine):
    """LightOnOCR-2-1B on an in-process vLLM ``AsyncLLM``. See the module docstring."""

    output_is_markdown = True
    #: Extra ``SamplingParams`` fields; for benchmarks only (e.g. ``{"ignore_eos": True}``).
    sampling_overrides: dict[str, Any] = {}
    #: Repetition/banding guards; benchmarks that force output length switch them off.
    guards: bool = True
    #: Pad pages to 28 px multiples and tell the HF processor not to resample (saves CPU).
    presize: bool = True
    #: Blank pages run together at start, after one alone (0 = no warm-up). On the H200, without it the first
    #: 1-page file after a start took 10.9 s instead of 3.5 s, and with 8 pages the first batch
    #: of a multiple of 16 pages still stopped the engine ~2 s for a Triton compile of the
    #: top-p kernel (bench/RESULTS.md, sampler trace): 16 pages decoding together cover it.
    warmup_pages: int = 16
    #: Tokens generated per warm-up page (enough steps for all pages to be decoding at once),
    #: and the most the warm-up may take.
    warmup_tokens: int = 32
    warmup_timeout: float = 180.0

    def __init__(self, engine_cfg: EngineCfg) -> None:
        self.cfg = engine_cfg
        self.name = f"vllm:{engine_cfg.model}"
        self.max_in_flight = engine_cfg.vllm.max_pages_in_flight
        self._pages = InFlight(self.max_in_flight, on_done=self.page_done)  # base.py: last_progress
        self.hang_timeout = engine_cfg.vllm.hang_timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._llm: Any = None
        self._prompt: str = ""
        self._ids = itertools.count()
        self._accepting = False
        self._closed = False
        self._start_lock = threading.Lock()
        self._started = False
        self._generation = 0
        self._ready: asyncio.Event | None = None
        self._restarting = False
        self._attempts: set[asyncio.Task[Any]] = set()
        self._inflight = 0
        self._last_progress = time.monotonic()
        self._isolation: asyncio.Semaphore | None = None
        self._restarts = 0
        self._watchdog: asyncio.Task[None] | None = None
        self.stats: dict[str, float] = {"pages": 0, "requests": 0, "restarts": 0, "tokens": 0}

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        with self._start_lock:
            if self._started:
                return
            check_model_source(self.cfg.model)
            self._prepare()
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._run_loop, name="vllm-loop", daemon=True)
            self._thread.start()
            fut = asyncio.run_coroutine_threadsafe(self._async_start(), self._loop)
            try:
                fut.result()
            except FatalError:
                self._stop_loop()
                raise
            except Exception as e:
                self._stop_loop()
                hint = (
                    ""
                    if Path(self.cfg.model).expanduser().is_dir()
                    else " (without network the model must be in the HF cache: run 'ocr-daemon model fetch' "
                    "where there is network, or set engine.model to a local folder)"
                )
                raise FatalError(
                    f"vLLM engine failed to start for {self.cfg.model}: {type(e).__name__}: {e}{hint}", ExitCode.ENGINE
                ) from e
            self._started = True
            self._accepting = True

    def _prepare(self) -> None:
        """Check that vLLM is importable and patch it (runs before the engine core is forked)."""
        try:
            import vllm  # noqa: F401
        except ImportError as e:
            raise FatalError(
                f"engine vllm needs the vllm package ({e}); install with pip install 'ocr-daemon[vllm]' "
                "or use engine.kind: tesseract",
                ExitCode.ENGINE,
            ) from e
        log.info("vLLM top-p sampler: %s", "Triton" if choose_sampler() == "0" else "FlashInfer (VLLM_USE_FLASHINFER_SAMPLER)")
        patch_pixtral_attention()

    def _run_loop(self) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def _stop_loop(self) -> None:
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _build_llm(self) -> Any:
        from vllm import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        kwargs = engine_args(self.cfg)
        log.info("starting vLLM: %s", kwargs)
        try:
            return AsyncLLM.from_engine_args(AsyncEngineArgs(**kwargs))
        except OSError as e:
            # HF hub offline / repo not cached: name what is missing.
            raise FatalError(
                f"cannot load model {self.cfg.model!r}: {e}. Run 'ocr-daemon model fetch' where there is "
                "network, or set engine.model to a local model folder",
                ExitCode.ENGINE,
            ) from e

    async def _async_start(self) -> None:
        self._ready = asyncio.Event()
        self._isolation = asyncio.Semaphore(1)
        loop = asyncio.get_running_loop()
        self._llm = await loop.run_in_executor(None, self._build_llm)
        self._prompt = self._chat_prompt()
        await self._warm_up(self._llm)
        self._generation += 1
        self._last_progress = time.monotonic()
        self._ready.set()
        self._watchdog = asyncio.create_task(self._watch())

    def warmup_image(self) -> Image.Image:
        """A page-shaped image at the render size (portrait, 28 px cells) with a few text-like bars."""
        edge = self.cfg.render_longest_edge
        h = min(1540, edge) // 28 * 28
        w = h * 42 // 55 // 28 * 28  # A4-like aspect, as the benchmark pages (1176 x 1540)
        img = Image.new("RGB", (w, h), "white")
        bar = Image.new("RGB", (w * 2 // 3, 6), "black")
        for y in range(56, h - 56, 28):
            img.paste(bar, (56, y))
        return img

    async def _warm_up(self, llm: Any) -> None:
        """Run one blank page alone, then ``warmup_pages`` together; log (never raise) when that
        fails or stalls (``warmup_timeout`` for the whole).

        The lone page goes first because vLLM's first input processing in a new process is slow
        (47-62 s from engine ready to the first engine step on the H200, bench/RESULTS.md): alone,
        it is paid by one renderer thread instead of by all of them at once, and the log tells
        that cost apart from the batch's.
        """
        n = self.warmup_pages
        if n <= 0:
            return
        img = self.warmup_image()
        t0 = time.monotonic()
        t1 = t0
        temperature = self.cfg.sampling.temperature

        async def run() -> None:
            nonlocal t1
            await self._request(llm, img, temperature, self.warmup_tokens, 0, warm=True)
            t1 = time.monotonic()
            await asyncio.gather(*(self._request(llm, img, temperature, self.warmup_tokens, 0, warm=True) for _ in range(n)))

        try:
            await asyncio.wait_for(run(), self.warmup_timeout)
        except Exception as e:  # an optimisation only: real pages get the full error handling
            log.warning("vLLM warm-up (%d pages) failed after %.1f s: %s: %s", n, time.monotonic() - t0, type(e).__name__, e)
            return
        log.info("vLLM warm-up: 1 page alone in %.1f s, then %d pages of %dx%d px together in %.1f s",
                 t1 - t0, n, img.width, img.height, time.monotonic() - t1)

    def _chat_prompt(self) -> str:
        tok = self._llm.renderer.get_tokenizer()
        for part in ({"type": "image"}, {"type": "image_url", "image_url": {"url": "page"}}):
            try:
                text = tok.apply_chat_template(
                    [{"role": "user", "content": [part]}], tokenize=False, add_generation_prompt=True
                )
            except Exception:
                continue
            if isinstance(text, str) and "<|image_pad|>" in text:
                return text
        return "<|im_start|>user\n<|image_pad|><|im_end|>\n<|im_start|>assistant\n"

    def healthy(self) -> bool:
        return self._started and not self._closed and not self._restarting

    def close(self, drain_timeout: float = 0.0) -> None:
        if self._closed:
            return
        self._accepting = False
        deadline = time.monotonic() + max(0.0, drain_timeout)
        pending = self._pages.snapshot()
        if pending and drain_timeout > 0:
            cf.wait(pending, timeout=max(0.0, deadline - time.monotonic()))
        self._closed = True
        if self._loop is not None and self._started:
            fut = asyncio.run_coroutine_threadsafe(self._async_close(), self._loop)
            try:
                fut.result(timeout=60)
            except Exception as e:
                log.warning("vLLM shutdown: %s", e)
        self._stop_loop()
        for f in self._pages.snapshot():
            if not f.done():
                f.cancel()

    async def _async_close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=10)
        if self._llm is not None:
            llm, self._llm = self._llm, None
            await asyncio.get_running_loop().run_in_executor(None, llm.shutdown)

    # ------------------------------------------------------------------ submission

    def submit(self, request: PageRequest) -> cf.Future[PageText]:
        if not self._started:
            self.start()
        if not self._accepting:
            f: cf.Future[PageText] = cf.Future()
            f.set_exception(EngineDeadError("the vLLM engine is stopping"))
            return f
        image = request.image
        if image.mode != "RGB":
            image = image.convert("RGB")
        if self.presize and max(image.size) <= 1540:
            padded = pad_to_multiple(image, 28)
            if max(padded.size) <= 1540:
                image = padded
        loop = self._loop
        assert loop is not None
        return self._pages.add(lambda: asyncio.run_coroutine_threadsafe(self._page(request, image), loop))

    async def _page(self, req: PageRequest, image: Image.Image) -> PageText:
        t0 = time.monotonic()
        kills = 0
        isolated = False
        s = self.cfg.sampling

        async def generate(img: Image.Image, temperature: float, max_tokens: int, priority: int) -> GenResult:
            nonlocal kills, isolated
            while True:
                if self._closed:
                    raise EngineDeadError("the vLLM engine was closed")
                assert self._ready is not None and self._isolation is not None
                await self._ready.wait()
                gen_before = self._generation
                try:
                    if kills >= PAGE_KILL_LIMIT:
                        async with self._isolation:
                            isolated = True
                            return await self._one_request(img, temperature, max_tokens, priority)
                    return await self._one_request(img, temperature, max_tokens, priority)
                except (_Restarted, EngineDeadError) as e:
                    kills += 1
                    # The isolation semaphore admits one suspect at a time: an isolated page that
                    # dies was the only suspect in flight.
                    alone = isolated
                    log.warning("%s page %d: engine died during its request (%d time(s)): %s", req.doc_tag, req.index, kills, e)
                    self._trigger_restart(gen_before, f"engine died: {e}")
                    if isolated and alone and kills > PAGE_KILL_LIMIT:
                        raise InputError(
                            f"page {req.index + 1} crashed the OCR engine {kills} times (the last time while "
                            "running alone); the document cannot be read by this engine"
                        ) from None
                finally:
                    isolated = False

        try:
            outcome = await recognise_page(
                image,
                req.priority,
                generate,
                s.temperature,
                int(self.sampling_overrides.get("max_tokens", s.max_tokens)),
                self.cfg.vllm.repetition_retries,
                self.guards,
            )
        except (InputError, EngineDeadError, TransientError):
            raise
        except asyncio.CancelledError:
            raise EngineDeadError("the vLLM engine stopped before this page finished") from None
        except ValueError as e:  # vLLM request validation: this page can never be processed
            raise InputError(f"page {req.index + 1} was refused by the OCR engine: {e}") from e
        self.stats["pages"] += 1
        self.stats["tokens"] += outcome.tokens
        return outcome.page_text(req.index, self.name, time.monotonic() - t0)

    async def _one_request(self, img: Image.Image, temperature: float, max_tokens: int, priority: int) -> GenResult:
        """One vLLM request, as a task the restart logic can cancel."""
        task = asyncio.ensure_future(self._generate(img, temperature, max_tokens, priority))
        self._attempts.add(task)
        gen = self._generation
        self._inflight += 1
        try:
            return await task
        except asyncio.CancelledError:
            if self._generation != gen or self._restarting:
                raise _Restarted("engine restarted") from None
            raise
        finally:
            self._inflight -= 1
            self._attempts.discard(task)

    async def _generate(self, img: Image.Image, temperature: float, max_tokens: int, priority: int) -> GenResult:
        llm = self._llm
        if llm is None:
            raise EngineDeadError("no engine")
        self.stats["requests"] += 1
        res = await self._request(llm, img, temperature, max_tokens, priority)
        self._last_progress = time.monotonic()
        return res

    async def _request(
        self, llm: Any, img: Image.Image, temperature: float, max_tokens: int, priority: int, warm: bool = False
    ) -> GenResult:
        """One request to vLLM: image preprocessing in vLLM's renderer pool, then generation.

        ``warm``: a warm-up page, which generates exactly ``max_tokens`` (EOS ignored).
        """
        from vllm import SamplingParams
        from vllm.sampling_params import RequestOutputKind

        try:
            from vllm.v1.engine.exceptions import EngineDeadError as VllmDead
        except ImportError:  # pragma: no cover
            VllmDead = RuntimeError  # noqa: N806

        kw = sampling_kwargs(self.cfg, temperature, max_tokens)
        kw.update({k: v for k, v in self.sampling_overrides.items() if k != "max_tokens"})
        if warm:
            kw["ignore_eos"] = True
        sp = SamplingParams(output_kind=RequestOutputKind.FINAL_ONLY, **kw)
        prompt: dict[str, Any] = {"prompt": self._prompt, "multi_modal_data": {"image": img}}
        if self.presize and img.width % 28 == 0 and img.height % 28 == 0:
            prompt["mm_processor_kwargs"] = {"do_resize": False}
        rid = f"p{next(self._ids)}"
        try:
            inputs = await llm.renderer.render_cmpl_async([prompt])
            final = None
            async for out in llm.generate(inputs[0], sp, rid, priority=priority):
                final = out
        except VllmDead as e:
            raise EngineDeadError(str(e) or "vLLM engine core died") from e
        if final is None or not final.outputs:
            raise EngineDeadError("vLLM returned no output")
        o = final.outputs[0]
        return GenResult(o.text, o.finish_reason, len(o.token_ids))

    # ------------------------------------------------------------------ health

    async def _watch(self) -> None:
        """Hang detector: requests in flight but none finished for ``hang_timeout`` seconds."""
        timeout = self.cfg.vllm.hang_timeout
        while True:
            await asyncio.sleep(min(5.0, timeout / 4))
            llm = self._llm
            if self._restarting or llm is None:
                continue
            if getattr(llm, "errored", False):
                self._trigger_restart(self._generation, "vLLM reports the engine errored")
            elif self._inflight > 0 and time.monotonic() - self._last_progress > timeout:
                self._trigger_restart(self._generation, f"no request finished for {timeout:.0f} s")
            elif self._inflight == 0:
                self._last_progress = time.monotonic()

    def _trigger_restart(self, generation: int, why: str) -> None:
        """Restart once per engine generation (many requests see the same death)."""
        if generation != self._generation or self._restarting or self._closed:
            return
        self._restarting = True
        assert self._ready is not None
        self._ready.clear()
        log.error("vLLM engine unusable (%s); restarting", why)
        asyncio.get_running_loop().create_task(self._restart())

    async def _restart(self) -> None:
        loop = asyncio.get_running_loop()
        old, self._llm = self._llm, None
        self._generation += 1
        for t in list(self._attempts):
            t.cancel()
        if old is not None:
            try:
                await loop.run_in_executor(None, old.shutdown)
            except Exception as e:
                log.warning("shutting down the dead engine: %s", e)
        delay = 1.0
        while not self._closed:
            self._restarts += 1
            self.stats["restarts"] += 1
            try:
                self._llm = await loop.run_in_executor(None, self._build_llm)
                break
            except Exception as e:
                log.error("vLLM restart failed (%s); next try in %.0f s", e, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 60.0)
        self._last_progress = time.monotonic()
        self._restarting = False
        assert self._ready is not None
        self._ready.set()
        log.info("vLLM engine restarted (%d restart(s) so far)", self._restarts)
