"""The ``engine`` section of ``rules.yaml``: the OCR engine and how pages are prepared for it.

Contract: as :mod:`daemon.config.schema` (whose ``Config`` holds ``EngineCfg`` and which
re-exports every model here): strict models, every key with its description and an example.
The engine's keys only; the daemon's, the inboxes', the doctypes' and the routes' are in schema.py.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from daemon.config.base import LANGUAGES, Lang, Strict


class SamplingCfg(Strict):
    """How the VLM engines (vllm, openai) decode a page."""

    temperature: float = Field(0.2, ge=0, le=2, examples=[0.0], description="VLM sampling temperature")
    top_p: float = Field(0.9, gt=0, le=1, examples=[1.0], description="VLM nucleus sampling")
    max_tokens: int = Field(4096, ge=16, le=32768, examples=[8192], description="most tokens generated per page")


class TesseractCfg(Strict):
    """The Tesseract engine (CPU)."""

    languages: list[Lang] = Field(
        default_factory=lambda: list(LANGUAGES),  # type: ignore[arg-type]
        min_length=1, examples=[["de", "en"]], description="Tesseract languages when the inbox gives no hint",
    )
    threads: int = Field(0, ge=0, examples=[2], description="pages OCRed at once; 0 = number of CPU cores")
    hang_timeout: float = Field(
        300.0, gt=0, examples=[600], description="seconds with pages in flight and none finished = engine stalled"
    )
    render_dpi: int | None = Field(
        300, ge=72, le=600, examples=[400, None],
        description="PDF pages are rendered at this resolution for Tesseract (it reads best near 300 dpi; 1540 px is "
        "~132 dpi on A4 and loses small print); image pages keep their size between 1540 px and A4 at this resolution; "
        "`max_image_pixels` bounds both; `null`: pages at `render_longest_edge` as for the VLM",
    )


class VllmCfg(Strict):
    """The resident vLLM engine (GPU)."""

    gpu_memory_utilization: float = Field(
        0.85, gt=0, le=1, examples=[0.6], description="share of GPU memory vLLM may take"
    )
    kv_cache_memory_bytes: int | None = Field(
        None, ge=1 << 28, examples=[8 << 30], description="fixed KV-cache size (bytes) instead of the share above"
    )
    max_num_seqs: int = Field(256, ge=1, examples=[128], description="pages decoded at once")
    max_num_batched_tokens: int = Field(16384, ge=512, examples=[8192], description="tokens per scheduler step")
    max_model_len: int = Field(
        8192, ge=1024, examples=[16384], description="context length (image + text tokens) per page"
    )
    dtype: Literal["auto", "bfloat16", "float16"] = Field(
        "bfloat16", examples=["float16"], description="`auto`, `bfloat16` or `float16`"
    )
    kv_cache_dtype: Literal["auto", "fp8"] = Field(
        "auto", examples=["fp8"],
        description="`auto` (same as `dtype`) or `fp8` (half the KV-cache memory and decode traffic)",
    )
    # a tuning knob measured by bench/bench_attention.py
    attention_backend: Literal["auto", "FLASH_ATTN", "TRITON_ATTN"] = Field(
        "auto", examples=["TRITON_ATTN"], description="`auto` (vLLM's choice), `FLASH_ATTN` or `TRITON_ATTN`"
    )
    # None: 64 with an fp8 KV cache is vllm_engine.FP8_BLOCK_SIZE
    block_size: Literal[16, 32, 64, 128] | None = Field(
        None, examples=[64],
        description="KV-cache block in tokens: `null` (vLLM's 16, or 64 with `kv_cache_dtype: fp8`), 16, 32, 64 or 128",
    )
    profile: Literal["default", "16gb"] = Field(
        "default", examples=["16gb"], description="`default` or `16gb` (settings for a 16 GB GPU)"
    )
    load_format: Literal["auto", "dummy", "safetensors"] = Field(
        "auto", examples=["dummy"], description="`auto`, `safetensors`, or `dummy` (random weights, tests only)"
    )
    max_pages_in_flight: int = Field(
        512, ge=1, examples=[1024], description="back-pressure bound on submitted, unfinished pages"
    )
    enforce_eager: bool = Field(False, examples=[True], description="disable CUDA graphs (slower; for debugging)")
    hang_timeout: float = Field(
        300.0, gt=0, examples=[600], description="seconds without progress before the engine counts as hung"
    )
    # daemon.engines.pixtral_patch
    pixtral_patch: Literal["varlen", "per_image", "off"] = Field(
        "varlen", examples=["off"],
        description="vision encoder attention: `varlen` (one flash-attention call over the images), `per_image`, "
        "or `off` (vLLM's code as shipped); `$OCR_DAEMON_PIXTRAL_PATCH` wins when set",
    )
    # vLLM's own data parallelism: one engine core per GPU inside the one AsyncLLM (its load
    # balancer spreads the pages); "auto" = every visible GPU (vllm_engine.visible_gpu_count)
    data_parallel_size: Literal["auto"] | int = Field(
        "auto", examples=[1], description="engine cores, one per GPU (vLLM's data parallelism); `auto` = every visible GPU"
    )

    @field_validator("data_parallel_size", mode="before")
    @classmethod
    def _dp_size(cls, v: Any) -> Any:
        if v != "auto" and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError("data_parallel_size must be 'auto' or a whole number >= 1")
        return v


class PageGuardsCfg(Strict):
    """Per-page checks of VLM output (the vllm and openai engines)."""

    # daemon.engines.pagepolicy
    repetition_retries: int = Field(
        2, ge=0, examples=[0], description="re-runs (at temperatures 0.5, 0.8, 1.0) of a page whose output loops"
    )


class EngineDebugCfg(Strict):
    """Benchmark switches (bench/bench_gpu.py), not for production; leave it out."""

    # left out of docs/configuration.md (daemon.config.reference.HIDDEN)
    ignore_eos: bool = Field(
        False, examples=[True], description="every page decodes `engine.sampling.max_tokens` tokens (vllm, openai)"
    )
    page_guards: bool = Field(
        True, examples=[False],
        description="false: one request per page, its text as is (a forced length always \"truncates\")",
    )
    vllm_args: dict[str, Any] = Field(
        default_factory=dict, examples=[{"disable_log_stats": False}],
        description="merged last into vLLM's engine arguments",
    )
    pixtral_marker: str | None = Field(
        None, examples=["/tmp/pixtral.marker"], description="file the engine core notes the Pixtral patch in"
    )


class OpenAICfg(Strict):
    """OpenAI-compatible OCR servers (e.g. `vllm serve` on other machines)."""

    base_urls: list[str] = Field(
        default_factory=list, examples=[["http://gpu1:8000/v1", "http://gpu2:8000/v1"]],
        description="OpenAI-compatible servers, `http://host:port/v1`",
    )
    model: str | None = Field(
        None, examples=["lightonai/LightOnOCR-2-1B"], description="model name on the server; default `engine.model`"
    )
    api_key: str | None = Field(None, examples=["token-abc123"], description="API key, if the server wants one")
    concurrency: int = Field(32, ge=1, examples=[512], description="requests in flight")
    timeout: float = Field(600.0, gt=0, examples=[300], description="seconds per request")
    retries: int = Field(3, ge=0, examples=[5], description="retries of a failed request")
    down_backoff: float = Field(
        1.0, gt=0, examples=[2.0],
        description="seconds a failed server is left out, doubling per failure; then probed with `/v1/models`",
    )
    down_backoff_max: float = Field(
        30.0, gt=0, examples=[120.0],
        description="longest time a failed server is left out before the next probe (seconds)",
    )


class EngineCfg(Strict):
    """The OCR engine and how pages are prepared for it."""

    kind: Literal["auto", "vllm", "tesseract", "openai"] = Field(
        "auto", examples=["tesseract"],
        description="`auto` (vLLM when an NVIDIA GPU and vLLM are present, else Tesseract), `vllm`, `tesseract`, `openai`",
    )
    model: str = Field(
        "lightonai/LightOnOCR-2-1B", examples=["/var/lib/ocr-daemon/models/LightOnOCR-2-1B"],
        description="Hugging Face repo id or local model folder (vllm, openai)",
    )
    render_longest_edge: int = Field(
        1540, ge=256, le=10000, examples=[2000],
        description="pages are rendered so the longest edge has this many pixels (the VLM engines; "
        "Tesseract: `engine.tesseract.render_dpi`)",
    )
    # Two limits: pages read from a PDF's own text layer cost a few ms each (a 566-page manual:
    # ~19 CPU-s), pages to OCR ~1-3 CPU-s each with Tesseract; one limit on both refused books.
    max_pages: int = Field(
        10000, ge=1, examples=[20000],
        description="documents with more pages in all fail (\"too many pages\"), text-layer pages included",
    )
    max_ocr_pages: int = Field(
        500, ge=1, examples=[2000],
        description="documents with more pages to OCR (pages without a usable text layer) fail "
        "(\"too many pages to OCR\"); pages read from a PDF's text layer do not count",
    )
    max_image_pixels: int = Field(
        100_000_000, ge=1_000_000, examples=[200_000_000],
        description="larger images are refused (decompression-bomb guard)",
    )
    render_timeout: float = Field(120.0, gt=0, examples=[300], description="seconds one page may take to render")
    render_memory_mb: int = Field(
        4096, ge=256, examples=[8192], description="address-space limit of each render worker (MiB)"
    )
    autorotate: bool = Field(True, examples=[False], description="turn sideways/upside-down pages upright before OCR")
    crop_borders: bool = Field(True, examples=[False], description="crop dark scanner borders")
    deskew: bool = Field(
        True, examples=[False],
        description="turn pages scanned a few degrees askew (1-10) straight before OCR; the searchable PDF keeps the original page",
    )
    # daemon.pages.textlayer
    text_layer: Literal["auto", "any", "ocr"] = Field(
        "auto", examples=["ocr"],
        description="PDF pages: `auto` uses a page's own text layer where it is real text (not an invisible OCR layer "
        "over a scan, not glyph soup) and OCRs only the other pages; `any` also trusts an invisible OCR layer; "
        "`ocr` OCRs every page",
    )
    sampling: SamplingCfg = Field(default_factory=SamplingCfg, description="VLM decoding settings")
    page_guards: PageGuardsCfg = Field(
        default_factory=PageGuardsCfg, description="per-page checks of VLM output, vllm and openai"
    )
    tesseract: TesseractCfg = Field(default_factory=TesseractCfg, description="Tesseract engine settings")
    vllm: VllmCfg = Field(default_factory=VllmCfg, description="resident vLLM engine settings")
    openai: OpenAICfg = Field(default_factory=OpenAICfg, description="OpenAI-compatible server engine settings")
    debug: EngineDebugCfg = Field(
        default_factory=EngineDebugCfg, description="benchmark switches (bench/bench_gpu.py); leave it out"
    )

    @model_validator(mode="before")
    @classmethod
    def _old_repetition_retries(cls, data: Any) -> Any:
        """``engine.vllm.repetition_retries`` (its place before the page guards applied to every
        VLM engine) still loads, as ``engine.page_guards.repetition_retries`` unless that is set."""
        if isinstance(data, dict) and isinstance(data.get("vllm"), dict) and "repetition_retries" in data["vllm"]:
            vllm = dict(data["vllm"])
            old = vllm.pop("repetition_retries")
            guards = dict(data.get("page_guards") or {})
            guards.setdefault("repetition_retries", old)
            data = {**data, "vllm": vllm, "page_guards": guards}
        return data
