"""Helper of tests/gpu/test_d_pixtral_modes_gpu.py (not a test): one VllmEngine in a fresh process
with the encoder mode given, six pages of different sizes, one ``PROBE {json}`` line out.

A fresh process per mode because the patch is applied once per process (vLLM's classes are
patched in place) and must be in place before vLLM forks its engine core.

    python tests/gpu/pixtral_probe.py MODEL_DIR MODE MARKER_FILE
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gpushare import gpu_slice  # noqa: E402  (this script's folder is sys.path[0])
from PIL import Image, ImageDraw  # noqa: E402

from daemon.config import EngineCfg  # noqa: E402
from daemon.engines.base import PageRequest  # noqa: E402
from daemon.engines.pixtral_patch import applied_mode  # noqa: E402
from daemon.engines.vllm_engine import VllmEngine  # noqa: E402

#: Pages of several sizes, so that an encoder step holds images of different patch counts.
SIZES = [(1176, 1540), (600, 800), (896, 672), (1176, 1540), (420, 588), (812, 1036)]


class QuickEngine(VllmEngine):
    """One warm-up page (the probe measures nothing)."""

    warmup_pages = 1


def page(i: int, size: tuple[int, int]) -> Image.Image:
    im = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(im)
    for y in range(30, size[1] - 30, 28):
        d.text((30, y), f"probe page {i} line {y} invoice total 1234.56", fill="black")
    return im


def main(model: str, mode: str, marker: str) -> None:
    cfg = EngineCfg(
        kind="vllm",
        model=model,
        sampling={"max_tokens": 16},
        vllm={"load_format": "dummy", **gpu_slice(), "pixtral_patch": mode, "hang_timeout": 120},
        debug={"pixtral_marker": marker},
    )
    eng = QuickEngine(cfg)
    eng.start()
    try:
        res = eng.recognize([PageRequest("probe", i, page(i, s)) for i, s in enumerate(SIZES)], timeout=600)
        out = {"pid": os.getpid(), "applied": applied_mode(), "texts": [r.text for r in res], "in_force": eng.in_force}
    finally:
        eng.close(drain_timeout=5)
    print("PROBE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
