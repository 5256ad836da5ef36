"""What the vLLM engine asks of vLLM: engine and sampling arguments from the config, GPU counts
and memory, and what vLLM made of the arguments.

Contract: pure functions of the config and the machine (no vLLM import at module load), shared
by the in-process engine (``daemon.engines.vllm_engine``), ``ocr-daemon serve``
(``daemon.engines.serve``) and the benchmarks; unit-tested in tests/unit/test_vllm_engine.py,
test_data_parallel.py and test_serve_args.py. Split out of vllm_engine.py, which keeps the
engine and its supervisor.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from daemon.config import EngineCfg
from daemon.engines import nvml_memory
from daemon.errors import ExitCode, FatalError

log = logging.getLogger(__name__)

GIB = 1 << 30


# ----------------------------------------------------------------------------- settings


#: KV-cache block (tokens) with ``kv_cache_dtype: fp8`` when the config names none.
FP8_BLOCK_SIZE = 64


def visible_gpu_count(environ: dict[str, str] | None = None, proc_gpus: Path = Path("/proc/driver/nvidia/gpus"),
                      dev: Path = Path("/dev")) -> int:
    """NVIDIA GPUs this process may use, counted without initialising CUDA (pure given its inputs).

    CUDA must stay uninitialised in the daemon's process: vLLM forks its engine cores only while
    it is (``vllm.utils.system_utils._maybe_force_spawn`` switches to spawn once CUDA is
    initialised), and the Pixtral encoder patch reaches the engine cores by that fork. So this
    reads ``CUDA_VISIBLE_DEVICES`` (set: its entries up to the first empty or negative one, as
    CUDA reads it; set but empty: none) and else counts the driver's GPUs
    (``/proc/driver/nvidia/gpus/*``, else the ``/dev/nvidiaN`` nodes). At least 1.
    """
    env = os.environ if environ is None else environ
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        n = 0
        for part in cvd.split(","):
            part = part.strip()
            if not part or part.startswith("-"):
                break
            n += 1
        return max(1, n)
    try:
        n = sum(1 for p in proc_gpus.iterdir() if p.is_dir())
    except OSError:
        n = 0
    if n == 0:
        try:
            n = sum(1 for p in dev.iterdir() if p.name.startswith("nvidia") and p.name[6:].isdigit())
        except OSError:
            n = 0
    return max(1, n)


def data_parallel_size(cfg: EngineCfg, environ: dict[str, str] | None = None) -> int:
    """``engine.vllm.data_parallel_size`` resolved: ``auto`` = ``visible_gpu_count()``."""
    dp = cfg.vllm.data_parallel_size
    return visible_gpu_count(environ) if dp == "auto" else int(dp)


#: What one engine core holds besides its KV cache, as the 16gb profile below reckons it: weights
#: 1.88 GiB (bf16; "Model loading took 1.88 GiB" in bench/results/2026-12-01-gpu-a/logs/test_a.log),
#: activations of the vision encoder + CUDA graphs ~3 GiB, CUDA context ~0.6 GiB; 6 GiB with room.
NON_KV_BYTES = 6 * GIB
#: vLLM 0.26's own ``gpu_memory_utilization`` default (vllm/config/cache.py), the check it makes
#: at start when the config gives no fraction.
VLLM_DEFAULT_UTILIZATION = 0.92


def startup_utilization(kv_bytes: int, gpu_total_bytes: int | None) -> float:
    """The ``gpu_memory_utilization`` to give vLLM with a KV cache fixed in bytes (pure).

    With ``kv_cache_memory_bytes`` vLLM sizes nothing from the fraction, but it still refuses to
    start unless fraction x the card's memory is free (``v1/worker/utils.request_memory``; 0.92
    when none is given), so a 12 GiB process on a 16 GiB desktop card, or on a big card shared
    with other work, would be refused for lack of 14.7 GiB (or 92 %). Ask for what the process
    will hold (KV + ``NON_KV_BYTES``) as a share of the card; 0.05 where the card's size is
    unknown (the KV allocation then fails plainly if memory is short).
    """
    if not gpu_total_bytes:
        return 0.05
    return round(min(VLLM_DEFAULT_UTILIZATION, max(0.01, (kv_bytes + NON_KV_BYTES) / gpu_total_bytes)), 4)


def gpu_total_memory() -> int | None:
    """Bytes of the smallest NVIDIA GPU of this host (``nvml_memory``: no CUDA initialised, see
    ``visible_gpu_count``); None if unknown."""

    return min((total for _, _, total in nvml_memory()), default=None)


def engine_args(cfg: EngineCfg, cpu_count: int | None = None, dp_size: int = 1,
                gpu_total_bytes: int | None = None) -> dict[str, Any]:
    """Keyword arguments for ``vllm.AsyncEngineArgs`` from the config (pure; unit-tested).

    The ``16gb`` profile fixes a KV-cache byte budget instead of a fraction of the card, and
    smaller batch limits, so that the whole process stays within 16 GiB whatever card it runs on.
    With a byte budget (the profile, or ``kv_cache_memory_bytes``) the fraction given to vLLM is
    only its start-up check of free memory: the configured one where the config names it, else
    ``startup_utilization`` of the budget and ``gpu_total_bytes`` (``gpu_total_memory()``).
    ``dp_size`` (``data_parallel_size(cfg)``) > 1 asks vLLM for that many engine cores, one per
    GPU (``data_parallel_size``, backend ``mp``, vLLM's internal load balancer); every per-core
    setting (KV budget, batch limits, memory fraction, the 16 GB profile) then applies per GPU.
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
    if "kv_cache_memory_bytes" in args and "gpu_memory_utilization" not in v.model_fields_set:
        args["gpu_memory_utilization"] = startup_utilization(args["kv_cache_memory_bytes"], gpu_total_bytes)
    if dp_size > 1:
        # One frontend (this process, its renderer pool) feeds every core: more render threads.
        args["data_parallel_size"] = dp_size
        args["data_parallel_backend"] = "mp"
        args["renderer_num_workers"] = max(args["renderer_num_workers"], min(16, cpus // 2))
    args.update(cfg.debug.vllm_args)  # benchmarks' logging switches
    return args


def sampling_kwargs(
    cfg: EngineCfg, temperature: float | None = None, max_tokens: int | None = None, warm: bool = False
) -> dict[str, Any]:
    """Keyword arguments for ``vllm.SamplingParams`` (without ``output_kind``).

    ``ignore_eos`` (exactly ``max_tokens`` tokens) for warm-up pages (``warm``) and where the
    config's ``engine.debug.ignore_eos`` asks for it (benchmarks).
    """
    s = cfg.sampling
    kw: dict[str, Any] = {
        "temperature": s.temperature if temperature is None else temperature,
        "top_p": s.top_p,
        "max_tokens": max_tokens or s.max_tokens,
        "skip_special_tokens": True,
    }
    if warm or cfg.debug.ignore_eos:
        kw["ignore_eos"] = True
    return kw


def settings_in_force(vllm_config: Any) -> dict[str, Any]:
    """What vLLM made of the engine arguments: the values of its ``VllmConfig`` after start (vLLM
    may adjust them, e.g. the KV block for the model or platform). A field this vLLM lacks is left
    out; values are plain JSON (enums as their names)."""
    fields = {
        "block_size": ("cache_config", "block_size"),
        "kv_cache_dtype": ("cache_config", "cache_dtype"),
        "gpu_memory_utilization": ("cache_config", "gpu_memory_utilization"),
        "kv_cache_memory_bytes": ("cache_config", "kv_cache_memory_bytes"),
        "enable_prefix_caching": ("cache_config", "enable_prefix_caching"),
        "max_num_batched_tokens": ("scheduler_config", "max_num_batched_tokens"),
        "max_num_seqs": ("scheduler_config", "max_num_seqs"),
        "scheduling_policy": ("scheduler_config", "policy"),
        "max_model_len": ("model_config", "max_model_len"),
        "data_parallel_size": ("parallel_config", "data_parallel_size"),
        "dtype": ("model_config", "dtype"),
        "enforce_eager": ("model_config", "enforce_eager"),
        # None when vLLM picks the kernel in the engine core (logged there: "Using X attention backend")
        "attention_backend": ("attention_config", "backend"),
    }
    out: dict[str, Any] = {}
    for name, (section, attr) in fields.items():
        part = getattr(vllm_config, section, None)
        if part is None or not hasattr(part, attr):
            continue
        out[name] = _plain(getattr(part, attr))
    return out


def _plain(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    name = getattr(v, "name", None)  # enums
    return name if isinstance(name, str) else str(v)


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
