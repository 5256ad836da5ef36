"""Run ``ocr-daemon`` with the benchmark's forced output length (bench only, never shipped config).

Usage: python bench/daemon_bench_wrapper.py OUT_TOKENS run --config rules.yaml --engine vllm

Sets ``VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": OUT_TOKENS}`` and turns
the repetition/banding guards off (a forced length always ends at max_tokens), and has vLLM's JIT
monitor log every kernel compiled after start (not only the first), then runs the CLI.

With ``OCR_BENCH_ITER_LOG=1`` (``bench_gpu.py daemon --iter-log``) vLLM also logs every engine step
(``enable_logging_iteration_details``) and each page's input processing prints
``RENDERED <time.time()>`` when it is done, so that ``bench/iter_summary.py`` and the daemon row
can tell the daemon's time before its first engine step apart from the engine's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typing import Any  # noqa: E402

from daemon.cli import main  # noqa: E402
from daemon.engines import vllm_engine  # noqa: E402
from daemon.engines.vllm_engine import VllmEngine  # noqa: E402

_engine_args = vllm_engine.engine_args


ITER_LOG = os.environ.get("OCR_BENCH_ITER_LOG") == "1"


def _bench_engine_args(*a: Any, **kw: Any) -> dict[str, Any]:
    """The daemon's vLLM arguments plus the bench's logging (JIT compiles; steps with ITER_LOG)."""
    extra: dict[str, Any] = {"jit_monitor_verbose": True}
    if ITER_LOG:
        extra.update(enable_logging_iteration_details=True, disable_log_stats=False)
    return {**_engine_args(*a, **kw), **extra}


def _print_render_times() -> None:
    """Wrap vLLM's ``render_cmpl_async`` (the daemon's per-page input processing) to print when
    each call ends."""
    import time

    from vllm.renderers.base import BaseRenderer

    orig = BaseRenderer.render_cmpl_async

    async def render_cmpl_async(self: Any, *a: Any, **kw: Any) -> Any:
        out = await orig(self, *a, **kw)
        # one write(2) with its newline: print() under PYTHONUNBUFFERED writes the text and the
        # newline separately, and the daemon's log lines (same file) landed between the two
        os.write(1, f"RENDERED {time.time():.3f}\n".encode())
        return out

    BaseRenderer.render_cmpl_async = render_cmpl_async  # type: ignore[method-assign]


if __name__ == "__main__":
    VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": int(sys.argv[1])}
    VllmEngine.guards = False
    vllm_engine.engine_args = _bench_engine_args  # type: ignore[assignment]
    if ITER_LOG:
        _print_render_times()
    sys.exit(main(sys.argv[2:]))
