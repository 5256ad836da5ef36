"""CPU cost of LightOnOCR's HF image preprocessing per page (what vLLM's renderer runs per request)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PIL import Image
from transformers import AutoProcessor

model, pngs = sys.argv[1], sorted(Path(sys.argv[2]).glob("*.png"))[:20]
proc = AutoProcessor.from_pretrained(model)
print("image processor:", type(proc.image_processor).__name__)
ims = [Image.open(p).convert("RGB") for p in pngs]
prompt = "<|im_start|>user\n<|image_pad|><|im_end|>\n<|im_start|>assistant\n"
for kw in ({}, {"do_resize": False}):
    proc(text=prompt, images=[ims[0]], **kw)
    t = time.time()
    for im in ims:
        out = proc(text=prompt, images=[im], **kw)
    dt = (time.time() - t) / len(ims)
    print(f"RESULT proc kwargs={kw} ms_per_page={dt * 1000:.1f} tokens={len(out['input_ids'][0])} size={im.size}")
