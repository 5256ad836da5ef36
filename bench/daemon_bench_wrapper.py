"""Run ``ocr-daemon`` with the benchmark's forced output length (bench only, never shipped config).

Usage: python bench/daemon_bench_wrapper.py OUT_TOKENS run --config rules.yaml --engine vllm

Sets ``VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": OUT_TOKENS}`` and turns
the repetition/banding guards off (a forced length always ends at max_tokens), and has vLLM's JIT
monitor log every kernel compiled after start (not only the first), then runs the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typing import Any  # noqa: E402

from daemon.cli import main  # noqa: E402
from daemon.engines import vllm_engine  # noqa: E402
from daemon.engines.vllm_engine import VllmEngine  # noqa: E402

_engine_args = vllm_engine.engine_args


def _verbose_jit_engine_args(*a: Any, **kw: Any) -> dict[str, Any]:
    return {**_engine_args(*a, **kw), "jit_monitor_verbose": True}


if __name__ == "__main__":
    VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": int(sys.argv[1])}
    VllmEngine.guards = False
    vllm_engine.engine_args = _verbose_jit_engine_args  # type: ignore[assignment]
    sys.exit(main(sys.argv[2:]))
