"""The share of the one GPU each GPU test's engine core takes (imported by the tests and by
pixtral_probe.py; not a test).

A fixed KV-cache budget instead of a fraction of the card, so that several GPU tests can run at
once on one GPU (bench/device_session.sh, row ``gpu_tests``): with a fraction, vLLM 0.26 measures
the memory its profile run takes against the memory free at its start and aborts ("Error in
memory profiling ... other processes ... release GPU memory while vLLM is profiling",
``v1/worker/gpu_worker.determine_available_memory``) when another test's engine exits or is
killed meanwhile; with ``kv_cache_memory_bytes`` it measures nothing. The start-up check of free
memory then asks for this budget + ``NON_KV_BYTES`` (``vllm_engine.startup_utilization``), which
these tests also exercise on the GPU.

8 GiB of bf16 KV cache is ~75k tokens (28 layers x 8 KV heads x 128 x 2 x 2 bytes = 112 KiB a
token): ~31 pages of 2.3k image tokens + output decoding at once, more than any test keeps in
flight inside vLLM. An engine core then holds ~14 GiB: four at once (test_f's two servers
beside two other tests) fit an H200 with room.
"""

from __future__ import annotations

from typing import Any

KV_BYTES = 8 << 30


def gpu_slice() -> dict[str, Any]:
    """``engine.vllm`` settings of one GPU test's engine core."""
    return {"kv_cache_memory_bytes": KV_BYTES}
