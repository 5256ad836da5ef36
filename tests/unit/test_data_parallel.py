"""``engine.vllm.data_parallel_size``: the setting, the GPU count behind ``auto``, the engine
arguments vLLM gets, and the engine's per-core bounds. vLLM itself is faked only where the engine
hands its arguments to ``AsyncLLM`` (no vLLM on the CPU machine); tests/gpu/test_e runs the real one.
"""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import ValidationError

from daemon.config import EngineCfg
from daemon.engines.base import PageRequest
from daemon.engines.pagepolicy import GenResult
from daemon.engines.vllm_engine import (
    VllmEngine,
    data_parallel_size,
    engine_args,
    settings_in_force,
    visible_gpu_count,
)


def test_setting_accepts_auto_and_whole_numbers_only() -> None:
    assert EngineCfg().vllm.data_parallel_size == "auto"
    assert EngineCfg(vllm={"data_parallel_size": 1}).vllm.data_parallel_size == 1
    assert EngineCfg(vllm={"data_parallel_size": 4}).vllm.data_parallel_size == 4
    for bad in (0, -2, "two", True, 1.5):
        with pytest.raises(ValidationError):
            EngineCfg(vllm={"data_parallel_size": bad})


def test_visible_gpus_from_cuda_visible_devices(tmp_path: Path) -> None:
    none = tmp_path / "none"
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": "0,1"}, none, none) == 2
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": "GPU-3f2a,GPU-77b1,GPU-0c0c"}, none, none) == 3
    # CUDA stops at the first invalid entry; an empty list hides every GPU (still one core asked)
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": "2,-1,3"}, none, none) == 1
    assert visible_gpu_count({"CUDA_VISIBLE_DEVICES": ""}, none, none) == 1


def test_visible_gpus_from_the_driver(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for bus in ("0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0"):
        (proc / bus).mkdir(parents=True)
    dev = tmp_path / "dev"
    dev.mkdir()
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-modeset"):
        (dev / name).touch()
    assert visible_gpu_count({}, proc, dev) == 3
    # no /proc/driver/nvidia: the /dev/nvidiaN nodes (not nvidiactl, nvidia-uvm...)
    assert visible_gpu_count({}, tmp_path / "absent", dev) == 2
    assert visible_gpu_count({}, tmp_path / "absent", tmp_path / "absent") == 1
    cfg = EngineCfg(kind="vllm")
    assert data_parallel_size(cfg, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}) == 4
    assert data_parallel_size(EngineCfg(kind="vllm", vllm={"data_parallel_size": 1}), {"CUDA_VISIBLE_DEVICES": "0,1"}) == 1


def test_engine_args_for_several_cores() -> None:
    one = engine_args(EngineCfg(kind="vllm"), cpu_count=16)
    assert "data_parallel_size" not in one and "data_parallel_backend" not in one
    two = engine_args(EngineCfg(kind="vllm"), cpu_count=16, dp_size=2)
    assert two["data_parallel_size"] == 2 and two["data_parallel_backend"] == "mp"
    # per-core settings are those of one GPU
    assert {k: v for k, v in two.items() if not k.startswith("data_parallel")} == one
    # the 16 GB profile applies per GPU: each core gets the same KV budget and batch limits
    p1 = engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb"}), cpu_count=16)
    p4 = engine_args(EngineCfg(kind="vllm", vllm={"profile": "16gb"}), cpu_count=64, dp_size=4)
    for k in ("kv_cache_memory_bytes", "max_num_seqs", "max_num_batched_tokens", "max_model_len"):
        assert p4[k] == p1[k]
    assert p4["renderer_num_workers"] > p1["renderer_num_workers"]  # one frontend feeds 4 cores
    # half a card each (the one-GPU test of two ranks): the fraction is per core
    half = engine_args(EngineCfg(kind="vllm", vllm={"gpu_memory_utilization": 0.42}), dp_size=2)
    assert half["gpu_memory_utilization"] == 0.42
    assert settings_in_force(types.SimpleNamespace(parallel_config=types.SimpleNamespace(data_parallel_size=2))) == {
        "data_parallel_size": 2
    }


class _FakeAsyncLLM:
    """Stands in for vLLM's AsyncLLM (the engine core): records the arguments, answers requests."""

    built: list[dict[str, Any]] = []

    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs
        self.errored = False
        self.vllm_config = types.SimpleNamespace(
            parallel_config=types.SimpleNamespace(data_parallel_size=kwargs.get("data_parallel_size", 1))
        )

    @classmethod
    def from_engine_args(cls, args: Any) -> _FakeAsyncLLM:
        llm = cls(dict(args.kwargs))
        cls.built.append(llm.kwargs)
        return llm

    def shutdown(self) -> None:
        pass

    class renderer:  # noqa: N801 - mimics the attribute
        @staticmethod
        def get_tokenizer() -> Any:
            return None


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[_FakeAsyncLLM]:
    class AsyncEngineArgs:
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs

    mods = {name: types.ModuleType(name) for name in ("vllm", "vllm.v1", "vllm.v1.engine", "vllm.v1.engine.async_llm")}
    mods["vllm"].AsyncEngineArgs = AsyncEngineArgs  # type: ignore[attr-defined]
    mods["vllm.v1.engine.async_llm"].AsyncLLM = _FakeAsyncLLM  # type: ignore[attr-defined]
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    _FakeAsyncLLM.built = []
    return _FakeAsyncLLM


class _Engine(VllmEngine):
    """The real VllmEngine (its _build_llm hands the arguments to the fake AsyncLLM); only the
    request itself and the import check are replaced."""

    warmup_pages = 2
    seen: list[bool]

    def _prepare(self) -> None:
        self.seen = []

    async def _request(self, llm, img, temperature, max_tokens, priority, warm=False):  # type: ignore[no-untyped-def]
        self.seen.append(warm)
        await asyncio.sleep(0)
        return GenResult("ok", "stop", 1)


def test_engine_asks_vllm_for_every_visible_gpu(fake_vllm: type[_FakeAsyncLLM], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    cfg = EngineCfg(kind="vllm", model="lightonai/LightOnOCR-2-1B", vllm={"max_pages_in_flight": 3})
    eng = _Engine(cfg)
    assert eng.dp_size == 2 and eng.max_in_flight == 6  # the page bound is per core
    eng.start()
    try:
        assert fake_vllm.built[-1]["data_parallel_size"] == 2
        assert fake_vllm.built[-1]["data_parallel_backend"] == "mp"
        assert eng.in_force == {"data_parallel_size": 2}
        # warm-up: one page alone, then warmup_pages per core
        assert eng.seen == [True] * (1 + 2 * 2)
        assert eng.submit(PageRequest("d", 0, Image.new("RGB", (56, 56)))).result(timeout=30).text == "ok"
    finally:
        eng.close()


def test_data_parallel_size_one_keeps_one_core(fake_vllm: type[_FakeAsyncLLM], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2")
    eng = _Engine(EngineCfg(kind="vllm", model="lightonai/LightOnOCR-2-1B", vllm={"data_parallel_size": 1}))
    eng.start()
    try:
        assert "data_parallel_size" not in fake_vllm.built[-1]
        assert eng.max_in_flight == 512 and eng.seen == [True] * 3
    finally:
        eng.close()
