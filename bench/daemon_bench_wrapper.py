"""Run ``ocr-daemon`` with the benchmark's forced output length (bench only, never shipped config).

Usage: python bench/daemon_bench_wrapper.py OUT_TOKENS run --config rules.yaml --engine vllm

Sets ``VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": OUT_TOKENS}`` and turns
the repetition/banding guards off (a forced length always ends at max_tokens), then runs the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daemon.cli import main  # noqa: E402
from daemon.engines.vllm_engine import VllmEngine  # noqa: E402

if __name__ == "__main__":
    VllmEngine.sampling_overrides = {"ignore_eos": True, "max_tokens": int(sys.argv[1])}
    VllmEngine.guards = False
    sys.exit(main(sys.argv[2:]))
