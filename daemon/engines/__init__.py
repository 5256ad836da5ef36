"""Engine factory: the one place that picks an engine from the config.

Engines are imported lazily so that ``vllm``/``torch`` are only imported when the vLLM engine is
actually chosen (they are an optional extra of the package).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from daemon.config import Config
from daemon.engines.base import Engine, PageRequest

__all__ = ["Engine", "PageRequest", "create_engine", "resolve_kind", "nvidia_gpu_present", "nvml_memory"]

log = logging.getLogger(__name__)


def nvidia_gpu_present() -> bool:
    """True when an NVIDIA GPU device node exists (no CUDA import needed)."""
    return Path("/dev/nvidia0").exists() or Path("/proc/driver/nvidia/gpus").is_dir() and any(
        Path("/proc/driver/nvidia/gpus").iterdir()
    )


def nvml_memory() -> list[tuple[str, int, int]]:
    """(GPU index, used bytes, total bytes) of each NVIDIA GPU, from NVML (the driver's library,
    shipped with vLLM as ``pynvml``), which does not initialise CUDA; [] where NVML cannot say."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            out = []
            for i in range(pynvml.nvmlDeviceGetCount()):
                info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(i))
                out.append((str(i), int(info.used), int(info.total)))
            return out
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        return []


def vllm_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def resolve_kind(cfg: Config, override: str | None = None) -> str:
    """``auto`` -> ``vllm`` when an NVIDIA GPU and vLLM are present, else ``tesseract``."""
    kind = override or os.environ.get("OCR_DAEMON_ENGINE") or cfg.engine.kind
    if kind == "auto":
        kind = "vllm" if nvidia_gpu_present() and vllm_importable() else "tesseract"
    return kind


def create_engine(cfg: Config, override: str | None = None) -> Engine:
    """Build (not start) the engine the config asks for."""
    kind = resolve_kind(cfg, override)
    log.info("engine: %s", kind)
    if kind == "tesseract":
        from daemon.engines.tesseract import TesseractEngine

        return TesseractEngine(cfg.engine)
    if kind == "vllm":
        from daemon.engines.vllm_engine import VllmEngine

        return VllmEngine(cfg.engine)
    if kind == "openai":
        from daemon.engines.openai_engine import OpenAIEngine

        return OpenAIEngine(cfg.engine)
    raise ValueError(f"unknown engine kind {kind!r}")
