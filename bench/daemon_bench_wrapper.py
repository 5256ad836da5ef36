"""Run ``ocr-daemon`` for the daemon row of bench/bench_gpu.py, with the bench's timing marks.

Usage: python bench/daemon_bench_wrapper.py run --config rules.yaml --engine vllm

The benchmark's engine switches (forced output length, page guards off, vLLM's JIT and per-step
logging) are in the row's rules.yaml (``engine.debug``, written by bench_gpu.py); this wrapper
only adds what is not an engine setting: with ``OCR_BENCH_ITER_LOG=1`` (``bench_gpu.py daemon
--iter-log``) each page's input processing prints ``RENDERED <time.time()>`` when it is done, so
that ``bench/iter_summary.py`` and the daemon row can tell the daemon's time before its first
engine step apart from the engine's.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from typing import Any  # noqa: E402

from daemon.cli import main  # noqa: E402

ITER_LOG = os.environ.get("OCR_BENCH_ITER_LOG") == "1"


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
    if ITER_LOG:
        _print_render_times()
    sys.exit(main(sys.argv[1:]))
