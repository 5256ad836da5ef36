"""Cheap checks at the start of a GPU session, before the rows that cost minutes (bench/device_session.sh).

    python bench/device_preflight.py

- vLLM, torch and the daemon's own dependencies import; a CUDA GPU is there;
- the ``vllm serve`` command the launcher builds (``daemon.engines.serve.serve_args``) parses with
  vLLM's own serve parser, and ``AsyncEngineArgs.from_cli_args`` of it gives back every engine
  argument the in-process engine uses (the served and the in-process engines run the same
  settings), for the bench's fp8 server and for tests/gpu/test_f's servers;
- NVML gives the card's size, and the start-up fraction a fixed KV budget asks vLLM for
  (``vllm_engine.startup_utilization``);
- Tesseract (tesserocr) and its data are there (the pdf output's line boxes, cpu_cost's OSD).

Prints ``PREFLIGHT OK`` or ``PREFLIGHT FAILED: ...`` per check; exit 1 if any failed.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

failed: list[str] = []


def check(name: str):  # type: ignore[no-untyped-def]
    def deco(fn):  # type: ignore[no-untyped-def]
        try:
            print(f"PREFLIGHT OK {name}: {fn()}", flush=True)
        except Exception as e:  # every check is reported, the first failure stops nothing
            failed.append(name)
            print(f"PREFLIGHT FAILED {name}: {e!r}\n{traceback.format_exc()[-1500:]}", flush=True)
        return fn
    return deco


@check("imports")
def _imports() -> str:
    mods = ["vllm", "torch", "transformers", "pymupdf", "watchdog", "apscheduler", "py3langid", "openpyxl",
            "ocrmypdf", "pikepdf", "img2pdf", "tesserocr", "zhon", "psutil", "pynvml"]
    got = {m: getattr(importlib.import_module(m), "__version__", "?") for m in mods}
    import torch

    assert torch.cuda.is_available(), "torch sees no CUDA GPU"
    return ", ".join(f"{k} {v}" for k, v in got.items())


def _served(cfg: Any) -> dict[str, Any]:
    """What vLLM's own serve parser makes of the launcher's arguments, as engine arguments."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.entrypoints.openai.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    from daemon.engines.serve import serve_args

    args = serve_args(cfg, "127.0.0.1", 8000)
    ns = make_arg_parser(FlexibleArgumentParser()).parse_args(args)
    ns.model = ns.model_tag or ns.model
    return vars(AsyncEngineArgs.from_cli_args(ns))


def _same(cfg: Any) -> str:
    from daemon.engines.vllm_engine import data_parallel_size, engine_args, gpu_total_memory

    want = engine_args(cfg, dp_size=data_parallel_size(cfg), gpu_total_bytes=gpu_total_memory())
    got = _served(cfg)
    skip = {"enable_log_requests", "disable_log_stats"}  # logging: vLLM's serve defaults
    diff = {k: (v, got.get(k)) for k, v in want.items() if k not in skip and got.get(k) != v}
    assert not diff, f"served differs from in-process (want, got): {diff}"
    return f"{len(want) - len(skip & set(want))} engine arguments equal"


@check("serve args, bench fp8 server")
def _bench_serve() -> str:
    from daemon.config import EngineCfg

    return _same(EngineCfg(kind="vllm", model="/tmp/dummymodel", vllm={
        "load_format": "dummy", "kv_cache_dtype": "fp8", "max_num_batched_tokens": 16384, "max_num_seqs": 256,
        "gpu_memory_utilization": 0.85, "data_parallel_size": 1, "pixtral_patch": "varlen"}))


@check("serve args, test_f servers")
def _fleet_serve() -> str:
    from gpu.gpushare import gpu_slice

    from daemon.config import EngineCfg

    return _same(EngineCfg(kind="vllm", model="/tmp/dummymodel", vllm={
        "load_format": "dummy", **gpu_slice(), "max_num_seqs": 32, "data_parallel_size": 1}))


@check("gpu size and the fixed-budget start-up fraction")
def _gpu() -> str:
    from gpu.gpushare import KV_BYTES

    from daemon.engines.vllm_engine import gpu_total_memory, startup_utilization

    total = gpu_total_memory()
    assert total, "NVML gave no GPU size"
    return f"{total / 2**30:.1f} GiB; an 8 GiB KV budget asks for {startup_utilization(KV_BYTES, total)} of it"


@check("tesseract")
def _tesseract() -> str:
    import tesserocr

    from daemon.pages.orient import tessdata_dir

    d = Path(tessdata_dir())
    have = sorted(p.stem for p in d.glob("*.traineddata"))
    assert {"eng", "osd"} <= set(have), f"{d}: {have}"
    return f"tesserocr {tesserocr.tesseract_version().split()[1]}, {d}: {have}"


if __name__ == "__main__":
    print("PREFLIGHT " + ("FAILED: " + ", ".join(failed) if failed else "ALL OK"), flush=True)
    sys.exit(1 if failed else 0)
