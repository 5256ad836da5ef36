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
- Each page goes through ``daemon.engines.pagepolicy`` (repetition retries, banding of truncated
  output; options from ``PagePolicy.from_config``), on the engine's event loop.
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
- ``start()`` patches vLLM's Pixtral vision encoder (``daemon.engines.pixtral_patch``, mode
  ``engine.vllm.pixtral_patch``) before vLLM forks the engine core, which inherits the patch.
- ``engine.debug`` (benchmarks only): ``ignore_eos`` (every page decodes ``max_tokens``),
  ``page_guards: false``, ``vllm_args`` merged last into vLLM's engine arguments,
  ``pixtral_marker`` (a file the engine core notes the encoder patch in: ``pixtral_patch.mark``).
- Several GPUs (``engine.vllm.data_parallel_size``, ``auto`` = every visible GPU counted without
  touching CUDA: ``visible_gpu_count``): vLLM's own data parallelism inside the one ``AsyncLLM``.
  With ``data_parallel_size`` N > 1 vLLM 0.26 starts N engine-core processes
  (``CoreEngineProcManager``, backend ``mp``) plus its DP coordinator, and the frontend's
  ``DPLBAsyncMPClient`` sends each request to the core with the lowest ``4*waiting + running``
  (stats from the coordinator every 100 ms); for a dense model like this one the cores are
  independent (``EngineCoreProc``, no collective). Core i runs on visible device i
  (``gpu_worker.init_device``: local rank + DP local rank, asserted below the device count), so
  two ranks cannot share one GPU (``--device-ids`` refuses duplicates). Priorities apply inside
  each core's scheduler. vLLM ends every core when one dies
  (``CoreEngineProcManager.monitor_engine_liveness``: "any engine exit currently triggers a
  shutdown"); the requests then fail with vLLM's ``EngineDeadError`` and this engine's supervisor
  restarts the whole ``AsyncLLM`` and re-submits every page, as with one GPU. Back-pressure
  (``max_pages_in_flight``) and the warm-up batch apply per core (multiplied by N). The hang watch
  sees the engine as a whole: a core that hangs (alive, no progress) while the others finish
  pages is not detected; its pages wait until it dies or the daemon stops.
  Chosen over N ``AsyncLLM``s in this process (N frontends, N renderer pools, our own balancer and
  N supervisors, all home-made) and over one daemon per GPU (N journals and inbox watchers fighting
  over the same folders, or a split of the inboxes by hand): vLLM's balancer sees each core's
  queue, and a single journal/pipeline keeps ordering and priorities. Its cost: one frontend (this
  process's input processing) feeds every core, and one core's death restarts them all.
- After each engine (re)start, ``in_force`` holds what vLLM made of the arguments
  (``settings_in_force``: block size, KV dtype, batch limits...), also logged as one line
  ``vLLM settings in force: {json}`` for the bench rows.

The engine and its supervisor (restart, isolation of a suspect page, hang watch) are one class
because they share the state of one event loop (generation, in-flight attempts); what needs none
of it is outside the class: the loop's thread (``run_loop_forever``), the page prompt
(``chat_prompt``), the pure functions that say what this engine asks of vLLM (``engine_args``,
``sampling_kwargs``, ``settings_in_force``, unit-tested, in ``daemon.engines.vllm_args``), the
page policy and the encoder patch (their own modules).
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import itertools
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.base import Engine, InFlight, PageRequest
from daemon.engines.pagepolicy import GenResult, PagePolicy, recognise_page
from daemon.engines.pixtral_patch import patch_pixtral_attention, resolve_mode, set_marker
from daemon.engines.textguard import pad_to_multiple
from daemon.engines.vllm_args import (  # noqa: F401 - re-exported: callers import them from here
    FP8_BLOCK_SIZE,
    NON_KV_BYTES,
    VLLM_DEFAULT_UTILIZATION,
    check_model_source,
    choose_sampler,
    data_parallel_size,
    engine_args,
    gpu_total_memory,
    sampling_kwargs,
    settings_in_force,
    startup_utilization,
    visible_gpu_count,
)
from daemon.errors import EngineDeadError, ExitCode, FatalError, InputError, TransientError
from daemon.models import PageText

log = logging.getLogger(__name__)

#: Engine deaths a page may be in flight for before it is run alone.
PAGE_KILL_LIMIT = 2
GIB = 1 << 30


def run_loop_forever(loop: asyncio.AbstractEventLoop) -> None:
    """The engine's event loop thread: ``loop`` made this thread's and run until stopped."""
    asyncio.set_event_loop(loop)
    loop.run_forever()


def chat_prompt(llm: Any) -> str:
    """The prompt of one page: an image alone in one user message, through the model's chat
    template (``llm``'s tokenizer); the Qwen template's text when the template takes neither
    image part."""
    tok = llm.renderer.get_tokenizer()
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


# ----------------------------------------------------------------------------- the engine


class _Restarted(Exception):
    """The engine was restarted while this request ran (internal)."""


class VllmEngine(Engine):
    """LightOnOCR-2-1B on an in-process vLLM ``AsyncLLM``. See the module docstring."""

    output_is_markdown = True
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
        self.policy = PagePolicy.from_config(engine_cfg)
        #: engine cores (GPUs) of vLLM's data parallelism; the page bound applies per core
        self.dp_size = data_parallel_size(engine_cfg)
        self.max_in_flight = engine_cfg.vllm.max_pages_in_flight * self.dp_size
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
        self.in_force: dict[str, Any] = {}

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        with self._start_lock:
            if self._started:
                return
            check_model_source(self.cfg.model)
            self._prepare()
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=run_loop_forever, args=(self._loop,), name="vllm-loop", daemon=True)
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
        set_marker(self.cfg.debug.pixtral_marker)
        patch_pixtral_attention(resolve_mode(self.cfg.vllm.pixtral_patch))

    def _stop_loop(self) -> None:
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _build_llm(self) -> Any:
        from vllm import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        kwargs = engine_args(self.cfg, dp_size=self.dp_size, gpu_total_bytes=gpu_total_memory())
        log.info("starting vLLM: %s", kwargs)
        try:
            llm = AsyncLLM.from_engine_args(AsyncEngineArgs(**kwargs))
        except OSError as e:
            # HF hub offline / repo not cached: name what is missing.
            raise FatalError(
                f"cannot load model {self.cfg.model!r}: {e}. Run 'ocr-daemon model fetch' where there is "
                "network, or set engine.model to a local model folder",
                ExitCode.ENGINE,
            ) from e
        self.in_force = settings_in_force(getattr(llm, "vllm_config", None))
        log.info("vLLM settings in force: %s", json.dumps(self.in_force, sort_keys=True))
        return llm

    async def _async_start(self) -> None:
        self._ready = asyncio.Event()
        self._isolation = asyncio.Semaphore(1)
        loop = asyncio.get_running_loop()
        self._llm = await loop.run_in_executor(None, self._build_llm)
        self._prompt = chat_prompt(self._llm)
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
        # vLLM's load balancer spreads the batch: every core gets its batch of warmup_pages
        n = self.warmup_pages * self.dp_size
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
            outcome = await recognise_page(image, req.priority, generate, self.policy)
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

        sp = SamplingParams(output_kind=RequestOutputKind.FINAL_ONLY, **sampling_kwargs(self.cfg, temperature, max_tokens, warm))
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
